// The CUDA backend: device setup, errors and cuBLAS products. Memory, data movement and CUDA
// graphs (what may be freed while a recording is kept) are in CudaMemory.cu, the probe and the
// module's C entry points in CudaModule.cu, element-wise ops in ElementwiseKernels.cu,
// reductions, losses, sampling and the step guard in ReductionKernels.cu.
//
// Everything runs in order on one non-blocking stream owned by the backend. Memory comes from
// the device's stream-ordered pool, which keeps freed blocks for reuse, so a training step makes
// no driver allocation once the first step has run.
#include "CudaCommon.cuh"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

namespace il::cuda {

namespace {

// Only used to ask whether this build has machine code (or PTX) the device can run.
__global__ void imageProbeKernel() {}

// Errors after which the CUDA context is unusable: every later call fails the same way.
bool isStickyError(cudaError_t e)
{
    switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorLaunchTimeout:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
    case cudaErrorContextIsDestroyed:
        return true;
    default:
        return false;
    }
}

} // namespace

// ---- describing a device (also used by the probe, CudaModule.cu) ----------------------------

std::string formatGiB(size_t bytes)
{
    char text[32];
    std::snprintf(text, sizeof(text), "%.1f GiB", static_cast<double>(bytes) / (1u << 30));
    return text;
}

std::string computeText(int major, int minor)
{
    return "compute " + std::to_string(major) + "." + std::to_string(minor);
}

namespace {
constexpr int kMinComputeMajor = 7, kMinComputeMinor = 5; // Turing: the oldest SASS we build
}

bool computeSupported(int major, int minor)
{
    return major > kMinComputeMajor || (major == kMinComputeMajor && minor >= kMinComputeMinor);
}

std::string tooOldDevice(const char* name, int major, int minor)
{
    return std::string(name) + " has " + computeText(major, minor) +
           "; the CUDA backend needs compute 7.5 (Turing) or newer";
}

// ---- errors ----------------------------------------------------------------------------------

void throwCuda(cudaError_t error, const char* op)
{
    cudaGetLastError(); // clear a non-sticky error so the next launch check does not see it
    std::string message = std::string("CUDA error in ") + op + ": " + cudaGetErrorString(error) +
                          " (" + cudaGetErrorName(error) + ")";
    if (isStickyError(error))
        message += "; the GPU cannot be used again until the app is restarted (training can "
                   "continue on the CPU)";
    throw BackendError(message);
}

void throwBlas(cublasStatus_t status, const char* op)
{
    cudaGetLastError();
    if (status == CUBLAS_STATUS_ALLOC_FAILED)
        throw BackendError(std::string("CUDA out of memory in ") + op +
                           " (cuBLAS could not allocate)");
    throw BackendError(std::string("cuBLAS error in ") + op + ": " + cublasGetStatusString(status) +
                       " (" + cublasGetStatusName(status) + ")");
}

// ---- setup -----------------------------------------------------------------------------------

CudaBackend::CudaBackend(const CudaOptions& options)
    : m_device(options.device), m_tf32(options.tf32 == 1)
{
    try {
        init();
    } catch (...) {
        release();
        throw;
    }
}

CudaBackend::~CudaBackend()
{
    release();
}

