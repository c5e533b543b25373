// The CUDA backend's memory, data movement and recorded sequences (CUDA graphs), which belong
// together: a recording bakes in the pointers it was made with, so what is freed, and when,
// depends on the recordings kept. Allocations come from the device's stream-ordered pool (or
// cudaMalloc where there is none); while a recording is open they are made on the side stream,
// outside the capture, and frees are deferred; blocks a kept recording may read are retired
// until the recordings are discarded.
#include "CudaCommon.cuh"

#include <cstdio>
#include <string>

namespace il::cuda {

namespace {

std::string formatMiB(size_t bytes)
{
    char text[32];
    const double mib = static_cast<double>(bytes) / (1u << 20);
    std::snprintf(text, sizeof(text), mib < 10 ? "%.1f MiB" : "%.0f MiB", mib);
    return text;
}

// While it lives, the calling thread may make calls that are refused during a stream capture
// (a synchronisation of another stream, say); they are not captured, they simply run.
class RelaxedCaptureMode {
public:
    explicit RelaxedCaptureMode(bool active) : m_active(active)
    {
        if (m_active) check(cudaThreadExchangeStreamCaptureMode(&m_previous), "capture mode");
    }
    ~RelaxedCaptureMode()
    {
        if (m_active && cudaThreadExchangeStreamCaptureMode(&m_previous) != cudaSuccess)
            cudaGetLastError();
    }
    RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
    RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

private:
    bool m_active;
    cudaStreamCaptureMode m_previous = cudaStreamCaptureModeRelaxed;
};

} // namespace

// ---- memory ----------------------------------------------------------------------------------

// Stream-ordered where the pool is used; otherwise cudaMalloc and cudaFree, which synchronise
// the device themselves (no training step allocates, so only setup pays for it).
cudaError_t CudaBackend::deviceAllocate(void** p, size_t bytes, cudaStream_t stream) noexcept
{
    return m_pooled ? cudaMallocAsync(p, bytes, stream) : cudaMalloc(p, bytes);
}

cudaError_t CudaBackend::deviceFree(void* p, cudaStream_t stream) noexcept
{
    return m_pooled ? cudaFreeAsync(p, stream) : cudaFree(p);
}

// While a recording is open, m_stream is being captured: a cudaMallocAsync there would become
// a node of the graph. The allocation is then made at once on the side stream instead, outside
// the capture, and waited for (beginRecording synchronised m_stream, so nothing still running
// there can touch the block).
void* CudaBackend::allocateBytes(size_t bytes)
{
    if (bytes == 0) return nullptr;
    bind();
    if (bytes > SIZE_MAX - 255)
        throw BackendError("CUDA out of memory: could not allocate " + formatMiB(bytes));
    const size_t rounded = (bytes + 255) / 256 * 256;
    const bool recording = m_recording.load();
    const RelaxedCaptureMode relaxed(recording);
    cudaStream_t stream = recording ? m_sideStream : m_stream;
    void* p = nullptr;
    cudaError_t e = deviceAllocate(&p, rounded, stream);
    if (e == cudaErrorMemoryAllocation && m_pooled) {
        // Freed blocks stay in the pool; when they are too fragmented to serve this request,
        // give them back to the device and try once more.
        cudaGetLastError();
        check(cudaStreamSynchronize(stream), "allocate");
        cudaMemPoolTrimTo(m_pool, 0);
        e = deviceAllocate(&p, rounded, stream);
    }
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        size_t freeMemory = 0, totalMemory = 0;
        if (cudaMemGetInfo(&freeMemory, &totalMemory) != cudaSuccess) {
            cudaGetLastError();
            totalMemory = m_totalMemory;
        }
        throw BackendError("CUDA out of memory: could not allocate " + formatMiB(bytes) + " (" +
                           formatMiB(freeMemory) + " free of " + formatMiB(totalMemory) + " on " +
                           m_name + ")");
    }
    check(e, "allocate");
    if (recording) {
        const cudaError_t done = cudaStreamSynchronize(m_sideStream);
        if (done != cudaSuccess) {
            deviceFree(p, m_sideStream);
            throwCuda(done, "allocate");
        }
    }
    try {
        std::lock_guard lock(m_recordMutex);
        m_allocatedAt[p] = m_capturesEnded;
    } catch (...) {
        deviceFree(p, stream);
        throw;
    }
    return p;
}

