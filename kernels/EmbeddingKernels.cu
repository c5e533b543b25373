// The CUDA backend's embedding: forward (a gather of table rows), and backward without float
// atomics in O(positions + vocab) work (the scatter-add of dy slices into table rows); and the
// windows of a row of positions that a convolution reads (ConvLayer.cpp), and their gradient.
#include "CudaCommon.cuh"

namespace il::cuda {

namespace {

// ids: `positions` floats (rows x context, row-major), y: positions x dim (= rows x ctx*dim).
// An id outside [0, vocab) gives a zero slice; nothing outside the table is read.
__global__ void __launch_bounds__(kBlock)
    embeddingForwardKernel(const float* ids, const float* table, float* y, int64_t n, int64_t dim,
                           int64_t vocab)
{
    for (int64_t idx = globalThread(); idx < n; idx += globalStride()) {
        const int64_t p = idx / dim, d = idx - p * dim;
        const int64_t id = idFromFloat(ids[p], vocab);
        y[idx] = id >= 0 ? table[id * dim + d] : 0.f;
    }
}

constexpr int kEmbedLaneDims = 4;               // accumulators per lane
constexpr int kEmbedDims = 32 * kEmbedLaneDims; // dims per pass over the ids

// dtable[v, :] = sum of the dy slices of the positions whose id is v, deterministically and
// without float atomics, in O(positions + vocab) work (a scan of every id per table
// row was vocab x positions reads, seconds for a word vocabulary):
//   1. embedCountKernel      counts[v] = how many positions hold id v (int atomics: exact)
//   2. embedScanKernel       start[v] = counts[0] + ... + counts[v - 1]; cursor = start
//   3. embedPlaceKernel      list[start[v] ...] = the positions of id v, in arbitrary order
//   4. embedSumKernel        one block per table row sorts its positions (bitonic, in shared
//                            memory) and sums their dy slices in position order
// A row with more than kEmbedSortMax positions instead scans all ids in position order
// (embedScanRow, the previous kernel's way): at most positions / kEmbedSortMax rows can, so
// that costs at most positions^2 / kEmbedSortMax id reads. Either way the order of the sum
// depends only on the ids, so the result is the same on every run.
constexpr int kEmbedSortMax = 2048;

__global__ void __launch_bounds__(kBlock)
    embedCountKernel(const float* __restrict__ ids, int64_t positions, int64_t vocab,
                     int* __restrict__ counts)
{
    for (int64_t p = globalThread(); p < positions; p += globalStride())
        if (const int64_t id = idFromFloat(ids[p], vocab); id >= 0) atomicAdd(counts + id, 1);
}

// One block: exclusive prefix sums of counts, kBlock at a time (warp scans, then warp totals).
__global__ void __launch_bounds__(kBlock)
    embedScanKernel(const int* __restrict__ counts, int64_t vocab, int* __restrict__ start,
                    int* __restrict__ cursor)
{
    __shared__ int warpTotals[kWarps];
    __shared__ int carry;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (threadIdx.x == 0) carry = 0;
    __syncthreads();
    for (int64_t base = 0; base < vocab; base += kBlock) {
        const int64_t v = base + threadIdx.x;
        const int c = v < vocab ? counts[v] : 0;
        int inclusive = c;
        for (int o = 1; o < 32; o <<= 1) {
            const int up = __shfl_up_sync(kFullMask, inclusive, o);
            if (lane >= o) inclusive += up;
        }
        if (lane == 31) warpTotals[warp] = inclusive;
        __syncthreads();
        int before = carry;
        for (int w = 0; w < warp; ++w)
            before += warpTotals[w];
        const int exclusive = before + inclusive - c;
        if (v < vocab) {
            start[v] = exclusive;
            cursor[v] = exclusive;
        }
        __syncthreads(); // everyone has read carry and warpTotals
        if (threadIdx.x == kBlock - 1) carry = exclusive + c;
        __syncthreads();
    }
    if (threadIdx.x == 0) start[vocab] = carry;
}

__global__ void __launch_bounds__(kBlock)
    embedPlaceKernel(const float* __restrict__ ids, int64_t positions, int64_t vocab,
                     int* __restrict__ cursor, int* __restrict__ list)
{
    for (int64_t p = globalThread(); p < positions; p += globalStride())
        if (const int64_t id = idFromFloat(ids[p], vocab); id >= 0)
            list[atomicAdd(cursor + id, 1)] = static_cast<int>(p);
}

// Adds the kWarps warp sums of one pass over kEmbedDims dims in warp order into dtable[v, d0...].
__device__ __forceinline__ void embedFinishPass(float (*warpSums)[kEmbedDims], const float* acc,
                                                float* dtable, int64_t v, int64_t d0, int64_t dim)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int j = 0; j < kEmbedLaneDims; ++j)
        warpSums[warp][lane + 32 * j] = acc[j];
    __syncthreads();
    if (threadIdx.x < kEmbedDims) {
        const int64_t d = d0 + threadIdx.x;
        if (d < dim) {
            float sum = 0.f;
            for (int w = 0; w < kWarps; ++w)
                sum += warpSums[w][threadIdx.x];
            dtable[v * dim + d] = sum;
        }
    }
    __syncthreads(); // warpSums is reused by the next pass
}

