// The per-element and per-row loss formulas, shared by the CPU backend (CpuLoss.cpp) and the
// CUDA kernels (kernels/ReductionKernels.cu), so the two compute the same expressions in the
// same float order. Each backend does its own summing (fixed 16-lane blocks on the CPU, block
// reductions on the GPU) and its own exp: the callers pass e = exp(...) in, computed with
// FastMath.h's exp on the CPU and expf on the GPU.
//
// All losses are means: invN = 1 / n (elements) or invRows = 1 / rows (cross-entropy). With
// class weights a term is multiplied by its weight w and its gradient uses w * invN (or
// w * invRows: crossEntropyRowScale) in place of invN; the mean still divides by n.
#pragma once

#include "HostDevice.h"
#include "Lanes.h"

#include <cstdint>

namespace il::lossmath {

#include "formulas/Losses.inc"

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
// The gradient (p_j - q_j) / rows in two parts: crossEntropyGradient (formulas/Losses.inc) for
// every logit ...
// ... and the target's logit then loses (1 - s) / rows.
IL_HOST_DEVICE inline float crossEntropyTargetShare(float s, float invRows)
{
    return (1.f - s) * invRows;
}
// A row of class weight w: its loss is w times crossEntropyRow and its gradient is that of
// crossEntropyGradient and crossEntropyTargetShare with this scale in place of invRows.
IL_HOST_DEVICE inline float crossEntropyRowScale(float w, float invRows)
{
    return w * invRows;
}

} // namespace il::lossmath