// A block a kept recording may read is never handed back to the pool under it: while a capture
// is open the free is deferred (a free issued then would be captured into the graph), and while
// recordings exist a block that was allocated before one of them ended is retired until they
// are discarded. Blocks allocated after the last capture ended (a validation pass between
// replays, say) cannot be in any recording and are freed at once.
void CudaBackend::freeBytes(void* p) noexcept
{
    if (!p) return;
    {
        std::lock_guard lock(m_recordMutex);
        const auto it = m_allocatedAt.find(p);
        // Unknown blocks (none are expected) are treated as the oldest.
        const uint64_t allocatedAt = it == m_allocatedAt.end() ? 0 : it->second;
        if (it != m_allocatedAt.end()) m_allocatedAt.erase(it);
        const bool inRecording = !m_graphs.empty() && allocatedAt < m_capturesEnded;
        if (m_recording.load() || inRecording) {
            try {
                (m_recording.load() ? m_deferredFrees : m_retired).push_back(p);
            } catch (...) { // out of host memory: leak the block rather than free it under a graph
            }
            return;
        }
    }
    if (!bindNoThrow()) return;
    if (deviceFree(p, m_stream) != cudaSuccess) cudaGetLastError();
}

void CudaBackend::retireBytes(void* p) noexcept
{
    freeBytes(p);
}

// Takes the list (under the recording lock) and frees every block in it.
void CudaBackend::freeList(std::vector<void*>& list) noexcept
{
    std::vector<void*> taken;
    {
        std::lock_guard lock(m_recordMutex);
        taken.swap(list);
    }
    for (void* p : taken)
        if (deviceFree(p, m_stream) != cudaSuccess) cudaGetLastError();
}

void CudaBackend::freeRetired() noexcept
{
    freeList(m_retired);
}

void CudaBackend::flushDeferredFrees() noexcept
{
    freeList(m_deferredFrees);
}

// The source is pageable host memory the caller may reuse as soon as this returns, so the copy
// is waited for. While recording, the upload is not recorded (a graph would keep the host
// pointer): it runs at once on the side stream, like the allocations then.
void CudaBackend::upload(void* deviceDst, const void* hostSrc, size_t bytes)
{
    if (bytes == 0) return;
    bind();
    const bool recording = m_recording.load();
    const RelaxedCaptureMode relaxed(recording);
    cudaStream_t stream = recording ? m_sideStream : m_stream;
    check(cudaMemcpyAsync(deviceDst, hostSrc, bytes, cudaMemcpyHostToDevice, stream), "upload");
    check(cudaStreamSynchronize(stream), "upload");
}

void CudaBackend::download(void* hostDst, const void* deviceSrc, size_t bytes)
{
    if (bytes == 0) return;
    bind();
    requireNotRecording("download");
    check(cudaMemcpyAsync(hostDst, deviceSrc, bytes, cudaMemcpyDeviceToHost, m_stream), "download");
    check(cudaStreamSynchronize(m_stream), "download");
}

void CudaBackend::copy(void* deviceDst, const void* deviceSrc, size_t bytes)
{
    if (bytes == 0 || deviceDst == deviceSrc) return;
    const auto d = reinterpret_cast<uintptr_t>(deviceDst);
    const auto s = reinterpret_cast<uintptr_t>(deviceSrc);
    if (d < s + bytes && s < d + bytes) // cudaMemcpy is undefined for overlapping ranges
        throw BackendError("copy: the source and destination ranges overlap");
    bind();
    check(cudaMemcpyAsync(deviceDst, deviceSrc, bytes, cudaMemcpyDeviceToDevice, m_stream), "copy");
}

void CudaBackend::synchronize()
{
    bind();
    requireNotRecording("synchronize");
    check(cudaStreamSynchronize(m_stream), "synchronize");
}

