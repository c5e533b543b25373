// The CPU backend: OpenBLAS sgemm for matrix products; everything else runs the SIMD kernels
// of CpuKernels.h (Highway, the best target of this CPU) over the OpenMP threads.
//
// Element-wise ops are split over the threads above a size threshold (below it a parallel
// region costs more than it saves; CpuParallel.h). Reductions are deterministic whatever the
// thread count and the SIMD target: fixed-size chunks are reduced in parallel into a
// preallocated partials array, then summed in order. Nothing here allocates after the first
// call at a given size.
#include "Backend.h"
#include "CpuKernels.h"
#include "CpuLoss.h"
#include "CpuNorm.h"
#include "CpuParallel.h"
#include "CpuThreading.h"
#include "DropoutMath.h"
#include "Errors.h"
#include "Sampling.h"
#include "Shuffle.h"
#include "ThreadGuard.h"

#include <cblas.h>
#include <omp.h>
#include <pmmintrin.h>
#include <xmmintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <numbers>
#include <unordered_map>

#include <sys/mman.h>

extern "C" void openblas_set_num_threads(int);
extern "C" int openblas_get_parallel(void);
extern "C" char* openblas_get_config(void);

namespace il {
namespace {

using cpu::kParallelMin;

constexpr size_t kMmapMinBytes = 1 << 16; // buffers from here on get their own pages

std::string cpuModelName()
{
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            if (colon != std::string::npos)
                return line.substr(line.find_first_not_of(" \t", colon + 1));
        }
    }
    return "CPU";
}

// Denormal floats (|x| < 1.2e-38) cost ~100x on x86. They appear as training converges (tiny
// gradients squared in Adam's second moment) and made late epochs twice as slow. Flush them
// to zero; the control register is per thread, so each thread that computes sets it once.
void flushDenormals()
{
    thread_local bool done = false;
    if (!done) {
        _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);
        _MM_SET_DENORMALS_ZERO_MODE(_MM_DENORMALS_ZERO_ON);
        done = true;
    }
}

class CpuBackend final : public Backend {
public:
    explicit CpuBackend(int threads)
    {
        m_threads = threads > 0 ? threads : std::max(1, omp_get_num_procs());
        openblas_set_num_threads(m_threads);
        omp_set_num_threads(m_threads);
        // The pool's threads (shared with OpenBLAS: both use libgomp) live for the process.
#pragma omp parallel num_threads(m_threads)
        flushDenormals();
        m_governor = std::make_unique<cpu::ThreadGovernor>(m_threads);
    }

    DeviceInfo info() const override
    {
        DeviceInfo d;
        d.backend = "cpu";
        d.name = cpuModelName();
        d.threads = m_threads;
        // openblas_get_config(): "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ... Cooperlake
        // MAX_THREADS=64"
        std::string cfg = openblas_get_config() ? openblas_get_config() : "OpenBLAS";
        std::string version = cfg.substr(0, cfg.find(' ', cfg.find(' ') + 1));
        std::string kernel;
        const auto maxThreads = cfg.find(" MAX_THREADS");
        if (maxThreads != std::string::npos) {
            const auto start = cfg.rfind(' ', maxThreads - 1);
            kernel = cfg.substr(start + 1, maxThreads - start - 1);
        }
        // Debian's libopenblas.so.0 is an alternative: the pthread or serial flavour may be
        // the one loaded, and the pthread one's threads busy-wait against our OpenMP pool.
        const int parallel = openblas_get_parallel(); // 0 serial, 1 pthreads, 2 OpenMP
        if (parallel != 2)
            version += std::string(parallel == 1 ? " (pthread" : " (serial") +
                       " flavour; the OpenMP one is faster here: update-alternatives --config "
                       "libopenblas.so.0-x86_64-linux-gnu)";
        d.details = version + (kernel.empty() ? "" : " (" + kernel + " kernels)") + ", " +
                    simd::activeTarget().name + " kernels, " + std::to_string(m_threads) +
                    (m_threads == 1 ? " thread" : " threads") + " (" + m_governor->description() +
                    "), " + cpu::waitPolicyDescription();
        return d;
    }

