// The CPU emulation of the CUDA runtime and cuBLAS declared in cuda_runtime.h and cublas_v2.h
// (tests only; see tests/cudaemu/README.md).
#include "cublasLt.h"

#include <cblas.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

thread_local uint3 threadIdx;
thread_local uint3 blockIdx;
thread_local dim3 blockDim;
thread_local dim3 gridDim;

// ---- fibers: a minimal x86-64 context switch ------------------------------------------------
// il_emu_switch(&save, next): saves the callee-saved registers on the current stack, stores
// the stack pointer in *save and continues on `next` (a stack saved the same way).
extern "C" void il_emu_switch(void** save, void* next);
asm(R"(
    .text
    .globl il_emu_switch
    .hidden il_emu_switch
    .type il_emu_switch, @function
il_emu_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size il_emu_switch, .-il_emu_switch
    .section .note.GNU-stack,"",@progbits
    .text
)");

namespace {

[[noreturn]] void fatal(const std::string& what)
{
    std::fprintf(stderr, "CUDA emulation: %s\n", what.c_str());
    std::fflush(stderr);
    std::abort();
}

thread_local cudaError_t t_lastError = cudaSuccess;
cudaError_t fail(cudaError_t e)
{
    t_lastError = e;
    return e;
}

// Everything below runs under this lock: one launch, copy or BLAS call at a time (a block's
// shared memory is function-static), and the stream/graph bookkeeping.
std::recursive_mutex g_lock;
using Guard = std::lock_guard<std::recursive_mutex>;

// ---- memory ----------------------------------------------------------------------------------
constexpr size_t kDeviceBytes = size_t(8) << 30;
std::map<void*, size_t> g_blocks;
size_t g_allocated = 0;

void poison(void* p, size_t bytes)
{
    std::memset(p, 0xff, bytes); // every float a NaN
}

cudaError_t allocate(void** p, size_t bytes)
{
    if (!p) return fail(cudaErrorInvalidValue);
    const size_t rounded = std::max<size_t>(256, (bytes + 255) / 256 * 256);
    if (g_allocated + rounded > kDeviceBytes) return fail(cudaErrorMemoryAllocation);
    void* q = std::aligned_alloc(256, rounded);
    if (!q) return fail(cudaErrorMemoryAllocation);
    poison(q, rounded); // new device memory holds no particular value
    g_blocks[q] = rounded;
    g_allocated += rounded;
    *p = q;
    return cudaSuccess;
}

cudaError_t release(void* p)
{
    if (!p) return cudaSuccess;
    const auto it = g_blocks.find(p);
    if (it == g_blocks.end()) return fail(cudaErrorInvalidValue);
    poison(p, it->second); // a graph that still reads this block sees NaN
    g_allocated -= it->second;
    g_blocks.erase(it);
    std::free(p);
    return cudaSuccess;
}

} // namespace

// ---- streams and graphs ----------------------------------------------------------------------
struct EmuStream {
    bool capturing = false;
    bool invalidated = false;
    cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
    std::thread::id owner;
    std::vector<std::function<void()>> nodes;
};
struct EmuGraph {
    std::vector<std::function<void()>> nodes;
};
struct EmuGraphExec {
    // Shared with its launches still queued: an executable graph may be destroyed right after
    // it was launched.
    std::shared_ptr<const std::vector<std::function<void()>>> nodes;
};
struct EmuPool {};
struct EmuBlas {
    cudaStream_t stream = nullptr;
};

