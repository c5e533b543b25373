// Element-wise ops of the CUDA backend: fill, broadcast, axpby, activations, Fourier features,
// embedding, row gather and the optimizer updates.
//
// Kernels are grid-stride loops with 64-bit indices. The ones that stream whole activations
// (fill, scale, axpby, activations) come in two forms: Vec = true when every pointer is 16-byte
// aligned (whole buffers are: allocations are 256-byte aligned), with one float4 load or store
// per four elements (16-byte memory instructions: a quarter of the instructions, and more bytes
// in flight per thread), and Vec = false for views made by rowSlice() or an offset, which are only
// 4-byte aligned. Both compute each element with the same formula. Math is
// IEEE (no --use_fast_math): sinf/cosf/expf/tanhf are the accurate versions, which SIREN
// (sin(30 x)) and the non-finite checks of the step guard rely on.
#include "CudaCommon.cuh"
#include "Shuffle.h"

#include <cmath>
#include <cstring>

namespace il::cuda {

namespace {

// ---- kernels ---------------------------------------------------------------------------------

// y[i] = f(x[i]) for i < n; Vec: x and y 16-byte aligned, thread t takes float4 t, t + stride,
// ..., then the n % 4 last elements one by one. x may be y (each element is read, then written,
// by one thread).
template <bool Vec, class F>
__device__ __forceinline__ void map1(const float* x, float* y, int64_t n, F f)
{
    int64_t done = 0;
    if constexpr (Vec) {
        const int64_t n4 = n >> 2;
        const auto* x4 = reinterpret_cast<const float4*>(x);
        auto* y4 = reinterpret_cast<float4*>(y);
        for (int64_t i = globalThread(); i < n4; i += globalStride()) {
            const float4 v = x4[i];
            y4[i] = make_float4(f(v.x), f(v.y), f(v.z), f(v.w));
        }
        done = n4 << 2;
    }
    for (int64_t i = done + globalThread(); i < n; i += globalStride())
        y[i] = f(x[i]);
}

// y[i] = f(a[i], b[i]), as map1; y may be a or b.
template <bool Vec, class F>
__device__ __forceinline__ void map2(const float* a, const float* b, float* y, int64_t n, F f)
{
    int64_t done = 0;
    if constexpr (Vec) {
        const int64_t n4 = n >> 2;
        const auto* a4 = reinterpret_cast<const float4*>(a);
        const auto* b4 = reinterpret_cast<const float4*>(b);
        auto* y4 = reinterpret_cast<float4*>(y);
        for (int64_t i = globalThread(); i < n4; i += globalStride()) {
            const float4 u = a4[i], v = b4[i];
            y4[i] = make_float4(f(u.x, v.x), f(u.y, v.y), f(u.z, v.z), f(u.w, v.w));
        }
        done = n4 << 2;
    }
    for (int64_t i = done + globalThread(); i < n; i += globalStride())
        y[i] = f(a[i], b[i]);
}

template <bool Vec>
__global__ void __launch_bounds__(kBlock) fillKernel(float* p, int64_t n, float value)
{
    int64_t done = 0;
    if constexpr (Vec) {
        const int64_t n4 = n >> 2;
        auto* p4 = reinterpret_cast<float4*>(p);
        for (int64_t i = globalThread(); i < n4; i += globalStride())
            p4[i] = make_float4(value, value, value, value);
        done = n4 << 2;
    }
    for (int64_t i = done + globalThread(); i < n; i += globalStride())
        p[i] = value;
}

template <bool Vec>
__global__ void __launch_bounds__(kBlock) scaleKernel(float* y, int64_t n, float b)
{
    map1<Vec>(y, y, n, [b](float v) { return b * v; });
}

__global__ void __launch_bounds__(kBlock)
    broadcastRowsKernel(const float* __restrict__ bias, float* __restrict__ y, int64_t n,
                        int64_t cols)
{
    for (int64_t i = globalThread(); i < n; i += globalStride())
        y[i] = bias[i % cols];
}

// The same for rows of 32 or more: a 2-D grid, threads across the columns (coalesced stores,
// one bias load per thread) and blocks down the rows, with no 64-bit division per element.
__global__ void __launch_bounds__(kBlock)
    broadcastRows2dKernel(const float* __restrict__ bias, float* __restrict__ y, int64_t rows,
                          int64_t cols)
{
    for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < cols;
         c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
        const float b = bias[c];
        for (int64_t r = blockIdx.y; r < rows; r += gridDim.y)
            y[r * cols + c] = b;
    }
}

// axpby here and the optimizer rules (OptimizerMath.h, IL_FMA) spell out their fused
// multiply-adds: nvcc would contract them anyway, but which product gets fused changes the
// rounding. These are the ones GCC fuses in CpuBackend.cpp (the first product of a sum, with FMA
// hardware), so the two backends round alike and optimizer state agrees even where the sum
// cancels.

// y = a x + b y. x may be y (gemm's empty product scales C in place).
template <bool Vec>
__global__ void __launch_bounds__(kBlock)
    axpbyKernel(float a, const float* x, float b, float* y, int64_t n)
{
    map2<Vec>(x, y, y, n, [a, b](float xi, float yi) { return fmaf(a, xi, b * yi); });
}

// Op: a struct of ActivationMath.h. y may alias x: each element is read before it is written,
// by the same thread.
template <class Op, bool Vec>
__global__ void __launch_bounds__(kBlock)
    activationForwardKernel(float param, const float* x, float* y, int64_t n)
{
    map1<Vec>(x, y, n, [param](float v) { return Op::template forward<DeviceLane>(v, param); });
}

// in: x or y, as Op::kBackwardFromOutput says. dx may alias dy.
template <class Op, bool Vec>
__global__ void __launch_bounds__(kBlock)
    activationBackwardKernel(float param, const float* in, const float* dy, float* dx, int64_t n)
{
    map2<Vec>(in, dy, dx, n,
              [param](float v, float g) { return Op::template backward<DeviceLane>(v, g, param); });
}

// z: rows x m, y: rows x 2m = [sin z | cos z]; n = rows * m.
__global__ void __launch_bounds__(kBlock)
    fourierForwardKernel(const float* z, float* y, int64_t n, int64_t m)
{
    for (int64_t idx = globalThread(); idx < n; idx += globalStride()) {
        const int64_t i = idx / m, j = idx - i * m;
        float s, c;
        sincosf(z[idx], &s, &c);
        float* row = y + i * 2 * m;
        row[j] = s;
        row[m + j] = c;
    }
}

// dz = dy_sin * cos z - dy_cos * sin z. dz may alias z (read first, same thread).
__global__ void __launch_bounds__(kBlock)
    fourierBackwardKernel(const float* z, const float* dy, float* dz, int64_t n, int64_t m)
{
    for (int64_t idx = globalThread(); idx < n; idx += globalStride()) {
        const int64_t i = idx / m, j = idx - i * m;
        float s, c;
        sincosf(z[idx], &s, &c);
        const float* row = dy + i * 2 * m;
        dz[idx] = row[j] * c - row[m + j] * s;
    }
}

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
// without float atomics, in O(positions + vocab) work (issue #18: a scan of every id per table
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

// An epoch's order: each position computed on its own (Shuffle.h), as on the CPU.
__global__ void __launch_bounds__(kBlock)
    shuffledOrderKernel(ShuffleKey key, int64_t n, int32_t* order)
{
    for (int64_t i = globalThread(); i < n; i += globalStride())
        order[i] = static_cast<int32_t>(shuffledIndex(i, key));
}

// dst[i, :] = src[index[first + i], :]; an index outside [0, srcRows) gives a zero row.
__global__ void __launch_bounds__(kBlock)
    gatherRowsKernel(const float* src, int64_t srcRows, const int32_t* index, int64_t first,
                     float* dst, int64_t n, int64_t cols)
{
    for (int64_t idx = globalThread(); idx < n; idx += globalStride()) {
        const int64_t i = idx / cols, c = idx - i * cols;
        const int64_t r = index[first + i];
        dst[idx] = (r >= 0 && r < srcRows) ? src[r * cols + c] : 0.f;
    }
}

// The optimizers read the step guard on the device: false (skip the update) once a step went
// bad; otherwise the gradient scale (clipping). No guard: scale 1.
__device__ __forceinline__ bool readGuard(const float* guard, float& scale)
{
    scale = 1.f;
    if (!guard) return true;
    if (guard[GuardBad] != 0.f) return false;
    scale = guard[GuardScale];
    return true;
}

// Rule: a struct of OptimizerMath.h; c: its constants for this step, computed on the host and
// passed by value (a recording bakes them in). s: the rule's state tensors.
// Hash encoding (HashGridMath.h): one thread per (row, level), the geometry of hashgrid::corners.
__global__ void __launch_bounds__(kBlock)
    hashGridForwardKernel(HashGrid g, const float* x, const float* tables, float* y, int64_t rows)
{
    const int64_t n = rows * g.levels, features = g.features, out = g.outputs();
    for (int64_t i = globalThread(); i < n; i += globalStride()) {
        const int64_t r = i / g.levels;
        const int l = static_cast<int>(i - r * g.levels);
        const hashgrid::Corners c = hashgrid::corners(g, l, x[r * 2], x[r * 2 + 1]);
        const float* level = tables + static_cast<int64_t>(l) * g.tableRows() * features;
        for (int64_t f = 0; f < features; ++f) {
            float v = c.weight[0] * level[c.row[0] * features + f];
            v = v + c.weight[1] * level[c.row[1] * features + f];
            v = v + c.weight[2] * level[c.row[2] * features + f];
            v = v + c.weight[3] * level[c.row[3] * features + f];
            y[r * out + l * features + f] = v;
        }
    }
}

// The table gradient by atomic adds: the order of a row's sum varies from run to run on the GPU
// (the CPU sums every level in row order); results agree within the parity test's tolerance.
__global__ void __launch_bounds__(kBlock)
    hashGridBackwardKernel(HashGrid g, const float* x, const float* dy, float* dtables,
                           int64_t rows)
{
    const int64_t n = rows * g.levels, features = g.features, out = g.outputs();
    for (int64_t i = globalThread(); i < n; i += globalStride()) {
        const int64_t r = i / g.levels;
        const int l = static_cast<int>(i - r * g.levels);
        const hashgrid::Corners c = hashgrid::corners(g, l, x[r * 2], x[r * 2 + 1]);
        float* level = dtables + static_cast<int64_t>(l) * g.tableRows() * features;
        const float* grad = dy + r * out + static_cast<int64_t>(l) * features;
        for (int k = 0; k < 4; ++k)
            for (int64_t f = 0; f < features; ++f)
                atomicAdd(level + c.row[k] * features + f, c.weight[k] * grad[f]);
    }
}

template <class Rule>
__global__ void __launch_bounds__(kBlock)
    optimizerKernel(typename Rule::Step c, float* w, const float* g, optimizers::Slots s, int64_t n,
                    const float* guard)
{
    float scale;
    if (!readGuard(guard, scale)) return;
    for (int64_t i = globalThread(); i < n; i += globalStride())
        optimizers::updateElement<Rule>(c, w, g, scale, s, i);
}

} // namespace

