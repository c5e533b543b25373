// Reductions of the CUDA backend: sum of squares, the losses (value and gradient in one pass),
// row softmax and the training-step guard.
//
// Deterministic by construction, no float atomics: a reduction runs a fixed number of blocks
// (a function of the size only), each block reduces its grid-stride share in a fixed order and
// writes one partial; one block then adds the partials in a fixed order, in double. When a
// single block suffices it writes the result directly. The partials live in a workspace
// allocated once with the backend, so no reduction ever allocates.
#include "CudaCommon.cuh"
#include "LossMath.h"
#include "Sampling.h"

#include <cmath>

namespace il::cuda {

namespace {

// Where a reduction's result goes: *out = total / divisor, or *out += that when accumulate.
struct ScalarOut {
    float* out;
    double divisor;
    int accumulate;
};

__device__ __forceinline__ void writeScalar(const ScalarOut& o, double total)
{
    const auto value = static_cast<float>(total / o.divisor);
    *o.out = o.accumulate ? *o.out + value : value;
}

// Sum of v over the block, valid in thread 0. Fixed order: butterfly within each warp, then
// the kWarps warp sums in warp order. Uses `shared` (kWarps floats) once.
__device__ __forceinline__ float blockSum(float v, float* shared)
{
    v = warpSum(v);
    if ((threadIdx.x & 31) == 0) shared[threadIdx.x >> 5] = v;
    __syncthreads();
    float total = 0.f;
    if (threadIdx.x == 0)
        for (int w = 0; w < kWarps; ++w)
            total += shared[w];
    return total;
}

// Thread 0 of a reduction block: the final result when the grid is one block, else a partial.
__device__ __forceinline__ void finishBlock(double blockTotal, double* partials,
                                            const ScalarOut& out)
{
    if (gridDim.x == 1)
        writeScalar(out, blockTotal);
    else
        partials[blockIdx.x] = blockTotal;
}

// Second pass: one block adds the count partials in a fixed order.
__global__ void __launch_bounds__(kBlock)
    finishSumKernel(const double* partials, int count, ScalarOut out)
{
    __shared__ double sums[kBlock];
    double acc = 0.0;
    for (int i = threadIdx.x; i < count; i += kBlock)
        acc += partials[i];
    sums[threadIdx.x] = acc;
    __syncthreads();
    for (int stride = kBlock / 2; stride > 0; stride >>= 1) {
        if (static_cast<int>(threadIdx.x) < stride) sums[threadIdx.x] += sums[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) writeScalar(out, sums[0]);
}

__global__ void __launch_bounds__(kBlock)
    sumSquaresKernel(const float* x, int64_t n, double* partials, ScalarOut out)
{
    __shared__ float warpSums[kWarps];
    float acc = 0.f;
    for (int64_t i = globalThread(); i < n; i += globalStride()) {
        const float v = x[i];
        acc += v * v;
    }
    const float total = blockSum(acc, warpSums);
    if (threadIdx.x == 0) finishBlock(total, partials, out);
}

// Sums of squares of up to kNormTensors tensors in one launch (the training step's gradient
// norms, one per parameter tensor): the tensors are cut into chunks of `chunk` elements, at least
// one per tensor and at most kMaxReduceBlocks in all; one block reduces one chunk, in the fixed
// order of blockSum, into partials[chunk index]. finishSquaresKernel adds each tensor's partials.
constexpr int kNormTensors = 64;
struct NormTable {
    const float* data[kNormTensors];
    int64_t size[kNormTensors];
    int firstChunk[kNormTensors + 1]; // tensor i owns chunks [firstChunk[i], firstChunk[i + 1])
    int count;
    int64_t chunk;
};

__global__ void __launch_bounds__(kBlock) sumSquaresChunksKernel(NormTable t, double* partials)
{
    __shared__ float warpSums[kWarps];
    const int c = static_cast<int>(blockIdx.x);
    int i = 0;
    while (c >= t.firstChunk[i + 1]) // the same for every thread of the block
        ++i;
    const int64_t begin = static_cast<int64_t>(c - t.firstChunk[i]) * t.chunk;
    const int64_t end = min(begin + t.chunk, t.size[i]);
    const float* __restrict__ x = t.data[i];
    float acc = 0.f;
    for (int64_t j = begin + threadIdx.x; j < end; j += kBlock) {
        const float v = x[j];
        acc += v * v;
    }
    const float total = blockSum(acc, warpSums);
    if (threadIdx.x == 0) partials[c] = total;
}

// Thread i adds tensor i's chunk partials in chunk order, in double.
__global__ void __launch_bounds__(kBlock)
    finishSquaresKernel(NormTable t, const double* partials, float* out)
{
    const int i = static_cast<int>(threadIdx.x);
    if (i >= t.count) return;
    double total = 0.0;
    for (int c = t.firstChunk[i]; c < t.firstChunk[i + 1]; ++c)
        total += partials[c];
    out[i] = static_cast<float>(total);
}

// MSE, MAE and BCE-with-logits: per-element loss summed, gradient of the mean written when grad
// is not null. The formulas are LossMath.h's, as on the CPU (CpuLoss.cpp).
// weights: null, or BCE's two class weights (device memory): an element weighs w0 + t (w1 - w0).
__global__ void __launch_bounds__(kBlock)
    pointLossKernel(LossKind kind, const float* z, const float* t, const float* weights,
                    float* grad, int64_t n, float invN, double* partials, ScalarOut out)
{
    __shared__ float warpSums[kWarps];
    const int64_t first = globalThread(), stride = globalStride();
    float acc = 0.f;
    switch (kind) {
    case LossKind::MSE:
        for (int64_t i = first; i < n; i += stride) {
            const float d = z[i] - t[i];
            if (grad) grad[i] = lossmath::mseGradient(d, invN);
            acc += lossmath::mseTerm(d);
        }
        break;
    case LossKind::MAE:
        for (int64_t i = first; i < n; i += stride) {
            const float d = z[i] - t[i];
            if (grad) grad[i] = lossmath::maeGradient(d, invN); // 0 at d == 0 (and NaN)
            acc += lossmath::maeTerm(d);
        }
        break;
    case LossKind::BinaryCrossEntropy:
        if (!weights) {
            for (int64_t i = first; i < n; i += stride) {
                const float zi = z[i], ti = t[i];
                const float e = expf(-fabsf(zi));
                acc += lossmath::bceTerm<DeviceLane>(zi, ti, e);
                if (grad) grad[i] = lossmath::bceGradient(zi, ti, e, invN);
            }
            break;
        }
        for (int64_t i = first; i < n; i += stride) {
            const float zi = z[i], ti = t[i];
            const float e = expf(-fabsf(zi));
            const float w = lossmath::bceWeight(ti, weights[0], weights[1]);
            acc += w * lossmath::bceTerm<DeviceLane>(zi, ti, e);
            if (grad) grad[i] = lossmath::bceGradient(zi, ti, e, w * invN);
        }
        break;
    case LossKind::CrossEntropy:
        break; // crossEntropyKernel
    }
    const float total = blockSum(acc, warpSums);
    if (threadIdx.x == 0) finishBlock(total, partials, out);
}

// Softmax cross-entropy with label smoothing, one warp per row (grid-stride over rows):
// loss_i = w_cls * ((1 - s) * (logsumexp - z_cls) + s * (logsumexp - mean z)),
// grad = w_cls * (softmax - q) / rows with q = (1 - s) * onehot + s / k; weights: null (w = 1)
// or k class weights (device memory).
// A class id outside [0, k) (the CPU backend throws) makes the row's loss NaN, so the step guard
// stops the update and the trainer reports a non-finite loss; its gradient row is zero.
__global__ void __launch_bounds__(kBlock)
    crossEntropyKernel(const float* z, const float* t, const float* weights, float* grad,
                       int64_t rows, int64_t k, float s, float invRows, double* partials,
                       ScalarOut out)
{
    __shared__ double warpSums[kWarps];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int64_t warpCount = static_cast<int64_t>(gridDim.x) * kWarps;
    const float off = s / static_cast<float>(k);
    double acc = 0.0; // lane 0's running sum of this warp's row losses
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * kWarps + warp; i < rows; i += warpCount) {
        const float* zr = z + i * k;
        float* gr = grad ? grad + i * k : nullptr;
        const int64_t cls = idFromFloat(t[i], k); // the same for every lane: uniform branches
        if (cls < 0) {
            if (gr)
                for (int64_t j = lane; j < k; j += 32)
                    gr[j] = 0.f;
            if (lane == 0) acc += static_cast<double>(NAN);
            continue;
        }
        float mx = -INFINITY;
        for (int64_t j = lane; j < k; j += 32)
            mx = fmaxf(mx, zr[j]);
        mx = warpMax(mx);
        float sum = 0.f, sumZ = 0.f;
        for (int64_t j = lane; j < k; j += 32) {
            const float v = zr[j];
            sum += expf(v - mx);
            sumZ += v;
        }
        sum = warpSum(sum);
        sumZ = warpSum(sumZ);
        const float logSum = logf(sum) + mx; // log sum exp
        const float w = weights ? weights[cls] : 1.f;
        if (lane == 0) {
            const float rowLoss = lossmath::crossEntropyRow(logSum, zr[cls], sumZ, k, s);
            acc += weights ? w * rowLoss : rowLoss;
        }
        if (gr) {
            const float invSum = 1.f / sum;
            const float scale = lossmath::crossEntropyRowScale(w, invRows);
            for (int64_t j = lane; j < k; j += 32) {
                float g = lossmath::crossEntropyGradient(expf(zr[j] - mx), invSum, off, scale);
                if (j == cls) g -= lossmath::crossEntropyTargetShare(s, scale);
                gr[j] = g;
            }
        }
    }
    if (lane == 0) warpSums[warp] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        double total = 0.0;
        for (int w = 0; w < kWarps; ++w)
            total += warpSums[w];
        finishBlock(total, partials, out);
    }
}

// probs = softmax(logits * invT) row-wise, one warp per row. probs must not alias logits
// partially; exact aliasing is safe (each lane rereads only what it wrote).
__global__ void __launch_bounds__(kBlock)
    softmaxRowsKernel(const float* z, float* p, int64_t rows, int64_t k, float invT)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int64_t warpCount = static_cast<int64_t>(gridDim.x) * kWarps;
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * kWarps + warp; i < rows; i += warpCount) {
        const float* zr = z + i * k;
        float* pr = p + i * k;
        float mx = -INFINITY;
        for (int64_t j = lane; j < k; j += 32)
            mx = fmaxf(mx, zr[j] * invT);
        mx = warpMax(mx);
        float sum = 0.f;
        for (int64_t j = lane; j < k; j += 32) {
            const float e = expf(zr[j] * invT - mx);
            pr[j] = e;
            sum += e;
        }
        sum = warpSum(sum);
        const float inv = 1.f / sum;
        for (int64_t j = lane; j < k; j += 32)
            pr[j] *= inv;
    }
}