namespace {

thread_local cudaStreamCaptureMode t_captureMode = cudaStreamCaptureModeGlobal;
std::set<EmuStream*> g_streams;
EmuPool g_pool;

bool capturing(cudaStream_t s)
{
    return s && s->capturing;
}

// "Potentially unsafe" calls (synchronous allocation, copies, frees) are refused during a
// capture in global mode, or in thread-local mode on the capturing thread, unless this
// thread's mode is relaxed; the capture is then invalidated, as CUDA does.
cudaError_t unsafeCall()
{
    if (t_captureMode == cudaStreamCaptureModeRelaxed) return cudaSuccess;
    bool refused = false;
    for (EmuStream* s : g_streams) {
        if (!s->capturing) continue;
        if (s->mode == cudaStreamCaptureModeGlobal ||
            (s->mode == cudaStreamCaptureModeThreadLocal &&
             s->owner == std::this_thread::get_id())) {
            s->invalidated = true;
            refused = true;
        }
    }
    return refused ? fail(cudaErrorStreamCaptureUnsupported) : cudaSuccess;
}

// ---- running a grid --------------------------------------------------------------------------
constexpr size_t kStackBytes = 64 * 1024;

enum class FiberState { Runnable, BlockWait, WarpWait, Done };
struct Fiber {
    void* sp = nullptr;
    FiberState state = FiberState::Runnable;
    uint3 tid;
    int linear = 0;
};

struct BlockRun {
    const std::function<void()>* body = nullptr;
    std::vector<Fiber> fibers;
    std::vector<std::array<uint64_t, 32>> slots;
    void* schedulerSp = nullptr;
    bool usedBarrier = false;
};

thread_local BlockRun* t_block = nullptr;
thread_local Fiber* t_fiber = nullptr;
thread_local std::vector<std::unique_ptr<char[]>> t_stacks;

// Kernels that never met a barrier on their first launch run their threads as plain calls.
std::map<const void*, bool> g_barrierFree;
// Every other launch of a kernel runs its blocks, and the threads of a barrier-free kernel, in
// reverse order: a kernel whose result depends on the order of its threads (a race, or an
// atomic placement assumed to be ordered) gives different results on alternate runs.
std::map<const void*, uint64_t> g_launches;

[[noreturn]] void fiberEntry()
{
    (*t_block->body)();
    t_fiber->state = FiberState::Done;
    void* unused = nullptr;
    il_emu_switch(&unused, t_block->schedulerSp);
    __builtin_unreachable();
}

void* freshStack(char* base)
{
    auto top = reinterpret_cast<uintptr_t>(base + kStackBytes);
    auto sp = (top - 64) & ~uintptr_t(15);
    auto* words = reinterpret_cast<uintptr_t*>(sp);
    for (int i = 0; i < 6; ++i)
        words[i] = 0; // r15 r14 r13 r12 rbx rbp
    words[6] = reinterpret_cast<uintptr_t>(&fiberEntry);
    words[7] = 0; // fiberEntry's (never used) return address
    return reinterpret_cast<void*>(sp);
}

void waitAs(FiberState state)
{
    Fiber* f = t_fiber;
    if (!f)
        fatal("a kernel reached a barrier or warp intrinsic on a launch where it had not before "
              "(barriers must not depend on the data)");
    t_block->usedBarrier = true;
    f->state = state;
    il_emu_switch(&f->sp, t_block->schedulerSp);
    threadIdx = f->tid; // another fiber of this OS thread ran meanwhile
}

bool runBlockWithFibers(const std::function<void()>& body, unsigned threads)
{
    BlockRun run;
    run.body = &body;
    run.fibers.resize(threads);
    run.slots.resize((threads + 31) / 32);
    while (t_stacks.size() < threads)
        t_stacks.push_back(std::make_unique<char[]>(kStackBytes));
    for (unsigned i = 0; i < threads; ++i) {
        Fiber& f = run.fibers[i];
        f.linear = static_cast<int>(i);
        f.tid = {i % blockDim.x, i / blockDim.x % blockDim.y, i / (blockDim.x * blockDim.y)};
        f.sp = freshStack(t_stacks[i].get());
    }
    BlockRun* const outer = t_block;
    t_block = &run;
    for (;;) {
        bool progress = false;
        for (Fiber& f : run.fibers) {
            if (f.state != FiberState::Runnable) continue;
            t_fiber = &f;
            threadIdx = f.tid;
            il_emu_switch(&run.schedulerSp, f.sp);
            progress = true;
        }
        t_fiber = nullptr;
        // Now nothing is runnable: every fiber waits or is done.
        size_t done = 0, atBlock = 0;
        for (size_t w = 0; w < run.slots.size(); ++w) {
            const size_t first = w * 32, last = std::min<size_t>(first + 32, threads);
            size_t warpWaiting = 0, warpDone = 0;
            for (size_t i = first; i < last; ++i) {
                warpWaiting += run.fibers[i].state == FiberState::WarpWait;
                warpDone += run.fibers[i].state == FiberState::Done;
            }
            if (warpWaiting == 0) continue;
            if (warpWaiting != last - first)
                fatal(warpDone ? "a warp intrinsic with the full mask ran while lanes of the "
                                 "warp had exited"
                               : "a warp intrinsic was reached by some lanes while the others "
                                 "wait at __syncthreads()");
            for (size_t i = first; i < last; ++i)
                run.fibers[i].state = FiberState::Runnable;
            progress = true;
        }
        for (const Fiber& f : run.fibers) {
            done += f.state == FiberState::Done;
            atBlock += f.state == FiberState::BlockWait;
        }
        if (done == threads) break;
        if (atBlock > 0 && atBlock + done == threads) {
            for (Fiber& f : run.fibers)
                if (f.state == FiberState::BlockWait) f.state = FiberState::Runnable;
            progress = true;
        }
        if (!progress) fatal("deadlock: threads wait at barriers that the others never reach");
    }
    t_block = outer;
    return run.usedBarrier;
}

// Every __shared__ variable of the kernels (cuda_runtime.h puts them in this section); the
// linker names its bounds.
extern "C" char __start_il_emu_shared[] __attribute__((weak, visibility("hidden")));
extern "C" char __stop_il_emu_shared[] __attribute__((weak, visibility("hidden")));

// Before each block: shared memory holds nothing the block did not write.
void poisonSharedMemory()
{
    char* const start = __start_il_emu_shared;
    char* const stop = __stop_il_emu_shared;
    if (start && stop > start) poison(start, static_cast<size_t>(stop - start));
}

void runGrid(const il_emu::Config& c, const void* kernel, const std::function<void()>& body)
{
    gridDim = c.grid;
    blockDim = c.block;
    const unsigned threads = c.block.x * c.block.y * c.block.z;
    const auto known = g_barrierFree.find(kernel);
    const bool direct = known != g_barrierFree.end() && known->second;
    bool usedBarrier = false;
    const bool reverse = (g_launches[kernel]++ & 1) != 0;
    const uint64_t blocks = uint64_t(c.grid.x) * c.grid.y * c.grid.z;
    for (uint64_t k = 0; k < blocks; ++k) {
        const uint64_t b = reverse ? blocks - 1 - k : k;
        blockIdx = {unsigned(b % c.grid.x), unsigned(b / c.grid.x % c.grid.y),
                    unsigned(b / (uint64_t(c.grid.x) * c.grid.y))};
        poisonSharedMemory();
        if (direct) {
            t_fiber = nullptr;
            for (unsigned j = 0; j < threads; ++j) {
                const unsigned i = reverse ? threads - 1 - j : j;
                threadIdx = {i % c.block.x, i / c.block.x % c.block.y, i / (c.block.x * c.block.y)};
                body();
            }
        } else {
            usedBarrier |= runBlockWithFibers(body, threads);
        }
    }
    if (known == g_barrierFree.end()) g_barrierFree[kernel] = !usedBarrier;
}

// Work queued on any stream, in the order it was queued, until the host synchronises: a
// result the host reads without waiting for it is not there yet, as on a GPU. (One queue for
// every stream: work on two streams runs in the order it was queued, so a missing wait between
// streams does not show here.)
std::deque<std::function<void()>> g_pending;

// Runs the queued work (at a synchronisation).
void drain()
{
    while (!g_pending.empty()) {
        std::function<void()> work = std::move(g_pending.front());
        g_pending.pop_front();
        work();
    }
}

} // namespace

