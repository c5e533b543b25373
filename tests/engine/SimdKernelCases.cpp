#include "SimdKernelCases.h"

#include "ActivationMath.h"
#include "CpuKernels.h"
#include "OptimizerMath.h"
#include "Random.h"

#include <cstring>
#include <limits>
#include <string>
#include <utility>

namespace simdcases {

using namespace il;
using Vec = std::vector<float>;

void Bytes::add(const void* p, size_t n)
{
    const auto* b = static_cast<const unsigned char*>(p);
    data.insert(data.end(), b, b + n);
}

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// n uniform values in [lo, hi] from a seed fixed by the case and n. With specials, every 61st
// value is one of the awkward ones below (signed zeros, a subnormal, huge values, NaN, +-inf).
Vec inputs(uint64_t salt, int64_t n, double lo, double hi, bool specials = false)
{
    static const float kSpecial[] = {0.f,    -0.f, 1e-40f, 1e6f,  -1e6f, 100.f,
                                     -100.f, kNaN, kInf,   -kInf, 3e38f, -3e38f};
    Rng rng(salt * 7919 + static_cast<uint64_t>(n));
    Vec v(static_cast<size_t>(n));
    size_t next = 0;
    for (size_t i = 0; i < v.size(); ++i) {
        v[i] = static_cast<float>(rng.uniform(lo, hi));
        if (specials && i % 61 == 7) v[i] = kSpecial[next++ % std::size(kSpecial)];
    }
    return v;
}

float activationParam(Activation act)
{
    switch (act) {
    case Activation::LeakyReLU:
        return 0.01f;
    case Activation::Sine:
        return 30.f; // SIREN's w0
    default:
        return 0.5f; // read by none of the others
    }
}

void addActivationCases(std::vector<Case>& cases)
{
    static const Activation kAll[] = {
#define IL_ENTRY(N) Activation::N,
        IL_ACTIVATIONS(IL_ENTRY)
#undef IL_ENTRY
    };
    for (Activation act : kAll) {
        const QString name = QString::fromStdString(activationName(act));
        const float p = activationParam(act);
        cases.push_back({"forward " + name, [act, p](int64_t n) {
                             Vec x = inputs(1, n, -6, 6, true), y(x.size());
                             simd::activationForward(act, p, x.data(), y.data(), n);
                             Bytes b;
                             b.add(y);
                             return b;
                         }});
        bool fromOutput = false;
        visitActivation(act, [&]<class Op>() { fromOutput = Op::kBackwardFromOutput; });
        cases.push_back({"backward " + name, [act, p, fromOutput](int64_t n) {
                             Vec in =
                                 fromOutput ? inputs(2, n, -1, 1, true) : inputs(3, n, -6, 6, true);
                             Vec dy = inputs(4, n, -2, 2), dx(in.size());
                             simd::activationBackward(act, p, in.data(), dy.data(), dx.data(), n);
                             Bytes b;
                             b.add(dx);
                             return b;
                         }});
    }
}

// Realistic hyperparameters for each rule, weight decay included (0.01 for each value of a rule
// not listed here); empty for an unknown rule.
std::vector<std::pair<QString, OptimizerHyper>> hyperparameters(OptimizerRule rule)
{
    auto make = [](float lr, std::initializer_list<float> values) {
        OptimizerHyper h;
        h.lr = lr;
        h.step = 7;
        std::copy(values.begin(), values.end(), h.values);
        return h;
    };
    namespace o = optimizers;
    switch (rule) {
    case OptimizerRule::Sgd:
        static_assert(o::Sgd::WeightDecay == 0);
        return {{"wd", make(0.05f, {1e-4f})}};
    case OptimizerRule::Momentum:
        static_assert(o::Momentum::Mu == 0 && o::Momentum::Nesterov == 2);
        return {{"classic", make(0.01f, {0.9f, 5e-4f, 0.f})},
                {"nesterov", make(0.01f, {0.9f, 5e-4f, 1.f})}};
    case OptimizerRule::Adam:
        static_assert(o::Adam::Beta1 == 0 && o::Adam::Decoupled == 4);
        return {{"adam l2", make(1e-3f, {0.9f, 0.999f, 1e-8f, 1e-2f, 0.f})},
                {"adamw", make(1e-3f, {0.9f, 0.999f, 1e-8f, 1e-2f, 1.f})}};
    case OptimizerRule::RmsProp:
        static_assert(o::RmsProp::Rho == 0 && o::RmsProp::WeightDecay == 2);
        return {{"wd", make(1e-3f, {0.99f, 1e-8f, 1e-4f})}};
    default: // no hand-picked values: 0.01 for each (every value must give the same bits)
        break;
    }
    std::vector<std::pair<QString, OptimizerHyper>> generic;
    visitOptimizerRule(rule, [&]<class R>() {
        OptimizerHyper h = make(1e-3f, {});
        std::fill(h.values, h.values + R::kValues, 0.01f);
        generic.push_back({"0.01 each", h});
    });
    return generic;
}

void addOptimizerCases(std::vector<Case>& cases, QString* missing)
{
#define IL_ENTRY(N) {OptimizerRule::N, optimizers::N::kName, optimizers::N::kSlots},
    struct Rule {
        OptimizerRule rule;
        const char* name;
        int slotCount;
    };
    static const Rule kAll[] = {IL_OPTIMIZER_RULES(IL_ENTRY)};
#undef IL_ENTRY
    for (const Rule& r : kAll) {
        const auto variants = hyperparameters(r.rule);
        if (variants.empty()) *missing += QString(" %1").arg(r.name);
        for (const auto& [variant, h] : variants) {
            cases.push_back({QString("optimizer %1 %2").arg(r.name, variant), [r, h](int64_t n) {
                                 Vec w = inputs(5, n, -1, 1), g = inputs(6, n, -0.5, 0.5);
                                 std::vector<Vec> state;
                                 state.reserve(kMaxOptimizerSlots); // s keeps their pointers
                                 optimizers::Slots s{};
                                 for (int k = 0; k < r.slotCount; ++k) {
                                     state.push_back(inputs(7 + k, n, 0, 0.01));
                                     s.p[k] = state.back().data();
                                 }
                                 simd::optimizerUpdate(r.rule, h, 0.8f, w.data(), g.data(), s, n);
                                 Bytes b;
                                 b.add(w);
                                 for (const Vec& v : state)
                                     b.add(v);
                                 return b;
                             }});
        }
    }
}

void addElementwiseCases(std::vector<Case>& cases)
{
    cases.push_back({"fill", [](int64_t n) {
                         Vec y = inputs(10, n, -1, 1);
                         simd::fill(y.data(), 0.3f, n);
                         Bytes b;
                         b.add(y);
                         return b;
                     }});
    cases.push_back({"axpby", [](int64_t n) {
                         Vec x = inputs(11, n, -3, 3), y = inputs(12, n, -3, 3);
                         simd::axpby(0.7f, x.data(), -1.3f, y.data(), n);
                         Bytes b;
                         b.add(y);
                         return b;
                     }});
    cases.push_back({"addTo", [](int64_t n) {
                         Vec src = inputs(13, n, -3, 3), dst = inputs(14, n, -3, 3);
                         simd::addTo(src.data(), dst.data(), n);
                         Bytes b;
                         b.add(dst);
                         return b;
                     }});
    cases.push_back({"sinCos", [](int64_t n) {
                         Vec z = inputs(15, n, -100, 100, true), s(z.size()), c(z.size());
                         simd::sinCos(z.data(), s.data(), c.data(), n);
                         Bytes b;
                         b.add(s);
                         b.add(c);
                         return b;
                     }});
    cases.push_back({"fourierBackward", [](int64_t n) {
                         Vec z = inputs(16, n, -100, 100, true), gs = inputs(17, n, -1, 1),
                             gc = inputs(18, n, -1, 1), dz(z.size());
                         simd::fourierBackward(z.data(), gs.data(), gc.data(), dz.data(), n);
                         Bytes b;
                         b.add(dz);
                         return b;
                     }});
    // n points through a hashed grid (collisions) and a direct one: outputs and table gradients.
    for (const bool hashed : {true, false}) {
        const HashGrid g =
            hashed ? hashgrid::make(5, 2, 6, 2, 1.7) : hashgrid::make(2, 3, 10, 4, 2);
        cases.push_back({hashed ? "hashGrid hashed" : "hashGrid direct", [g](int64_t n) {
                             Vec x = inputs(19, 2 * n, -1.1, 1.1, true);
                             const Vec tables = inputs(20, g.rows() * g.features, -1, 1);
                             const Vec dy = inputs(21, n * g.outputs(), -1, 1);
                             Vec y(static_cast<size_t>(n * g.outputs()));
                             Vec dt(tables.size(), 0.f);
                             simd::hashGridForward(g, x.data(), tables.data(), y.data(), n);
                             for (int l = 0; l < g.levels; ++l)
                                 simd::hashGridBackwardLevel(g, l, x.data(), dy.data(), dt.data(),
                                                             n);
                             Bytes b;
                             b.add(y);
                             b.add(dt);
                             return b;
                         }});
    }
    // Each function over its documented range and beyond, with the special values.
    struct Function {
        simd::MathFunction f;
        const char* name;
        double lo, hi;
    };
    static const Function kFunctions[] = {{simd::MathFunction::Sin, "sin", -2e4, 2e4},
                                          {simd::MathFunction::Cos, "cos", -2e4, 2e4},
                                          {simd::MathFunction::Exp, "exp", -100, 100},
                                          {simd::MathFunction::Log1p, "log1p", -0.5, 2},
                                          {simd::MathFunction::Tanh, "tanh", -30, 30},
                                          {simd::MathFunction::Sigmoid, "sigmoid", -100, 100}};
    for (const Function& fn : kFunctions) {
        cases.push_back({QString("evaluate ") + fn.name, [fn](int64_t n) {
                             Vec x = inputs(19, n, fn.lo, fn.hi, true), y(x.size());
                             simd::evaluate(fn.f, x.data(), y.data(), n);
                             Bytes b;
                             b.add(y);
                             return b;
                         }});
    }
}

void addReductionCases(std::vector<Case>& cases)
{
    cases.push_back({"sumSquares", [](int64_t n) {
                         const Vec x = inputs(20, n, -3, 3);
                         Bytes b;
                         b.value(simd::sumSquares(x.data(), n));
                         return b;
                     }});
    cases.push_back({"accumulateRows", [](int64_t n) {
                         const int64_t rows = 5, stride = n + 3;
                         const Vec x = inputs(21, rows * stride, -3, 3);
                         Vec acc = inputs(22, n, -1, 1);
                         simd::accumulateRows(x.data(), rows, stride, n, acc.data());
                         Bytes b;
                         b.add(acc);
                         return b;
                     }});
    cases.push_back({"softmaxRow", [](int64_t n) {
                         const Vec z = inputs(23, n, -20, 20);
                         Vec p(z.size());
                         simd::softmaxRow(z.data(), 1.f / 0.7f, p.data(), n);
                         Bytes b;
                         b.add(p);
                         return b;
                     }});
}

void addLossCases(std::vector<Case>& cases)
{
    static const std::pair<LossKind, const char*> kPointLosses[] = {
        {LossKind::MSE, "mse"}, {LossKind::MAE, "mae"}, {LossKind::BinaryCrossEntropy, "bce"}};
    for (const auto& [kind, name] : kPointLosses) {
        for (bool withGrad : {false, true}) {
            const QString label = QString("pointLoss %1%2").arg(name, withGrad ? " grad" : "");
            const bool bce = kind == LossKind::BinaryCrossEntropy;
            cases.push_back({label, [kind, bce, withGrad](int64_t n) {
                                 const Vec z = inputs(24, n, -8, 8);
                                 const Vec t = bce ? inputs(25, n, 0, 1) : inputs(25, n, -8, 8);
                                 Vec grad(withGrad ? z.size() : 0);
                                 Bytes b;
                                 b.value(simd::pointLoss(kind, z.data(), t.data(), nullptr,
                                                         withGrad ? grad.data() : nullptr,
                                                         1.f / static_cast<float>(n), n));
                                 b.add(grad);
                                 return b;
                             }});
        }
    }
    for (bool withGrad : {false, true}) {
        // Four rows of k = n logits, smoothing 0.1; row 2's class id is out of range.
        cases.push_back(
            {QString("crossEntropyRows%1").arg(withGrad ? " grad" : ""), [withGrad](int64_t k) {
                 const int64_t rows = 4;
                 const Vec z = inputs(26, rows * k, -10, 10);
                 Vec t = inputs(27, rows, 0, static_cast<double>(k) - 0.01);
                 for (float& c : t)
                     c = static_cast<float>(static_cast<int64_t>(c));
                 t[2] = static_cast<float>(k);
                 Vec grad(withGrad ? z.size() : 0);
                 int64_t badRow = -1;
                 Bytes b;
                 b.value(simd::crossEntropyRows(z.data(), t.data(), nullptr, 0, rows, k, 0.1f,
                                                1.f / rows, withGrad ? grad.data() : nullptr,
                                                &badRow));
                 b.add(grad);
                 b.value(badRow);
                 return b;
             }});
    }
}

} // namespace

std::vector<Case> allCases(QString* missing)
{
    std::vector<Case> cases;
    addElementwiseCases(cases);
    addActivationCases(cases);
    addOptimizerCases(cases, missing);
    addReductionCases(cases);
    addLossCases(cases);
    return cases;
}

} // namespace simdcases