// Row v from all ids: warp w scans the 32-position tiles w, w + kWarps, ... in increasing
// order; a ballot finds the tile's matches, taken in lane order, each lane adding
// kEmbedLaneDims of the dims.
__device__ void embedScanRow(const float* ids, const float* dy, float* dtable, int64_t positions,
                             int64_t vocab, int64_t dim, int64_t v, float (*warpSums)[kEmbedDims])
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int64_t tiles = (positions + 31) / 32;
    for (int64_t d0 = 0; d0 < dim; d0 += kEmbedDims) {
        float acc[kEmbedLaneDims] = {};
        for (int64_t t = warp; t < tiles; t += kWarps) { // warp-uniform bounds
            const int64_t p = t * 32 + lane;
            const bool match = p < positions && idFromFloat(ids[p], vocab) == v;
            unsigned mask = __ballot_sync(kFullMask, match);
            while (mask) {
                const int bit = __ffs(mask) - 1;
                mask &= mask - 1;
                const float* src = dy + (t * 32 + bit) * dim;
#pragma unroll
                for (int j = 0; j < kEmbedLaneDims; ++j) {
                    const int64_t d = d0 + lane + 32 * j;
                    if (d < dim) acc[j] += src[d];
                }
            }
        }
        embedFinishPass(warpSums, acc, dtable, v, d0, dim);
    }
}

__global__ void __launch_bounds__(kBlock)
    embedSumKernel(const float* ids, const float* dy, const int* __restrict__ start,
                   const int* __restrict__ list, float* dtable, int64_t positions, int64_t vocab,
                   int64_t dim)
{
    __shared__ float warpSums[kWarps][kEmbedDims];
    __shared__ int sorted[kEmbedSortMax];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int64_t v = blockIdx.x; v < vocab; v += gridDim.x) {
        const int first = start[v], count = start[v + 1] - first; // block-uniform
        if (count > kEmbedSortMax) {
            embedScanRow(ids, dy, dtable, positions, vocab, dim, v, warpSums);
            continue;
        }
        int width = 1; // the sort's width: a power of two >= count
        while (width < count)
            width <<= 1;
        for (int i = threadIdx.x; i < width; i += kBlock)
            sorted[i] = i < count ? list[first + i] : 0x7fffffff;
        __syncthreads();
        for (int k = 2; k <= width; k <<= 1)
            for (int j = k >> 1; j > 0; j >>= 1) {
                for (int i = threadIdx.x; i < width; i += kBlock) {
                    const int partner = i ^ j;
                    if (partner > i) {
                        const int a = sorted[i], b = sorted[partner];
                        if ((a > b) == ((i & k) == 0)) {
                            sorted[i] = b;
                            sorted[partner] = a;
                        }
                    }
                }
                __syncthreads();
            }
        // Warp w adds the w-th of kWarps contiguous runs of the sorted positions, in order.
        const int per = (count + kWarps - 1) / kWarps;
        const int lo = min(count, warp * per), hi = min(count, lo + per);
        for (int64_t d0 = 0; d0 < dim; d0 += kEmbedDims) {
            float acc[kEmbedLaneDims] = {};
            for (int q = lo; q < hi; ++q) {
                const float* src = dy + static_cast<int64_t>(sorted[q]) * dim;
#pragma unroll
                for (int j = 0; j < kEmbedLaneDims; ++j) {
                    const int64_t d = d0 + lane + 32 * j;
                    if (d < dim) acc[j] += src[d];
                }
            }
            embedFinishPass(warpSums, acc, dtable, v, d0, dim);
        }
        __syncthreads(); // `sorted` is refilled for the next row
    }
}

// ---- windows (ConvLayer.cpp): one thread per output number ------------------------------------
__global__ void __launch_bounds__(kBlock)
    windowsKernel(const float* __restrict__ x, int64_t xCols, int64_t q, int64_t step,
                  int64_t width, float* __restrict__ y, int64_t n)
{
    for (int64_t idx = globalThread(); idx < n; idx += globalStride()) {
        const int64_t window = idx / width, j = idx - window * width;
        const int64_t r = window / q, w = window - r * q;
        y[idx] = x[r * xCols + w * step + j];
    }
}

// dx[r, t]: the windows that hold t summed in window order, as the CPU backend sums them.
__global__ void __launch_bounds__(kBlock)
    windowsBackwardKernel(const float* __restrict__ dy, int64_t q, int64_t step, int64_t width,
                          float* __restrict__ dx, int64_t cols, int64_t n)
{
    for (int64_t idx = globalThread(); idx < n; idx += globalStride()) {
        const int64_t r = idx / cols, t = idx - r * cols;
        const int64_t last = min(q - 1, t / step);
        const int64_t first = t >= width ? (t - width) / step + 1 : 0;
        float sum = 0.f;
        for (int64_t w = first; w <= last; ++w)
            sum += dy[(r * q + w) * width + (t - w * step)];
        dx[idx] = sum;
    }
}

} // namespace

