// The CUDA side of testCudaEmu (EmuSelfTest.h): rewritten by cu2cpp.cmake and compiled against
// the emulation, like kernels/*.cu.
#include "EmuSelfTest.h"

#include <cuda_runtime.h>

namespace {

constexpr int kBounded = 64;

__global__ void __launch_bounds__(kBounded) boundedKernel(float* out)
{
    out[threadIdx.x] = 1.f;
}

__global__ void sharedLeftoverKernel(float* out)
{
    __shared__ float value;
    if (blockIdx.x == 0 && threadIdx.x == 0) value = 42.f;
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = value;
}

__global__ void onesKernel(float* out, int n)
{
    const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) out[i] = 1.f;
}

} // namespace

namespace emutest {

int launchBounded(int threads)
{
    float* d = nullptr;
    cudaMalloc(reinterpret_cast<void**>(&d), 1024 * sizeof(float));
    cudaGetLastError();
    boundedKernel<<<1, threads>>>(d);
    const int error = cudaGetLastError();
    cudaDeviceSynchronize();
    cudaFree(d);
    return error;
}

float sharedValueSeenByTheSecondBlock()
{
    float* d = nullptr;
    cudaMalloc(reinterpret_cast<void**>(&d), 2 * sizeof(float));
    sharedLeftoverKernel<<<2, 32>>>(d);
    float host[2] = {0, 0};
    cudaMemcpy(host, d, sizeof(host), cudaMemcpyDeviceToHost);
    cudaFree(d);
    return host[1];
}

Reads copyBackWithAndWithoutSync()
{
    constexpr int n = 32;
    cudaStream_t stream = nullptr;
    cudaStreamCreate(&stream);
    float* d = nullptr;
    cudaMalloc(reinterpret_cast<void**>(&d), n * sizeof(float));
    float host[n] = {};
    onesKernel<<<1, n, 0, stream>>>(d, n);
    cudaMemcpyAsync(host, d, sizeof(host), cudaMemcpyDeviceToHost, stream);
    Reads r;
    r.beforeSync = host[5]; // the mistake: the copy has not run yet
    cudaStreamSynchronize(stream);
    r.afterSync = host[5];
    cudaFree(d);
    cudaStreamDestroy(stream);
    return r;
}

float writtenBeforeAsyncFree()
{
    constexpr int n = 32;
    cudaStream_t stream = nullptr;
    cudaStreamCreate(&stream);
    float* d = nullptr;
    cudaMallocAsync(reinterpret_cast<void**>(&d), n * sizeof(float), stream);
    float host[n] = {};
    onesKernel<<<1, n, 0, stream>>>(d, n);
    cudaMemcpyAsync(host, d, sizeof(host), cudaMemcpyDeviceToHost, stream);
    cudaFreeAsync(d, stream);
    cudaStreamSynchronize(stream);
    cudaStreamDestroy(stream);
    return host[7];
}

} // namespace emutest
