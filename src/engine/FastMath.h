// Branch-free float approximations of sin, cos, exp, log1p, tanh and sigmoid, written once as
// templates over a lane type, so that one text serves the SIMD kernels (CpuKernels.cpp: one
// instantiation per Highway target, SSE4 to AVX-512) and plain scalar code (ScalarOps below).
//
// The ops type O supplies
//   V                      the lane type (float, or a Highway vector)
//   k(c)                   the constant c in every lane
//   select(m, a, b)        m ? a : b per lane (m from a comparison operator)
//   abs(x), neg(x)
//   pow2(n)                2^n for integral n in [-126, 127]
//   bit(q, b)              (int(q) & b) != 0 for integral q (a mask)
//   mantissa(x), exponent(x)  x = mantissa * 2^exponent, mantissa in [0.5, 1), x positive normal
// and V's arithmetic and comparison operators. Every formula is spelled with separate
// multiplies and adds (no fused multiply-add), and the SIMD kernels are compiled with
// -ffp-contract=off, so every target computes each lane bit for bit like the others.
//
// Accuracy against libm in double, measured over every float of each range (all targets give
// the same bits); testSimdKernels holds every target to these bounds on dense sweeps:
//   sin, cos   <= 1e-7 absolute for |x| <= 1e4 (measured 9.4e-8; Cody-Waite reduction by pi/2,
//              Cephes minimax polynomials on [-pi/4, pi/4]); <= 1e-6 up to |x| = 1e5.  In
//              [-1, 1] for every finite x; NaN at +-inf, as in libm
//   exp        relative <= 1e-7, under 1 ulp, on [-87, 88] (measured 8.3e-8, 0.99 ulp); inputs
//              beyond are clamped to that range, so exp is never 0 or inf
//   log1p      <= 1e-7 absolute on [0, 1] (measured 6.4e-8; the range the BCE loss needs)
//   tanh       <= 1.5e-7 absolute everywhere (measured 1.05e-7), exactly +-1 beyond |x| = 20;
//              relative up to 1.7e-6 just above |x| = 0.0625, where the small-argument
//              polynomial hands over to 1 - 2 / (e^2|x| + 1)
//   sigmoid    <= 1e-7 absolute everywhere (measured 8.9e-8)
// NaN inputs give NaN (the trainer's guard relies on that): the clamps are written as selects
// that keep a NaN (every comparison with NaN is false).
#pragma once

#include "HostDevice.h"

#include <bit>
#include <cmath>
#include <cstdint>

namespace il::fastmath {

#include "formulas/FastMath.inc"

// The scalar lane: plain floats, for code that handles one value at a time (and for tests).
struct ScalarOps {
    using V = float;
    static float k(float c) { return c; }
    static float select(bool m, float a, float b) { return m ? a : b; }
    static float abs(float x) { return std::fabs(x); }
    static float neg(float x) { return -x; }
    static float pow2(float n)
    {
        return std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);
    }
    static bool bit(float q, int b) { return (static_cast<int32_t>(q) & b) != 0; }
    static float mantissa(float x)
    {
        return std::bit_cast<float>((std::bit_cast<uint32_t>(x) & 0x807fffffu) | 0x3f000000u);
    }
    static float exponent(float x)
    {
        return static_cast<float>(static_cast<int32_t>((std::bit_cast<uint32_t>(x) >> 23) & 0xff) -
                                  126);
    }
    static float sin(float x) { return fastmath::sin<ScalarOps>(x); }
    static float cos(float x) { return fastmath::cos<ScalarOps>(x); }
    static float exp(float x) { return fastmath::exp<ScalarOps>(x); }
    static float tanh(float x) { return fastmath::tanh<ScalarOps>(x); }
    static float sqrt(float x) { return std::sqrt(x); }
};

} // namespace il::fastmath
