// The CPU kernels (CpuKernels.h), compiled once per Highway target: foreach_target.h includes
// this file again for each target in HWY_TARGETS (SSE4, AVX2, AVX-512 with the x86-64-v2
// baseline), each time inside that target's namespace and with its instruction set enabled.
// HWY_DYNAMIC_DISPATCH then calls the best one the CPU runs (or the one useTarget chose).
//
// Every loop goes through Stream(): 16 elements per block, as 16 / lanes vectors, so a block is
// one AVX-512 vector, two AVX2 ones or four SSE4 ones, and a sum's lane j always holds the
// elements j mod 16. The last partial block runs through zero-padded stack buffers (its unused
// lanes masked out of sums), so tails need no scalar copy of the formulas.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "CpuKernels.cpp"
#include <hwy/foreach_target.h> // IWYU pragma: keep

#include <hwy/highway.h>

#include "CpuKernels.h"
#include "Errors.h"
#include "LossMath.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <utility>

HWY_BEFORE_NAMESPACE();
namespace il::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The shared formulas, compiled here for this target (see formulas/*.inc).
namespace fastmath {
#include "formulas/FastMath.inc"
}
namespace activations {
#include "formulas/Activations.inc"
}
namespace optimizers {
#include "formulas/OptimizerRules.inc"
}
namespace lossmath {
#include "formulas/Losses.inc"
}

// visitActivation and visitOptimizerRule (ActivationMath.h, OptimizerMath.h) for this target's
// copies of the structs.
template <class F> void VisitActivation(Activation act, F&& f)
{
    switch (act) {
#define IL_CASE(N)                                                                                 \
    case Activation::N:                                                                            \
        f.template operator()<activations::N>();                                                   \
        return;
        IL_ACTIVATIONS(IL_CASE)
#undef IL_CASE
    }
}
template <class F> void VisitRule(OptimizerRule rule, F&& f)
{
    switch (rule) {
#define IL_CASE(N)                                                                                 \
    case OptimizerRule::N:                                                                         \
        f.template operator()<optimizers::N>();                                                    \
        return;
        IL_OPTIMIZER_RULES(IL_CASE)
#undef IL_CASE
    }
}

using D = hn::ScalableTag<float>;
using DI = hn::RebindToSigned<D>;
using Vf = hn::Vec<D>;

constexpr int64_t kBlock = 16; // elements per block (the sum order), at most one AVX-512 vector

// The lane ops of the shared formulas (Lanes.h) for this target's float vectors.
struct Ops {
    using V = Vf;
    static V k(float c) { return hn::Set(D(), c); }
    template <class M> static V select(M m, V a, V b) { return hn::IfThenElse(m, a, b); }
    static V abs(V x) { return hn::Abs(x); }
    static V neg(V x) { return hn::Neg(x); }
    static V sqrt(V x) { return hn::Sqrt(x); }
    static V pow2(V n)
    {
        const DI di;
        return hn::BitCast(D(), hn::ShiftLeft<23>(hn::ConvertTo(di, n) + hn::Set(di, 127)));
    }
    static auto bit(V q, int b)
    {
        const DI di;
        return hn::RebindMask(D(), hn::TestBit(hn::ConvertTo(di, q), hn::Set(di, b)));
    }
    static V mantissa(V x)
    {
        const DI di;
        const auto bits =
            hn::And(hn::BitCast(di, x), hn::Set(di, static_cast<int32_t>(0x807fffff)));
        return hn::BitCast(D(), hn::Or(bits, hn::Set(di, 0x3f000000)));
    }
    static V exponent(V x)
    {
        const DI di;
        const auto biased = hn::And(hn::ShiftRight<23>(hn::BitCast(di, x)), hn::Set(di, 0xff));
        return hn::ConvertTo(D(), biased - hn::Set(di, 126));
    }
    static V sin(V x) { return fastmath::sin<Ops>(x); }
    static V cos(V x) { return fastmath::cos<Ops>(x); }
    static V exp(V x) { return fastmath::exp<Ops>(x); }
    static V tanh(V x) { return fastmath::tanh<Ops>(x); }
    static V log1p(V x) { return fastmath::log1p<Ops>(x); }
};

// Runs f over [0, n) a block at a time: in[k] + i are read as f's inputs, f's outputs are stored
// to out[k] + i, and f's return value (a vector of terms) is summed when kSum. f(const Vf* in,
// Vf* out) -> Vf. Outputs may alias inputs element for element. Returns the sum (0 if !kSum).
template <int kIn, int kOut, bool kSum, class F>
HWY_INLINE float Stream(int64_t n, const float* const* in, float* const* out, F f)
{
    const D d;
    constexpr int64_t L = static_cast<int64_t>(hn::MaxLanes(D()));
    static_assert(kBlock % L == 0, "a block is a whole number of vectors");
    constexpr int kVecs = static_cast<int>(kBlock / L);
    Vf acc[kVecs];
    for (auto& a : acc)
        a = hn::Zero(d);
    Vf vin[kIn > 0 ? kIn : 1], vout[kOut > 0 ? kOut : 1];
    int64_t i = 0;
    for (; i + kBlock <= n; i += kBlock) {
        for (int j = 0; j < kVecs; ++j) {
            const int64_t at = i + j * L;
            for (int k = 0; k < kIn; ++k)
                vin[k] = hn::LoadU(d, in[k] + at);
            const Vf term = f(vin, vout);
            for (int k = 0; k < kOut; ++k)
                hn::StoreU(vout[k], d, out[k] + at);
            if constexpr (kSum) acc[j] = acc[j] + term;
        }
    }
    if (i < n) { // the last, partial block, through zero-padded buffers
        const int64_t rem = n - i;
        HWY_ALIGN float bufIn[kIn > 0 ? kIn : 1][kBlock] = {};
        HWY_ALIGN float bufOut[kOut > 0 ? kOut : 1][kBlock] = {};
        for (int k = 0; k < kIn; ++k)
            std::memcpy(bufIn[k], in[k] + i, static_cast<size_t>(rem) * sizeof(float));
        for (int j = 0; j * L < rem; ++j) {
            for (int k = 0; k < kIn; ++k)
                vin[k] = hn::Load(d, bufIn[k] + j * L);
            const Vf term = f(vin, vout);
            for (int k = 0; k < kOut; ++k)
                hn::Store(vout[k], d, bufOut[k] + j * L);
            if constexpr (kSum)
                acc[j] = acc[j] +
                         hn::IfThenElseZero(
                             hn::FirstN(d, static_cast<size_t>(std::min(rem - j * L, L))), term);
        }
        for (int k = 0; k < kOut; ++k)
            std::memcpy(out[k] + i, bufOut[k], static_cast<size_t>(rem) * sizeof(float));
    }
    if constexpr (!kSum) return 0.f;
    HWY_ALIGN float lanes[kBlock];
    for (int j = 0; j < kVecs; ++j)
        hn::Store(acc[j], d, lanes + j * L);
    for (int64_t width = kBlock / 2; width >= 1; width /= 2)
        for (int64_t j = 0; j < width; ++j)
            lanes[j] = lanes[j] + lanes[j + width];
    return lanes[0];
}

// Shorthands for Stream with pointer lists.
template <int kIn, int kOut, class F>
HWY_INLINE void Map(int64_t n, std::array<const float*, kIn> in, std::array<float*, kOut> out, F f)
{
    Stream<kIn, kOut, false>(n, in.data(), out.data(), [&](const Vf* a, Vf* b) {
        f(a, b);
        return hn::Zero(D());
    });
}
template <int kIn, int kOut, class F>
HWY_INLINE float Sum(int64_t n, std::array<const float*, kIn> in, std::array<float*, kOut> out, F f)
{
    return Stream<kIn, kOut, true>(n, in.data(), out.data(), f);
}

// ---- element-wise ---------------------------------------------------------------------------
void Fill(float* p, float value, int64_t n)
{
    const Vf v = Ops::k(value);
    Map<0, 1>(n, {}, {p}, [v](const Vf*, Vf* o) { o[0] = v; });
}

void Axpby(float a, const float* x, float b, float* y, int64_t n)
{
    const Vf va = Ops::k(a), vb = Ops::k(b);
    Map<2, 1>(n, {x, y}, {y}, [=](const Vf* i, Vf* o) { o[0] = va * i[0] + vb * i[1]; });
}

void AddTo(const float* src, float* dst, int64_t n)
{
    Map<2, 1>(n, {dst, src}, {dst}, [](const Vf* i, Vf* o) { o[0] = i[0] + i[1]; });
}

void ActivationForward(Activation act, float param, const float* x, float* y, int64_t n)
{
    const Vf p = Ops::k(param);
    VisitActivation(act, [&]<class Op>() {
        Map<1, 1>(n, {x}, {y},
                  [p](const Vf* i, Vf* o) { o[0] = Op::template forward<Ops>(i[0], p); });
    });
}

void ActivationBackward(Activation act, float param, const float* in, const float* dy, float* dx,
                        int64_t n)
{
    const Vf p = Ops::k(param);
    VisitActivation(act, [&]<class Op>() {
        Map<2, 1>(n, {in, dy}, {dx},
                  [p](const Vf* i, Vf* o) { o[0] = Op::template backward<Ops>(i[0], i[1], p); });
    });
}

void SinCos(const float* z, float* s, float* c, int64_t n)
{
    Map<1, 2>(n, {z}, {s, c}, [](const Vf* i, Vf* o) { fastmath::sinCos<Ops>(i[0], o[0], o[1]); });
}

void FourierBackward(const float* z, const float* gs, const float* gc, float* dz, int64_t n)
{
    Map<3, 1>(n, {z, gs, gc}, {dz}, [](const Vf* i, Vf* o) {
        Vf s, c;
        fastmath::sinCos<Ops>(i[0], s, c);
        o[0] = i[1] * c - i[2] * s;
    });
}

template <class Rule, size_t... K>
void UpdateLoop(const typename Rule::Step& c, float scale, float* w, const float* g,
                const il::optimizers::Slots& s, int64_t n, std::index_sequence<K...>)
{
    const Vf vs = Ops::k(scale);
    Map<2 + Rule::kSlots, 1 + Rule::kSlots>(
        n, {w, g, s.p[K]...}, {w, s.p[K]...}, [&c, vs](const Vf* i, Vf* o) {
            o[0] = i[0];
            ((o[1 + K] = i[2 + K]), ...);
            Rule::template update<Ops>(c, o[0], i[1], vs, o[1 + K]...);
        });
}

void OptimizerUpdate(OptimizerRule rule, const OptimizerHyper& h, float scale, float* w,
                     const float* g, const il::optimizers::Slots& slots, int64_t n)
{
    VisitRule(rule, [&]<class Rule>() {
        UpdateLoop<Rule>(Rule::prepare(h), scale, w, g, slots, n,
                         std::make_index_sequence<Rule::kSlots>{});
    });
}

// ---- multiresolution hash encoding -------------------------------------------------------------
// Lanes are rows. Each lane does what hashgrid::corners() does for one point, in the same order.
void HashGridForward(const HashGrid& g, const float* x, const float* tables, float* y, int64_t rows)
{
    const D d;
    const DI di;
    constexpr int64_t L = static_cast<int64_t>(hn::MaxLanes(D()));
    const int64_t out = g.outputs(), features = g.features;
    const auto tableRows = static_cast<int32_t>(g.tableRows());
    HWY_ALIGN float px[L], py[L], lanes[L];
    for (int64_t r0 = 0; r0 < rows; r0 += L) {
        const int64_t n = std::min(L, rows - r0);
        for (int64_t k = 0; k < L; ++k) { // padded lanes read cell 0
            px[k] = k < n ? x[(r0 + k) * 2] : 0.f;
            py[k] = k < n ? x[(r0 + k) * 2 + 1] : 0.f;
        }
        const Vf vx = hn::Load(d, px), vy = hn::Load(d, py);
        for (int l = 0; l < g.levels; ++l) {
            const float res = g.resolution[l];
            const Vf vn = Ops::k(res);
            const auto last = hn::Set(di, static_cast<int32_t>(res) - 1);
            auto cellOf = [&](Vf coord, hn::Vec<DI>& i, Vf& f) {
                Vf p = ((coord + Ops::k(1.f)) * Ops::k(0.5f)) * vn;
                p = hn::IfThenElse(p >= Ops::k(0.f), p, Ops::k(0.f));
                p = hn::IfThenElse(p > vn, vn, p);
                i = hn::Min(hn::ConvertTo(di, p), last);
                f = p - hn::ConvertTo(d, i);
            };
            hn::Vec<DI> ix, iy;
            Vf fx, fy;
            cellOf(vx, ix, fx);
            cellOf(vy, iy, fy);
            const auto one = hn::Set(di, 1);
            auto rowOf = [&](hn::Vec<DI> a, hn::Vec<DI> b) {
                if (g.direct(l)) return a + b * hn::Set(di, static_cast<int32_t>(res) + 1);
                const auto prime = hn::Set(di, static_cast<int32_t>(2654435761u));
                return hn::And(hn::Xor(a, b * prime), hn::Set(di, tableRows - 1));
            };
            const auto vf = hn::Set(di, static_cast<int32_t>(features));
            const hn::Vec<DI> idx[4] = {rowOf(ix, iy) * vf, rowOf(ix + one, iy) * vf,
                                        rowOf(ix, iy + one) * vf, rowOf(ix + one, iy + one) * vf};
            const Vf gx = Ops::k(1.f) - fx, gy = Ops::k(1.f) - fy;
            const Vf w[4] = {gx * gy, fx * gy, gx * fy, fx * fy};
            const float* level = tables + static_cast<int64_t>(l) * g.tableRows() * features;
            for (int64_t f = 0; f < features; ++f) {
                const float* column = level + f;
                Vf v = w[0] * hn::GatherIndex(d, column, idx[0]);
                v = v + w[1] * hn::GatherIndex(d, column, idx[1]);
                v = v + w[2] * hn::GatherIndex(d, column, idx[2]);
                v = v + w[3] * hn::GatherIndex(d, column, idx[3]);
                hn::Store(v, d, lanes);
                for (int64_t k = 0; k < n; ++k)
                    y[(r0 + k) * out + l * features + f] = lanes[k];
            }
        }
    }
}

void HashGridBackwardLevel(const HashGrid& g, int level, const float* x, const float* dy,
                           float* dtables, int64_t rows)
{
    const int64_t out = g.outputs(), features = g.features;
    float* block = dtables + static_cast<int64_t>(level) * g.tableRows() * features;
    for (int64_t r = 0; r < rows; ++r) {
        const hashgrid::Corners c = hashgrid::corners(g, level, x[r * 2], x[r * 2 + 1]);
        const float* grad = dy + r * out + static_cast<int64_t>(level) * features;
        for (int k = 0; k < 4; ++k) {
            float* dst = block + static_cast<int64_t>(c.row[k]) * features;
            for (int64_t f = 0; f < features; ++f)
                dst[f] += c.weight[k] * grad[f];
        }
    }
}

// ---- reductions -----------------------------------------------------------------------------
float SumSquares(const float* x, int64_t n)
{
    return Sum<1, 0>(n, {x}, {}, [](const Vf* i, Vf*) { return i[0] * i[0]; });
}

// Each column's sum runs over the rows in order, one add per row, whatever the width: the same
// bits in a vector lane as in the scalar loop for the last cols % 16 columns.
void AccumulateRows(const float* x, int64_t rows, int64_t stride, int64_t cols, float* acc)
{
    const D d;
    constexpr int64_t L = static_cast<int64_t>(hn::MaxLanes(D()));
    constexpr int kVecs = static_cast<int>(kBlock / L);
    int64_t c = 0;
    for (; c + kBlock <= cols; c += kBlock) { // 16 columns in registers down all the rows
        Vf sum[kVecs];
        for (int j = 0; j < kVecs; ++j)
            sum[j] = hn::LoadU(d, acc + c + j * L);
        for (int64_t r = 0; r < rows; ++r) {
            const float* row = x + r * stride + c;
            for (int j = 0; j < kVecs; ++j)
                sum[j] = sum[j] + hn::LoadU(d, row + j * L);
        }
        for (int j = 0; j < kVecs; ++j)
            hn::StoreU(sum[j], d, acc + c + j * L);
    }
    for (; c < cols; ++c) {
        float sum = acc[c];
        for (int64_t r = 0; r < rows; ++r)
            sum += x[r * stride + c];
        acc[c] = sum;
    }
}

float PointLoss(LossKind kind, const float* z, const float* t, const float* weights, float* grad,
                float invN, int64_t n)
{
    namespace lm = lossmath;
    const Vf vn = Ops::k(invN);
    switch (kind) {
    case LossKind::MSE:
        if (grad)
            return Sum<2, 1>(n, {z, t}, {grad}, [vn](const Vf* i, Vf* o) {
                const Vf d = i[0] - i[1];
                o[0] = lm::mseGradient<Ops>(d, vn);
                return lm::mseTerm<Ops>(d);
            });
        return Sum<2, 0>(n, {z, t}, {},
                         [](const Vf* i, Vf*) { return lm::mseTerm<Ops>(i[0] - i[1]); });
    case LossKind::MAE:
        if (grad)
            return Sum<2, 1>(n, {z, t}, {grad}, [vn](const Vf* i, Vf* o) {
                const Vf d = i[0] - i[1];
                o[0] = lm::maeGradient<Ops>(d, vn);
                return lm::maeTerm<Ops>(d);
            });
        return Sum<2, 0>(n, {z, t}, {},
                         [](const Vf* i, Vf*) { return lm::maeTerm<Ops>(i[0] - i[1]); });
    case LossKind::BinaryCrossEntropy: {
        // Unweighted: the plain formulas; weighted: each element's weight from its target.
        const Vf w0 = Ops::k(weights ? weights[0] : 1.f), w1 = Ops::k(weights ? weights[1] : 1.f);
        auto bce = [=](const Vf* i, Vf* o, bool withGrad) {
            const Vf e = Ops::exp(Ops::neg(Ops::abs(i[0])));
            if (!weights) {
                if (withGrad) o[0] = lm::bceGradient<Ops>(i[0], i[1], e, vn);
                return lm::bceTerm<Ops>(i[0], i[1], e);
            }
            const Vf w = lm::bceWeight<Ops>(i[1], w0, w1);
            if (withGrad) o[0] = lm::bceGradient<Ops>(i[0], i[1], e, w * vn);
            return w * lm::bceTerm<Ops>(i[0], i[1], e);
        };
        if (grad)
            return Sum<2, 1>(n, {z, t}, {grad},
                             [&](const Vf* i, Vf* o) { return bce(i, o, true); });
        return Sum<2, 0>(n, {z, t}, {}, [&](const Vf* i, Vf* o) { return bce(i, o, false); });
    }
    case LossKind::CrossEntropy:
        break; // CrossEntropyRows
    }
    return 0.f;
}

double CrossEntropyRows(const float* z, const float* t, const float* weights, int64_t first,
                        int64_t last, int64_t k, float s, float invRows, float* grad,
                        int64_t* badRow)
{
    namespace lm = lossmath;
    double acc = 0;
    const Vf vOff = Ops::k(s / static_cast<float>(k));
    for (int64_t row = first; row < last; ++row) {
        const float* zr = z + row * k;
        const float tf = t[row];
        const auto cls = static_cast<int64_t>(tf);
        if (!(tf >= 0.f) || cls >= k) {
            *badRow = std::max(*badRow, row);
            continue;
        }
        float mx = zr[0];
        for (int64_t j = 1; j < k; ++j)
            mx = std::max(mx, zr[j]);
        const Vf vmx = Ops::k(mx);
        const float sum =
            Sum<1, 0>(k, {zr}, {}, [vmx](const Vf* i, Vf*) { return Ops::exp(i[0] - vmx); });
        const float sumZ = Sum<1, 0>(k, {zr}, {}, [](const Vf* i, Vf*) { return i[0]; });
        const float logSum = std::log(sum) + mx; // log sum exp
        const float rowLoss = il::lossmath::crossEntropyRow(logSum, zr[cls], sumZ, k, s);
        // The row's class weight scales its loss and its gradient (1: unweighted, exactly).
        const float w = weights ? weights[cls] : 1.f;
        acc += weights ? w * rowLoss : rowLoss;
        if (grad) {
            const float scale = il::lossmath::crossEntropyRowScale(w, invRows);
            float* gr = grad + row * k;
            const Vf invSum = Ops::k(1.f / sum), vScale = Ops::k(scale);
            Map<1, 1>(k, {zr}, {gr}, [&](const Vf* i, Vf* o) {
                o[0] = lm::crossEntropyGradient<Ops>(Ops::exp(i[0] - vmx), invSum, vOff, vScale);
            });
            gr[cls] -= il::lossmath::crossEntropyTargetShare(s, scale);
        }
    }
    return acc;
}

void SoftmaxRow(const float* z, float invT, float* p, int64_t k)
{
    float mx = -INFINITY;
    for (int64_t j = 0; j < k; ++j)
        mx = std::max(mx, z[j] * invT);
    const Vf vmx = Ops::k(mx), vt = Ops::k(invT);
    const float sum = Sum<1, 1>(k, {z}, {p}, [=](const Vf* i, Vf* o) {
        o[0] = Ops::exp(i[0] * vt - vmx);
        return o[0];
    });
    const Vf inv = Ops::k(1.f / sum);
    Map<1, 1>(k, {p}, {p}, [inv](const Vf* i, Vf* o) { o[0] = i[0] * inv; });
}

void Evaluate(MathFunction fn, const float* x, float* y, int64_t n)
{
    auto run = [&](auto f) { Map<1, 1>(n, {x}, {y}, [f](const Vf* i, Vf* o) { o[0] = f(i[0]); }); };
    switch (fn) {
    case MathFunction::Sin:
        return run([](Vf v) { return Ops::sin(v); });
    case MathFunction::Cos:
        return run([](Vf v) { return Ops::cos(v); });
    case MathFunction::Exp:
        return run([](Vf v) { return Ops::exp(v); });
    case MathFunction::Log1p:
        return run([](Vf v) { return Ops::log1p(v); });
    case MathFunction::Tanh:
        return run([](Vf v) { return Ops::tanh(v); });
    case MathFunction::Sigmoid:
        return run([](Vf v) { return fastmath::sigmoid<Ops>(v); });
    }
}

} // namespace il::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace il::simd {

HWY_EXPORT(Fill);
HWY_EXPORT(Axpby);
HWY_EXPORT(AddTo);
HWY_EXPORT(ActivationForward);
HWY_EXPORT(ActivationBackward);
HWY_EXPORT(SinCos);
HWY_EXPORT(FourierBackward);
HWY_EXPORT(OptimizerUpdate);
HWY_EXPORT(HashGridForward);
HWY_EXPORT(HashGridBackwardLevel);
HWY_EXPORT(SumSquares);
HWY_EXPORT(AccumulateRows);
HWY_EXPORT(PointLoss);
HWY_EXPORT(CrossEntropyRows);
HWY_EXPORT(SoftmaxRow);
HWY_EXPORT(Evaluate);

void fill(float* p, float value, int64_t n)
{
    HWY_DYNAMIC_DISPATCH(Fill)(p, value, n);
}
void axpby(float a, const float* x, float b, float* y, int64_t n)
{
    HWY_DYNAMIC_DISPATCH(Axpby)(a, x, b, y, n);
}
void addTo(const float* src, float* dst, int64_t n)
{
    HWY_DYNAMIC_DISPATCH(AddTo)(src, dst, n);
}
void activationForward(Activation act, float param, const float* x, float* y, int64_t n)
{
    HWY_DYNAMIC_DISPATCH(ActivationForward)(act, param, x, y, n);
}
void activationBackward(Activation act, float param, const float* in, const float* dy, float* dx,
                        int64_t n)
{
    HWY_DYNAMIC_DISPATCH(ActivationBackward)(act, param, in, dy, dx, n);
}
void sinCos(const float* z, float* s, float* c, int64_t n)
{
    HWY_DYNAMIC_DISPATCH(SinCos)(z, s, c, n);
}
void fourierBackward(const float* z, const float* gs, const float* gc, float* dz, int64_t n)
{
    HWY_DYNAMIC_DISPATCH(FourierBackward)(z, gs, gc, dz, n);
}
void optimizerUpdate(OptimizerRule rule, const OptimizerHyper& h, float scale, float* w,
                     const float* g, const optimizers::Slots& slots, int64_t n)
{
    HWY_DYNAMIC_DISPATCH(OptimizerUpdate)(rule, h, scale, w, g, slots, n);
}
void hashGridForward(const HashGrid& g, const float* x, const float* tables, float* y, int64_t rows)
{
    HWY_DYNAMIC_DISPATCH(HashGridForward)(g, x, tables, y, rows);
}
void hashGridBackwardLevel(const HashGrid& g, int level, const float* x, const float* dy,
                           float* dtables, int64_t rows)
{
    HWY_DYNAMIC_DISPATCH(HashGridBackwardLevel)(g, level, x, dy, dtables, rows);
}
float sumSquares(const float* x, int64_t n)
{
    return HWY_DYNAMIC_DISPATCH(SumSquares)(x, n);
}
void accumulateRows(const float* x, int64_t rows, int64_t stride, int64_t cols, float* acc)
{
    HWY_DYNAMIC_DISPATCH(AccumulateRows)(x, rows, stride, cols, acc);
}
float pointLoss(LossKind kind, const float* z, const float* t, const float* weights, float* grad,
                float invN, int64_t n)
{
    return HWY_DYNAMIC_DISPATCH(PointLoss)(kind, z, t, weights, grad, invN, n);
}
double crossEntropyRows(const float* z, const float* t, const float* weights, int64_t first,
                        int64_t last, int64_t k, float s, float invRows, float* grad,
                        int64_t* badRow)
{
    return HWY_DYNAMIC_DISPATCH(CrossEntropyRows)(z, t, weights, first, last, k, s, invRows, grad,
                                                  badRow);
}
void softmaxRow(const float* z, float invT, float* p, int64_t k)
{
    HWY_DYNAMIC_DISPATCH(SoftmaxRow)(z, invT, p, k);
}
void evaluate(MathFunction f, const float* x, float* y, int64_t n)
{
    HWY_DYNAMIC_DISPATCH(Evaluate)(f, x, y, n);
}

} // namespace il::simd
#endif // HWY_ONCE
