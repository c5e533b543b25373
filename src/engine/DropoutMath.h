// Dropout's mask, the same on every backend (the CPU loop in CpuBackend.cpp, the CUDA kernel in
// kernels/NormKernels.cu): element i of a training forward keeps its value, scaled by 1 / (1 - p),
// unless a hash of (the layer's seed, the forward's counter, i) falls below p. The counter lives
// in the layer's saved state and is advanced by the op itself, so a recorded step (a CUDA graph)
// draws a new mask at every replay, and a resumed run goes on with new masks.
#pragma once

#include "HostDevice.h"
#include "Shuffle.h"

#include <cstdint>

namespace il::dropoutmath {

// The state tensor: [seed, counter], both whole numbers below 2^24 held exactly by floats (a
// model file's values stay finite); the counter wraps round there.
inline constexpr float kCounterWrap = 16777216.f;

// The factor element i is multiplied by: 0 (dropped) or 1 / (1 - p).
IL_HOST_DEVICE inline float scale(float seed, float counter, int64_t i, float p)
{
    const uint64_t stream =
        mix64(static_cast<uint64_t>(seed) * 0x100000000ull + static_cast<uint64_t>(counter));
    const uint64_t h = mix64(stream ^ static_cast<uint64_t>(i));
    const float u = static_cast<float>(h >> 40) * (1.f / 16777216.f); // 24 bits: [0, 1)
    return u < p ? 0.f : 1.f / (1.f - p);
}

IL_HOST_DEVICE inline float nextCounter(float counter)
{
    const float next = counter + 1.f;
    return next >= kCounterWrap ? 0.f : next;
}

} // namespace il::dropoutmath