// One thread per row, the CPU's rule (Sampling.h) word for word: generation batches are a few
// thousand rows of a small alphabet, so a serial scan per row is plenty, and identical rules
// give identical names on both backends.
__global__ void __launch_bounds__(kBlock)
    sampleRowsKernel(const float* p, const float* u, float* ids, float* scratch, int64_t rows,
                     int64_t k, int topK, int firstAllowed)
{
    for (int64_t i = globalThread(); i < rows; i += globalStride())
        ids[i] = static_cast<float>(
            sampleCategory(p + i * k, k, u[i], topK, firstAllowed, scratch + i * k));
}

// The step guard, exactly CpuBackend::guardAndClip: the threads stage sq in shared memory,
// thread 0 scans it in order (first non-finite tensor wins, the norm is summed in double).
constexpr int kGuardChunk = kBlock;

__global__ void __launch_bounds__(kBlock) guardKernel(const float* sq, int count, const float* loss,
                                                      float maxNorm, long long step, float* guard)
{
    __shared__ float chunk[kGuardChunk];
    __shared__ int skip;
    __shared__ int badTensor; // -2: none, -1: the loss, else the tensor index
    __shared__ double total;
    if (threadIdx.x == 0) {
        skip = guard[GuardBad] != 0.f;
        badTensor = (loss && !isfinite(*loss)) ? -1 : -2;
        total = 0.0;
    }
    __syncthreads();
    if (skip) { // uniform: read after the barrier
        if (threadIdx.x == 0) guard[GuardScale] = 0.f;
        return;
    }
    for (int base = 0; base < count; base += kGuardChunk) {
        if (badTensor != -2) break; // uniform: last written before a barrier
        const int i = base + static_cast<int>(threadIdx.x);
        if (i < count) chunk[threadIdx.x] = sq[i];
        __syncthreads();
        if (threadIdx.x == 0) {
            const int end = min(count - base, kGuardChunk);
            for (int j = 0; j < end && badTensor == -2; ++j) {
                if (!isfinite(chunk[j])) badTensor = base + j;
                total += static_cast<double>(chunk[j]);
            }
        }
        __syncthreads();
    }
    if (threadIdx.x != 0) return;
    int bad = badTensor;
    if (bad == -2 && !isfinite(total)) bad = count > 0 ? 0 : -1;
    if (bad != -2) {
        guard[GuardScale] = 0.f;
        guard[GuardBad] = 1.f;
        storeGuardStep(guard, step);
        guard[GuardBadTensor] = static_cast<float>(bad);
        return;
    }
    const double norm = sqrt(total);
    guard[GuardScale] =
        (maxNorm > 0.f && norm > maxNorm) ? static_cast<float>(maxNorm / norm) : 1.f;
}

