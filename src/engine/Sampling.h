// One draw from a row of probabilities. The CPU backend and the CUDA kernel (kernels/) both call
// this, so the two pick the same category for the same probabilities and the same number.
#pragma once

#include "HostDevice.h"

#include <cstdint>
#include <cstring>

namespace il {

// The sign bit, so that -0 counts as negative (a picked weight of 0, below).
IL_HOST_DEVICE inline bool signBit(float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    return (bits >> 31) != 0;
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
        // Pick the topK largest one by one; a picked weight is marked by its sign bit (-w, so
        // even a picked 0 stays exact as -0), then everything not picked becomes 0.
        for (int64_t t = 0; t < topK; ++t) {
            int64_t best = -1;
            for (int64_t j = 0; j < k; ++j)
                if (!signBit(w[j]) && (best < 0 || w[j] > w[best])) best = j;
            if (best < 0) break;
            w[best] = -w[best];
        }
        for (int64_t j = 0; j < k; ++j)
            w[j] = signBit(w[j]) ? -w[j] : 0.f;
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
