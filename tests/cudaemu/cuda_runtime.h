// A CPU emulation of the part of the CUDA runtime that kernels/ uses, for tests only: it lets
// the CUDA backend's own kernel and host code run, unchanged, on a machine without a GPU
// (tests/cudaemu/README.md). Every CUDA thread is a fiber; a block's fibers run on the calling
// thread and meet at __syncthreads() and at the warp intrinsics, which exchange values the
// way the hardware does. Streams queue their work until the host synchronises, or record it while
// captured.
//
// It checks what a GPU would not forgive: launch configurations, warp intrinsics with exited
// lanes, barriers that not every thread reaches, synchronising a stream being captured,
// freeing unknown pointers. Freed memory is filled with NaN, so a graph that still reads a
// freed block shows it. It says nothing about speed or memory coalescing, and of the GPU's
// rounding it mimics only nvcc's fused multiply-adds (__fmul_rn and __fadd_rn below).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <math.h>
#include <tuple>
#include <type_traits>
#include <utility>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
// The bounds themselves are read by cu2cpp.cmake, which gives each launch of a bounded kernel
// its maximum (Config::bounded): a launch with more threads per block fails as on a GPU.
#define __launch_bounds__(...)
// One block runs at a time (launches are serialised), so a function-static variable is the
// block's shared memory. They all live in one section, which the emulation fills with NaN bytes
// before each block: a block that reads shared memory it did not write (say, what the block
// before it left there) reads NaN, as a GPU's uninitialised shared memory holds garbage.
#define __shared__ static __attribute__((section("il_emu_shared")))

struct uint3 {
    unsigned x = 0, y = 0, z = 0;
};
struct dim3 {
    unsigned x = 1, y = 1, z = 1;
    constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct alignas(16) float4 {
    float x, y, z, w;
};
struct alignas(8) float2 {
    float x, y;
};
inline float4 make_float4(float x, float y, float z, float w)
{
    return {x, y, z, w};
}

// CUDA's rounded arithmetic, which nvcc never contracts into a fused multiply-add (it contracts
// a plain product feeding a sum by default, --fmad=true). The emulation is compiled the same way
// (-mfma -ffp-contract=fast, CMakeLists.txt), so these must stop GCC from fusing too: the empty
// asm statements make a product's rounded value, and a sum's operands, opaque to it.
#if defined(__x86_64__)
#define IL_EMU_OPAQUE(v) asm("" : "+x"(v))
#else
#define IL_EMU_OPAQUE(v) asm("" : "+m"(v))
#endif
inline float __fmul_rn(float a, float b)
{
    float p = a * b;
    IL_EMU_OPAQUE(p);
    return p;
}
inline float __fadd_rn(float a, float b)
{
    IL_EMU_OPAQUE(a);
    IL_EMU_OPAQUE(b);
    return a + b;
}
#undef IL_EMU_OPAQUE

// CUDA's global min/max overloads.
#define IL_EMU_MINMAX(T)                                                                           \
    inline T min(T a, T b)                                                                         \
    {                                                                                              \
        return b < a ? b : a;                                                                      \
    }                                                                                              \
    inline T max(T a, T b)                                                                         \
    {                                                                                              \
        return a < b ? b : a;                                                                      \
    }
IL_EMU_MINMAX(int)
IL_EMU_MINMAX(unsigned)
IL_EMU_MINMAX(long)
IL_EMU_MINMAX(unsigned long)
IL_EMU_MINMAX(long long)
IL_EMU_MINMAX(unsigned long long)
#undef IL_EMU_MINMAX

extern thread_local uint3 threadIdx;
extern thread_local uint3 blockIdx;
extern thread_local dim3 blockDim;
extern thread_local dim3 gridDim;

enum cudaError_t {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInitializationError = 3,
    cudaErrorLaunchFailure = 4,
    cudaErrorLaunchTimeout = 6,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidPc = 718,
    cudaErrorInvalidDeviceFunction = 98,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorNoKernelImageForDevice = 209,
    cudaErrorInsufficientDriver = 35,
    cudaErrorECCUncorrectable = 214,
    cudaErrorIllegalAddress = 700,
    cudaErrorLaunchOutOfResources = 701,
    cudaErrorHardwareStackError = 714,
    cudaErrorIllegalInstruction = 715,
    cudaErrorMisalignedAddress = 716,
    cudaErrorInvalidAddressSpace = 717,
    cudaErrorAssert = 710,
    cudaErrorContextIsDestroyed = 709,
    cudaErrorStreamCaptureUnsupported = 900,
    cudaErrorStreamCaptureInvalidated = 901,
    cudaErrorStreamCaptureWrongThread = 908,
    cudaErrorIllegalState = 401,
};

enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4
};
enum cudaStreamCaptureMode {
    cudaStreamCaptureModeGlobal = 0,
    cudaStreamCaptureModeThreadLocal = 1,
    cudaStreamCaptureModeRelaxed = 2
};
enum cudaDeviceAttr { cudaDevAttrMemoryPoolsSupported = 115 };
enum cudaMemPoolAttr { cudaMemPoolAttrReleaseThreshold = 4 };
constexpr unsigned cudaStreamNonBlocking = 1;

struct cudaDeviceProp {
    char name[256];
    size_t totalGlobalMem;
    int major, minor;
    int multiProcessorCount;
};
struct cudaFuncAttributes {
    int maxThreadsPerBlock;
};

