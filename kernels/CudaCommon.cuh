// Shared by the CUDA backend's translation units: error checks, launch constants, small
// deterministic warp/block reductions and the CudaBackend class. The kernels themselves are
// file-static in the .cu files; the class methods are the only interface between them.
#pragma once

#include "Backend.h"
#include "CudaModule.h"
#include "Errors.h"
#include "OpShapes.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace il::cuda {

// Every kernel runs with kBlock threads; the reductions are written for exactly this size.
constexpr int kBlock = 256;
constexpr int kWarps = kBlock / 32;
// Two-pass reductions: at most this many block partials, summed by one block in fixed order.
constexpr int kMaxReduceBlocks = 1024;
// cuBLAS gets its own workspace so that it never allocates (not even while a graph is being
// captured). 32 MiB is NVIDIA's recommendation for Hopper; smaller GPUs need less.
constexpr size_t kBlasWorkspaceBytes = size_t(32) << 20;
constexpr unsigned kFullMask = 0xffffffffu;

// Throw BackendError "CUDA error in <op>: <description> (<name>)". A fault that leaves the
// context unusable (illegal address, ...) says so: nothing on this device works until restart.
[[noreturn]] void throwCuda(cudaError_t error, const char* op);
[[noreturn]] void throwBlas(cublasStatus_t status, const char* op);

inline void check(cudaError_t error, const char* op)
{
    if (error != cudaSuccess) throwCuda(error, op);
}
inline void checkBlas(cublasStatus_t status, const char* op)
{
    if (status != CUBLAS_STATUS_SUCCESS) throwBlas(status, op);
}
// After a kernel launch: a bad launch configuration shows up here; a fault inside the kernel
// surfaces at the next synchronising call (download, synchronize).
inline void checkLaunch(const char* op)
{
    check(cudaGetLastError(), op);
}

// A device in words: "139.8 GiB", "compute 9.0"; whether this build runs on it (compute 7.5 or
// newer), and the sentence saying it does not. Shared by the backend and the probe.
std::string formatGiB(size_t bytes);
std::string computeText(int major, int minor);
bool computeSupported(int major, int minor);
std::string tooOldDevice(const char* name, int major, int minor);
// Whether CUDA can be used here and why not (CudaModule.cu); needs no context.
void probeInto(CudaProbe& p);

// Load every kernel of a translation unit now (cudaFuncGetAttributes), so that none is first
// loaded (CUDA lazy loading) while a graph is being captured. Returns the first error.
cudaError_t loadElementwiseKernels();
cudaError_t loadReductionKernels();
cudaError_t loadNormKernels();
cudaError_t loadEmbeddingKernels();

// Blocks of a two-pass reduction over n items: a function of n only (not of the device), so the
// summation order, and with it the result, is the same on every run and every GPU.
inline int reduceBlocks(int64_t n, int64_t itemsPerBlock)
{
    const int64_t blocks = (n + itemsPerBlock - 1) / itemsPerBlock;
    return static_cast<int>(std::clamp<int64_t>(blocks, 1, kMaxReduceBlocks));
}

// ---- device helpers (all lanes of the warp must take part) ---------------------------------
// Butterfly sums: every lane ends with the same, order-fixed result (IEEE addition commutes,
// so lane i and lane i^o compute the same partial at each level).
__device__ __forceinline__ float warpSum(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(kFullMask, v, o);
    return v;
}
__device__ __forceinline__ float warpMax(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(kFullMask, v, o));
    return v;
}