// Long: device setup in the order CUDA needs it (probe, context, kernels, stream, pool, cuBLAS
// on the stream before its workspace); the constructor's catch releases whatever ran.
void CudaBackend::init()
{
    // The probe's reason is clearer than the raw runtime error (no driver, old driver, ...).
    // A too old device 0 is not a reason to refuse another device.
    CudaProbe probe;
    probeInto(probe);
    if (probe.status != CudaAvailable && !(probe.status == CudaNoDevice && probe.deviceCount > 0))
        throw BackendError(probe.message);
    int count = 0;
    check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
    if (m_device < 0 || m_device >= count)
        throw BackendError("CUDA device " + std::to_string(m_device) + " does not exist (" +
                           std::to_string(count) + (count == 1 ? " device" : " devices") +
                           " found)");
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, m_device), "cudaGetDeviceProperties");
    if (!computeSupported(prop.major, prop.minor))
        throw BackendError(tooOldDevice(prop.name, prop.major, prop.minor));
    m_name = prop.name;
    m_totalMemory = prop.totalGlobalMem;
    m_sms = std::max(1, prop.multiProcessorCount);
    // Stream-ordered pools (cudaMallocAsync) where the driver has them; plain cudaMalloc where
    // it does not (some virtualised GPUs), or when IRONLEARN_CUDA_POOL=0 asks (for testing).
    int pools = 0;
    check(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, m_device),
          "cudaDeviceGetAttribute");
    const char* poolChoice = std::getenv("IRONLEARN_CUDA_POOL");
    m_pooled = pools != 0 && !(poolChoice && std::strcmp(poolChoice, "0") == 0);

    bind(); // creates the primary context on this device

    cudaFuncAttributes attributes{};
    const cudaError_t image =
        cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(&imageProbeKernel));
    if (image == cudaErrorNoKernelImageForDevice || image == cudaErrorInvalidDeviceFunction) {
        cudaGetLastError();
        throw BackendError("this build of the CUDA backend has no GPU code for " + m_name + " (" +
                           computeText(prop.major, prop.minor) + ")");
    }
    check(image, "cudaFuncGetAttributes");
    check(loadElementwiseKernels(), "loading the kernels");
    check(loadReductionKernels(), "loading the kernels");
    check(loadNormKernels(), "loading the kernels");
    check(loadEmbeddingKernels(), "loading the kernels");

    check(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaStreamCreateWithFlags(&m_sideStream, cudaStreamNonBlocking), "cudaStreamCreate");
    if (m_pooled) {
        check(cudaDeviceGetDefaultMemPool(&m_pool, m_device), "cudaDeviceGetDefaultMemPool");
        // Keep freed memory in the pool instead of returning it at every synchronisation.
        uint64_t threshold = UINT64_MAX; // cuuint64_t
        check(cudaMemPoolSetAttribute(m_pool, cudaMemPoolAttrReleaseThreshold, &threshold),
              "cudaMemPoolSetAttribute");
    }

    checkBlas(cublasCreate(&m_blas), "cublasCreate");
    // cublasSetStream resets the workspace to cuBLAS's own pool, so it must come first.
    checkBlas(cublasSetStream(m_blas, m_stream), "cublasSetStream");
    check(cudaMalloc(&m_blasWorkspace, kBlasWorkspaceBytes), "cuBLAS workspace");
    checkBlas(cublasSetWorkspace(m_blas, m_blasWorkspace, kBlasWorkspaceBytes),
              "cublasSetWorkspace");
    // f32 products stay f32 unless TF32 was asked for (tensor cores, ~10-bit mantissa inputs).
    checkBlas(cublasSetMathMode(m_blas, m_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH),
              "cublasSetMathMode");
    checkBlas(cublasSetPointerMode(m_blas, CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode");
    check(cudaMalloc(reinterpret_cast<void**>(&m_partials), kMaxReduceBlocks * sizeof(double)),
          "reduction workspace");

    // cuBLASLt for the dense layer's bias epilogues. IRONLEARN_CUDA_EPILOGUE=0 turns them off
    // (separate bias passes, as the CPU backend runs them), for comparison; =require makes a
    // case cuBLASLt has no algorithm for an error instead of a silent fallback (the device
    // check used it to learn whether the GPU runs them); =report writes each product shape's
    // plan to stderr (algorithms offered, or none: separate passes), a report per shape.
    const char* epilogues = std::getenv("IRONLEARN_CUDA_EPILOGUE");
    if (!(epilogues && std::strcmp(epilogues, "0") == 0))
        checkBlas(cublasLtCreate(&m_lt), "cublasLtCreate");
    m_requireEpilogues = epilogues && std::strcmp(epilogues, "require") == 0;
    m_reportEpilogues = epilogues && std::strcmp(epilogues, "report") == 0;

    int blasVersion = 0;
    checkBlas(cublasGetVersion(m_blas, &blasVersion), "cublasGetVersion");
    m_details = computeText(prop.major, prop.minor) + ", " + formatGiB(m_totalMemory) +
                ", cuBLAS " + std::to_string(blasVersion / 10000) + "." +
                std::to_string(blasVersion / 100 % 100) + (m_tf32 ? ", TF32 on" : ", TF32 off");
    m_detailsTail = (m_pooled ? std::string()
                     : pools  ? std::string(", cudaMalloc (IRONLEARN_CUDA_POOL=0)")
                              : std::string(", cudaMalloc (no stream-ordered pools here)"));

    const char* graphs = std::getenv("IRONLEARN_CUDA_GRAPHS");
    m_graphsEnabled = !(graphs && std::strcmp(graphs, "0") == 0);
}

void CudaBackend::release() noexcept
{
    bindNoThrow();
    if (m_stream) {
        if (m_recording.load()) {
            cudaGraph_t graph = nullptr;
            cudaStreamEndCapture(m_stream, &graph);
            if (graph) cudaGraphDestroy(graph);
            m_recording = false;
        }
        cudaStreamSynchronize(m_stream);
    }
    for (cudaGraphExec_t exec : m_graphs)
        if (exec) cudaGraphExecDestroy(exec);
    m_graphs.clear();
    if (m_stream) {
        flushDeferredFrees();
        freeRetired();
        if (m_ones) deviceFree(m_ones, m_stream);
        if (m_sampleScratch) deviceFree(m_sampleScratch, m_stream);
        if (m_embedScratch) deviceFree(m_embedScratch, m_stream);
        cudaStreamSynchronize(m_stream);
    }
    m_ones = nullptr;
    m_onesCount = 0;
    m_sampleScratch = nullptr;
    m_sampleScratchFloats = 0;
    m_embedScratch = nullptr;
    m_embedScratchInts = 0;
    destroyLtPlans();
    if (m_lt) cublasLtDestroy(m_lt);
    m_lt = nullptr;
    if (m_blas) cublasDestroy(m_blas); // before its workspace goes
    m_blas = nullptr;
    if (m_blasWorkspace) cudaFree(m_blasWorkspace);
    m_blasWorkspace = nullptr;
    if (m_partials) cudaFree(m_partials);
    m_partials = nullptr;
    if (m_sideStream) {
        cudaStreamSynchronize(m_sideStream);
        cudaStreamDestroy(m_sideStream);
    }
    m_sideStream = nullptr;
    if (m_stream) cudaStreamDestroy(m_stream);
    m_stream = nullptr;
    // Hand the pool's cached memory back to the device (the user may go on training on the CPU
    // or in another process).
    if (m_pool) cudaMemPoolTrimTo(m_pool, 0);
    m_pool = nullptr;
    cudaGetLastError();
}

namespace {
thread_local int t_boundDevice = -1; // the device this thread made current, -1: not yet
}

void CudaBackend::bind() const
{
    if (t_boundDevice == m_device) return;
    check(cudaSetDevice(m_device), "cudaSetDevice");
    t_boundDevice = m_device;
}

bool CudaBackend::bindNoThrow() const noexcept
{
    if (t_boundDevice == m_device) return true;
    if (cudaSetDevice(m_device) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    t_boundDevice = m_device;
    return true;
}

void CudaBackend::requireNotRecording(const char* what) const
{
    if (m_recording.load())
        throw BackendError(std::string("cannot ") + what + " while recording a CUDA graph");
}

unsigned CudaBackend::elementGrid(int64_t n) const
{
    const int64_t blocks = (n + kBlock - 1) / kBlock;
    return static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, int64_t(m_sms) * 16));
}