void CudaBackend::ensureOnes(int64_t count)
{
    if (count <= m_onesCount) return;
    if (m_recording.load())
        throw BackendError("sumRows over " + std::to_string(count) +
                           " rows needs a larger scratch vector, which cannot be allocated while "
                           "recording a CUDA graph (run the step once before recording it)");
    const int64_t grown = (std::max(count, 2 * m_onesCount) + 1023) / 1024 * 1024;
    auto* ones = static_cast<float*>(allocateBytes(static_cast<size_t>(grown) * sizeof(float)));
    retireBytes(m_ones); // a recorded graph may still read the old vector
    m_ones = ones;
    m_onesCount = grown;
    fill(Tensor{m_ones, {1, grown}}, 1.f);
}

// ---- recording (CUDA graphs) -----------------------------------------------------------------

bool CudaBackend::beginRecording()
{
    if (!m_graphsEnabled) return false; // IRONLEARN_CUDA_GRAPHS=0
    bind();
    std::lock_guard lock(m_recordMutex);
    if (m_recording.load()) throw BackendError("beginRecording: a recording is already open");
    // Nothing may still run on m_stream while allocations and uploads go to the side stream.
    check(cudaStreamSynchronize(m_stream), "beginRecording");
    // Relaxed mode: a capture begun in another mode can only be ended by the thread that began
    // it, and release() or discardRecordings() may come from another thread (a GUI closing a
    // worker's backend, a recovery after an error). The safety net that thread-local mode gave
    // is kept by the backend itself: download() and synchronize() refuse to run while
    // recording, allocations and uploads go to the side stream, frees are deferred.
    check(cudaStreamBeginCapture(m_stream, cudaStreamCaptureModeRelaxed), "beginRecording");
    m_recording = true;
    return true;
}

int CudaBackend::endRecording()
{
    bind();
    cudaGraph_t graph = nullptr;
    cudaError_t e = cudaSuccess;
    {
        std::lock_guard lock(m_recordMutex);
        if (!m_recording.load()) throw BackendError("endRecording: no recording is open");
        e = cudaStreamEndCapture(m_stream, &graph);
        m_recording = false;
        ++m_capturesEnded;
        // Blocks freed during the capture may be read by the graph just captured: they are
        // kept until the recordings are discarded, never handed back to the pool under it.
        try {
            m_retired.insert(m_retired.end(), m_deferredFrees.begin(), m_deferredFrees.end());
            m_deferredFrees.clear();
        } catch (...) { // out of host memory: the blocks stay listed as deferred (freed later)
        }
    }
    if (e != cudaSuccess) {
        if (graph) cudaGraphDestroy(graph);
        throwCuda(e, "endRecording");
    }
    cudaGraphExec_t exec = nullptr;
    e = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    check(e, "endRecording (instantiate)");
    try {
        m_graphs.push_back(exec);
    } catch (...) {
        cudaGraphExecDestroy(exec);
        throw;
    }
    return static_cast<int>(m_graphs.size() - 1);
}

void CudaBackend::replay(int handle)
{
    if (handle < 0 || handle >= static_cast<int>(m_graphs.size()) || !m_graphs[handle])
        throw BackendError("replay: there is no recording " + std::to_string(handle));
    bind();
    check(cudaGraphLaunch(m_graphs[handle], m_stream), "replay");
}

void CudaBackend::discardRecordings()
{
    bindNoThrow();
    {
        std::lock_guard lock(m_recordMutex);
        if (m_recording.load()) {
            // A capture left open by an op that threw; its partial graph is of no use.
            cudaGraph_t graph = nullptr;
            cudaStreamEndCapture(m_stream, &graph);
            if (graph) cudaGraphDestroy(graph);
            m_recording = false;
            cudaGetLastError();
        }
    }
    flushDeferredFrees();
    // An instance still running on the stream is freed by CUDA once it completes.
    for (cudaGraphExec_t exec : m_graphs)
        if (exec) cudaGraphExecDestroy(exec);
    m_graphs.clear();
    freeRetired(); // stream-ordered: after any replay still running on the stream
    cudaGetLastError();
}

} // namespace il::cuda