cudaError_t loadElementwiseKernels()
{
    const void* kernels[] = {
        reinterpret_cast<const void*>(&fillKernel<false>),
        reinterpret_cast<const void*>(&fillKernel<true>),
        reinterpret_cast<const void*>(&scaleKernel<false>),
        reinterpret_cast<const void*>(&scaleKernel<true>),
        reinterpret_cast<const void*>(&broadcastRowsKernel),
        reinterpret_cast<const void*>(&broadcastRows2dKernel),
        reinterpret_cast<const void*>(&axpbyKernel<false>),
        reinterpret_cast<const void*>(&axpbyKernel<true>),
        reinterpret_cast<const void*>(&fourierForwardKernel),
        reinterpret_cast<const void*>(&fourierBackwardKernel),
        reinterpret_cast<const void*>(&hashGridForwardKernel),
        reinterpret_cast<const void*>(&hashGridBackwardKernel),
        reinterpret_cast<const void*>(&embeddingForwardKernel),
        reinterpret_cast<const void*>(&embedCountKernel),
        reinterpret_cast<const void*>(&embedScanKernel),
        reinterpret_cast<const void*>(&embedPlaceKernel),
        reinterpret_cast<const void*>(&embedSumKernel),
        reinterpret_cast<const void*>(&gatherRowsKernel),
        reinterpret_cast<const void*>(&shuffledOrderKernel),
    };
    cudaError_t e = cudaSuccess;
    const auto load = [&e](const void* kernel) {
        cudaFuncAttributes attributes{};
        if (e == cudaSuccess) e = cudaFuncGetAttributes(&attributes, kernel);
    };
    for (const void* kernel : kernels)
        load(kernel);
    forEachActivation([&]<class Op>() {
        load(reinterpret_cast<const void*>(&activationForwardKernel<Op, false>));
        load(reinterpret_cast<const void*>(&activationForwardKernel<Op, true>));
        load(reinterpret_cast<const void*>(&activationBackwardKernel<Op, false>));
        load(reinterpret_cast<const void*>(&activationBackwardKernel<Op, true>));
    });
    forEachOptimizerRule(
        [&]<class Rule>() { load(reinterpret_cast<const void*>(&optimizerKernel<Rule>)); });
    return e;
}

