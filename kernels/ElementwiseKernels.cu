// Element-wise ops of the CUDA backend: fill, broadcast, axpby, activations, Fourier features,
// hash grid, row gather and the optimizer updates (embeddings: EmbeddingKernels.cu).
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

// axpby here and the optimizer rules (OptimizerMath.h, IL_MUL_ADD) round every product and sum
// on its own (__fmul_rn, __fadd_rn: nvcc would otherwise fuse a product into the sum), as the CPU
// kernels do (CpuKernels.cpp, compiled with -ffp-contract=off), so the two backends give the same
// bits even where the sum cancels.

// y = a x + b y. x may be y (gemm's empty product scales C in place).
template <bool Vec>
__global__ void __launch_bounds__(kBlock)
    axpbyKernel(float a, const float* x, float b, float* y, int64_t n)
{
    map2<Vec>(x, y, y, n, [a, b](float xi, float yi) { return __fadd_rn(a * xi, b * yi); });
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

void CudaBackend::fillImpl(Tensor t, float value)
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

void CudaBackend::broadcastRowsImpl(ConstTensor bias, Tensor y)
{
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

void CudaBackend::axpbyImpl(float a, ConstTensor x, float b, Tensor y)
{
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

void CudaBackend::activationForwardImpl(Activation act, float param, ConstTensor x, Tensor y)
{
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

void CudaBackend::activationBackwardImpl(Activation act, float param, ConstTensor x, ConstTensor y,
                                         ConstTensor dy, Tensor dx)
{
    const float* in = nullptr;
    visitActivation(act, [&]<class Op>() { in = (Op::kBackwardFromOutput ? y : x).data; });
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

void CudaBackend::fourierForwardImpl(ConstTensor z, Tensor y)
{
    const int64_t m = z.cols();
    const int64_t n = z.size();
    if (n <= 0) return;
    bind();
    fourierForwardKernel<<<elementGrid(n), kBlock, 0, m_stream>>>(z.data, y.data, n, m);
    checkLaunch("fourierForward");
}

void CudaBackend::fourierBackwardImpl(ConstTensor z, ConstTensor dy, Tensor dz)
{
    const int64_t m = z.cols();
    const int64_t n = z.size();
    if (n <= 0) return;
    bind();
    fourierBackwardKernel<<<elementGrid(n), kBlock, 0, m_stream>>>(z.data, dy.data, dz.data, n, m);
    checkLaunch("fourierBackward");
}

// ---- multiresolution hash encoding
// ----------------------------------------------------------------

void CudaBackend::hashGridForwardImpl(const HashGrid& g, ConstTensor x, ConstTensor tables,
                                      Tensor y)
{
    const int64_t n = x.rows() * g.levels;
    if (n <= 0) return;
    bind();
    hashGridForwardKernel<<<elementGrid(n), kBlock, 0, m_stream>>>(g, x.data, tables.data, y.data,
                                                                   x.rows());
    checkLaunch("hashGridForward");
}

void CudaBackend::hashGridBackwardImpl(const HashGrid& g, ConstTensor x, ConstTensor dy,
                                       Tensor dtables)
{
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

void CudaBackend::shuffledOrderImpl(uint64_t key, int64_t n, int32_t* order)
{
    if (n == 0) return;
    bind();
    shuffledOrderKernel<<<elementGrid(n), kBlock, 0, m_stream>>>(
        makeShuffleKey(key, static_cast<uint64_t>(n)), n, order);
    checkLaunch("shuffledOrder");
}

void CudaBackend::gatherRowsImpl(ConstTensor src, const int32_t* index, int64_t first, Tensor dst)
{
    const int64_t n = dst.size();
    if (n <= 0) return;
    bind();
    gatherRowsKernel<<<elementGrid(n), kBlock, 0, m_stream>>>(src.data, src.rows(), index, first,
                                                              dst.data, n, dst.cols());
    checkLaunch("gatherRows");
}

// ---- optimizers ------------------------------------------------------------------------------

// The rule's constants come from the same host code as on the CPU backend (Rule::prepare).
void CudaBackend::optimizerStepImpl(OptimizerRule rule, const OptimizerHyper& h, Tensor params,
                                    ConstTensor grads, std::span<const Tensor> state,
                                    const float* guard)
{
    visitOptimizerRule(rule, [&]<class Rule>() {
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
