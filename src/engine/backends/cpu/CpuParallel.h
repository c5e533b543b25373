// What the CPU backend's files share about running loops on the OpenMP threads: the size
// below which a loop stays on one thread, how a loop is split over the threads, and the
// deterministic chunked sum every reduction uses. Internal to the CPU backend (CpuBackend.cpp,
// CpuLoss.cpp); the loops' bodies are the SIMD kernels of CpuKernels.h.
//
// Work is handed out in blocks, several per thread, to whichever thread is free (OpenMP dynamic
// schedule), not split evenly up front: on a desktop another process often holds one core for
// a while, and with an even split every op would wait for the thread that shares it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <omp.h>
#include <vector>

namespace il::cpu {

constexpr int64_t kParallelMin = 1 << 15; // elements; below this, run on one thread
constexpr int64_t kChunk = 1 << 14;       // reduction chunk (elements)
constexpr int64_t kMinBlock = 1 << 12;    // smallest block a thread takes (elements)
constexpr int kBlocksPerThread = 4;

// Runs f(begin, end) over [0, n): on the calling thread when n <= serialBelow, otherwise over
// the threads in blocks of a multiple of 16 elements (whole SIMD blocks, CpuKernels.h).
template <typename F> void parallelRanges(int64_t n, int64_t serialBelow, F f)
{
    if (n <= serialBelow) {
        if (n > 0) f(int64_t{0}, n);
        return;
    }
    const int64_t threads = std::max(1, omp_get_max_threads());
    int64_t block = std::max(kMinBlock, n / (threads * kBlocksPerThread));
    block = (block + 15) / 16 * 16;
    const int64_t blocks = (n + block - 1) / block;
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t b = 0; b < blocks; ++b)
        f(b * block, std::min(n, (b + 1) * block));
}

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
#pragma omp parallel for schedule(dynamic, 1)
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