// ---- element-wise ops ------------------------------------------------------------------------

void CudaBackend::fill(Tensor t, float value)
{
    const int64_t n = t.size();
    if (n <= 0) return;
    bind();
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    if (bits == 0) { // +0.0f: a memset node, cheaper than a kernel
        check(cudaMemsetAsync(t.data, 0, static_cast<size_t>(n) * sizeof(float), m_stream), "fill");
        return;
    }
    if (aligned16(t.data))
        fillKernel<true><<<elementGrid((n + 3) / 4), kBlock, 0, m_stream>>>(t.data, n, value);
    else
        fillKernel<false><<<elementGrid(n), kBlock, 0, m_stream>>>(t.data, n, value);
    checkLaunch("fill");
}

void CudaBackend::scaleInPlace(float* y, int64_t n, float b)
{
    if (n <= 0) return;
    if (b == 0.f) {
        fill(Tensor{y, {1, n}}, 0.f);
        return;
    }
    bind();
    if (aligned16(y))
        scaleKernel<true><<<elementGrid((n + 3) / 4), kBlock, 0, m_stream>>>(y, n, b);
    else
        scaleKernel<false><<<elementGrid(n), kBlock, 0, m_stream>>>(y, n, b);
    checkLaunch("scale");
}

void CudaBackend::broadcastRows(ConstTensor bias, Tensor y)
{
    shapes::broadcastRows(bias, y);
    const int64_t n = y.size();
    if (n <= 0) return;
    bind();
    const int64_t rows = y.rows(), cols = y.cols();
    if (cols >= 32) {
        const auto across =
            static_cast<unsigned>(std::min<int64_t>((cols + kBlock - 1) / kBlock, 1024));
        // Enough blocks down the rows to fill the device a few times over, each writing several
        // rows (the y dimension of a grid is at most 65535).
        const int64_t wanted = std::max<int64_t>(1, int64_t{m_sms} * 16 / across);
        const auto down = static_cast<unsigned>(std::min<int64_t>({rows, wanted, 65535}));
        broadcastRows2dKernel<<<dim3(across, down), kBlock, 0, m_stream>>>(bias.data, y.data, rows,
                                                                           cols);
    } else {
        broadcastRowsKernel<<<elementGrid(n), kBlock, 0, m_stream>>>(bias.data, y.data, n, cols);
    }
    checkLaunch("broadcastRows");
}

