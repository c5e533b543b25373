#include "CpuNorm.h"

#include "CpuParallel.h"
#include "NormMath.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace il::cpu {

namespace {

// Per-column scratch that grows once and is reused: a training step allocates nothing after its
// first call (TestNoAllocation).
struct Scratch {
    std::vector<double> sumA, sumB;
    std::vector<float> mean, rstd, var, meanG, meanGX;
    void fit(int64_t cols)
    {
        const auto n = static_cast<size_t>(cols);
        for (auto* v : {&sumA, &sumB})
            if (v->size() < n) v->resize(n);
        for (auto* v : {&mean, &rstd, &var, &meanG, &meanGX})
            if (v->size() < n) v->resize(n);
    }
};

Scratch& scratch(int64_t cols)
{
    thread_local Scratch s;
    s.fit(cols);
    return s;
}

// Two sums per column of a rows x cols layout, each over the rows in order: term(r, c, &u, &v)
// gives row r's terms of column c; the sums go to sumU[c] and sumV[c]. Blocks of 16 columns go
// to the threads (a block's rows are read in order, a cache line at a time).
constexpr int64_t kColumnBlock = 16;
template <class Term>
void columnSums(int64_t rows, int64_t cols, double* sumU, double* sumV, Term term)
{
    const int64_t blocks = (cols + kColumnBlock - 1) / kColumnBlock;
#pragma omp parallel for schedule(static) if (rows * cols > kParallelMin)
    for (int64_t blk = 0; blk < blocks; ++blk) {
        const int64_t c0 = blk * kColumnBlock, c1 = std::min(cols, c0 + kColumnBlock);
        double su[kColumnBlock] = {}, sv[kColumnBlock] = {};
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = c0; c < c1; ++c)
                term(r, c, su[c - c0], sv[c - c0]);
        for (int64_t c = c0; c < c1; ++c) {
            sumU[c] = su[c - c0];
            sumV[c] = sv[c - c0];
        }
    }
}

// Column sums of a and of a * b.
void columnSums(const float* a, const float* b, int64_t rows, int64_t cols, double* sumA,
                double* sumAB)
{
    columnSums(rows, cols, sumA, sumAB, [a, b, cols](int64_t r, int64_t c, double& u, double& v) {
        const float x = a[r * cols + c];
        u += x;
        v += static_cast<double>(x) * b[r * cols + c];
    });
}

// The mean and 1 / sqrt(var + eps) of each column of x (biased variance), and the variance,
// into s.mean, s.rstd and s.var.
void columnStatistics(ConstTensor x, float eps, Scratch& s)
{
    const int64_t rows = x.rows(), cols = x.cols();
    std::vector<double>&sum = s.sumA, &sq = s.sumB;
    std::vector<float>&mean = s.mean, &rstd = s.rstd, &var = s.var;
    columnSums(x.data, x.data, rows, cols, sum.data(), sq.data());
    const double n = static_cast<double>(std::max<int64_t>(rows, 1));
    for (size_t c = 0; c < static_cast<size_t>(cols); ++c) {
        const double m = sum[c] / n;
        const double v = std::max(0.0, sq[c] / n - m * m);
        mean[c] = static_cast<float>(m);
        var[c] = static_cast<float>(v);
        rstd[c] = static_cast<float>(1.0 / std::sqrt(v + static_cast<double>(eps)));
    }
}

} // namespace

void layerNormForward(ConstTensor x, ConstTensor gamma, ConstTensor beta, float eps, Tensor y,
                      Tensor stats)
{
    const int64_t rows = x.rows(), cols = x.cols();
#pragma omp parallel for schedule(static) if (rows * cols > kParallelMin)
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x.data + r * cols;
        double sum = 0, sq = 0;
        for (int64_t c = 0; c < cols; ++c) {
            sum += xr[c];
            sq += static_cast<double>(xr[c]) * xr[c];
        }
        const double n = static_cast<double>(cols);
        const double m = sum / n, v = std::max(0.0, sq / n - (sum / n) * (sum / n));
        const float mean = static_cast<float>(m);
        const float rstd = static_cast<float>(1.0 / std::sqrt(v + static_cast<double>(eps)));
        float* yr = y.data + r * cols;
        for (int64_t c = 0; c < cols; ++c)
            yr[c] = normmath::normalised(xr[c], mean, rstd) * gamma.data[c] + beta.data[c];
        stats.data[r * 2] = mean;
        stats.data[r * 2 + 1] = rstd;
    }
}