struct EmuStream;
struct EmuGraph;
struct EmuGraphExec;
struct EmuPool;
using cudaStream_t = EmuStream*;
using cudaGraph_t = EmuGraph*;
using cudaGraphExec_t = EmuGraphExec*;
using cudaMemPool_t = EmuPool*;

cudaError_t cudaGetLastError();
const char* cudaGetErrorString(cudaError_t e);
const char* cudaGetErrorName(cudaError_t e);
cudaError_t cudaRuntimeGetVersion(int* v);
cudaError_t cudaDriverGetVersion(int* v);
cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaMemGetInfo(size_t* freeBytes, size_t* totalBytes);
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, const void* func);
template <class... P>
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, void (*func)(P...))
{
    return cudaFuncGetAttributes(attr, reinterpret_cast<const void*>(func));
}

cudaError_t cudaMalloc(void** p, size_t bytes);
template <class T> cudaError_t cudaMalloc(T** p, size_t bytes)
{
    return cudaMalloc(reinterpret_cast<void**>(p), bytes);
}
cudaError_t cudaFree(void* p);
cudaError_t cudaMallocAsync(void** p, size_t bytes, cudaStream_t s);
template <class T> cudaError_t cudaMallocAsync(T** p, size_t bytes, cudaStream_t s)
{
    return cudaMallocAsync(reinterpret_cast<void**>(p), bytes, s);
}
cudaError_t cudaFreeAsync(void* p, cudaStream_t s);
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device);
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value);
cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t keep);

cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t s);
cudaError_t cudaMemsetAsync(void* dst, int value, size_t bytes, cudaStream_t s);

cudaError_t cudaStreamCreate(cudaStream_t* s);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaStreamSynchronize(cudaStream_t s);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t* graph);
cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode* mode);
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph,
                                 unsigned long long flags);
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s);
cudaError_t cudaGraphDestroy(cudaGraph_t graph);
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec);

// ---- device intrinsics ---------------------------------------------------------------------
void __syncthreads();
void __syncwarp(unsigned mask = 0xffffffffu);
namespace il_emu {
// Lane i publishes `bits`; after the warp has met, returns what lane `from` published.
uint64_t warpExchange(unsigned mask, uint64_t bits, int from);
unsigned warpBallot(unsigned mask, bool predicate);
} // namespace il_emu

namespace il_emu {
// This thread's lane in its warp.
inline int lane()
{
    return static_cast<int>(
        (threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y) % 32);
}
// v from lane `from` of this warp (every lane takes part).
template <class T> T shuffle(unsigned mask, T v, int from)
{
    static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>);
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof(T));
    bits = warpExchange(mask, bits, from);
    T out;
    std::memcpy(&out, &bits, sizeof(T));
    return out;
}
} // namespace il_emu

template <class T> T __shfl_xor_sync(unsigned mask, T v, int laneMask)
{
    return il_emu::shuffle(mask, v, il_emu::lane() ^ laneMask);
}
template <class T> T __shfl_sync(unsigned mask, T v, int srcLane)
{
    return il_emu::shuffle(mask, v, srcLane & 31);
}
template <class T> T __shfl_up_sync(unsigned mask, T v, unsigned delta)
{
    const int lane = il_emu::lane(), d = static_cast<int>(delta);
    return il_emu::shuffle(mask, v, lane >= d ? lane - d : lane);
}
inline unsigned __ballot_sync(unsigned mask, int predicate)
{
    return il_emu::warpBallot(mask, predicate != 0);
}
inline int __ffs(int x)
{
    return __builtin_ffs(x);
}
inline int __popc(unsigned x)
{
    return __builtin_popcount(x);
}
// Blocks run one at a time and a fiber is never pre-empted inside an operation, so plain
// read-modify-writes are atomic here.
template <class T> T atomicAdd(T* address, T value)
{
    const T old = *address;
    *address = old + value;
    return old;
}

// ---- launches ------------------------------------------------------------------------------
namespace il_emu {

struct Config {
    dim3 grid, block;
    size_t sharedBytes = 0;
    cudaStream_t stream = nullptr;
    unsigned maxThreads = 1024; // per block: the device's, or the kernel's __launch_bounds__
    Config(dim3 g, dim3 b, size_t s = 0, cudaStream_t st = nullptr)
        : grid(g), block(b), sharedBytes(s), stream(st)
    {
    }
    // The launch of a kernel declared __launch_bounds__(threads[, minBlocks]) (cu2cpp.cmake).
    Config bounded(unsigned threads, unsigned = 0) const
    {
        Config c = *this;
        c.maxThreads = threads;
        return c;
    }
};

// Runs (or, on a stream being captured, records) body once per thread of the grid. `kernel`
// identifies the kernel (whether it ever uses a barrier).
void launchBody(const Config& c, const void* kernel, std::function<void()> body);

template <class... P, class... A> void launch(const Config& c, void (*kernel)(P...), A&&... args)
{
    static_assert(sizeof...(P) == sizeof...(A), "kernel argument count");
    std::tuple<std::decay_t<P>...> params(static_cast<std::decay_t<P>>(std::forward<A>(args))...);
    launchBody(c, reinterpret_cast<const void*>(kernel),
               [kernel, params]() { std::apply(kernel, params); });
}

// Work for a stream (copies, cuBLAS, launches): queued until the host synchronises (a stream,
// the device, or a synchronous copy or free), or recorded while the stream is captured.
cudaError_t enqueue(cudaStream_t s, std::function<void()> work);

} // namespace il_emu
