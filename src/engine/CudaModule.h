// The C entry points of the CUDA backend module (libironlearn-cuda.so, built from kernels/).
//
// The engine never links against CUDA: BackendRegistry.cpp looks for the module at run time,
// checks for an NVIDIA driver first (so a machine without one gets a clear reason instead of a
// loader error), then dlopen()s the module and calls these three functions. The module links
// the CUDA runtime statically and cuBLAS dynamically.
#pragma once

#include "Backend.h"

#include <cstddef>

namespace il {

enum CudaProbeStatus : int {
    CudaAvailable = 0,
    CudaNoDriver = 1,     // no libcuda / driver not loaded
    CudaDriverTooOld = 2, // the driver supports an older CUDA than this build needs
    CudaNoDevice = 3,     // driver present, no usable device
    CudaOtherError = 4,   // anything else; message says what
};

struct CudaProbe {
    int status = CudaOtherError;
    int deviceCount = 0;
    int driverVersion = 0;  // as cudaDriverGetVersion: 1000 * major + 10 * minor
    int runtimeVersion = 0; // the CUDA runtime this module was built with
    char message[512] = {}; // one line: why unavailable, or the first device when available
};

struct CudaOptions {
    int device = 0;
    int tf32 = 0; // 1: let cuBLAS use TF32 tensor cores for f32 products (faster, ~10-bit mantissa)
};

} // namespace il

extern "C" {
// Must return il::kBackendAbiVersion of the Backend.h the module was built with.
int ironlearn_cuda_abi(void);
void ironlearn_cuda_probe(il::CudaProbe* out);
// Returns a new backend (delete it through the Backend pointer) or null with a one-line reason
// written to error.
il::Backend* ironlearn_cuda_create(const il::CudaOptions* options, char* error, size_t errorSize);
}
