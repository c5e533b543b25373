// Layer and batch normalisation, and dropout, on the GPU (Backend.h, NormMath.h for the formulas
// the CPU backend shares). Deterministic, no atomics:
//   - layer norm: one warp per row; the row's sums by the fixed-order warp butterfly;
//   - batch norm, and layer norm's dgamma / dbeta: one thread per column, adding its rows in
//     order. Adjacent threads read adjacent columns of a row, so the loads are coalesced; the
//     parallelism is the column count (hundreds for a names network), enough for these
//     layers' sizes, and a two-level column reduction is the first thing to try if a profile
//     ever shows them.
// Statistics are summed in double (as on the CPU), the rest is float.
// dy * gamma, the g of NormMath.h's inputGradient, is rounded on its own (__fmul_rn), as on the
// CPU: nvcc would fuse it into g - mean(g), and for a group of one value (a batch of one row, a
// row of one column) that sum must cancel exactly (mean(g) is g rounded; dx is exactly 0).
#include "CudaCommon.cuh"
#include "DropoutMath.h"
#include "NormMath.h"

namespace il::cuda {

namespace {

constexpr int kRowsPerBlock = kBlock / 32; // layer norm: a warp per row

__global__ void __launch_bounds__(kBlock)
    layerNormForwardKernel(const float* __restrict__ x, const float* __restrict__ gamma,
                           const float* __restrict__ beta, float eps, float* __restrict__ y,
                           float* __restrict__ stats, int64_t rows, int64_t cols)
{
    const int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + (threadIdx.x >> 5);
    const int lane = static_cast<int>(threadIdx.x & 31);
    if (row >= rows) return; // a whole warp leaves together
    const float* xr = x + row * cols;
    double sum = 0, sq = 0;
    for (int64_t c = lane; c < cols; c += 32) {
        sum += xr[c];
        sq += static_cast<double>(xr[c]) * xr[c];
    }
    for (int o = 16; o > 0; o >>= 1) {
        sum += __shfl_xor_sync(kFullMask, sum, o);
        sq += __shfl_xor_sync(kFullMask, sq, o);
    }
    const double n = static_cast<double>(cols);
    const double m = sum / n, v = fmax(0.0, sq / n - m * m);
    const auto mean = static_cast<float>(m);
    const auto rstd = static_cast<float>(1.0 / sqrt(v + static_cast<double>(eps)));
    float* yr = y + row * cols;
    for (int64_t c = lane; c < cols; c += 32)
        yr[c] = normmath::normalised(xr[c], mean, rstd) * gamma[c] + beta[c];
    if (lane == 0) {
        stats[row * 2] = mean;
        stats[row * 2 + 1] = rstd;
    }
}

__global__ void __launch_bounds__(kBlock)
    layerNormInputGradKernel(const float* __restrict__ x, const float* __restrict__ gamma,
                             const float* __restrict__ stats, const float* __restrict__ dy,
                             float* __restrict__ dx, int64_t rows, int64_t cols)
{
    const int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + (threadIdx.x >> 5);
    const int lane = static_cast<int>(threadIdx.x & 31);
    if (row >= rows) return;
    const float* xr = x + row * cols;
    const float* dyr = dy + row * cols;
    const float mean = stats[row * 2], rstd = stats[row * 2 + 1];
    double sg = 0, sgx = 0;
    for (int64_t c = lane; c < cols; c += 32) {
        const double g = static_cast<double>(dyr[c]) * gamma[c];
        sg += g;
        sgx += g * normmath::normalised(xr[c], mean, rstd);
    }
    for (int o = 16; o > 0; o >>= 1) {
        sg += __shfl_xor_sync(kFullMask, sg, o);
        sgx += __shfl_xor_sync(kFullMask, sgx, o);
    }
    const auto meanG = static_cast<float>(sg / static_cast<double>(cols));
    const auto meanGX = static_cast<float>(sgx / static_cast<double>(cols));
    float* dxr = dx + row * cols;
    for (int64_t c = lane; c < cols; c += 32)
        dxr[c] =
            normmath::inputGradient(__fmul_rn(dyr[c], gamma[c]),
                                    normmath::normalised(xr[c], mean, rstd), rstd, meanG, meanGX);
}

// dgamma = sum over rows of dy * xhat, dbeta = sum of dy: a thread per column.
__global__ void __launch_bounds__(kBlock)
    layerNormParamGradKernel(const float* __restrict__ x, const float* __restrict__ stats,
                             const float* __restrict__ dy, float* __restrict__ dgamma,
                             float* __restrict__ dbeta, int64_t rows, int64_t cols)
{
    const int64_t c = globalThread();
    if (c >= cols) return;
    double sg = 0, sb = 0;
    for (int64_t r = 0; r < rows; ++r) {
        const float d = dy[r * cols + c];
        sg += static_cast<double>(d) *
              normmath::normalised(x[r * cols + c], stats[r * 2], stats[r * 2 + 1]);
        sb += d;
    }
    dgamma[c] = static_cast<float>(sg);
    dbeta[c] = static_cast<float>(sb);
}

// The column's mean, biased variance and 1 / sqrt(var + eps), in double over the rows in order.
__device__ __forceinline__ void columnStatistics(const float* x, int64_t rows, int64_t cols,
                                                 int64_t c, float eps, float& mean, float& var,
                                                 float& rstd)
{
    double sum = 0, sq = 0;
    for (int64_t r = 0; r < rows; ++r) {
        const float v = x[r * cols + c];
        sum += v;
        sq += static_cast<double>(v) * v;
    }
    const double n = static_cast<double>(rows > 0 ? rows : 1);
    const double m = sum / n, v = fmax(0.0, sq / n - m * m);
    mean = static_cast<float>(m);
    var = static_cast<float>(v);
    rstd = static_cast<float>(1.0 / sqrt(v + static_cast<double>(eps)));
}

__global__ void __launch_bounds__(kBlock)
    batchNormForwardKernel(const float* __restrict__ x, const float* __restrict__ gamma,
                           const float* __restrict__ beta, float eps, float momentum, int training,
                           float* __restrict__ runningMean, float* __restrict__ runningVar,
                           float* __restrict__ y, int64_t rows, int64_t cols)
{
    const int64_t c = globalThread();
    if (c >= cols) return;
    float mean, var, rstd;
    if (training) {
        columnStatistics(x, rows, cols, c, eps, mean, var, rstd);
        runningMean[c] = normmath::runningUpdate(runningMean[c], mean, momentum);
        runningVar[c] =
            normmath::runningUpdate(runningVar[c], normmath::unbiasedVariance(var, rows), momentum);
    } else {
        mean = runningMean[c];
        rstd = static_cast<float>(
            1.0 / sqrt(fmax(0.0, static_cast<double>(runningVar[c])) + static_cast<double>(eps)));
    }
    const float g = gamma[c], b = beta[c];
    for (int64_t r = 0; r < rows; ++r)
        y[r * cols + c] = normmath::normalised(x[r * cols + c], mean, rstd) * g + b;
}

__global__ void __launch_bounds__(kBlock)
    batchNormBackwardKernel(const float* __restrict__ x, const float* __restrict__ gamma, float eps,
                            const float* __restrict__ dy, float* __restrict__ dx,
                            float* __restrict__ dgamma, float* __restrict__ dbeta, int64_t rows,
                            int64_t cols)
{
    const int64_t c = globalThread();
    if (c >= cols) return;
    float mean, var, rstd;
    columnStatistics(x, rows, cols, c, eps, mean, var, rstd);
    double sdy = 0, sdyx = 0;
    for (int64_t r = 0; r < rows; ++r) {
        const float d = dy[r * cols + c];
        sdy += d;
        sdyx += static_cast<double>(d) * x[r * cols + c];
    }
    const double dyXhat = rstd * (sdyx - static_cast<double>(mean) * sdy);
    dgamma[c] = static_cast<float>(dyXhat);
    dbeta[c] = static_cast<float>(sdy);
    if (!dx) return;
    const double n = static_cast<double>(rows > 0 ? rows : 1);
    const float g = gamma[c];
    const auto meanG = static_cast<float>(sdy * g / n);
    const auto meanGX = static_cast<float>(dyXhat * g / n);
    for (int64_t r = 0; r < rows; ++r)
        dx[r * cols + c] = normmath::inputGradient(
            __fmul_rn(dy[r * cols + c], g), normmath::normalised(x[r * cols + c], mean, rstd), rstd,
            meanG, meanGX);
}

// Reads the layer's state from device memory (so a recorded step draws a new mask at each
// replay); dropoutAdvanceKernel moves the counter on afterwards, in stream order.
__global__ void __launch_bounds__(kBlock)
    dropoutForwardKernel(const float* __restrict__ x, float p, const float* __restrict__ state,
                         float* __restrict__ y, float* __restrict__ mask, int64_t n)
{
    const float seed = state[0], counter = state[1];
    for (int64_t i = globalThread(); i < n; i += globalStride()) {
        const float s = dropoutmath::scale(seed, counter, i, p);
        mask[i] = s;
        y[i] = x[i] * s;
    }
}

__global__ void dropoutAdvanceKernel(float* state)
{
    state[1] = dropoutmath::nextCounter(state[1]);
}

__global__ void __launch_bounds__(kBlock)
    dropoutBackwardKernel(const float* __restrict__ dy, const float* __restrict__ mask,
                          float* __restrict__ dx, int64_t n)
{
    for (int64_t i = globalThread(); i < n; i += globalStride())
        dx[i] = dy[i] * mask[i];
}

unsigned rowBlocks(int64_t rows)
{
    return static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
}
unsigned columnBlocks(int64_t cols)
{
    return static_cast<unsigned>((cols + kBlock - 1) / kBlock);
}

} // namespace

cudaError_t loadNormKernels()
{
    const void* kernels[] = {
        reinterpret_cast<const void*>(&layerNormForwardKernel),
        reinterpret_cast<const void*>(&layerNormInputGradKernel),
        reinterpret_cast<const void*>(&layerNormParamGradKernel),
        reinterpret_cast<const void*>(&batchNormForwardKernel),
        reinterpret_cast<const void*>(&batchNormBackwardKernel),
        reinterpret_cast<const void*>(&dropoutForwardKernel),
        reinterpret_cast<const void*>(&dropoutAdvanceKernel),
        reinterpret_cast<const void*>(&dropoutBackwardKernel),
    };
    cudaError_t e = cudaSuccess;
    for (const void* kernel : kernels) {
        cudaFuncAttributes attributes{};
        if (e == cudaSuccess) e = cudaFuncGetAttributes(&attributes, kernel);
    }
    return e;
}

void CudaBackend::layerNormForwardImpl(ConstTensor x, ConstTensor gamma, ConstTensor beta,
                                       float eps, Tensor y, Tensor stats)
{
    if (x.size() <= 0) return;
    bind();
    layerNormForwardKernel<<<rowBlocks(x.rows()), kBlock, 0, m_stream>>>(
        x.data, gamma.data, beta.data, eps, y.data, stats.data, x.rows(), x.cols());
    checkLaunch("layerNormForward");
}

void CudaBackend::layerNormBackwardImpl(ConstTensor x, ConstTensor gamma, ConstTensor stats,
                                        ConstTensor dy, Tensor dx, Tensor dgamma, Tensor dbeta)
{
    if (x.cols() <= 0) return;
    bind();
    if (dx.data && x.rows() > 0) {
        layerNormInputGradKernel<<<rowBlocks(x.rows()), kBlock, 0, m_stream>>>(
            x.data, gamma.data, stats.data, dy.data, dx.data, x.rows(), x.cols());
        checkLaunch("layerNormBackward");
    }
    layerNormParamGradKernel<<<columnBlocks(x.cols()), kBlock, 0, m_stream>>>(
        x.data, stats.data, dy.data, dgamma.data, dbeta.data, x.rows(), x.cols());
    checkLaunch("layerNormBackward");
}

void CudaBackend::batchNormForwardImpl(ConstTensor x, ConstTensor gamma, ConstTensor beta,
                                       float eps, float momentum, bool training, Tensor runningMean,
                                       Tensor runningVar, Tensor y)
{
    if (x.cols() <= 0) return;
    bind();
    batchNormForwardKernel<<<columnBlocks(x.cols()), kBlock, 0, m_stream>>>(
        x.data, gamma.data, beta.data, eps, momentum, training ? 1 : 0, runningMean.data,
        runningVar.data, y.data, x.rows(), x.cols());
    checkLaunch("batchNormForward");
}

void CudaBackend::batchNormBackwardImpl(ConstTensor x, ConstTensor gamma, float eps, ConstTensor dy,
                                        Tensor dx, Tensor dgamma, Tensor dbeta)
{
    if (x.cols() <= 0) return;
    bind();
    batchNormBackwardKernel<<<columnBlocks(x.cols()), kBlock, 0, m_stream>>>(
        x.data, gamma.data, eps, dy.data, dx.data, dgamma.data, dbeta.data, x.rows(), x.cols());
    checkLaunch("batchNormBackward");
}

void CudaBackend::dropoutForwardImpl(ConstTensor x, float p, Tensor state, Tensor y, Tensor mask)
{
    if (state.size() != 2)
        throw ShapeError("dropoutForward: state " + state.shape.toString() + " (1 x 2)");
    bind();
    const int64_t n = x.size();
    if (n > 0) {
        dropoutForwardKernel<<<elementGrid(n), kBlock, 0, m_stream>>>(x.data, p, state.data, y.data,
                                                                      mask.data, n);
        checkLaunch("dropoutForward");
    }
    dropoutAdvanceKernel<<<1, 1, 0, m_stream>>>(state.data);
    checkLaunch("dropoutForward");
}

void CudaBackend::dropoutBackwardImpl(ConstTensor dy, ConstTensor mask, Tensor dx)
{
    const int64_t n = dy.size();
    if (n <= 0) return;
    bind();
    dropoutBackwardKernel<<<elementGrid(n), kBlock, 0, m_stream>>>(dy.data, mask.data, dx.data, n);
    checkLaunch("dropoutBackward");
}

} // namespace il::cuda
