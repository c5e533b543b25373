// One draw from a row of probabilities. The CPU backend and the CUDA kernel (kernels/) both call
// this, so the two pick the same category for the same probabilities and the same number.
#pragma once

#include "HostDevice.h"

#include <cstdint>
#include <cstring>

namespace il {

// The bits of a float: for non-negative floats (+0 included) their order is the floats' order.
IL_HOST_DEVICE inline uint32_t floatBits(float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    return bits;
}

// p: k probabilities (need not sum to 1; NaN, Inf and negatives count as 0). Allowed: indices
// >= firstAllowed and, when 0 < topK < k, the topK largest (ties: the lower index). Returns the
// first allowed j at which the running sum of weights exceeds u * (their total), u in [0, 1);
// if that total is 0 (everything underflowed), the most probable index >= firstAllowed.
// w: scratch for k floats.
IL_HOST_DEVICE inline int64_t sampleCategory(const float* p, int64_t k, float u, int64_t topK,
                                             int64_t firstAllowed, float* w)
{
    constexpr float kMaxFinite = 3.40282347e+38f;
    for (int64_t j = 0; j < k; ++j)
        w[j] = (j >= firstAllowed && p[j] > 0.f && p[j] <= kMaxFinite) ? p[j] : 0.f;
    if (topK > 0 && topK < k) {
        // Keep the topK largest weights in O(k) whatever topK (picking them one by one was
        // O(k * topK): hours for --top-k 9999 over 10,000 symbols). Radix selection of the
        // topK-th largest weight t, four bits at a time from the top: of the weights whose bits
        // start like t's found so far, count each next digit, and follow the digit that holds
        // the rank still needed. Then keep every weight above t and the first `need` equal to it
        // in index order (ties: the lower index, as before).
        uint32_t prefix = 0, mask = 0;
        int64_t need = topK; // the rank of t among the weights that match prefix
        for (int shift = 28; shift >= 0; shift -= 4) {
            int64_t count[16] = {};
            for (int64_t j = 0; j < k; ++j) {
                const uint32_t bits = floatBits(w[j]);
                if ((bits & mask) == prefix) ++count[(bits >> shift) & 15u];
            }
            int digit = 15;
            for (; digit > 0 && count[digit] < need; --digit)
                need -= count[digit];
            prefix |= static_cast<uint32_t>(digit) << shift;
            mask |= 15u << shift;
        }
        for (int64_t j = 0; j < k; ++j) {
            const uint32_t bits = floatBits(w[j]);
            if (bits > prefix) continue;
            if (bits == prefix && need > 0) {
                --need;
                continue;
            }
            w[j] = 0.f;
        }
    }
    double total = 0;
    for (int64_t j = 0; j < k; ++j)
        total += static_cast<double>(w[j]);
    if (total > 0) {
        double r = static_cast<double>(u) * total;
        int64_t last = -1; // rounding can leave r just above the sum: the last weighted index
        for (int64_t j = 0; j < k; ++j) {
            const double wj = w[j];
            if (wj <= 0) continue;
            last = j;
            if (r < wj) return j;
            r -= wj;
        }
        if (last >= 0) return last;
    }
    int64_t best = firstAllowed < k ? firstAllowed : 0;
    for (int64_t j = best; j < k; ++j)
        if (p[j] > p[best]) best = j;
    return best;
}

} // namespace il