__device__ __forceinline__ int64_t globalThread()
{
    return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t globalStride()
{
    return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

// Whether every pointer may be read or written as float4 (16-byte aligned).
template <class... P> inline bool aligned16(const P*... p)
{
    return ((reinterpret_cast<uintptr_t>(p) % 16 == 0) && ...);
}

// A class id or token id stored as a float: its row in [0, limit), or -1 when it is negative,
// NaN or too large (truncation toward zero, like the CPU backend's static_cast).
__device__ __forceinline__ int64_t idFromFloat(float f, int64_t limit)
{
    if (!(f >= 0.f) || !(f < static_cast<float>(limit))) return -1;
    const auto id = static_cast<int64_t>(f);
    return id < limit ? id : -1;
}

// A cuBLASLt matrix product as planned once (CudaLinear.cu): its shape, transposes, epilogue
// and the alignment of each pointer, which decides the kernels cuBLASLt may pick.
struct LtKey {
    int m, n, k, lda, ldb, ldd, trans, epilogue;
    uint32_t alignA, alignB, alignD, alignBias;
    bool operator<(const LtKey& o) const
    {
        return std::tie(m, n, k, lda, ldb, ldd, trans, epilogue, alignA, alignB, alignD,
                        alignBias) < std::tie(o.m, o.n, o.k, o.lda, o.ldb, o.ldd, o.trans,
                                              o.epilogue, o.alignA, o.alignB, o.alignD,
                                              o.alignBias);
    }
};
// Its descriptors and the algorithms cuBLASLt's heuristic offered, best first (at most
// kLtAlgorithms); next: the one in use (those before it were refused when run). Not usable when
// the heuristic found none or every one was refused: the separate passes run instead.
constexpr int kLtAlgorithms = 8;
struct LtPlan {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
    cublasLtMatmulAlgo_t algos[kLtAlgorithms] = {};
    int count = 0, next = 0;
    bool usable = false;
};

// ---- the backend ------------------------------------------------------------------------------
class CudaBackend final : public Backend {
public:
    explicit CudaBackend(const CudaOptions& options);
    ~CudaBackend() override;
    CudaBackend(const CudaBackend&) = delete;
    CudaBackend& operator=(const CudaBackend&) = delete;

    DeviceInfo info() const override;
    bool memoryOnHost() const override { return false; }

    void* allocateBytes(size_t bytes) override;
    void freeBytes(void* p) noexcept override;
    void upload(void* deviceDst, const void* hostSrc, size_t bytes) override;
    void download(void* hostDst, const void* deviceSrc, size_t bytes) override;
    void copy(void* deviceDst, const void* deviceSrc, size_t bytes) override;
    void synchronize() override;

    bool beginRecording() override;
    int endRecording() override;
    void replay(int handle) override;
    void discardRecordings() override;

protected:
    // Every op of the list (BackendOps.def), composed ones too: each has a faster form here.
#define IL_OP(name, params, args) void name##Impl params override;
#define IL_COMPOSED_OP IL_OP
#include "BackendOps.def"

private:
    void init();
    void release() noexcept;
    // Makes this backend's device current on the calling thread (the runtime's current device
    // is per thread, and the trainer may run on a different thread than the one that created
    // the backend). Cached per thread, so the common case costs one comparison.
    void bind() const;
    bool bindNoThrow() const noexcept;
    void requireNotRecording(const char* what) const;
    // Grid for a grid-stride element-wise kernel over n > 0 items.
    unsigned elementGrid(int64_t n) const;
    // y[i] = b * y[i] (b == 0: zero, whatever y held), i < n.
    void scaleInPlace(float* y, int64_t n, float b);
    // Grow-only vector of ones for sumRows (cuBLAS gemv); never grows while recording.
    void ensureOnes(int64_t count);
    void computeLoss(LossKind kind, float smoothing, ConstTensor classWeights, ConstTensor pred,
                     ConstTensor target, float* grad, float* lossOut, bool accumulate);
    bool ltMatmul(bool transA, bool transB, int m, int n, int k, const float* A, int lda,
                  const float* B, int ldb, float* D, int ldd, cublasLtEpilogue_t epilogue,
                  float* bias);
    void destroyLtPlans() noexcept;
    void flushDeferredFrees() noexcept;
    // freeBytes, named where the caller knows a recording may still read the block.
    void retireBytes(void* p) noexcept;
    cudaError_t deviceAllocate(void** p, size_t bytes, cudaStream_t stream) noexcept;
    cudaError_t deviceFree(void* p, cudaStream_t stream) noexcept;
    void freeRetired() noexcept;
    void freeList(std::vector<void*>& list) noexcept;

    int m_device = 0;
    bool m_tf32 = false;
    bool m_graphsEnabled = true;
    int m_sms = 1;
    size_t m_totalMemory = 0;
    std::string m_name;
    std::string m_details;     // info().details up to the bias epilogues...
    std::string m_detailsTail; // ...and after them

    cudaStream_t m_stream = nullptr;
    // Allocations and uploads made while m_stream is being captured run here, at once (see
    // allocateBytes).
    cudaStream_t m_sideStream = nullptr;
    cudaMemPool_t m_pool = nullptr; // the device's default pool, when m_pooled
    bool m_pooled = true;           // stream-ordered allocation (cudaMallocAsync)
    cublasHandle_t m_blas = nullptr;
    cublasLtHandle_t m_lt = nullptr; // null: bias epilogues off
    bool m_requireEpilogues = false; // IRONLEARN_CUDA_EPILOGUE=require
    bool m_reportEpilogues = false;  // IRONLEARN_CUDA_EPILOGUE=report: each plan on stderr
    std::map<LtKey, LtPlan> m_ltPlans;
    // Plans made, and those of them not usable (info() reports them; read from any thread).
    std::atomic<int> m_ltPlansMade{0}, m_ltPlansUnusable{0};
    void* m_blasWorkspace = nullptr;
    double* m_partials = nullptr; // kMaxReduceBlocks block partials of the two-pass reductions
    float* m_ones = nullptr;
    int64_t m_onesCount = 0;
    float* m_sampleScratch = nullptr; // rows x k floats for sampleRows, grow-only
    int64_t m_sampleScratchFloats = 0;
    int* m_embedScratch = nullptr; // embeddingBackward's counts, offsets and lists, grow-only
    int64_t m_embedScratchInts = 0;

    // Recording: m_recording is set while a stream capture of m_stream is open. Frees that
    // arrive then are deferred (a cudaFreeAsync would be captured into the graph and run at
    // every replay).
    std::mutex m_recordMutex;
    std::atomic<bool> m_recording{false};
    std::vector<void*> m_deferredFrees;
    // Blocks a kept recording may still read (retireBytes; frees deferred during a capture):
    // freed by discardRecordings() and release(), after the graphs.
    std::vector<void*> m_retired;
    std::vector<cudaGraphExec_t> m_graphs;
    // Every live block from allocateBytes and the number of captures ended when it was made:
    // a block made after the last capture ended is in no recording (freeBytes frees it at once).
    std::map<void*, uint64_t> m_allocatedAt;
    uint64_t m_capturesEnded = 0;
};

} // namespace il::cuda
