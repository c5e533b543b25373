// The per-element and per-row loss formulas, shared by the CPU backend (CpuLoss.cpp) and the
// CUDA kernels (kernels/ReductionKernels.cu), so the two compute the same expressions in the
// same float order. Each backend does its own summing (fixed chunks on the CPU, block
// reductions on the GPU) and its own exp: the callers pass e = exp(...) in, computed with
// fastmath::exp on the CPU and expf on the GPU.
//
// All losses are means: invN = 1 / n (elements) or invRows = 1 / rows (cross-entropy).
#pragma once

#include "HostDevice.h"

#include <cmath>
#include <cstdint>
#ifndef __CUDA_ARCH__
#include <algorithm>
#endif

namespace il::lossmath {

// max(z, 0) as each side always wrote it (std::max keeps a NaN z, fmaxf drops it; the term
// that uses it is NaN either way).
IL_HOST_DEVICE inline float positivePart(float z)
{
#ifdef __CUDA_ARCH__
    return fmaxf(z, 0.f);
#else
    return std::max(z, 0.f);
#endif
}

// ---- mean squared error: (z - t)^2, d = z - t --------------------------------------------------
IL_HOST_DEVICE inline float mseTerm(float d)
{
    return d * d;
}
IL_HOST_DEVICE inline float mseGradient(float d, float invN)
{
    return 2.f * d * invN;
}

// ---- mean absolute error: |z - t|
// ----------------------------------------------------------------
IL_HOST_DEVICE inline float maeTerm(float d)
{
    return fabsf(d);
}
// sign(d) / n, and 0 at d == 0 (and for NaN).
IL_HOST_DEVICE inline float maeGradient(float d, float invN)
{
    return d > 0.f ? invN : (d < 0.f ? -invN : 0.f);
}

// ---- binary cross-entropy on a logit z, target t in [0, 1]
// --------------------------------------- With e = exp(-|z|): max(z, 0) - z t + log(1 + e) never
// overflows and never takes log(0).
IL_HOST_DEVICE inline float bceTerm(float z, float t, float e)
{
    return positivePart(z) - z * t + log1pf(e);
}
// (sigmoid(z) - t) / n, the sigmoid formed from e on the side where it cannot overflow.
IL_HOST_DEVICE inline float bceGradient(float z, float t, float e, float invN)
{
    const float sig = z >= 0.f ? 1.f / (1.f + e) : e / (1.f + e);
    return (sig - t) * invN;
}

// ---- softmax cross-entropy with label smoothing s, over k classes
// -------------------------------- Targets q = (1 - s) onehot(cls) + s / k. With logSum = log sum_j
// exp(z_j) and sumZ = sum_j z_j, a row's loss -sum_j q_j log p_j is (1 - s) (logSum - z_cls) + s
// (logSum - mean z).
IL_HOST_DEVICE inline float crossEntropyRow(float logSum, float zCls, float sumZ, int64_t k,
                                            float s)
{
    const float nllTarget = logSum - zCls;
    const float meanNll = logSum - sumZ / static_cast<float>(k);
    return (1.f - s) * nllTarget + s * meanNll;
}
// The gradient (p_j - q_j) / rows in two parts: every logit gets (p_j - s / k) / rows, with
// p_j = e * invSum (e = exp(z_j - max), invSum = 1 / sum of those), offSmooth = s / k ...
IL_HOST_DEVICE inline float crossEntropyGradient(float e, float invSum, float offSmooth,
                                                 float invRows)
{
    return (e * invSum - offSmooth) * invRows;
}
// ... and the target's logit then loses (1 - s) / rows.
IL_HOST_DEVICE inline float crossEntropyTargetShare(float s, float invRows)
{
    return (1.f - s) * invRows;
}

} // namespace il::lossmath
