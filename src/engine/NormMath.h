// Layer and batch normalisation, the formulas every backend shares (the CPU loops in
// CpuNorm.cpp and the CUDA kernels in kernels/NormKernels.cu), so both compute the same
// expressions: statistics in double on the CPU and in float on the GPU (a parity test's
// tolerance covers the difference), the rest in float.
//
//   xhat = (x - mean) * rstd,  rstd = 1 / sqrt(var + eps)   (var: the biased variance)
//   y    = xhat * gamma + beta
// Backward over a group of n values normalised together (a row for LayerNorm, a column for
// BatchNorm), with g = dy * gamma:
//   dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
//   dgamma = sum over the other axis of dy * xhat,  dbeta = sum of dy
#pragma once

#include "HostDevice.h"

#include <cstdint>

namespace il::normmath {

// PyTorch's defaults: LayerNorm and BatchNorm1d eps, BatchNorm1d momentum.
inline constexpr float kEps = 1e-5f;
inline constexpr float kMomentum = 0.1f;

IL_HOST_DEVICE inline float normalised(float x, float mean, float rstd)
{
    return (x - mean) * rstd;
}

// One element of dx: g = dy * gamma; meanG and meanGX are the group's mean of g and of
// g * xhat.
IL_HOST_DEVICE inline float inputGradient(float g, float xhat, float rstd, float meanG,
                                          float meanGX)
{
    return rstd * (g - meanG - xhat * meanGX);
}

// The running variance moves toward the unbiased variance of n values (n > 1; with one value
// there is no spread to measure and the biased one, 0, is used).
IL_HOST_DEVICE inline float unbiasedVariance(float biased, int64_t n)
{
    return n > 1 ? biased * static_cast<float>(n) / static_cast<float>(n - 1) : biased;
}

IL_HOST_DEVICE inline float runningUpdate(float running, float batch, float momentum)
{
    return (1.f - momentum) * running + momentum * batch;
}

} // namespace il::normmath
