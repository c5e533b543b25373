// Optimizer update rules, each written once for the CPU backend and the CUDA kernels
// (kernels/ElementwiseKernels.cu), which both instantiate their loop or kernel from these structs.
//
// Each rule is a struct with
//   kName     its name in messages
//   kSlots    how many state tensors it keeps between steps (each with the parameters' layout)
//   kValues   how many hyperparameters it reads from OptimizerHyper::values, named by its enum
//   kHeavy    the element update takes a square root or a division (the CPU backend then
//             spreads smaller tensors over its threads)
//   Step      the constants one step's element updates share: prepare(h) computes them on the
//             host from the learning rate, the step number and the rule's values. The CUDA
//             kernel takes Step by value, so a recording bakes it in like any host scalar.
//   update(c, w, g, scale, slots...)  one element: the parameter w and its state slots in and
//             out, its gradient g times the step guard's clip factor scale.
// IL_OPTIMIZER_RULES lists them; the OptimizerRule enum and every backend's dispatch follow that
// list. A new rule is one struct and one entry here; Optimizers.cpp describes the optimizer
// that uses it (name, settings, state names) and passes its values in the rule's order.
//
// Products that feed a sum are spelled IL_FMA(a, b, c) = a * b + c. On the GPU that is fmaf:
// nvcc would contract anyway, but which product gets fused changes the rounding, so the kernels
// fuse the product the CPU compiler fuses (the first of a sum, with FMA hardware). On the host
// it is the plain expression, kept a macro so that it stays exactly the expression as written
// (a function's arguments would be evaluated first, and the compiler could then fuse the other
// product of a sum).
#pragma once

#include "HostDevice.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

