#include "CpuLoss.h"

#include "Errors.h"
#include "FastMath.h"
#include "LossMath.h"
#include "OpShapes.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace il::cpu {

namespace {

// Softmax cross-entropy with label smoothing s: the sum of the row losses; grad (if not null)
// gets the gradient of their mean. Rows are summed in chunks of whole rows.
double crossEntropySum(ChunkedSum& chunkedSum, float s, ConstTensor pred, ConstTensor target,
                       float* grad)
{
    const int64_t rows = pred.rows(), k = pred.cols();
    const float* z = pred.data;
    const float* t = target.data;
    const float invRows = 1.f / static_cast<float>(std::max<int64_t>(rows, 1));
    const int64_t rowChunk = std::max<int64_t>(1, kChunk / std::max<int64_t>(k, 1));
    int64_t badRow = -1;
    const double loss = chunkedSum(
        rows,
        [&](int64_t a, int64_t b) {
            double acc = 0;
            for (int64_t i = a; i < b; ++i) {
                const float* zr = z + i * k;
                const float tf = t[i];
                const auto cls = static_cast<int64_t>(tf);
                if (!(tf >= 0.f) || cls >= k) {
#pragma omp critical(ironlearn_badrow)
                    badRow = std::max(badRow, i);
                    continue;
                }
                float mx = zr[0];
                for (int64_t j = 1; j < k; ++j)
                    mx = std::max(mx, zr[j]);
                float sum = 0.f, sumZ = 0.f;
                for (int64_t j = 0; j < k; ++j) {
                    sum += fastmath::exp(zr[j] - mx);
                    sumZ += zr[j];
                }
                const float logSum = std::log(sum) + mx; // log sum exp
                acc += lossmath::crossEntropyRow(logSum, zr[cls], sumZ, k, s);
                if (grad) {
                    float* gr = grad + i * k;
                    const float invSum = 1.f / sum;
                    const float off = s / static_cast<float>(k);
                    for (int64_t j = 0; j < k; ++j)
                        gr[j] = lossmath::crossEntropyGradient(fastmath::exp(zr[j] - mx), invSum,
                                                               off, invRows);
                    gr[cls] -= lossmath::crossEntropyTargetShare(s, invRows);
                }
            }
            return acc;
        },
        rowChunk);
    if (badRow >= 0)
        throw BackendError("cross-entropy: row " + std::to_string(badRow) +
                           " has a class id outside 0.." + std::to_string(k - 1));
    return loss;
}

// MSE, MAE or BCE-with-logits: the sum of the element losses; grad (if not null) gets the
// gradient of their mean.
double pointLossSum(ChunkedSum& chunkedSum, LossKind kind, ConstTensor pred, ConstTensor target,
                    float* grad)
{
    const int64_t n = pred.size();
    const float* z = pred.data;
    const float* t = target.data;
    const float invN = 1.f / static_cast<float>(std::max<int64_t>(n, 1));
    switch (kind) {
    case LossKind::MSE:
        return chunkedSum(n, [&](int64_t a, int64_t b) {
            float acc = 0.f;
            if (grad) {
#pragma omp simd reduction(+ : acc)
                for (int64_t i = a; i < b; ++i) {
                    const float d = z[i] - t[i];
                    grad[i] = lossmath::mseGradient(d, invN);
                    acc += lossmath::mseTerm(d);
                }
            } else {
#pragma omp simd reduction(+ : acc)
                for (int64_t i = a; i < b; ++i) {
                    const float d = z[i] - t[i];
                    acc += lossmath::mseTerm(d);
                }
            }
            return static_cast<double>(acc);
        });
    case LossKind::MAE:
        return chunkedSum(n, [&](int64_t a, int64_t b) {
            float acc = 0.f;
            for (int64_t i = a; i < b; ++i) {
                const float d = z[i] - t[i];
                if (grad) grad[i] = lossmath::maeGradient(d, invN);
                acc += lossmath::maeTerm(d);
            }
            return static_cast<double>(acc);
        });
    case LossKind::BinaryCrossEntropy:
        return chunkedSum(n, [&](int64_t a, int64_t b) {
            double acc = 0;
            for (int64_t i = a; i < b; ++i) {
                const float zi = z[i], ti = t[i];
                const float e = fastmath::exp(-std::fabs(zi));
                acc += lossmath::bceTerm(zi, ti, e);
                if (grad) grad[i] = lossmath::bceGradient(zi, ti, e, invN);
            }
            return acc;
        });
    case LossKind::CrossEntropy:
        break; // crossEntropySum
    }
    return 0;
}

} // namespace

double meanLoss(ChunkedSum& sum, LossKind kind, float smoothing, ConstTensor pred,
                ConstTensor target, float* grad)
{
    if (kind == LossKind::CrossEntropy) {
        shapes::lossTargets(true, pred, target);
        const double loss = crossEntropySum(sum, smoothing, pred, target, grad);
        return loss / static_cast<double>(std::max<int64_t>(pred.rows(), 1));
    }
    shapes::lossTargets(false, pred, target);
    const double loss = pointLossSum(sum, kind, pred, target, grad);
    return loss / static_cast<double>(std::max<int64_t>(pred.size(), 1));
}

} // namespace il::cpu