void layerNormBackward(ConstTensor x, ConstTensor gamma, ConstTensor stats, ConstTensor dy,
                       Tensor dx, Tensor dgamma, Tensor dbeta)
{
    const int64_t rows = x.rows(), cols = x.cols();
    if (dx.data) {
#pragma omp parallel for schedule(static) if (rows * cols > kParallelMin)
        for (int64_t r = 0; r < rows; ++r) {
            const float* xr = x.data + r * cols;
            const float* dyr = dy.data + r * cols;
            const float mean = stats.data[r * 2], rstd = stats.data[r * 2 + 1];
            double sg = 0, sgx = 0;
            for (int64_t c = 0; c < cols; ++c) {
                const double g = static_cast<double>(dyr[c]) * gamma.data[c];
                sg += g;
                sgx += g * normmath::normalised(xr[c], mean, rstd);
            }
            const float meanG = static_cast<float>(sg / static_cast<double>(cols));
            const float meanGX = static_cast<float>(sgx / static_cast<double>(cols));
            float* dxr = dx.data + r * cols;
            for (int64_t c = 0; c < cols; ++c)
                dxr[c] = normmath::inputGradient(dyr[c] * gamma.data[c],
                                                 normmath::normalised(xr[c], mean, rstd), rstd,
                                                 meanG, meanGX);
        }
    }
    // dgamma = sum_r dy * xhat, dbeta = sum_r dy, column by column in row order.
    Scratch& s = scratch(cols);
    columnSums(rows, cols, s.sumA.data(), s.sumB.data(),
               [&](int64_t r, int64_t c, double& g, double& b) {
                   const float d = dy.data[r * cols + c];
                   g += static_cast<double>(d) * normmath::normalised(x.data[r * cols + c],
                                                                      stats.data[r * 2],
                                                                      stats.data[r * 2 + 1]);
                   b += d;
               });
    for (int64_t c = 0; c < cols; ++c) {
        dgamma.data[c] = static_cast<float>(s.sumA[static_cast<size_t>(c)]);
        dbeta.data[c] = static_cast<float>(s.sumB[static_cast<size_t>(c)]);
    }
}

void batchNormForward(ConstTensor x, ConstTensor gamma, ConstTensor beta, float eps, float momentum,
                      bool training, Tensor runningMean, Tensor runningVar, Tensor y)
{
    const int64_t rows = x.rows(), cols = x.cols();
    Scratch& s = scratch(cols);
    std::vector<float>&mean = s.mean, &rstd = s.rstd, &var = s.var;
    if (training) {
        columnStatistics(x, eps, s);
        for (size_t c = 0; c < static_cast<size_t>(cols); ++c) {
            runningMean.data[c] = normmath::runningUpdate(runningMean.data[c], mean[c], momentum);
            runningVar.data[c] = normmath::runningUpdate(
                runningVar.data[c], normmath::unbiasedVariance(var[c], rows), momentum);
        }
    } else {
        for (size_t c = 0; c < static_cast<size_t>(cols); ++c) {
            mean[c] = runningMean.data[c];
            rstd[c] = static_cast<float>(
                1.0 / std::sqrt(std::max(0.0, static_cast<double>(runningVar.data[c])) +
                                static_cast<double>(eps)));
        }
    }
#pragma omp parallel for schedule(static) if (rows * cols > kParallelMin)
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x.data + r * cols;
        float* yr = y.data + r * cols;
        for (int64_t c = 0; c < cols; ++c)
            yr[c] = normmath::normalised(xr[c], mean[static_cast<size_t>(c)],
                                         rstd[static_cast<size_t>(c)]) *
                        gamma.data[c] +
                    beta.data[c];
    }
}

void batchNormBackward(ConstTensor x, ConstTensor gamma, float eps, ConstTensor dy, Tensor dx,
                       Tensor dgamma, Tensor dbeta)
{
    const int64_t rows = x.rows(), cols = x.cols();
    Scratch& s = scratch(cols);
    columnStatistics(x, eps, s);
    const std::vector<float>&mean = s.mean, &rstd = s.rstd;
    // sum_r dy and sum_r dy * x per column; sum dy * xhat = rstd (sum dy x - mean sum dy).
    std::vector<double>&sdy = s.sumA, &sdyx = s.sumB; // the statistics' sums are used up
    columnSums(dy.data, x.data, rows, cols, sdy.data(), sdyx.data());
    std::vector<float>&meanG = s.meanG, &meanGX = s.meanGX;
    const double n = static_cast<double>(std::max<int64_t>(rows, 1));
    for (size_t c = 0; c < static_cast<size_t>(cols); ++c) {
        const double dyXhat = rstd[c] * (sdyx[c] - static_cast<double>(mean[c]) * sdy[c]);
        dgamma.data[c] = static_cast<float>(dyXhat);
        dbeta.data[c] = static_cast<float>(sdy[c]);
        meanG[c] = static_cast<float>(sdy[c] * gamma.data[c] / n);
        meanGX[c] = static_cast<float>(dyXhat * gamma.data[c] / n);
    }
    if (!dx.data) return;
#pragma omp parallel for schedule(static) if (rows * cols > kParallelMin)
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x.data + r * cols;
        const float* dyr = dy.data + r * cols;
        float* dxr = dx.data + r * cols;
        for (int64_t c = 0; c < cols; ++c) {
            const auto k = static_cast<size_t>(c);
            dxr[c] = normmath::inputGradient(dyr[c] * gamma.data[c],
                                             normmath::normalised(xr[c], mean[k], rstd[k]), rstd[k],
                                             meanG[k], meanGX[k]);
        }
    }
}

} // namespace il::cpu
