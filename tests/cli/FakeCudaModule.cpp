// A stand-in for libironlearn-cuda.so with the same three entry points, so the CLI's handling of
// every probe answer can be tested on machines without a GPU. What it answers comes from the
// environment: FAKE_CUDA_ABI, FAKE_CUDA_STATUS (a CudaProbeStatus), FAKE_CUDA_MESSAGE.
#include "CudaModule.h"

#include <cstdio>
#include <cstdlib>

namespace {
const char* env(const char* name, const char* fallback)
{
    const char* v = std::getenv(name);
    return v && *v ? v : fallback;
}
} // namespace

extern "C" {

__attribute__((visibility("default"))) int ironlearn_cuda_abi(void)
{
    const int abi = std::atoi(env("FAKE_CUDA_ABI", "0"));
    return abi != 0 ? abi : il::kBackendAbiVersion;
}

__attribute__((visibility("default"))) void ironlearn_cuda_probe(il::CudaProbe* out)
{
    out->status = std::atoi(env("FAKE_CUDA_STATUS", "0"));
    out->driverVersion = 12040;
    out->runtimeVersion = 13000;
    out->deviceCount = out->status == il::CudaAvailable ? 1 : 0;
    std::snprintf(out->message, sizeof(out->message), "%s",
                  env("FAKE_CUDA_MESSAGE", "Fake GPU, 1.0 GiB, compute 9.0"));
}

__attribute__((visibility("default"))) il::Backend*
ironlearn_cuda_create(const il::CudaOptions*, char* error, size_t errorSize)
{
    std::snprintf(error, errorSize, "the fake device cannot train");
    return nullptr;
}
}