    // ---- memory -----------------------------------------------------------------------
    // Large buffers get their own page-aligned mappings, with transparent huge pages asked
    // for (this kernel grants them only on madvise). Measured on the tanh-MLP benchmark:
    // heap placement after earlier large frees, or unaligned starts, made the same epoch take
    // 80-140 ms instead of 70 ms; with these mappings it is 70 ms whatever ran before. Memory
    // also returns to the system as soon as a buffer is freed.
    void* allocateBytes(size_t bytes) override
    {
        checkEngineThread("allocate");
        const size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
        void* p = nullptr;
        if (rounded >= kMmapMinBytes) {
            p = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED) {
                p = nullptr;
            } else {
                madvise(p, rounded, MADV_HUGEPAGE);
                std::lock_guard lock(m_mapMutex);
                m_mapped[p] = rounded;
            }
        } else {
            p = std::aligned_alloc(64, rounded);
        }
        if (!p)
            throw BackendError("out of memory: could not allocate " + std::to_string(bytes >> 20) +
                               " MiB on the CPU");
        return p;
    }
    void freeBytes(void* p) noexcept override
    {
        if (!p) return;
        {
            std::lock_guard lock(m_mapMutex);
            const auto it = m_mapped.find(p);
            if (it != m_mapped.end()) {
                munmap(p, it->second);
                m_mapped.erase(it);
                return;
            }
        }
        std::free(p);
    }
    void upload(void* dst, const void* src, size_t bytes) override
    {
        checkEngineThread("upload");
        std::memcpy(dst, src, bytes);
    }
    void download(void* dst, const void* src, size_t bytes) override
    {
        checkEngineThread("download");
        std::memcpy(dst, src, bytes);
    }
    void copy(void* dst, const void* src, size_t bytes) override
    {
        checkEngineThread("copy");
        std::memmove(dst, src, bytes);
    }
    void synchronize() override {}