namespace il_emu {

cudaError_t enqueue(cudaStream_t s, std::function<void()> work)
{
    Guard g(g_lock);
    if (capturing(s)) {
        if (s->invalidated) return fail(cudaErrorStreamCaptureInvalidated);
        s->nodes.push_back(std::move(work));
        return cudaSuccess;
    }
    g_pending.push_back(std::move(work));
    return cudaSuccess;
}

void launchBody(const Config& c, const void* kernel, std::function<void()> body)
{
    Guard g(g_lock);
    const uint64_t threads = uint64_t(c.block.x) * c.block.y * c.block.z;
    const bool bad = c.grid.x == 0 || c.grid.y == 0 || c.grid.z == 0 || threads == 0 ||
                     threads > 1024 || c.block.z > 64 || c.grid.y > 65535 || c.grid.z > 65535 ||
                     c.sharedBytes > 48 * 1024;
    if (bad) {
        if (capturing(c.stream)) c.stream->invalidated = true;
        fail(cudaErrorInvalidConfiguration);
        return;
    }
    if (threads > c.maxThreads) { // more than the kernel's __launch_bounds__
        if (capturing(c.stream)) c.stream->invalidated = true;
        fail(cudaErrorLaunchOutOfResources);
        return;
    }
    const Config config = c;
    const cudaError_t e = enqueue(
        c.stream, [config, kernel, body = std::move(body)]() { runGrid(config, kernel, body); });
    if (e != cudaSuccess) fail(e);
}

uint64_t warpExchange(unsigned mask, uint64_t bits, int from)
{
    if (mask != 0xffffffffu) fatal("only full-mask warp intrinsics are emulated");
    if (!t_fiber) waitAs(FiberState::WarpWait); // reports the misuse
    auto& slots = t_block->slots[static_cast<size_t>(t_fiber->linear / 32)];
    slots[static_cast<size_t>(t_fiber->linear % 32)] = bits;
    waitAs(FiberState::WarpWait);
    const uint64_t out = slots[static_cast<size_t>(from)];
    waitAs(FiberState::WarpWait);
    return out;
}

unsigned warpBallot(unsigned mask, bool predicate)
{
    if (mask != 0xffffffffu) fatal("only full-mask warp intrinsics are emulated");
    if (!t_fiber) waitAs(FiberState::WarpWait);
    auto& slots = t_block->slots[static_cast<size_t>(t_fiber->linear / 32)];
    slots[static_cast<size_t>(t_fiber->linear % 32)] = predicate ? 1 : 0;
    waitAs(FiberState::WarpWait);
    unsigned ballot = 0;
    for (int lane = 0; lane < 32; ++lane)
        if (slots[static_cast<size_t>(lane)]) ballot |= 1u << lane;
    waitAs(FiberState::WarpWait);
    return ballot;
}

} // namespace il_emu