DeviceInfo CudaBackend::info() const
{
    DeviceInfo d;
    d.backend = "cuda";
    d.name = m_name;
    // The bias epilogues as they turned out: cuBLASLt plans one product shape (and alignment)
    // at a time, and a shape it has no usable algorithm for runs the separate bias passes.
    std::string epilogues = ", bias epilogues off";
    if (m_lt) {
        const int made = m_ltPlansMade.load(), unusable = m_ltPlansUnusable.load();
        if (made == 0)
            epilogues = ", bias epilogues on";
        else if (unusable == 0)
            epilogues = ", bias epilogues on (" + std::to_string(made) + " product shape" +
                        (made == 1 ? ")" : "s)");
        else
            epilogues = ", bias epilogues for " + std::to_string(made - unusable) + " of " +
                        std::to_string(made) + " product shapes (the rest: separate bias passes)";
    }
    d.details = m_details + epilogues + m_detailsTail;
    d.threads = 1;
    return d;
}

// ---- matrix products -------------------------------------------------------------------------

void CudaBackend::gemmImpl(bool transA, bool transB, float alpha, ConstTensor a, ConstTensor b,
                           float beta, Tensor c)
{
    const int64_t m = c.rows(), n = c.cols(), k = transA ? a.rows() : a.cols();
    if (m == 0 || n == 0) return;
    if (k == 0) { // an empty product: C = beta * C (not 0 * C + beta * C: 0 * Inf is NaN)
        if (beta == 0.f)
            fill(c, 0.f);
        else if (beta != 1.f)
            scaleInPlace(c.data, c.size(), beta);
        return;
    }
    constexpr int64_t intMax = 0x7fffffff;
    if (m > intMax || n > intMax || k > intMax || a.cols() > intMax || b.cols() > intMax)
        throw BackendError("gemm: " + a.shape.toString() + " x " + b.shape.toString() +
                           " is too large for cuBLAS's 32-bit dimensions");
    bind();
    // cuBLAS is column-major: a row-major X is X^T to it. So compute C^T = op(B)^T op(A)^T,
    // which is the row-major C; the leading dimensions are the row-major column counts.
    checkBlas(cublasSgemm(m_blas, transB ? CUBLAS_OP_T : CUBLAS_OP_N,
                          transA ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(n),
                          static_cast<int>(m), static_cast<int>(k), &alpha, b.data,
                          static_cast<int>(b.cols()), a.data, static_cast<int>(a.cols()), &beta,
                          c.data, static_cast<int>(c.cols())),
              "gemm");
}

// out[0, :] = beta * out[0, :] + sum_i x[i, :] as a gemv with a vector of ones: the row-major
// rows x cols matrix is column-major cols x rows (ld = cols), so out = X^T * ones + beta * out.
// cuBLAS gemv is deterministic (no atomics).
void CudaBackend::sumRowsImpl(ConstTensor x, float beta, Tensor out)
{
    const int64_t rows = x.rows(), cols = x.cols();
    if (cols == 0) return;
    bind();
    if (rows == 0) { // nothing to add; gemv would return without scaling
        scaleInPlace(out.data, cols, beta);
        return;
    }
    constexpr int64_t intMax = 0x7fffffff;
    if (rows > intMax || cols > intMax)
        throw BackendError("sumRows: " + x.shape.toString() +
                           " is too large for cuBLAS's 32-bit dimensions");
    ensureOnes(rows);
    const float one = 1.f;
    checkBlas(cublasSgemv(m_blas, CUBLAS_OP_N, static_cast<int>(cols), static_cast<int>(rows), &one,
                          x.data, static_cast<int>(cols), m_ones, 1, &beta, out.data, 1),
              "sumRows");
}

} // namespace il::cuda
