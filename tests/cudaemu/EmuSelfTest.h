// Small CUDA programs (EmuSelfTest.cu) run on the emulation by testCudaEmu, each a mistake a GPU
// would punish and the emulation must too. Plain C++: the test itself includes no CUDA header.
#pragma once

namespace emutest {

// A kernel declared __launch_bounds__(64) launched with `threads` threads per block: the launch's
// cudaGetLastError() (0: cudaSuccess).
int launchBounded(int threads);

// Two blocks of a kernel whose block 0 writes a __shared__ float (42) that every block then
// reads: what block 1 read (its shared memory is not block 0's).
float sharedValueSeenByTheSecondBlock();

// A kernel fills a buffer with 1 and a cudaMemcpyAsync brings it to the host: the host's value
// before cudaStreamSynchronize and after it.
struct Reads {
    float beforeSync = 0, afterSync = 0;
};
Reads copyBackWithAndWithoutSync();

// A buffer freed with cudaFreeAsync after a kernel that writes it was queued: the kernel still
// runs on the buffer (stream order), so the copy queued before the free reads 1.
float writtenBeforeAsyncFree();

} // namespace emutest
