// The module's face to the engine: the probe that says whether (and why not) CUDA can be used
// here, and the three C entry points of CudaModule.h. No C++ exception leaves this file.
#include "CudaCommon.cuh"

#include <cstdio>
#include <exception>

namespace il::cuda {

namespace {

std::string versionText(int cudaVersion) // 12040 -> "12.4"
{
    return std::to_string(cudaVersion / 1000) + "." + std::to_string(cudaVersion % 1000 / 10);
}

void copyMessage(char* dst, size_t size, const std::string& text) noexcept
{
    if (!dst || size == 0) return;
    std::snprintf(dst, size, "%s", text.c_str());
}

} // namespace

void probeInto(CudaProbe& p)
{
    p = CudaProbe{};
    cudaRuntimeGetVersion(&p.runtimeVersion);
    const std::string needed = std::to_string(p.runtimeVersion / 1000) + ".0";
    int driver = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0) {
        cudaGetLastError();
        p.status = CudaNoDriver;
        copyMessage(p.message, sizeof(p.message), "no NVIDIA driver is loaded");
        return;
    }
    p.driverVersion = driver;
    const std::string tooOld = "the NVIDIA driver supports CUDA " + versionText(driver) +
                               "; this build needs " + needed + " or newer";
    // Minor-version compatibility: a driver of the same major version runs this build.
    if (driver / 1000 < p.runtimeVersion / 1000) {
        p.status = CudaDriverTooOld;
        copyMessage(p.message, sizeof(p.message), tooOld);
        return;
    }
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    cudaGetLastError();
    if (e == cudaErrorInsufficientDriver) {
        p.status = CudaDriverTooOld;
        copyMessage(p.message, sizeof(p.message), tooOld);
        return;
    }
    if (e == cudaErrorNoDevice || (e == cudaSuccess && count <= 0)) {
        p.status = CudaNoDevice;
        copyMessage(p.message, sizeof(p.message), "no CUDA device found");
        return;
    }
    if (e != cudaSuccess) {
        p.status = CudaOtherError;
        copyMessage(p.message, sizeof(p.message),
                    std::string("CUDA is unavailable: ") + cudaGetErrorString(e) + " (" +
                        cudaGetErrorName(e) + ")");
        return;
    }
    p.deviceCount = count;
    cudaDeviceProp prop{};
    const cudaError_t pe = cudaGetDeviceProperties(&prop, 0);
    if (pe != cudaSuccess) {
        cudaGetLastError();
        p.status = CudaOtherError;
        copyMessage(p.message, sizeof(p.message),
                    std::string("CUDA device 0 cannot be queried: ") + cudaGetErrorString(pe) +
                        " (" + cudaGetErrorName(pe) + ")");
        return;
    }
    if (!computeSupported(prop.major, prop.minor)) {
        p.status = CudaNoDevice;
        copyMessage(p.message, sizeof(p.message), tooOldDevice(prop.name, prop.major, prop.minor));
        return;
    }
    p.status = CudaAvailable;
    copyMessage(p.message, sizeof(p.message),
                std::string(prop.name) + ", " + formatGiB(prop.totalGlobalMem) + ", " +
                    computeText(prop.major, prop.minor));
}

} // namespace il::cuda

// ---- module entry points (CudaModule.h) --------------------------------------------------------
// No C++ exception may leave these functions.

#define IL_CUDA_EXPORT __attribute__((visibility("default")))

extern "C" {

IL_CUDA_EXPORT int ironlearn_cuda_abi(void)
{
    return il::kBackendAbiVersion;
}

IL_CUDA_EXPORT void ironlearn_cuda_probe(il::CudaProbe* out)
{
    if (!out) return;
    try {
        il::cuda::probeInto(*out);
    } catch (const std::exception& e) {
        out->status = il::CudaOtherError;
        std::snprintf(out->message, sizeof(out->message), "CUDA probe failed: %s", e.what());
    } catch (...) {
        out->status = il::CudaOtherError;
        std::snprintf(out->message, sizeof(out->message), "CUDA probe failed");
    }
}

IL_CUDA_EXPORT il::Backend* ironlearn_cuda_create(const il::CudaOptions* options, char* error,
                                                  size_t errorSize)
{
    if (error && errorSize > 0) error[0] = '\0';
    try {
        const il::CudaOptions o = options ? *options : il::CudaOptions{};
        return new il::cuda::CudaBackend(o);
    } catch (const std::exception& e) {
        if (error && errorSize > 0) std::snprintf(error, errorSize, "%s", e.what());
    } catch (...) {
        if (error && errorSize > 0) std::snprintf(error, errorSize, "%s", "unknown error");
    }
    return nullptr;
}

} // extern "C"
