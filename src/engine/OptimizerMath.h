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
//   update<O>(c, w, g, scale, slots...)  one lane of elements: the parameter w and its state
//             slots in and out, its gradient g times the step guard's clip factor scale. A
//             template over a lane ops type O (Lanes.h): one float on the GPU, a SIMD vector in
//             the CPU kernels (CpuKernels.cpp).
// IL_OPTIMIZER_RULES, at the end of formulas/OptimizerRules.inc, lists them; the OptimizerRule
// enum and every backend's dispatch follow that list. A new rule is one struct and one entry
// there; Optimizers.cpp describes the optimizer that uses it (name, settings, state names) and
// passes its values in the rule's order.
//
// Every product that feeds a sum is spelled IL_MUL_ADD(a, b, c) = a * b + c or IL_MUL(a, b), and
// each operation is rounded on its own on every backend, so both compute the same bits (sqrt and
// division are IEEE on both: no --use_fast_math). The CPU kernels never fuse (CpuKernels.cpp is
// compiled with -ffp-contract=off, so every SIMD target, with or without FMA hardware, gives the
// same bits). nvcc contracts a product feeding a sum into an FMA by default (--fmad=true), so on
// the GPU these are __fadd_rn / __fmul_rn, which it never fuses. A fused and an unfused
// a * b + c differ by up to an ulp of a * b, which is any number of ulps of the result where
// the sum cancels (g + wd w, mu v + g): fused on the GPU, the state differed from the CPU's by
// 5e-6 relative, and RMSprop's step lr g / (sqrt(v) + eps), for a g + wd w that cancels to near
// eps / sqrt(1 - rho), by 1e-4. A plain `*` may feed a product, a quotient or an argument of
// these macros, never a `+` or `-`.
#pragma once

#include "HostDevice.h"
#include "Lanes.h"

#ifdef IRONLEARN_CUDA_EMULATION
#include <cuda_runtime.h> // the emulation's __fmul_rn, __fadd_rn (nvcc declares them itself)
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

namespace il {

inline constexpr int kMaxOptimizerSlots = 4;
inline constexpr int kMaxOptimizerValues = 8;

// What one step of a rule is given on the host.
struct OptimizerHyper {
    float lr = 0.f;
    int64_t step = 1;                       // 1-based (Adam's bias correction)
    float values[kMaxOptimizerValues] = {}; // the rule's hyperparameters, in its enum's order
};

namespace optimizers {

#include "formulas/OptimizerRules.inc" // the rules and their list, IL_OPTIMIZER_RULES

} // namespace optimizers

#define IL_OPTIMIZER_RULE_ENUM(N) N,
enum class OptimizerRule { IL_OPTIMIZER_RULES(IL_OPTIMIZER_RULE_ENUM) };
#undef IL_OPTIMIZER_RULE_ENUM

#define IL_OPTIMIZER_RULE_COUNT(N) +1
inline constexpr int kOptimizerRuleCount = 0 IL_OPTIMIZER_RULES(IL_OPTIMIZER_RULE_COUNT);
#undef IL_OPTIMIZER_RULE_COUNT

namespace optimizers {

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
    Rule::template update<ScalarLane>(c, w[i], g[i], scale, s.p[K][i]...);
}

template <class Rule>
IL_HOST_DEVICE inline void updateElement(const typename Rule::Step& c, float* w, const float* g,
                                         float scale, const Slots& s, int64_t i)
{
    updateElement<Rule>(c, w, g, scale, s, i, std::make_index_sequence<Rule::kSlots>{});
}

} // namespace optimizers

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