void CudaBackend::axpby(float a, ConstTensor x, float b, Tensor y)
{
    shapes::same("axpby", x.shape, y.shape);
    const int64_t n = y.size();
    if (n <= 0) return;
    bind();
    if (aligned16(x.data, y.data))
        axpbyKernel<true>
            <<<elementGrid((n + 3) / 4), kBlock, 0, m_stream>>>(a, x.data, b, y.data, n);
    else
        axpbyKernel<false><<<elementGrid(n), kBlock, 0, m_stream>>>(a, x.data, b, y.data, n);
    checkLaunch("axpby");
}

// ---- activations (formulas: ActivationMath.h) ---------------------------------------------

void CudaBackend::activationForward(Activation act, float param, ConstTensor x, Tensor y)
{
    shapes::same("activation forward", x.shape, y.shape);
    const int64_t n = x.size();
    if (n <= 0) return;
    bind();
    if (act == Activation::Identity) {
        if (y.data != x.data)
            check(cudaMemcpyAsync(y.data, x.data, static_cast<size_t>(n) * sizeof(float),
                                  cudaMemcpyDeviceToDevice, m_stream),
                  "activation forward");
        return;
    }
    const bool vec = aligned16(x.data, y.data);
    visitActivation(act, [&]<class Op>() {
        if (vec)
            activationForwardKernel<Op, true>
                <<<elementGrid((n + 3) / 4), kBlock, 0, m_stream>>>(param, x.data, y.data, n);
        else
            activationForwardKernel<Op, false>
                <<<elementGrid(n), kBlock, 0, m_stream>>>(param, x.data, y.data, n);
    });
    checkLaunch("activation forward");
}

