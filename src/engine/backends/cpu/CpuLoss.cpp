#include "CpuLoss.h"

#include "CpuKernels.h"
#include "Errors.h"

#include <algorithm>
#include <string>

namespace il::cpu {

namespace {

// Softmax cross-entropy with label smoothing s: the sum of the row losses (each times its class
// weight when weights is not null); grad (if not null) gets the gradient of their mean. Rows are
// summed in chunks of whole rows.
double crossEntropySum(ChunkedSum& chunkedSum, float s, const float* weights, ConstTensor pred,
                       ConstTensor target, float* grad)
{
    const int64_t rows = pred.rows(), k = pred.cols();
    const float invRows = 1.f / static_cast<float>(std::max<int64_t>(rows, 1));
    const int64_t rowChunk = std::max<int64_t>(1, kChunk / std::max<int64_t>(k, 1));
    int64_t badRow = -1;
    const double loss = chunkedSum(
        rows,
        [&](int64_t a, int64_t b) {
            int64_t bad = -1;
            const double sum = simd::crossEntropyRows(pred.data, target.data, weights, a, b, k, s,
                                                      invRows, grad, &bad);
            if (bad >= 0) {
#pragma omp critical(ironlearn_badrow)
                badRow = std::max(badRow, bad);
            }
            return sum;
        },
        rowChunk);
    if (badRow >= 0)
        throw BackendError("cross-entropy: row " + std::to_string(badRow) +
                           " has a class id outside 0.." + std::to_string(k - 1));
    return loss;
}

// MSE, MAE or BCE-with-logits (weighted by class when weights is not null): the sum of the
// element losses; grad (if not null) gets the gradient of their mean.
double pointLossSum(ChunkedSum& chunkedSum, LossKind kind, const float* weights, ConstTensor pred,
                    ConstTensor target, float* grad)
{
    const int64_t n = pred.size();
    const float* z = pred.data;
    const float* t = target.data;
    const float invN = 1.f / static_cast<float>(std::max<int64_t>(n, 1));
    return chunkedSum(n, [&](int64_t a, int64_t b) {
        return static_cast<double>(
            simd::pointLoss(kind, z + a, t + a, weights, grad ? grad + a : nullptr, invN, b - a));
    });
}

} // namespace

double meanLoss(ChunkedSum& sum, LossKind kind, float smoothing, ConstTensor classWeights,
                ConstTensor pred, ConstTensor target, float* grad)
{
    // Backend memory is host memory here: the kernels read the weights in place.
    const float* weights = classWeights.empty() ? nullptr : classWeights.data;
    if (kind == LossKind::CrossEntropy) {
        const double loss = crossEntropySum(sum, smoothing, weights, pred, target, grad);
        return loss / static_cast<double>(std::max<int64_t>(pred.rows(), 1));
    }
    const double loss = pointLossSum(sum, kind, weights, pred, target, grad);
    return loss / static_cast<double>(std::max<int64_t>(pred.size(), 1));
}

} // namespace il::cpu
