// Activation functions, forward and derivative, written once for the CPU backend and the CUDA
// kernels (kernels/ElementwiseKernels.cu), which both instantiate their loops from these structs.
//
// Each activation is a struct with
//   kName                 its name in the layer language, in messages and in test rows
//   kBackwardFromOutput   true: the derivative is computed from y = f(x) (cheaper), else from x
//   kHeavyForward/Backward  the formula calls a transcendental function (the CPU backend then
//                         spreads smaller tensors over its threads)
//   forward<O>(x, p)      y = f(x); p is the activation's one argument (slope, w0), 0 if none
//   backward<O>(in, g, p) dL/dx for g = dL/dy, with in = y or x as kBackwardFromOutput says
// Both are templates over a lane ops type O (Lanes.h): one float at a time on the GPU, SIMD
// vectors on the CPU. O supplies sin, cos, exp and tanh.
// IL_ACTIVATIONS, at the end of formulas/Activations.inc, lists them; the Activation enum,
// activationName() and every backend's dispatch follow that list. A new activation is one struct
// and one entry there, plus its layer description with its export forms in ActivationLayers.cpp.
//
// Transcendentals: on the CPU, FastMath.h's approximations in SIMD lanes; on the GPU, CUDA's IEEE
// sinf/cosf/expf/tanhf (DeviceLane). The CPU and CUDA results therefore agree to a few ulp, not
// bit for bit.
#pragma once

#include "HostDevice.h"
#include "Lanes.h"

#include <string>

namespace il {

namespace activations {

#include "formulas/Activations.inc" // the structs and their list, IL_ACTIVATIONS

} // namespace activations

#define IL_ACTIVATION_ENUM(N) N,
enum class Activation { IL_ACTIVATIONS(IL_ACTIVATION_ENUM) };
#undef IL_ACTIVATION_ENUM

#define IL_ACTIVATION_COUNT(N) +1
inline constexpr int kActivationCount = 0 IL_ACTIVATIONS(IL_ACTIVATION_COUNT);
#undef IL_ACTIVATION_COUNT

// Calls f.template operator()<activations::Name>() for the activation act (nothing for a value
// outside the enum). Backends use it to pick the instantiation of their loop or kernel.
template <class F> void visitActivation(Activation act, F&& f)
{
    switch (act) {
#define IL_ACTIVATION_CASE(N)                                                                      \
    case Activation::N:                                                                            \
        f.template operator()<activations::N>();                                                   \
        return;
        IL_ACTIVATIONS(IL_ACTIVATION_CASE)
#undef IL_ACTIVATION_CASE
    }
}

// Calls f.template operator()<activations::Name>() for every activation, in list order.
template <class F> void forEachActivation(F&& f)
{
#define IL_ACTIVATION_CALL(N) f.template operator()<activations::N>();
    IL_ACTIVATIONS(IL_ACTIVATION_CALL)
#undef IL_ACTIVATION_CALL
}

inline std::string activationName(Activation act)
{
    const char* name = "?";
    visitActivation(act, [&]<class Op>() { name = Op::kName; });
    return name;
}

} // namespace il
