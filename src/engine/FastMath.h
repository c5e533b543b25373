// Branch-free float approximations of sin, cos, exp, tanh and sigmoid that GCC vectorises
// (AVX2/AVX-512) inside plain loops. libm's scalar calls would dominate a SIREN step: a
// 40,000 x 256 layer evaluates 10 million sines per pass.
//
// Accuracy: sin/cos about 2e-7 absolute for |x| < 1e4 (bounded by 1 everywhere) (Cody-Waite
// reduction by pi/2, Cephes minimax polynomials on [-pi/4, pi/4]); exp about 2 ulp on [-87, 88].
// Inputs are clamped so nothing overflows to NaN; NaN inputs propagate as NaN (the trainer's guard
// relies on that).
#pragma once

#include <bit>
#include <cstdint>

namespace il::fastmath {

// Round to nearest integer as float, for |x| < 2^22, without calling a library function.
inline float roundNearest(float x)
{
    constexpr float magic = 12582912.0f; // 1.5 * 2^23
    return (x + magic) - magic;
}

// Both sin(x) and cos(x), sharing the range reduction.
inline void sinCos(float x, float& s, float& c)
{
    constexpr float twoOverPi = 0.636619772367581343f;
    constexpr float dp1 = 1.5703125f;
    constexpr float dp2 = 4.837512969970703125e-4f;
    constexpr float dp3 = 7.54978995489188216e-8f;
    // Beyond |x| ~ 6e6 one float step exceeds 2 pi, so sin(x) carries no information; clamp
    // the quadrant count (and with it the reduced argument) so the result stays in [-1, 1].
    // NaN passes through the comparisons unchanged.
    float q = roundNearest(x * twoOverPi);
    q = q > 4194304.f ? 4194304.f : q;
    q = q < -4194304.f ? -4194304.f : q;
    float r = ((x - q * dp1) - q * dp2) - q * dp3;
    r = r > 0.7854f ? 0.7854f : r;
    r = r < -0.7854f ? -0.7854f : r;
    const float r2 = r * r;
    const float ps =
        r + r * r2 * (-1.6666654611e-1f + r2 * (8.3321608736e-3f + r2 * -1.9515295891e-4f));
    const float pc =
        1.f - 0.5f * r2 +
        r2 * r2 *
            (4.166664568298827e-2f + r2 * (-1.388731625493765e-3f + r2 * 2.443315711809948e-5f));
    const int quadrant = static_cast<int>(q) & 3;
    // sin: q=0 ps, 1 pc, 2 -ps, 3 -pc ; cos: q=0 pc, 1 -ps, 2 -pc, 3 ps
    const float sinBase = (quadrant & 1) ? pc : ps;
    const float cosBase = (quadrant & 1) ? ps : pc;
    s = (quadrant & 2) ? -sinBase : sinBase;
    c = ((quadrant + 1) & 2) ? -cosBase : cosBase;
}

inline float sin(float x)
{
    float s, c;
    sinCos(x, s, c);
    return s;
}

inline float cos(float x)
{
    float s, c;
    sinCos(x, s, c);
    return c;
}

inline float exp(float x)
{
    constexpr float log2e = 1.44269504088896341f;
    constexpr float ln2hi = 0.693359375f;
    constexpr float ln2lo = -2.12194440e-4f;
    x = x > 88.0f ? 88.0f : x; // written so that NaN (all comparisons false) passes through
    x = x < -87.0f ? -87.0f : x;
    const float n = roundNearest(x * log2e);
    const float r = (x - n * ln2hi) - n * ln2lo;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
    return p * std::bit_cast<float>(bits);
}

inline float sigmoid(float x)
{
    return 1.0f / (1.0f + exp(-x));
}

// tanh(x) = sign(x) * (1 - 2 / (exp(2|x|) + 1)), exact at saturation; for small |x| the
// odd Taylor polynomial keeps the relative error small where the subtraction would cancel.
inline float tanh(float x)
{
    const float ax = x < 0 ? -x : x;
    const float e = exp(2.f * ax);
    float t = 1.f - 2.f / (e + 1.f);
    const float x2 = x * x;
    const float small =
        ax * (1.f + x2 * (-0.333333333f + x2 * (0.133333333f + x2 * -0.0539682540f)));
    t = ax < 0.0625f ? small : t;
    return x < 0 ? -t : t;
}

} // namespace il::fastmath