void CudaBackend::activationBackward(Activation act, float param, ConstTensor x, ConstTensor y,
                                     ConstTensor dy, Tensor dx)
{
    shapes::same("activation backward", dy.shape, dx.shape);
    const float* in = nullptr;
    visitActivation(act, [&]<class Op>() {
        const ConstTensor input = Op::kBackwardFromOutput ? y : x;
        if (act != Activation::Identity) shapes::activationInput(Op::kName, input.shape, dy.shape);
        in = input.data;
    });
    const int64_t n = dy.size();
    if (n <= 0) return;
    bind();
    if (act == Activation::Identity) {
        if (dx.data != dy.data)
            check(cudaMemcpyAsync(dx.data, dy.data, static_cast<size_t>(n) * sizeof(float),
                                  cudaMemcpyDeviceToDevice, m_stream),
                  "activation backward");
        return;
    }
    const bool vec = aligned16(in, dy.data, dx.data);
    visitActivation(act, [&]<class Op>() {
        if (vec)
            activationBackwardKernel<Op, true>
                <<<elementGrid((n + 3) / 4), kBlock, 0, m_stream>>>(param, in, dy.data, dx.data, n);
        else
            activationBackwardKernel<Op, false>
                <<<elementGrid(n), kBlock, 0, m_stream>>>(param, in, dy.data, dx.data, n);
    });
    checkLaunch("activation backward");
}

// ---- Fourier features ------------------------------------------------------------------------

void CudaBackend::fourierForward(ConstTensor z, Tensor y)
{
    const int64_t m = z.cols();
    shapes::fourierForward(z, y);
    const int64_t n = z.size();
    if (n <= 0) return;
    bind();
    fourierForwardKernel<<<elementGrid(n), kBlock, 0, m_stream>>>(z.data, y.data, n, m);
    checkLaunch("fourierForward");
}

void CudaBackend::fourierBackward(ConstTensor z, ConstTensor dy, Tensor dz)
{
    const int64_t m = z.cols();
    shapes::fourierBackward(z, dy, dz);
    const int64_t n = z.size();
    if (n <= 0) return;
    bind();
    fourierBackwardKernel<<<elementGrid(n), kBlock, 0, m_stream>>>(z.data, dy.data, dz.data, n, m);
    checkLaunch("fourierBackward");
}

// ---- embedding -------------------------------------------------------------------------------
// The CPU backend throws on an id outside [0, vocab) (after writing a zero slice). A GPU kernel
// cannot throw without a host round trip, so here such an id gives a zero slice in forward and
// contributes nothing in backward; no memory outside the table is read or written.

