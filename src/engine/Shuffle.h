// The order of an epoch's rows, computed where the rows are: row i of the shuffled order is a
// keyed bijection of i (a Feistel network on just enough bits, walked until it lands inside
// [0, n)), so each position is computed on its own, on the CPU or by a CUDA kernel, with the
// same result and without a host copy or a sort. The CPU backend and kernels/ both use this.
#pragma once

#include "HostDevice.h"

#include <cstdint>

namespace il {

IL_HOST_DEVICE inline uint64_t mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

struct ShuffleKey {
    static constexpr int kRounds = 6;
    uint64_t n = 0;
    int halfBits = 1; // the network permutes [0, 4^halfBits), the smallest such range >= n
    uint64_t roundKeys[kRounds] = {};
};

IL_HOST_DEVICE inline ShuffleKey makeShuffleKey(uint64_t key, uint64_t n)
{
    ShuffleKey s;
    s.n = n;
    while (s.halfBits < 31 && (uint64_t(1) << (2 * s.halfBits)) < n)
        ++s.halfBits;
    for (int r = 0; r < ShuffleKey::kRounds; ++r)
        s.roundKeys[r] = mix64(key + 0x632BE59BD9B4E019ull * static_cast<uint64_t>(r + 1));
    return s;
}

// A bijection of [0, 4^halfBits): (L, R) -> (R, L ^ F(R)) per round, whatever F is.
IL_HOST_DEVICE inline uint64_t feistel(uint64_t x, const ShuffleKey& s)
{
    const uint64_t mask = (uint64_t(1) << s.halfBits) - 1;
    uint64_t left = x >> s.halfBits, right = x & mask;
    for (int r = 0; r < ShuffleKey::kRounds; ++r) {
        const uint64_t next = left ^ (mix64(right ^ s.roundKeys[r]) & mask);
        left = right;
        right = next;
    }
    return (left << s.halfBits) | right;
}

// Position i of the shuffled order of [0, n), i < n. Walking the cycle from i always comes back
// into [0, n) (i itself is there), at most 4 steps on average since 4^halfBits < 4n.
IL_HOST_DEVICE inline int64_t shuffledIndex(int64_t i, const ShuffleKey& s)
{
    uint64_t x = static_cast<uint64_t>(i);
    do {
        x = feistel(x, s);
    } while (x >= s.n);
    return static_cast<int64_t>(x);
}

} // namespace il