cudaError_t loadEmbeddingKernels()
{
    const void* kernels[] = {
        reinterpret_cast<const void*>(&embeddingForwardKernel),
        reinterpret_cast<const void*>(&embedCountKernel),
        reinterpret_cast<const void*>(&embedScanKernel),
        reinterpret_cast<const void*>(&embedPlaceKernel),
        reinterpret_cast<const void*>(&embedSumKernel),
        reinterpret_cast<const void*>(&windowsKernel),
        reinterpret_cast<const void*>(&windowsBackwardKernel),
    };
    for (const void* kernel : kernels) {
        cudaFuncAttributes attributes{};
        if (const cudaError_t e = cudaFuncGetAttributes(&attributes, kernel); e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

// ---- embedding -------------------------------------------------------------------------------
// The CPU backend throws on an id outside [0, vocab) (after writing a zero slice). A GPU kernel
// cannot throw without a host round trip, so here such an id gives a zero slice in forward and
// contributes nothing in backward; no memory outside the table is read or written.

void CudaBackend::embeddingForwardImpl(ConstTensor ids, ConstTensor table, Tensor y)
{
    const int64_t vocab = table.rows(), dim = table.cols();
    const int64_t n = y.size();
    if (n <= 0) return;
    bind();
    embeddingForwardKernel<<<elementGrid(n), kBlock, 0, m_stream>>>(ids.data, table.data, y.data, n,
                                                                    dim, vocab);
    checkLaunch("embeddingForward");
}

void CudaBackend::embeddingBackwardImpl(ConstTensor ids, ConstTensor dy, Tensor dtable)
{
    const int64_t rows = ids.rows(), ctx = ids.cols(), vocab = dtable.rows(), dim = dtable.cols();
    if (vocab <= 0 || dim <= 0) return;
    const int64_t positions = rows * ctx;
    constexpr int64_t intMax = 0x7fffffff;
    if (positions >= intMax || vocab >= intMax)
        throw BackendError("embeddingBackward: " + ids.shape.toString() + " ids into " +
                           std::to_string(vocab) + " rows exceed 32-bit positions");
    bind();
    // Workspace: counts, start (vocab + 1), cursor, then the positions' list. Grow-only, sized
    // by the eager step the trainer runs before it records one.
    const int64_t need = 3 * vocab + 1 + positions;
    if (need > m_embedScratchInts) {
        requireNotRecording("embeddingBackward (its workspace would have to grow)");
        auto* grown = static_cast<int*>(allocateBytes(static_cast<size_t>(need) * sizeof(int)));
        retireBytes(m_embedScratch); // a recorded graph may still use the old workspace
        m_embedScratch = grown;
        m_embedScratchInts = need;
    }
    int* counts = m_embedScratch;
    int* start = counts + vocab;
    int* cursor = start + vocab + 1;
    int* list = cursor + vocab;
    check(cudaMemsetAsync(counts, 0, static_cast<size_t>(vocab) * sizeof(int), m_stream),
          "embeddingBackward");
    if (positions > 0) {
        embedCountKernel<<<elementGrid(positions), kBlock, 0, m_stream>>>(ids.data, positions,
                                                                          vocab, counts);
        checkLaunch("embeddingBackward");
    }
    embedScanKernel<<<1, kBlock, 0, m_stream>>>(counts, vocab, start, cursor);
    checkLaunch("embeddingBackward");
    if (positions > 0) {
        embedPlaceKernel<<<elementGrid(positions), kBlock, 0, m_stream>>>(ids.data, positions,
                                                                          vocab, cursor, list);
        checkLaunch("embeddingBackward");
    }
    const auto grid = static_cast<unsigned>(std::min<int64_t>(vocab, 65535));
    embedSumKernel<<<grid, kBlock, 0, m_stream>>>(ids.data, dy.data, start, list, dtable.data,
                                                  positions, vocab, dim);
    checkLaunch("embeddingBackward");
}

// ---- windows ---------------------------------------------------------------------------------
void CudaBackend::windowsImpl(ConstTensor x, int64_t step, Tensor y)
{
    const int64_t n = y.size();
    if (n <= 0) return;
    bind();
    windowsKernel<<<elementGrid(n), kBlock, 0, m_stream>>>(x.data, x.cols(), y.rows() / x.rows(),
                                                           step, y.cols(), y.data, n);
    checkLaunch("windows");
}

void CudaBackend::windowsBackwardImpl(ConstTensor dy, int64_t step, Tensor dx)
{
    const int64_t n = dx.size();
    if (n <= 0) return;
    bind();
    windowsBackwardKernel<<<elementGrid(n), kBlock, 0, m_stream>>>(
        dy.data, dy.rows() / dx.rows(), step, dy.cols(), dx.data, dx.cols(), n);
    checkLaunch("windowsBackward");
}

} // namespace il::cuda
