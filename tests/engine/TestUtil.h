// Small helpers shared by the engine tests: moving host vectors in and out of backend memory,
// seeded random data and element-wise comparisons with readable failure messages.
#pragma once

#include "Backend.h"
#include "Random.h"
#include "Tensor.h"

#include <QString>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <span>
#include <vector>

namespace testutil {

inline std::vector<float> randomVector(il::Rng& rng, size_t n, double lo, double hi)
{
    std::vector<float> v(n);
    for (auto& x : v)
        x = static_cast<float>(rng.uniform(lo, hi));
    return v;
}

// A buffer of at least one float holding `host`.
inline il::Buffer toDevice(il::Backend& b, const std::vector<float>& host)
{
    il::Buffer buf(&b, host.empty() ? 1 : host.size());
    if (!host.empty()) b.upload(buf.data(), host.data(), host.size() * sizeof(float));
    return buf;
}

inline il::Buffer filledBuffer(il::Backend& b, size_t n, float value)
{
    return toDevice(b, std::vector<float>(n, value));
}

inline std::vector<float> toHost(il::Backend& b, il::ConstTensor t)
{
    std::vector<float> v(static_cast<size_t>(t.size()));
    if (!v.empty()) b.download(v.data(), t.data, v.size() * sizeof(float));
    return v;
}

inline float readScalar(il::Backend& b, const float* p)
{
    float v = 0;
    b.download(&v, p, sizeof(float));
    return v;
}

inline void writeScalar(il::Backend& b, float* p, float v)
{
    b.upload(p, &v, sizeof(float));
}

// One step of an update rule (OptimizerMath.h) straight on the backend; values in the rule's
// order, state its slots.
inline void ruleStep(il::Backend& b, il::OptimizerRule rule, float lr, int64_t step,
                     std::initializer_list<float> values, il::Tensor params, il::ConstTensor grads,
                     std::initializer_list<il::Tensor> state, const float* guard)
{
    il::OptimizerHyper h;
    h.lr = lr;
    h.step = step;
    std::copy(values.begin(), values.end(), h.values);
    b.optimizerStep(rule, h, params, grads, std::span<const il::Tensor>(state.begin(), state.size()),
                    guard);
}

inline bool allFinite(const std::vector<float>& v)
{
    for (float x : v)
        if (!std::isfinite(x)) return false;
    return true;
}

inline bool bitIdentical(const std::vector<float>& a, const std::vector<float>& b)
{
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Checks |got - ref| <= atol + rtol * |ref| for every element (NaN never passes). On failure,
// `why` names the first bad element and how many failed.
template <typename Ref>
bool allClose(const std::vector<float>& got, const std::vector<Ref>& ref, double atol, double rtol,
              QString* why)
{
    if (got.size() != ref.size()) {
        *why = QStringLiteral("size %1, expected %2").arg(got.size()).arg(ref.size());
        return false;
    }
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        const double g = got[i], r = static_cast<double>(ref[i]);
        const bool ok = std::isfinite(g) && std::fabs(g - r) <= atol + rtol * std::fabs(r);
        if (!ok && bad++ == 0) first = i;
    }
    if (bad == 0) return true;
    *why = QStringLiteral("%1 of %2 elements differ; first at %3: got %4, expected %5 "
                          "(atol %6, rtol %7)")
               .arg(bad)
               .arg(got.size())
               .arg(first)
               .arg(static_cast<double>(got[first]), 0, 'g', 9)
               .arg(static_cast<double>(ref[first]), 0, 'g', 9)
               .arg(atol)
               .arg(rtol);
    return false;
}

} // namespace testutil

// QVERIFY2 with the message from allClose.
#define IL_COMPARE_CLOSE(got, ref, atol, rtol)                                                     \
    do {                                                                                           \
        QString why_;                                                                              \
        QVERIFY2(testutil::allClose((got), (ref), (atol), (rtol), &why_), qPrintable(why_));       \
    } while (false)