void CudaBackend::embeddingForward(ConstTensor ids, ConstTensor table, Tensor y)
{
    const int64_t vocab = table.rows(), dim = table.cols();
    shapes::embeddingForward(ids, table, y);
    const int64_t n = y.size();
    if (n <= 0) return;
    bind();
    embeddingForwardKernel<<<elementGrid(n), kBlock, 0, m_stream>>>(ids.data, table.data, y.data, n,
                                                                    dim, vocab);
    checkLaunch("embeddingForward");
}

void CudaBackend::embeddingBackward(ConstTensor ids, ConstTensor dy, Tensor dtable)
{
    const int64_t rows = ids.rows(), ctx = ids.cols(), vocab = dtable.rows(), dim = dtable.cols();
    shapes::embeddingBackward(ids, dy, dtable);
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

// ---- multiresolution hash encoding
// ----------------------------------------------------------------

void CudaBackend::hashGridForward(const HashGrid& g, ConstTensor x, ConstTensor tables, Tensor y)
{
    shapes::hashGrid("hashGridForward", g, x, tables, y);
    const int64_t n = x.rows() * g.levels;
    if (n <= 0) return;
    bind();
    hashGridForwardKernel<<<elementGrid(n), kBlock, 0, m_stream>>>(g, x.data, tables.data, y.data,
                                                                   x.rows());
    checkLaunch("hashGridForward");
}

void CudaBackend::hashGridBackward(const HashGrid& g, ConstTensor x, ConstTensor dy, Tensor dtables)
{
    shapes::hashGrid("hashGridBackward", g, x, dtables, dy);
    fill(dtables, 0.f);
    const int64_t n = x.rows() * g.levels;
    if (n <= 0) return;
    bind();
    hashGridBackwardKernel<<<elementGrid(n), kBlock, 0, m_stream>>>(g, x.data, dy.data,
                                                                    dtables.data, x.rows());
    checkLaunch("hashGridBackward");
}

// ---- data movement ---------------------------------------------------------------------------
// index is device memory (IndexBuffer). An index outside [0, src.rows) gives a zero row instead
// of a read outside src (the CPU backend does not check).

void CudaBackend::shuffledOrder(uint64_t key, int64_t n, int32_t* order)
{
    shapes::shuffledOrder(n);
    if (n == 0) return;
    bind();
    shuffledOrderKernel<<<elementGrid(n), kBlock, 0, m_stream>>>(
        makeShuffleKey(key, static_cast<uint64_t>(n)), n, order);
    checkLaunch("shuffledOrder");
}

void CudaBackend::gatherRows(ConstTensor src, const int32_t* index, int64_t first, Tensor dst)
{
    shapes::gatherRows(src, dst);
    const int64_t n = dst.size();
    if (n <= 0) return;
    bind();
    gatherRowsKernel<<<elementGrid(n), kBlock, 0, m_stream>>>(src.data, src.rows(), index, first,
                                                              dst.data, n, dst.cols());
    checkLaunch("gatherRows");
}

// ---- optimizers ------------------------------------------------------------------------------

// The rule's constants come from the same host code as on the CPU backend (Rule::prepare).
void CudaBackend::optimizerStep(OptimizerRule rule, const OptimizerHyper& h, Tensor params,
                                ConstTensor grads, std::span<const Tensor> state,
                                const float* guard)
{
    visitOptimizerRule(rule, [&]<class Rule>() {
        shapes::optimizerStep(Rule::kName, Rule::kSlots, params, grads, state);
        const int64_t n = params.size();
        if (n <= 0) return;
        optimizers::Slots s{};
        for (int k = 0; k < Rule::kSlots; ++k)
            s.p[k] = state[static_cast<size_t>(k)].data;
        bind();
        optimizerKernel<Rule><<<elementGrid(n), kBlock, 0, m_stream>>>(
            Rule::prepare(h), params.data, grads.data, s, n, guard);
        checkLaunch(Rule::kName);
    });
}

} // namespace il::cuda
