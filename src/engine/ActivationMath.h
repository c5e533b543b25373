// Activation functions, forward and derivative, written once for the CPU backend and the CUDA
// kernels (kernels/ElementwiseKernels.cu), which both instantiate their loops from these structs.
//
// Each activation is a struct with
//   kName                 its name in the layer language, in messages and in test rows
//   kBackwardFromOutput   true: the derivative is computed from y = f(x) (cheaper), else from x
//   kHeavyForward/Backward  the formula calls a transcendental function (the CPU backend then
//                         spreads smaller tensors over its threads)
//   forward(x, p)         y = f(x); p is the activation's one argument (slope, w0), 0 if none
//   backward(in, g, p)    dL/dx for g = dL/dy, with in = y or x as kBackwardFromOutput says
// IL_ACTIVATIONS lists them; the Activation enum, activationName() and every backend's dispatch
// follow that list. A new activation is one struct and one entry here, plus its layer
// description in ActivationLayers.cpp.
//
// Transcendentals: on the CPU, FastMath.h's vectorisable approximations; on the GPU, CUDA's IEEE
// sinf/cosf/expf/tanhf (no --use_fast_math). The CPU and CUDA results therefore agree to a few
// ulp, not bit for bit.
#pragma once

#include "FastMath.h"
#include "HostDevice.h"

#include <string>

namespace il {

#define IL_ACTIVATIONS(X) X(Identity) X(ReLU) X(LeakyReLU) X(Tanh) X(Sigmoid) X(Sine) X(Gelu)

#define IL_ACTIVATION_ENUM(N) N,
enum class Activation { IL_ACTIVATIONS(IL_ACTIVATION_ENUM) };
#undef IL_ACTIVATION_ENUM

#define IL_ACTIVATION_COUNT(N) +1
inline constexpr int kActivationCount = 0 IL_ACTIVATIONS(IL_ACTIVATION_COUNT);
#undef IL_ACTIVATION_COUNT

namespace activations {

// The transcendental functions, host or device.
namespace math {
IL_HOST_DEVICE inline float sin(float x)
{
#ifdef __CUDA_ARCH__
    return sinf(x);
#else
    return fastmath::sin(x);
#endif
}
IL_HOST_DEVICE inline float cos(float x)
{
#ifdef __CUDA_ARCH__
    return cosf(x);
#else
    return fastmath::cos(x);
#endif
}
IL_HOST_DEVICE inline float exp(float x)
{
#ifdef __CUDA_ARCH__
    return expf(x);
#else
    return fastmath::exp(x);
#endif
}
IL_HOST_DEVICE inline float tanh(float x)
{
#ifdef __CUDA_ARCH__
    return tanhf(x);
#else
    return fastmath::tanh(x);
#endif
}
} // namespace math

// f(x) = x. The backends copy instead of running a loop.
struct Identity {
    static constexpr const char* kName = "identity";
    static constexpr bool kBackwardFromOutput = false;
    static constexpr bool kHeavyForward = false, kHeavyBackward = false;
    IL_HOST_DEVICE static float forward(float x, float) { return x; }
    IL_HOST_DEVICE static float backward(float, float g, float) { return g; }
};

// f(x) = max(0, x).
struct ReLU {
    static constexpr const char* kName = "relu";
    static constexpr bool kBackwardFromOutput = false;
    static constexpr bool kHeavyForward = false, kHeavyBackward = false;
    IL_HOST_DEVICE static float forward(float x, float) { return x > 0.f ? x : 0.f; }
    IL_HOST_DEVICE static float backward(float x, float g, float) { return x > 0.f ? g : 0.f; }
};

// f(x) = x for x > 0, slope * x otherwise.
struct LeakyReLU {
    static constexpr const char* kName = "leakyrelu";
    static constexpr bool kBackwardFromOutput = false;
    static constexpr bool kHeavyForward = false, kHeavyBackward = false;
    IL_HOST_DEVICE static float forward(float x, float slope) { return x > 0.f ? x : slope * x; }
    IL_HOST_DEVICE static float backward(float x, float g, float slope)
    {
        return x > 0.f ? g : slope * g;
    }
};

// f(x) = tanh(x), f' = 1 - y^2.
struct Tanh {
    static constexpr const char* kName = "tanh";
    static constexpr bool kBackwardFromOutput = true;
    static constexpr bool kHeavyForward = true, kHeavyBackward = false;
    IL_HOST_DEVICE static float forward(float x, float) { return math::tanh(x); }
    IL_HOST_DEVICE static float backward(float y, float g, float) { return g * (1.f - y * y); }
};

// f(x) = 1 / (1 + e^-x), f' = y (1 - y).
struct Sigmoid {
    static constexpr const char* kName = "sigmoid";
    static constexpr bool kBackwardFromOutput = true;
    static constexpr bool kHeavyForward = true, kHeavyBackward = false;
    IL_HOST_DEVICE static float forward(float x, float) { return 1.f / (1.f + math::exp(-x)); }
    IL_HOST_DEVICE static float backward(float y, float g, float) { return g * y * (1.f - y); }
};

// SIREN's f(x) = sin(w0 x), f' = w0 cos(w0 x).
struct Sine {
    static constexpr const char* kName = "sine";
    static constexpr bool kBackwardFromOutput = false;
    static constexpr bool kHeavyForward = true, kHeavyBackward = true;
    IL_HOST_DEVICE static float forward(float x, float w0) { return math::sin(w0 * x); }
    IL_HOST_DEVICE static float backward(float x, float g, float w0)
    {
        return g * w0 * math::cos(w0 * x);
    }
};

// GELU, tanh approximation (Hendrycks & Gimpel 2016, as in GPT-2 and PyTorch's
// approximate="tanh"): f(x) = x/2 (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3);
// f'(x) = (1 + t)/2 + x/2 (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2), t = tanh(u).
struct Gelu {
    static constexpr const char* kName = "gelu";
    static constexpr bool kBackwardFromOutput = false;
    static constexpr bool kHeavyForward = true, kHeavyBackward = true;
    static constexpr float kRoot2OverPi = 0.7978845608028654f;
    static constexpr float kCubic = 0.044715f;
    IL_HOST_DEVICE static float forward(float x, float)
    {
        const float x2 = x * x;
        const float t = math::tanh(kRoot2OverPi * (x + kCubic * x2 * x));
        return 0.5f * x * (1.f + t);
    }
    IL_HOST_DEVICE static float backward(float x, float g, float)
    {
        const float x2 = x * x;
        const float t = math::tanh(kRoot2OverPi * (x + kCubic * x2 * x));
        const float du = kRoot2OverPi * (1.f + 3.f * kCubic * x2);
        return g * (0.5f * (1.f + t) + 0.5f * x * (1.f - t * t) * du);
    }
};

} // namespace activations

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