namespace il {

#define IL_OPTIMIZER_RULES(X) X(Sgd) X(Momentum) X(Adam) X(RmsProp)

#define IL_OPTIMIZER_RULE_ENUM(N) N,
enum class OptimizerRule { IL_OPTIMIZER_RULES(IL_OPTIMIZER_RULE_ENUM) };
#undef IL_OPTIMIZER_RULE_ENUM

#define IL_OPTIMIZER_RULE_COUNT(N) +1
inline constexpr int kOptimizerRuleCount = 0 IL_OPTIMIZER_RULES(IL_OPTIMIZER_RULE_COUNT);
#undef IL_OPTIMIZER_RULE_COUNT

inline constexpr int kMaxOptimizerSlots = 4;
inline constexpr int kMaxOptimizerValues = 8;

// What one step of a rule is given on the host.
struct OptimizerHyper {
    float lr = 0.f;
    int64_t step = 1;                         // 1-based (Adam's bias correction)
    float values[kMaxOptimizerValues] = {};   // the rule's hyperparameters, in its enum's order
};

#ifdef __CUDA_ARCH__
#define IL_FMA(a, b, c) fmaf((a), (b), (c))
#else
#define IL_FMA(a, b, c) ((a) * (b) + (c))
#endif

namespace optimizers {

IL_HOST_DEVICE inline float sqrt(float x)
{
#ifdef __CUDA_ARCH__
    return sqrtf(x);
#else
    return std::sqrt(x);
#endif
}

// PyTorch's SGD: w -= lr (g + wd w). Keeps no state.
struct Sgd {
    static constexpr const char* kName = "sgd";
    enum Value { WeightDecay, kValues };
    static constexpr int kSlots = 0;
    static constexpr bool kHeavy = false;
    struct Step {
        float lr, wd;
    };
    static Step prepare(const OptimizerHyper& h) { return {h.lr, h.values[WeightDecay]}; }
    IL_HOST_DEVICE static void update(const Step& c, float& w, float g, float scale)
    {
        const float wi = w;
        w = IL_FMA(-c.lr, IL_FMA(g, scale, c.wd * wi), wi);
    }
};

// PyTorch's SGD with momentum mu: v = mu v + (g + wd w); w -= lr v, or with Nesterov
// w -= lr (g + wd w + mu v). Slot 0: the velocity v.
struct Momentum {
    static constexpr const char* kName = "momentum";
    enum Value { Mu, WeightDecay, Nesterov, kValues }; // Nesterov: 1 or 0
    static constexpr int kSlots = 1;
    static constexpr bool kHeavy = false;
    struct Step {
        float lr, wd, mu;
        bool nesterov;
    };
    static Step prepare(const OptimizerHyper& h)
    {
        return {h.lr, h.values[WeightDecay], h.values[Mu], h.values[Nesterov] != 0.f};
    }
    IL_HOST_DEVICE static void update(const Step& c, float& w, float g, float scale, float& v)
    {
        const float wi = w;
        const float gi = IL_FMA(g, scale, c.wd * wi); // g + wd w
        const float vi = IL_FMA(c.mu, v, gi);         // mu v + g
        v = vi;
        w = IL_FMA(-c.lr, c.nesterov ? IL_FMA(c.mu, vi, gi) : vi, wi);
    }
};

// PyTorch's Adam and AdamW, so results compare directly:
//   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
//   w -= (lr / (1 - b1^t)) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
// AdamW (Decoupled = 1) first decays w *= (1 - lr * wd); Adam adds wd * w to g instead.
// Slots: m, v.
struct Adam {
    static constexpr const char* kName = "adam";
    enum Value { Beta1, Beta2, Eps, WeightDecay, Decoupled, kValues }; // Decoupled: 1 or 0
    static constexpr int kSlots = 2;
    static constexpr bool kHeavy = true;
    struct Step {
        float stepSize, invSqrtBc2, b1, b2, eps, l2, decay;
    };
    static Step prepare(const OptimizerHyper& h)
    {
        const float beta1 = h.values[Beta1], beta2 = h.values[Beta2], wd = h.values[WeightDecay];
        const bool decoupled = h.values[Decoupled] != 0.f;
        // The bias corrections in double, once per step.
        const double t = static_cast<double>(std::max<int64_t>(1, h.step));
        const float bc1 = static_cast<float>(1.0 - std::pow(static_cast<double>(beta1), t));
        const float bc2 = static_cast<float>(1.0 - std::pow(static_cast<double>(beta2), t));
        Step c;
        c.stepSize = h.lr / bc1;
        c.invSqrtBc2 = 1.f / std::sqrt(bc2);
        c.b1 = beta1;
        c.b2 = beta2;
        c.eps = h.values[Eps];
        c.l2 = decoupled ? 0.f : wd;
        c.decay = decoupled ? 1.f - h.lr * wd : 1.f;
        return c;
    }
    IL_HOST_DEVICE static void update(const Step& c, float& w, float g, float scale, float& m,
                                      float& v)
    {
        const float w0 = w;
        const float wi = w0 * c.decay;
        const float gi = IL_FMA(g, scale, c.l2 * w0);                 // g + l2 w
        const float mi = IL_FMA(c.b1, m, (1.f - c.b1) * gi);          // b1 m + (1 - b1) g
        const float vi = IL_FMA(c.b2, v, (1.f - c.b2) * gi * gi);     // b2 v + (1 - b2) g^2
        m = mi;
        v = vi;
        w = wi - c.stepSize * mi / IL_FMA(sqrt(vi), c.invSqrtBc2, c.eps);
    }
};

// PyTorch's RMSprop (no momentum, not centred): v = rho v + (1 - rho) g^2;
// w -= lr g / (sqrt(v) + eps), with g + wd w for weight decay (L2). Slot 0: v.
struct RmsProp {
    static constexpr const char* kName = "rmsprop";
    enum Value { Rho, Eps, WeightDecay, kValues };
    static constexpr int kSlots = 1;
    static constexpr bool kHeavy = true;
    struct Step {
        float lr, rho, eps, wd;
    };
    static Step prepare(const OptimizerHyper& h)
    {
        return {h.lr, h.values[Rho], h.values[Eps], h.values[WeightDecay]};
    }
    IL_HOST_DEVICE static void update(const Step& c, float& w, float g, float scale, float& v)
    {
        const float wi = w;
        const float gi = IL_FMA(g, scale, c.wd * wi);             // g + wd w
        const float vi = IL_FMA(c.rho, v, (1.f - c.rho) * gi * gi); // rho v + (1 - rho) g^2
        v = vi;
        w = wi - c.lr * (gi / (sqrt(vi) + c.eps));
    }
};

#define IL_OPTIMIZER_RULE_CHECK(N)                                                                 \
    static_assert(N::kSlots <= kMaxOptimizerSlots && N::kValues <= kMaxOptimizerValues);
IL_OPTIMIZER_RULES(IL_OPTIMIZER_RULE_CHECK)
#undef IL_OPTIMIZER_RULE_CHECK

// The state tensors' data of one update, by value (a kernel argument).
struct Slots {
    float* p[kMaxOptimizerSlots];
};

// Element i: Rule::update on w[i], g[i] and slot k's element i for every k < Rule::kSlots.
template <class Rule, size_t... K>
IL_HOST_DEVICE inline void updateElement(const typename Rule::Step& c, float* w, const float* g,
                                         float scale, const Slots& s, int64_t i,
                                         std::index_sequence<K...>)
{
    Rule::update(c, w[i], g[i], scale, s.p[K][i]...);
}

template <class Rule>
IL_HOST_DEVICE inline void updateElement(const typename Rule::Step& c, float* w, const float* g,
                                         float scale, const Slots& s, int64_t i)
{
    updateElement<Rule>(c, w, g, scale, s, i, std::make_index_sequence<Rule::kSlots>{});
}

} // namespace optimizers

#undef IL_FMA

// Calls f.template operator()<optimizers::Name>() for the rule r (nothing for a value outside the
// enum). Backends use it to pick the instantiation of their loop or kernel.
template <class F> void visitOptimizerRule(OptimizerRule r, F&& f)
{
    switch (r) {
#define IL_OPTIMIZER_RULE_CASE(N)                                                                  \
    case OptimizerRule::N:                                                                         \
        f.template operator()<optimizers::N>();                                                    \
        return;
        IL_OPTIMIZER_RULES(IL_OPTIMIZER_RULE_CASE)
#undef IL_OPTIMIZER_RULE_CASE
    }
}

// Calls f.template operator()<optimizers::Name>() for every rule, in list order.
template <class F> void forEachOptimizerRule(F&& f)
{
#define IL_OPTIMIZER_RULE_CALL(N) f.template operator()<optimizers::N>();
    IL_OPTIMIZER_RULES(IL_OPTIMIZER_RULE_CALL)
#undef IL_OPTIMIZER_RULE_CALL
}

} // namespace il
