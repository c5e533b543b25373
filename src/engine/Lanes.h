// The lane types that the shared formulas (ActivationMath.h, OptimizerMath.h, LossMath.h,
// FastMath.h) are written over. A formula is a template over an ops type O: O::V is the lane
// type, O::k(c) a constant, O::select(m, a, b) a per-lane choice, and V's operators do the
// arithmetic. The same text then runs on
//   ScalarLane / DeviceLane   one float at a time: the CUDA kernels (kernels/) and host code
//   SIMD vectors              the CPU kernels (CpuKernels.cpp), one instantiation per Highway
//                             target, whose ops type adds FastMath.h's transcendentals
// Clamps are written as selects on a comparison, which keep a NaN (every comparison with NaN is
// false) the same way in every lane type.
#pragma once

#include "HostDevice.h"

#include <cmath>

namespace il {

struct ScalarLane {
    using V = float;
    IL_HOST_DEVICE static float k(float c) { return c; }
    IL_HOST_DEVICE static float select(bool m, float a, float b) { return m ? a : b; }
    IL_HOST_DEVICE static float abs(float x) { return fabsf(x); }
    IL_HOST_DEVICE static float neg(float x) { return -x; }
    IL_HOST_DEVICE static float sqrt(float x) { return sqrtf(x); }
};

#if defined(__CUDACC__) || defined(IRONLEARN_CUDA_EMULATION)
// The GPU's lane: CUDA's IEEE transcendental functions (no --use_fast_math), so the CPU and CUDA
// results agree to a few ulp, not bit for bit.
struct DeviceLane : ScalarLane {
    IL_HOST_DEVICE static float sin(float x) { return sinf(x); }
    IL_HOST_DEVICE static float cos(float x) { return cosf(x); }
    IL_HOST_DEVICE static float exp(float x) { return expf(x); }
    IL_HOST_DEVICE static float tanh(float x) { return tanhf(x); }
    IL_HOST_DEVICE static float log1p(float x) { return log1pf(x); }
};
#endif

} // namespace il
