// What the CPU backend's files share about running loops on the OpenMP threads: the size
// below which a loop stays on one thread, and the deterministic chunked sum every reduction
// uses. Internal to the CPU backend (CpuBackend.cpp, CpuLoss.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace il::cpu {

constexpr int64_t kParallelMin = 1 << 15; // elements; below this, run on one thread
constexpr int64_t kChunk = 1 << 14;       // reduction chunk (elements)

// Deterministic parallel sum of f(chunkBegin, chunkEnd) over fixed chunks of [0, n): the
// chunking does not depend on the thread count, and partials are added in order. Owns the
// partials array, which grows once per size and is then reused (no allocation in a step).
class ChunkedSum {
public:
    template <typename F> double operator()(int64_t n, F f, int64_t chunk = kChunk)
    {
        const int64_t chunks = (n + chunk - 1) / chunk;
        if (chunks <= 1) return n > 0 ? f(0, n) : 0.0;
        if (static_cast<int64_t>(m_partials.size()) < chunks)
            m_partials.resize(static_cast<size_t>(chunks));
        double* part = m_partials.data();
#pragma omp parallel for schedule(static)
        for (int64_t c = 0; c < chunks; ++c)
            part[c] = f(c * chunk, std::min(n, (c + 1) * chunk));
        double total = 0;
        for (int64_t c = 0; c < chunks; ++c)
            total += part[c];
        return total;
    }

private:
    std::vector<double> m_partials;
};

} // namespace il::cpu