void __syncthreads()
{
    waitAs(FiberState::BlockWait);
}

void __syncwarp(unsigned mask)
{
    if (mask != 0xffffffffu) fatal("only full-mask __syncwarp is emulated");
    waitAs(FiberState::WarpWait);
}

// ---- runtime API -----------------------------------------------------------------------------
cudaError_t cudaGetLastError()
{
    const cudaError_t e = t_lastError;
    t_lastError = cudaSuccess;
    return e;
}

const char* cudaGetErrorName(cudaError_t e)
{
    switch (e) {
    case cudaSuccess:
        return "cudaSuccess";
    case cudaErrorInvalidValue:
        return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation:
        return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration:
        return "cudaErrorInvalidConfiguration";
    case cudaErrorLaunchOutOfResources:
        return "cudaErrorLaunchOutOfResources";
    case cudaErrorStreamCaptureUnsupported:
        return "cudaErrorStreamCaptureUnsupported";
    case cudaErrorStreamCaptureInvalidated:
        return "cudaErrorStreamCaptureInvalidated";
    case cudaErrorStreamCaptureWrongThread:
        return "cudaErrorStreamCaptureWrongThread";
    case cudaErrorIllegalState:
        return "cudaErrorIllegalState";
    default:
        return "cudaErrorUnknown";
    }
}

const char* cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess:
        return "no error";
    case cudaErrorInvalidValue:
        return "invalid argument";
    case cudaErrorMemoryAllocation:
        return "out of memory";
    case cudaErrorInvalidConfiguration:
        return "invalid configuration argument";
    case cudaErrorLaunchOutOfResources:
        return "too many resources requested for launch";
    case cudaErrorStreamCaptureUnsupported:
        return "operation not permitted when stream is capturing";
    case cudaErrorStreamCaptureInvalidated:
        return "operation failed due to a previous error during capture";
    case cudaErrorStreamCaptureWrongThread:
        return "attempt to terminate a thread-local capture sequence from another thread";
    case cudaErrorIllegalState:
        return "the operation is not permitted in this state";
    default:
        return "unknown error (emulated)";
    }
}

cudaError_t cudaRuntimeGetVersion(int* v)
{
    *v = 13000;
    return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int* v)
{
    *v = 13000;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceCount(int* count)
{
    *count = 1;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device)
{
    if (device != 0) return fail(cudaErrorInvalidDevice);
    *prop = cudaDeviceProp{};
    std::snprintf(prop->name, sizeof(prop->name), "CUDA emulation on the CPU");
    prop->totalGlobalMem = kDeviceBytes;
    prop->major = 9;
    prop->minor = 0;
    prop->multiProcessorCount = 2;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device)
{
    if (device != 0) return fail(cudaErrorInvalidDevice);
    *value = attr == cudaDevAttrMemoryPoolsSupported ? 1 : 0;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device)
{
    return device == 0 ? cudaSuccess : fail(cudaErrorInvalidDevice);
}

cudaError_t cudaMemGetInfo(size_t* freeBytes, size_t* totalBytes)
{
    Guard g(g_lock);
    *freeBytes = kDeviceBytes - g_allocated;
    *totalBytes = kDeviceBytes;
    return cudaSuccess;
}

cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, const void* func)
{
    if (!attr || !func) return fail(cudaErrorInvalidDeviceFunction);
    attr->maxThreadsPerBlock = 1024;
    return cudaSuccess;
}

cudaError_t cudaMalloc(void** p, size_t bytes)
{
    Guard g(g_lock);
    if (const cudaError_t e = unsafeCall(); e != cudaSuccess) return e;
    return allocate(p, bytes);
}

cudaError_t cudaFree(void* p)
{
    Guard g(g_lock);
    if (const cudaError_t e = unsafeCall(); e != cudaSuccess) return e;
    drain(); // cudaFree waits for the device's work
    return release(p);
}

