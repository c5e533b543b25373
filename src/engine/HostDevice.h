// IL_HOST_DEVICE marks a function that the CPU backend and the CUDA kernels (kernels/) both
// call, so one formula serves both: nvcc compiles it for host and device, the host compiler
// sees a plain inline function. Inside, `#ifdef __CUDA_ARCH__` picks device-only code.
#pragma once

#ifdef __CUDACC__
#define IL_HOST_DEVICE __host__ __device__
#else
#define IL_HOST_DEVICE
#endif