// Runs the second pass when the first used more than one block.
void finishReduction(cudaStream_t stream, int blocks, const double* partials, const ScalarOut& out,
                     const char* op)
{
    if (blocks <= 1) return;
    finishSumKernel<<<1, kBlock, 0, stream>>>(partials, blocks, out);
    checkLaunch(op);
}

} // namespace

cudaError_t loadReductionKernels()
{
    const void* kernels[] = {
        reinterpret_cast<const void*>(&finishSumKernel),
        reinterpret_cast<const void*>(&sumSquaresKernel),
        reinterpret_cast<const void*>(&sumSquaresChunksKernel),
        reinterpret_cast<const void*>(&finishSquaresKernel),
        reinterpret_cast<const void*>(&pointLossKernel),
        reinterpret_cast<const void*>(&crossEntropyKernel),
        reinterpret_cast<const void*>(&softmaxRowsKernel),
        reinterpret_cast<const void*>(&sampleRowsKernel),
        reinterpret_cast<const void*>(&guardKernel),
    };
    for (const void* kernel : kernels) {
        cudaFuncAttributes attributes{};
        const cudaError_t e = cudaFuncGetAttributes(&attributes, kernel);
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
}

void CudaBackend::sumSquaresImpl(ConstTensor x, float* out)
{
    bind();
    const int64_t n = std::max<int64_t>(x.size(), 0);
    const int blocks = reduceBlocks(n, int64_t(kBlock) * 8);
    const ScalarOut so{out, 1.0, 0};
    sumSquaresKernel<<<blocks, kBlock, 0, m_stream>>>(x.data, n, m_partials, so);
    checkLaunch("sumSquares");
    finishReduction(m_stream, blocks, m_partials, so, "sumSquares");
}

// Two launches per kNormTensors tensors, whatever their sizes (one sumSquares each was one or
// two launches per tensor).
void CudaBackend::sumSquaresEachImpl(std::span<const ConstTensor> xs, float* out)
{
    if (xs.empty()) return;
    bind();
    for (size_t first = 0; first < xs.size(); first += kNormTensors) {
        const int count = static_cast<int>(std::min<size_t>(kNormTensors, xs.size() - first));
        int64_t total = 0;
        for (int i = 0; i < count; ++i)
            total += std::max<int64_t>(xs[first + static_cast<size_t>(i)].size(), 0);
        // ceil(n / chunk) <= n / chunk + 1 per tensor, so the chunks number at most
        // total / chunk + count <= kMaxReduceBlocks.
        const int64_t room = kMaxReduceBlocks - count;
        const int64_t step = int64_t(kBlock) * 8;
        const int64_t chunk =
            std::max<int64_t>(step, ((total + room - 1) / room + step - 1) / step * step);
        NormTable t{};
        int chunks = 0;
        for (int i = 0; i < count; ++i) {
            const ConstTensor& x = xs[first + static_cast<size_t>(i)];
            const int64_t n = std::max<int64_t>(x.size(), 0);
            t.data[i] = x.data;
            t.size[i] = n;
            t.firstChunk[i] = chunks;
            chunks += static_cast<int>(std::max<int64_t>(1, (n + chunk - 1) / chunk));
        }
        t.firstChunk[count] = chunks;
        t.count = count;
        t.chunk = chunk;
        sumSquaresChunksKernel<<<chunks, kBlock, 0, m_stream>>>(t, m_partials);
        checkLaunch("sumSquaresEach");
        finishSquaresKernel<<<1, kBlock, 0, m_stream>>>(t, m_partials, out + first);
        checkLaunch("sumSquaresEach");
    }
}

// ---- losses ----------------------------------------------------------------------------------

void CudaBackend::lossForwardBackwardImpl(LossKind kind, float smoothing, ConstTensor classWeights,
                                          ConstTensor pred, ConstTensor target, Tensor grad,
                                          float* lossOut, bool accumulate)
{
    computeLoss(kind, smoothing, classWeights, pred, target, grad.data, lossOut, accumulate);
}

void CudaBackend::lossForwardImpl(LossKind kind, float smoothing, ConstTensor classWeights,
                                  ConstTensor pred, ConstTensor target, float* lossOut,
                                  bool accumulate)
{
    computeLoss(kind, smoothing, classWeights, pred, target, nullptr, lossOut, accumulate);
}

void CudaBackend::computeLoss(LossKind kind, float smoothing, ConstTensor classWeights,
                              ConstTensor pred, ConstTensor target, float* grad, float* lossOut,
                              bool accumulate)
{
    // Device memory, read by the kernels: no copy (the trainer uploads the weights once per run).
    const float* weights = classWeights.empty() ? nullptr : classWeights.data;
    const int64_t rows = pred.rows(), k = pred.cols(), n = pred.size();
    if (kind == LossKind::CrossEntropy) {
        bind();
        const int64_t r = std::max<int64_t>(rows, 0);
        const int blocks = reduceBlocks(r, kWarps); // up to one row per warp
        const ScalarOut so{lossOut, static_cast<double>(std::max<int64_t>(r, 1)), accumulate};
        const float invRows = 1.f / static_cast<float>(std::max<int64_t>(r, 1));
        crossEntropyKernel<<<blocks, kBlock, 0, m_stream>>>(
            pred.data, target.data, weights, grad, r, k, smoothing, invRows, m_partials, so);
        checkLaunch("cross-entropy loss");
        finishReduction(m_stream, blocks, m_partials, so, "cross-entropy loss");
        return;
    }
    bind();
    const int64_t count = std::max<int64_t>(n, 0);
    const int blocks = reduceBlocks(count, int64_t(kBlock) * 8);
    const ScalarOut so{lossOut, static_cast<double>(std::max<int64_t>(count, 1)), accumulate};
    const float invN = 1.f / static_cast<float>(std::max<int64_t>(count, 1));
    pointLossKernel<<<blocks, kBlock, 0, m_stream>>>(kind, pred.data, target.data, weights, grad,
                                                     count, invN, m_partials, so);
    checkLaunch("loss");
    finishReduction(m_stream, blocks, m_partials, so, "loss");
}

void CudaBackend::softmaxRowsImpl(ConstTensor logits, float temperature, Tensor probs)
{
    const int64_t rows = logits.rows(), k = logits.cols();
    if (rows <= 0 || k <= 0) return;
    const float invT = 1.f / std::max(temperature, 1e-6f);
    bind();
    const int64_t blocks = std::min<int64_t>((rows + kWarps - 1) / kWarps, int64_t(m_sms) * 16);
    softmaxRowsKernel<<<static_cast<unsigned>(blocks), kBlock, 0, m_stream>>>(
        logits.data, probs.data, rows, k, invT);
    checkLaunch("softmaxRows");
}

void CudaBackend::sampleRowsImpl(ConstTensor probs, ConstTensor uniforms, int topK,
                                 int firstAllowed, Tensor ids)
{
    const int64_t rows = probs.rows(), k = probs.cols();
    if (rows <= 0) return;
    bind();
    if (rows * k > m_sampleScratchFloats) { // generation, never inside a recorded step
        requireNotRecording("sampleRows");
        auto* grown = static_cast<float*>(allocateBytes(static_cast<size_t>(rows * k) * 4));
        retireBytes(m_sampleScratch); // a recorded graph may still read the old scratch
        m_sampleScratch = grown;
        m_sampleScratchFloats = rows * k;
    }
    const unsigned blocks = elementGrid(rows);
    sampleRowsKernel<<<blocks, kBlock, 0, m_stream>>>(probs.data, uniforms.data, ids.data,
                                                      m_sampleScratch, rows, k, topK, firstAllowed);
    checkLaunch("sampleRows");
}

// ---- step guard ------------------------------------------------------------------------------

void CudaBackend::guardAndClipImpl(const float* sq, int count, const float* loss, float maxNorm,
                                   int64_t step, float* guard)
{
    bind();
    guardKernel<<<1, kBlock, 0, m_stream>>>(sq, std::max(count, 0), loss, maxNorm,
                                            static_cast<long long>(step), guard);
    checkLaunch("guardAndClip");
}

} // namespace il::cuda