// The backend never allocates into a graph: an asynchronous allocation or free on a stream
// being captured is reported (CUDA would record an allocation node).
cudaError_t cudaMallocAsync(void** p, size_t bytes, cudaStream_t s)
{
    Guard g(g_lock);
    if (capturing(s)) {
        s->invalidated = true;
        return fail(cudaErrorStreamCaptureUnsupported);
    }
    return allocate(p, bytes);
}

cudaError_t cudaFreeAsync(void* p, cudaStream_t s)
{
    Guard g(g_lock);
    if (capturing(s)) {
        s->invalidated = true;
        return fail(cudaErrorStreamCaptureUnsupported);
    }
    if (p && !g_blocks.count(p)) return fail(cudaErrorInvalidValue);
    // In stream order: the work queued before it still reads the block.
    g_pending.push_back([p] { release(p); });
    return cudaSuccess;
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device)
{
    if (device != 0) return fail(cudaErrorInvalidDevice);
    *pool = &g_pool;
    return cudaSuccess;
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr, void* value)
{
    return pool && value ? cudaSuccess : fail(cudaErrorInvalidValue);
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t)
{
    return pool ? cudaSuccess : fail(cudaErrorInvalidValue);
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind)
{
    Guard g(g_lock);
    if (const cudaError_t e = unsafeCall(); e != cudaSuccess) return e;
    drain(); // a synchronous copy comes after the device's work
    std::memmove(dst, src, bytes);
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t s)
{
    if (bytes == 0) return cudaSuccess;
    if (!dst || !src) return fail(cudaErrorInvalidValue);
    if (kind == cudaMemcpyHostToDevice && !capturing(s)) {
        // From pageable host memory CUDA stages the source before it returns: the host may
        // reuse it at once. The device's copy of it still waits in the stream's order.
        auto staged = std::make_shared<std::vector<char>>(static_cast<const char*>(src),
                                                          static_cast<const char*>(src) + bytes);
        return il_emu::enqueue(s, [=] { std::memcpy(dst, staged->data(), bytes); });
    }
    return il_emu::enqueue(s, [=] { std::memmove(dst, src, bytes); });
}

cudaError_t cudaMemsetAsync(void* dst, int value, size_t bytes, cudaStream_t s)
{
    if (bytes == 0) return cudaSuccess;
    if (!dst) return fail(cudaErrorInvalidValue);
    return il_emu::enqueue(s, [=] { std::memset(dst, value, bytes); });
}

cudaError_t cudaStreamCreate(cudaStream_t* s)
{
    return cudaStreamCreateWithFlags(s, 0);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned)
{
    Guard g(g_lock);
    *s = new EmuStream;
    g_streams.insert(*s);
    return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    Guard g(g_lock);
    if (!g_streams.erase(s)) return fail(cudaErrorInvalidValue);
    drain(); // its work still runs
    delete s;
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    Guard g(g_lock);
    if (capturing(s)) { // never allowed: the work is not run, only recorded
        s->invalidated = true;
        return fail(cudaErrorStreamCaptureUnsupported);
    }
    if (const cudaError_t e = unsafeCall(); e != cudaSuccess) return e;
    drain(); // the work runs now (every stream's, in the order it was queued)
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize()
{
    return cudaStreamSynchronize(nullptr);
}

cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode mode)
{
    Guard g(g_lock);
    if (!s) return fail(cudaErrorStreamCaptureUnsupported); // not the legacy stream
    if (s->capturing) return fail(cudaErrorIllegalState);
    s->capturing = true;
    s->invalidated = false;
    s->mode = mode;
    s->owner = std::this_thread::get_id();
    s->nodes.clear();
    return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t* graph)
{
    Guard g(g_lock);
    if (!graph) return fail(cudaErrorInvalidValue);
    *graph = nullptr;
    if (!capturing(s)) return fail(cudaErrorIllegalState);
    if (s->mode != cudaStreamCaptureModeRelaxed && s->owner != std::this_thread::get_id())
        return fail(cudaErrorStreamCaptureWrongThread);
    s->capturing = false;
    // IRONLEARN_EMU_CAPTURE_FAILS=1: every capture ends invalidated, as when an op in it did
    // something a capture refuses (a planted failure: the device check's dry run must FAIL).
    const char* planted = std::getenv("IRONLEARN_EMU_CAPTURE_FAILS");
    if (s->invalidated || (planted && std::strcmp(planted, "1") == 0)) {
        s->nodes.clear();
        return fail(cudaErrorStreamCaptureInvalidated);
    }
    *graph = new EmuGraph{std::move(s->nodes)};
    s->nodes.clear();
    return cudaSuccess;
}

cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode* mode)
{
    if (!mode) return fail(cudaErrorInvalidValue);
    std::swap(*mode, t_captureMode);
    return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long)
{
    if (!exec || !graph) return fail(cudaErrorInvalidValue);
    *exec =
        new EmuGraphExec{std::make_shared<const std::vector<std::function<void()>>>(graph->nodes)};
    return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s)
{
    if (!exec) return fail(cudaErrorInvalidValue);
    Guard g(g_lock);
    if (capturing(s)) return fail(cudaErrorStreamCaptureUnsupported);
    g_pending.push_back([nodes = exec->nodes] {
        for (const auto& node : *nodes)
            node();
    });
    return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
    delete graph;
    return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec)
{
    delete exec;
    return cudaSuccess;
}

// ---- cuBLAS ----------------------------------------------------------------------------------
namespace {
// The library's handles and descriptors are plain heap objects.
template <class T> cublasStatus_t made(T** out, T* object)
{
    *out = object;
    return CUBLAS_STATUS_SUCCESS;
}
template <class T> cublasStatus_t destroyed(T* object)
{
    delete object;
    return CUBLAS_STATUS_SUCCESS;
}
} // namespace

cublasStatus_t cublasCreate(cublasHandle_t* handle)
{
    return made(handle, new EmuBlas);
}

cublasStatus_t cublasDestroy(cublasHandle_t handle)
{
    return destroyed(handle);
}

cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream)
{
    handle->stream = stream;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace(cublasHandle_t, void*, size_t)
{
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t, cublasMath_t)
{
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetPointerMode(cublasHandle_t, cublasPointerMode_t mode)
{
    return mode == CUBLAS_POINTER_MODE_HOST ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
}

cublasStatus_t cublasGetVersion(cublasHandle_t, int* version)
{
    *version = 130000;
    return CUBLAS_STATUS_SUCCESS;
}

const char* cublasGetStatusString(cublasStatus_t status)
{
    return status == CUBLAS_STATUS_SUCCESS ? "success" : "emulated cuBLAS error";
}

const char* cublasGetStatusName(cublasStatus_t status)
{
    switch (status) {
    case CUBLAS_STATUS_SUCCESS:
        return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_SUPPORTED:
        return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_ARCH_MISMATCH:
        return "CUBLAS_STATUS_ARCH_MISMATCH";
    default:
        return "CUBLAS_STATUS_INVALID_VALUE";
    }
}

namespace {
CBLAS_TRANSPOSE blasOp(cublasOperation_t op)
{
    return op == CUBLAS_OP_T ? CblasTrans : CblasNoTrans;
}
} // namespace

cublasStatus_t cublasSgemm(cublasHandle_t handle, cublasOperation_t transa,
                           cublasOperation_t transb, int m, int n, int k, const float* alpha,
                           const float* A, int lda, const float* B, int ldb, const float* beta,
                           float* C, int ldc)
{
    const int rowsA = transa == CUBLAS_OP_N ? m : k, rowsB = transb == CUBLAS_OP_N ? k : n;
    if (m < 0 || n < 0 || k < 0 || lda < std::max(1, rowsA) || ldb < std::max(1, rowsB) ||
        ldc < std::max(1, m))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
    const float a = *alpha, b = *beta; // host pointer mode: read at the call
    const cudaError_t e = il_emu::enqueue(handle->stream, [=] {
        cblas_sgemm(CblasColMajor, blasOp(transa), blasOp(transb), m, n, k, a, A, lda, B, ldb, b, C,
                    ldc);
    });
    return e == cudaSuccess ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}

cublasStatus_t cublasSgemv(cublasHandle_t handle, cublasOperation_t trans, int m, int n,
                           const float* alpha, const float* A, int lda, const float* x, int incx,
                           const float* beta, float* y, int incy)
{
    if (m < 0 || n < 0 || lda < std::max(1, m) || incx == 0 || incy == 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
    const float a = *alpha, b = *beta;
    const cudaError_t e = il_emu::enqueue(handle->stream, [=] {
        cblas_sgemv(CblasColMajor, blasOp(trans), m, n, a, A, lda, x, incx, b, y, incy);
    });
    return e == cudaSuccess ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}

// ---- cuBLASLt --------------------------------------------------------------------------------
struct EmuLt {};
struct EmuLtDesc {
    cublasOperation_t transA = CUBLAS_OP_N, transB = CUBLAS_OP_N;
    cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    float* bias = nullptr;
};
struct EmuLtLayout {
    uint64_t rows, cols;
    int64_t ld;
};
struct EmuLtPreference {
    uint32_t align[4] = {256, 256, 256, 256}; // A, B, C, D
    uint64_t workspace = 0;
};

namespace {

uint32_t alignmentOfPointer(const void* p)
{
    const auto a = reinterpret_cast<uintptr_t>(p);
    uint32_t r = 256;
    while (r > 1 && a % r != 0)
        r >>= 1;
    return r;
}

// The product's m, n, k from the layouts, or false when they do not fit together.
bool productShape(const EmuLtDesc& op, const EmuLtLayout& a, const EmuLtLayout& b,
                  const EmuLtLayout& d, uint64_t& m, uint64_t& n, uint64_t& k)
{
    m = op.transA == CUBLAS_OP_N ? a.rows : a.cols;
    k = op.transA == CUBLAS_OP_N ? a.cols : a.rows;
    const uint64_t kb = op.transB == CUBLAS_OP_N ? b.rows : b.cols;
    n = op.transB == CUBLAS_OP_N ? b.cols : b.rows;
    return k == kb && d.rows == m && d.cols == n &&
           a.ld >= int64_t(std::max<uint64_t>(1, a.rows)) &&
           b.ld >= int64_t(std::max<uint64_t>(1, b.rows)) &&
           d.ld >= int64_t(std::max<uint64_t>(1, d.rows));
}

} // namespace

cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle)
{
    return made(handle, new EmuLt);
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle)
{
    return destroyed(handle);
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t,
                                        cudaDataType scale)
{
    if (scale != CUDA_R_32F) return CUBLAS_STATUS_NOT_SUPPORTED;
    return made(desc, new EmuLtDesc);
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc)
{
    return destroyed(desc);
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
                                              cublasLtMatmulDescAttributes_t attr,
                                              const void* value, size_t size)
{
    switch (attr) {
    case CUBLASLT_MATMUL_DESC_TRANSA:
    case CUBLASLT_MATMUL_DESC_TRANSB:
        if (size != sizeof(cublasOperation_t)) return CUBLAS_STATUS_INVALID_VALUE;
        std::memcpy(attr == CUBLASLT_MATMUL_DESC_TRANSA ? &desc->transA : &desc->transB, value,
                    size);
        return CUBLAS_STATUS_SUCCESS;
    case CUBLASLT_MATMUL_DESC_EPILOGUE:
        if (size != sizeof(cublasLtEpilogue_t)) return CUBLAS_STATUS_INVALID_VALUE;
        std::memcpy(&desc->epilogue, value, size);
        return CUBLAS_STATUS_SUCCESS;
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
        if (size != sizeof(float*)) return CUBLAS_STATUS_INVALID_VALUE;
        std::memcpy(&desc->bias, value, size);
        return CUBLAS_STATUS_SUCCESS;
    }
    return CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type,
                                          uint64_t rows, uint64_t cols, int64_t ld)
{
    if (type != CUDA_R_32F) return CUBLAS_STATUS_NOT_SUPPORTED;
    return made(layout, new EmuLtLayout{rows, cols, ld});
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout)
{
    return destroyed(layout);
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref)
{
    return made(pref, new EmuLtPreference);
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref)
{
    return destroyed(pref);
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr,
                                                    const void* value, size_t size)
{
    if (attr == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES) {
        if (size != sizeof(uint64_t)) return CUBLAS_STATUS_INVALID_VALUE;
        std::memcpy(&pref->workspace, value, size);
        return CUBLAS_STATUS_SUCCESS;
    }
    if (size != sizeof(uint32_t)) return CUBLAS_STATUS_INVALID_VALUE;
    const int slot = attr - CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES;
    if (slot < 0 || slot > 3) return CUBLAS_STATUS_INVALID_VALUE;
    std::memcpy(&pref->align[slot], value, size);
    return CUBLAS_STATUS_SUCCESS;
}

// IRONLEARN_EMU_LT_NO_ALGORITHM=1: the heuristic finds nothing (as for an unsupported epilogue),
// so the backend's fallback runs. Like cuBLASLt's on a GPU, it commonly offers nothing with an
// epilogue where m or n is 1 (a matrix-vector product): here never. Otherwise it offers up to
// three algorithms; IRONLEARN_EMU_LT_NOT_SUPPORTED=K makes cublasLtMatmul refuse the first K of
// them (NOT_SUPPORTED, as a GPU may at run time for an algorithm its heuristic offered).
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t, cublasLtMatmulDesc_t op,
                                              cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                              cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                              cublasLtMatmulPreference_t pref, int requested,
                                              cublasLtMatmulHeuristicResult_t* results,
                                              int* returned)
{
    *returned = 0;
    uint64_t m, n, k;
    if (requested < 1 || !productShape(*op, *a, *b, *d, m, n, k) || c->rows != d->rows ||
        c->cols != d->cols || c->ld != d->ld)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (op->epilogue != CUBLASLT_EPILOGUE_DEFAULT && !op->bias) return CUBLAS_STATUS_INVALID_VALUE;
    if (const char* e = std::getenv("IRONLEARN_EMU_LT_NO_ALGORITHM"); e && std::strcmp(e, "1") == 0)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    if (op->epilogue != CUBLASLT_EPILOGUE_DEFAULT && (m == 1 || n == 1))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    const int offered = std::min(requested, 3);
    for (int r = 0; r < offered; ++r) {
        results[r] = cublasLtMatmulHeuristicResult_t{};
        // The algorithm remembers the alignments it was chosen for (A, B, C, D, bias), its
        // epilogue and its rank.
        for (int i = 0; i < 4; ++i)
            results[r].algo.data[i] = pref->align[i];
        results[r].algo.data[4] = alignmentOfPointer(op->bias);
        results[r].algo.data[5] = uint64_t(op->epilogue);
        results[r].algo.data[6] = uint64_t(r);
        results[r].state = CUBLAS_STATUS_SUCCESS;
    }
    *returned = offered;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t, cublasLtMatmulDesc_t op, const void* alpha,
                              const void* A, cublasLtMatrixLayout_t aDesc, const void* B,
                              cublasLtMatrixLayout_t bDesc, const void* beta, const void* C,
                              cublasLtMatrixLayout_t cDesc, void* D, cublasLtMatrixLayout_t dDesc,
                              const cublasLtMatmulAlgo_t* algo, void*, size_t, cudaStream_t stream)
{
    uint64_t m, n, k;
    if (!algo || !productShape(*op, *aDesc, *bDesc, *dDesc, m, n, k) || C != D ||
        cDesc->ld != dDesc->ld)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (algo->data[5] != uint64_t(op->epilogue))
        fatal("cublasLtMatmul with an algorithm chosen for another epilogue");
    if (const char* e = std::getenv("IRONLEARN_EMU_LT_NOT_SUPPORTED");
        e && algo->data[6] < std::strtoull(e, nullptr, 10))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    const void* pointers[5] = {A, B, C, D, op->bias};
    for (int i = 0; i < 5; ++i)
        if (pointers[i] && alignmentOfPointer(pointers[i]) < algo->data[i])
            fatal("misaligned address: cublasLtMatmul got a pointer less aligned than the "
                  "heuristic was told (operand " +
                  std::to_string(i) + ")");
    const float a = *static_cast<const float*>(alpha), bt = *static_cast<const float*>(beta);
    const auto ta = op->transA, tb = op->transB;
    const auto epilogue = op->epilogue;
    float* bias = op->bias; // read now: the pointer attribute may change before a replay
    const auto* pa = static_cast<const float*>(A);
    const auto* pb = static_cast<const float*>(B);
    auto* pd = static_cast<float*>(D);
    const int64_t lda = aDesc->ld, ldb = bDesc->ld, ldd = dDesc->ld;
    const cudaError_t e = il_emu::enqueue(stream, [=] {
        if (k > 0)
            cblas_sgemm(CblasColMajor, blasOp(ta), blasOp(tb), int(m), int(n), int(k), a, pa,
                        int(lda), pb, int(ldb), bt, pd, int(ldd));
        if (epilogue == CUBLASLT_EPILOGUE_BIAS) {
            for (uint64_t c = 0; c < n; ++c)
                for (uint64_t r = 0; r < m; ++r)
                    pd[r + c * uint64_t(ldd)] += bias[r];
        } else if (epilogue == CUBLASLT_EPILOGUE_BGRADB) { // over op(B)'s k rows
            for (uint64_t c = 0; c < n; ++c) {
                double s = 0;
                for (uint64_t r = 0; r < k; ++r)
                    s += tb == CUBLAS_OP_N ? pb[r + c * uint64_t(ldb)] : pb[c + r * uint64_t(ldb)];
                bias[c] = float(s);
            }
        } else if (epilogue == CUBLASLT_EPILOGUE_BGRADA) { // over op(A)'s k columns
            for (uint64_t r = 0; r < m; ++r) {
                double s = 0;
                for (uint64_t c = 0; c < k; ++c)
                    s += ta == CUBLAS_OP_N ? pa[r + c * uint64_t(lda)] : pa[c + r * uint64_t(lda)];
                bias[r] = float(s);
            }
        }
    });
    return e == cudaSuccess ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}