protected:
    // ---- element-wise and reductions (shapes are checked by Backend's entry points) ------
    void fillImpl(Tensor t, float value) override
    {
        checkEngineThread("fill");
        float* p = t.data;
        cpu::parallelRanges(t.size(), kParallelMin,
                            [=](int64_t a, int64_t b) { simd::fill(p + a, value, b - a); });
    }

    void broadcastRowsImpl(ConstTensor bias, Tensor y) override
    {
        const int64_t rows = y.rows(), cols = y.cols();
        const float* b = bias.data;
        float* out = y.data;
#pragma omp parallel for schedule(static) if (y.size() > kParallelMin)
        for (int64_t i = 0; i < rows; ++i)
            std::memcpy(out + i * cols, b, static_cast<size_t>(cols) * sizeof(float));
    }

    void sumRowsImpl(ConstTensor x, float beta, Tensor out) override
    {
        const int64_t rows = x.rows(), cols = x.cols();
        // Parallel over column blocks: each thread owns its columns, so the order of the row
        // sum is fixed and the result is the same for any thread count.
        const int64_t block = 64;
        const int64_t blocks = (cols + block - 1) / block;
#pragma omp parallel for schedule(static) if (x.size() > kParallelMin && blocks > 1)
        for (int64_t bIdx = 0; bIdx < blocks; ++bIdx) {
            const int64_t c0 = bIdx * block, c1 = std::min(cols, c0 + block);
            float acc[block] = {};
            simd::accumulateRows(x.data + c0, rows, cols, c1 - c0, acc);
            for (int64_t c = c0; c < c1; ++c)
                out.data[c] = (beta == 0.f ? 0.f : beta * out.data[c]) + acc[c - c0];
        }
    }

    void sumSquaresImpl(ConstTensor x, float* out) override
    {
        const float* p = x.data;
        *out = static_cast<float>(m_chunkedSum(x.size(), [p](int64_t a, int64_t b) {
            return static_cast<double>(simd::sumSquares(p + a, b - a));
        }));
    }

    void axpbyImpl(float a, ConstTensor x, float b, Tensor y) override
    {
        const float* xp = x.data;
        float* yp = y.data;
        cpu::parallelRanges(y.size(), kParallelMin, [=](int64_t i, int64_t j) {
            simd::axpby(a, xp + i, b, yp + i, j - i);
        });
    }

    // ---- matrix products --------------------------------------------------------------
    void gemmImpl(bool transA, bool transB, float alpha, ConstTensor a, ConstTensor b, float beta,
                  Tensor c) override
    {
        checkEngineThread("gemm");
        flushDenormals();
        m_governor->poll(); // every training step multiplies matrices: the place to adapt
        const int64_t m = c.rows(), n = c.cols(), k = transA ? a.rows() : a.cols();
        if (m == 0 || n == 0) return;
        if (k == 0) { // an empty product: C = beta * C (not 0 * C + beta * C: 0 * Inf is NaN)
            if (beta == 0.f)
                fill(c, 0.f);
            else if (beta != 1.f)
                for (int64_t i = 0; i < c.size(); ++i)
                    c.data[i] *= beta;
            return;
        }
        cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
                    transB ? CblasTrans : CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
                    static_cast<int>(k), alpha, a.data, static_cast<int>(a.cols()), b.data,
                    static_cast<int>(b.cols()), beta, c.data, static_cast<int>(c.cols()));
    }

    // ---- activations (formulas: ActivationMath.h) ------------------------------------------
    void activationForwardImpl(Activation act, float param, ConstTensor x, Tensor y) override
    {
        flushDenormals();
        const int64_t n = x.size();
        const float* in = x.data;
        float* out = y.data;
        if (act == Activation::Identity) {
            if (out != in) std::memcpy(out, in, static_cast<size_t>(n) * sizeof(float));
            return;
        }
        bool heavy = false;
        visitActivation(act, [&heavy]<class Op>() { heavy = Op::kHeavyForward; });
        cpu::parallelRanges(n, heavy ? kParallelMin / 4 : kParallelMin, [=](int64_t a, int64_t b) {
            simd::activationForward(act, param, in + a, out + a, b - a);
        });
    }

    void activationBackwardImpl(Activation act, float param, ConstTensor x, ConstTensor y,
                                ConstTensor dy, Tensor dx) override
    {
        flushDenormals();
        const int64_t n = dy.size();
        const float* g = dy.data;
        float* out = dx.data;
        if (act == Activation::Identity) {
            if (out != g) std::memcpy(out, g, static_cast<size_t>(n) * sizeof(float));
            return;
        }
        const float* in = nullptr;
        bool heavy = false;
        visitActivation(act, [&]<class Op>() {
            in = (Op::kBackwardFromOutput ? y : x).data;
            heavy = Op::kHeavyBackward;
        });
        cpu::parallelRanges(n, heavy ? kParallelMin / 4 : kParallelMin, [=](int64_t a, int64_t b) {
            simd::activationBackward(act, param, in + a, g + a, out + a, b - a);
        });
    }

    // ---- Fourier features ---------------------------------------------------------------
    void fourierForwardImpl(ConstTensor z, Tensor y) override
    {
        const int64_t rows = z.rows(), m = z.cols();
        cpu::parallelRanges(rows, kParallelMin / 4 / std::max<int64_t>(m, 1),
                            [=](int64_t a, int64_t b) {
                                for (int64_t i = a; i < b; ++i) {
                                    float* ys = y.data + i * 2 * m;
                                    simd::sinCos(z.data + i * m, ys, ys + m, m);
                                }
                            });
    }

    void fourierBackwardImpl(ConstTensor z, ConstTensor dy, Tensor dz) override
    {
        const int64_t rows = z.rows(), m = z.cols();
        cpu::parallelRanges(
            rows, kParallelMin / 4 / std::max<int64_t>(m, 1), [=](int64_t a, int64_t b) {
                for (int64_t i = a; i < b; ++i) {
                    const float* gs = dy.data + i * 2 * m;
                    simd::fourierBackward(z.data + i * m, gs, gs + m, dz.data + i * m, m);
                }
            });
    }

    // ---- multiresolution hash encoding ---------------------------------------------------------
    void hashGridForwardImpl(const HashGrid& g, ConstTensor x, ConstTensor tables,
                             Tensor y) override
    {
        const int64_t out = g.outputs();
        cpu::parallelRanges(
            x.rows(), kParallelMin / 4 / std::max<int64_t>(out, 1), [=, &g](int64_t a, int64_t b) {
                simd::hashGridForward(g, x.data + a * 2, tables.data, y.data + a * out, b - a);
            });
    }

    // Levels are independent blocks of the tables: each thread scatters whole levels, every
    // level in row order, so the sums are the same for any thread count.
    void hashGridBackwardImpl(const HashGrid& g, ConstTensor x, ConstTensor dy,
                              Tensor dtables) override
    {
        fill(dtables, 0.f);
        const int64_t rows = x.rows();
#pragma omp parallel for schedule(dynamic, 1) if (rows * g.levels > kParallelMin / 4)
        for (int l = 0; l < g.levels; ++l)
            simd::hashGridBackwardLevel(g, l, x.data, dy.data, dtables.data, rows);
    }

    // ---- embedding --------------------------------------------------------------------------
    void embeddingForwardImpl(ConstTensor ids, ConstTensor table, Tensor y) override
    {
        const int64_t rows = ids.rows(), ctx = ids.cols(), vocab = table.rows(), dim = table.cols();
        int64_t bad = -1;
#pragma omp parallel for schedule(static) if (y.size() > kParallelMin) reduction(max : bad)
        for (int64_t i = 0; i < rows; ++i) {
            for (int64_t c = 0; c < ctx; ++c) {
                const float f = ids.data[i * ctx + c];
                const auto id = static_cast<int64_t>(f);
                float* out = y.data + i * ctx * dim + c * dim;
                if (!(f >= 0.f) || id >= vocab) {
                    bad = std::max(bad, i);
                    std::memset(out, 0, static_cast<size_t>(dim) * sizeof(float));
                    continue;
                }
                std::memcpy(out, table.data + id * dim, static_cast<size_t>(dim) * sizeof(float));
            }
        }
        if (bad >= 0)
            throw BackendError("embedding: row " + std::to_string(bad) +
                               " holds a token id outside the vocabulary of " +
                               std::to_string(vocab));
    }

    void embeddingBackwardImpl(ConstTensor ids, ConstTensor dy, Tensor dtable) override
    {
        const int64_t rows = ids.rows(), ctx = ids.cols(), vocab = dtable.rows(),
                      dim = dtable.cols();
        fill(dtable, 0.f);
        // Serial scatter-add: ids repeat, and a fixed order keeps results bit-reproducible.
        for (int64_t i = 0; i < rows; ++i) {
            for (int64_t c = 0; c < ctx; ++c) {
                const auto id = static_cast<int64_t>(ids.data[i * ctx + c]);
                if (id < 0 || id >= vocab) continue; // refused in forward
                simd::addTo(dy.data + i * ctx * dim + c * dim, dtable.data + id * dim, dim);
            }
        }
    }

    // ---- normalisation (CpuNorm.cpp) --------------------------------------------------------
    void layerNormForwardImpl(ConstTensor x, ConstTensor gamma, ConstTensor beta, float eps,
                              Tensor y, Tensor stats) override
    {
        cpu::layerNormForward(x, gamma, beta, eps, y, stats);
    }
    void layerNormBackwardImpl(ConstTensor x, ConstTensor gamma, ConstTensor stats, ConstTensor dy,
                               Tensor dx, Tensor dgamma, Tensor dbeta) override
    {
        cpu::layerNormBackward(x, gamma, stats, dy, dx, dgamma, dbeta);
    }
    void batchNormForwardImpl(ConstTensor x, ConstTensor gamma, ConstTensor beta, float eps,
                              float momentum, bool training, Tensor runningMean, Tensor runningVar,
                              Tensor y) override
    {
        cpu::batchNormForward(x, gamma, beta, eps, momentum, training, runningMean, runningVar, y);
    }
    void batchNormBackwardImpl(ConstTensor x, ConstTensor gamma, float eps, ConstTensor dy,
                               Tensor dx, Tensor dgamma, Tensor dbeta) override
    {
        cpu::batchNormBackward(x, gamma, eps, dy, dx, dgamma, dbeta);
    }

    // ---- dropout -----------------------------------------------------------------------------
    void dropoutForwardImpl(ConstTensor x, float p, Tensor state, Tensor y, Tensor mask) override
    {
        if (state.size() != 2)
            throw ShapeError("dropoutForward: state " + state.shape.toString() + " (1 x 2)");
        const float seed = state.data[0], counter = state.data[1];
        const int64_t n = x.size();
#pragma omp parallel for schedule(static) if (n > kParallelMin)
        for (int64_t i = 0; i < n; ++i) {
            const float s = dropoutmath::scale(seed, counter, i, p);
            mask.data[i] = s;
            y.data[i] = x.data[i] * s;
        }
        state.data[1] = dropoutmath::nextCounter(counter);
    }
    void dropoutBackwardImpl(ConstTensor dy, ConstTensor mask, Tensor dx) override
    {
        const int64_t n = dy.size();
#pragma omp parallel for schedule(static) if (n > kParallelMin)
        for (int64_t i = 0; i < n; ++i)
            dx.data[i] = dy.data[i] * mask.data[i];
    }

    // ---- losses -------------------------------------------------------------------------
    void lossForwardBackwardImpl(LossKind kind, float smoothing, ConstTensor classWeights,
                                 ConstTensor pred, ConstTensor target, Tensor grad, float* lossOut,
                                 bool accumulate) override
    {
        flushDenormals();
        computeLoss(kind, smoothing, classWeights, pred, target, grad.data, lossOut, accumulate);
    }

    void lossForwardImpl(LossKind kind, float smoothing, ConstTensor classWeights, ConstTensor pred,
                         ConstTensor target, float* lossOut, bool accumulate) override
    {
        computeLoss(kind, smoothing, classWeights, pred, target, nullptr, lossOut, accumulate);
    }

    void softmaxRowsImpl(ConstTensor logits, float temperature, Tensor probs) override
    {
        const int64_t rows = logits.rows(), k = logits.cols();
        const float invT = 1.f / std::max(temperature, 1e-6f);
        cpu::parallelRanges(
            rows, kParallelMin / std::max<int64_t>(k, 1), [=](int64_t a, int64_t b) {
                for (int64_t i = a; i < b; ++i)
                    simd::softmaxRow(logits.data + i * k, invT, probs.data + i * k, k);
            });
    }

    void sampleRowsImpl(ConstTensor probs, ConstTensor uniforms, int topK, int firstAllowed,
                        Tensor ids) override
    {
        const int64_t rows = probs.rows(), k = probs.cols();
        std::vector<float> scratch(static_cast<size_t>(k));
        for (int64_t i = 0; i < rows; ++i)
            ids.data[i] = static_cast<float>(sampleCategory(probs.data + i * k, k, uniforms.data[i],
                                                            topK, firstAllowed, scratch.data()));
    }

    // ---- guard and optimizers -------------------------------------------------------------
    void guardAndClipImpl(const float* sq, int count, const float* loss, float maxNorm,
                          int64_t step, float* guard) override
    {
        if (guard[GuardBad] != 0.f) {
            guard[GuardScale] = 0.f;
            return;
        }
        int badTensor = -2;
        if (loss && !std::isfinite(*loss)) badTensor = -1;
        double total = 0;
        for (int i = 0; i < count && badTensor == -2; ++i) {
            if (!std::isfinite(sq[i])) badTensor = i;
            total += sq[i];
        }
        if (badTensor == -2 && !std::isfinite(total)) badTensor = count > 0 ? 0 : -1;
        if (badTensor != -2) {
            guard[GuardScale] = 0.f;
            guard[GuardBad] = 1.f;
            storeGuardStep(guard, step);
            guard[GuardBadTensor] = static_cast<float>(badTensor);
            return;
        }
        const double norm = std::sqrt(total);
        guard[GuardScale] =
            (maxNorm > 0.f && norm > maxNorm) ? static_cast<float>(maxNorm / norm) : 1.f;
    }

    // The rule's element update (OptimizerMath.h) over every element.
    void optimizerStepImpl(OptimizerRule rule, const OptimizerHyper& h, Tensor params,
                           ConstTensor grads, std::span<const Tensor> state,
                           const float* guard) override
    {
        flushDenormals();
        visitOptimizerRule(rule, [&]<class Rule>() {
            if (guard && guard[GuardBad] != 0.f) return;
            optimizers::Slots s{};
            for (int k = 0; k < Rule::kSlots; ++k)
                s.p[k] = state[static_cast<size_t>(k)].data;
            const float scale = guard ? guard[GuardScale] : 1.f;
            float* w = params.data;
            const float* g = grads.data;
            cpu::parallelRanges(params.size(), Rule::kHeavy ? kParallelMin / 4 : kParallelMin,
                                [&](int64_t a, int64_t b) {
                                    optimizers::Slots at = s;
                                    for (int k = 0; k < Rule::kSlots; ++k)
                                        at.p[k] += a;
                                    simd::optimizerUpdate(rule, h, scale, w + a, g + a, at, b - a);
                                });
        });
    }

    void shuffledOrderImpl(uint64_t key, int64_t n, int32_t* order) override
    {
        const ShuffleKey s = makeShuffleKey(key, static_cast<uint64_t>(n));
#pragma omp parallel for schedule(static) if (n > kParallelMin / 16)
        for (int64_t i = 0; i < n; ++i)
            order[i] = static_cast<int32_t>(shuffledIndex(i, s));
    }

    void gatherRowsImpl(ConstTensor src, const int32_t* index, int64_t first, Tensor dst) override
    {
        const int64_t rows = dst.rows(), cols = dst.cols();
        const size_t bytes = static_cast<size_t>(cols) * sizeof(float);
#pragma omp parallel for schedule(static) if (dst.size() > kParallelMin)
        for (int64_t i = 0; i < rows; ++i)
            std::memcpy(dst.data + i * cols,
                        src.data + static_cast<int64_t>(index[first + i]) * cols, bytes);
    }

    // ---- windows (ConvLayer.cpp) ----------------------------------------------------------------
    void windowsImpl(ConstTensor x, int64_t step, Tensor y) override
    {
        const int64_t rows = x.rows(), q = rows > 0 ? y.rows() / rows : 0, width = y.cols();
        const size_t bytes = static_cast<size_t>(width) * sizeof(float);
#pragma omp parallel for schedule(static) if (y.size() > kParallelMin)
        for (int64_t i = 0; i < rows * q; ++i)
            std::memcpy(y.data + i * width, x.data + (i / q) * x.cols() + (i % q) * step, bytes);
    }
    // Each dx number sums the windows that hold it in window order, from 0: the same bits on
    // every backend. Row by row, each window is added in turn (window order) onto a row of zeros,
    // a contiguous SIMD add, so every number gets the same additions in the same order as a
    // gather over the windows that hold it, without the gather's strided reads.
    void windowsBackwardImpl(ConstTensor dy, int64_t step, Tensor dx) override
    {
        const int64_t rows = dx.rows(), cols = dx.cols(), q = rows > 0 ? dy.rows() / rows : 0;
        const int64_t width = dy.cols();
#pragma omp parallel for schedule(static) if (dx.size() > kParallelMin)
        for (int64_t r = 0; r < rows; ++r) {
            float* out = dx.data + r * cols;
            std::fill(out, out + cols, 0.f);
            for (int64_t w = 0; w < q; ++w)
                simd::addTo(dy.data + (r * q + w) * width, out + w * step, width);
        }
    }

private:
    void computeLoss(LossKind kind, float smoothing, ConstTensor classWeights, ConstTensor pred,
                     ConstTensor target, float* grad, float* lossOut, bool accumulate)
    {
        const auto value = static_cast<float>(
            cpu::meanLoss(m_chunkedSum, kind, smoothing, classWeights, pred, target, grad));
        *lossOut = accumulate ? *lossOut + value : value;
    }

    int m_threads = 1;
    std::unique_ptr<cpu::ThreadGovernor> m_governor;
    cpu::ChunkedSum m_chunkedSum; // every reduction's partial sums
    std::mutex m_mapMutex;
    std::unordered_map<void*, size_t> m_mapped; // mmap'ed buffers and their mapping sizes
};

} // namespace

std::unique_ptr<Backend> createCpuBackend(int threads)
{
    checkEngineThread("creating a CPU backend"); // it starts a thread team for the caller
    simd::applyTargetFromEnvironment();
    return std::make_unique<CpuBackend>(threads);
}

} // namespace il
