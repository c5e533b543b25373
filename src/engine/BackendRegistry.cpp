#include "BackendRegistry.h"
#include "CudaModule.h"
#include "Errors.h"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>

namespace il {

namespace {

namespace fs = std::filesystem;

constexpr const char* kModuleFile = "libironlearn-cuda.so";

using AbiFn = int (*)();
using ProbeFn = void (*)(CudaProbe*);
using CreateFn = Backend* (*)(const CudaOptions*, char*, size_t);

// The module, once loaded, stays loaded for the life of the process: backends it created
// point into its code.
struct CudaModule {
    BackendStatus status{"cuda", false, {}, {}};
    CreateFn create = nullptr;
};

std::string executableDir()
{
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    return ec ? std::string() : exe.parent_path().string();
}

// Checks the driver before loading the module, so that a machine without one gets "no NVIDIA
// driver" rather than whatever the CUDA runtime makes of it.
bool driverPresent(std::string& reason)
{
    void* h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!h) {
        reason = "no NVIDIA driver is installed (libcuda.so.1 was not found)";
        return false;
    }
    return true; // kept open: the module's runtime loads it again anyway
}

// Why an existing path cannot be the module: "which does not exist", "which is a directory".
std::string notAModuleFile(const char* path)
{
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    switch (st.type()) {
    case fs::file_type::not_found:
        return "which does not exist";
    case fs::file_type::directory:
        return std::string("which is a directory; name the module file in it (") + kModuleFile +
               ")";
    case fs::file_type::regular:
        return "which could not be read";
    case fs::file_type::unknown:
    case fs::file_type::none:
        return "which cannot be read (" + (ec ? ec.message() : std::string("unknown type")) + ")";
    default:
        return "which is not a regular file (a pipe, socket or device)";
    }
}

// The address of a function the module exports, or null when the name is missing or is not a
// function (a library whose "ironlearn_cuda_probe" is a variable must not be called).
void* function(void* handle, const char* name)
{
    void* address = dlsym(handle, name);
    if (!address) return nullptr;
    Dl_info info{};
    void* entry = nullptr; // the symbol's ElfW(Sym)
    if (!dladdr1(address, &info, &entry, RTLD_DL_SYMENT) || !entry) return nullptr;
    const unsigned type = ELF64_ST_TYPE(static_cast<const ElfW(Sym)*>(entry)->st_info);
    return type == STT_FUNC || type == STT_GNU_IFUNC ? address : nullptr;
}

CudaModule loadModule()
{
    CudaModule m;
    if (const char* off = std::getenv("IRONLEARN_DISABLE_CUDA"); off && *off && *off != '0') {
        m.status.reason = "disabled by the environment (IRONLEARN_DISABLE_CUDA is set)";
        return m;
    }
    const std::string path = cudaModuleFile();
    if (path.empty()) {
        if (const char* env = std::getenv("IRONLEARN_CUDA_MODULE"); env && *env) {
            m.status.reason = std::string("IRONLEARN_CUDA_MODULE names ") + env + ", " +
                              notAModuleFile(env);
            return m;
        }
#ifdef IRONLEARN_CUDA_MODULE_BUILD_PATH
        m.status.reason = std::string("the CUDA module ") + kModuleFile +
                          " was not found (install the ironlearn-cuda package, or set "
                          "IRONLEARN_CUDA_MODULE to its path)";
#else
        m.status.reason = "this build has no CUDA backend (it was built without the CUDA Toolkit)";
#endif
        return m;
    }
    if (!driverPresent(m.status.reason)) return m;

    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* err = dlerror();
        std::string why = err ? err : "unknown error";
        if (why.find("libcublas") != std::string::npos)
            why += " (install the CUDA 13 cuBLAS runtime, or add its directory to "
                   "LD_LIBRARY_PATH)";
        m.status.reason = "the CUDA module could not be loaded: " + why;
        return m;
    }
    auto abi = reinterpret_cast<AbiFn>(function(handle, "ironlearn_cuda_abi"));
    auto probe = reinterpret_cast<ProbeFn>(function(handle, "ironlearn_cuda_probe"));
    auto create = reinterpret_cast<CreateFn>(function(handle, "ironlearn_cuda_create"));
    if (!abi || !probe || !create) {
        m.status.reason = path + " is not an Iron Learn CUDA module (entry points missing)";
        return m;
    }
    if (abi() != kBackendAbiVersion) {
        m.status.reason = path + " was built for another version of Iron Learn (backend ABI " +
                          std::to_string(abi()) + ", this program has " +
                          std::to_string(kBackendAbiVersion) + ")";
        return m;
    }
    CudaProbe pr;
    probe(&pr);
    pr.message[sizeof(pr.message) - 1] = '\0';
    if (pr.status != CudaAvailable) {
        m.status.reason = pr.message; // the module words every case (CudaModule.cu)
        return m;
    }
    m.status.available = true;
    m.status.device = pr.message;
    m.create = create;
    return m;
}

const CudaModule& cudaModule()
{
    static std::once_flag once;
    static CudaModule module;
    std::call_once(once, [] { module = loadModule(); });
    return module;
}

} // namespace

std::vector<std::string> cudaModuleSearchPaths()
{
    std::vector<std::string> paths;
    if (const char* env = std::getenv("IRONLEARN_CUDA_MODULE"); env && *env) {
        paths.emplace_back(env); // an explicit choice replaces the search
        return paths;
    }
    const std::string dir = executableDir();
    if (!dir.empty()) {
        paths.push_back(dir + "/" + kModuleFile);
        const fs::path prefix = fs::path(dir).parent_path();
        for (const char* sub : {IRONLEARN_INSTALL_MODULEDIR, "lib", "lib/ironlearn"}) {
            const std::string path = (prefix / sub / kModuleFile).lexically_normal().string();
            if (std::find(paths.begin(), paths.end(), path) == paths.end())
                paths.push_back(path); // installed: <prefix>/lib/<multiarch>/ironlearn first
        }
    }
#ifdef IRONLEARN_CUDA_MODULE_BUILD_PATH
    paths.emplace_back(IRONLEARN_CUDA_MODULE_BUILD_PATH); // the build tree
#endif
    return paths;
}

std::string cudaModuleFile()
{
    for (const std::string& candidate : cudaModuleSearchPaths()) {
        std::error_code ec;
        if (fs::is_regular_file(candidate, ec)) return candidate;
    }
    return {};
}

BackendStatus cpuStatus()
{
    BackendStatus s{"cpu", true, {}, {}};
    s.device = createCpuBackend(0)->info().name;
    return s;
}

BackendStatus cudaStatus()
{
    return cudaModule().status;
}

std::vector<BackendStatus> backendStatuses()
{
    return {cpuStatus(), cudaStatus()};
}

std::unique_ptr<Backend> createBackend(const std::string& name, const BackendOptions& options)
{
    if (name.empty() || name == "cpu") return createCpuBackend(options.threads);
    if (name != "cuda") throw EngineError("unknown backend \"" + name + "\" (cpu or cuda)");
    const CudaModule& m = cudaModule();
    if (!m.status.available) throw BackendError("CUDA is unavailable: " + m.status.reason);
    CudaOptions o;
    o.device = options.device;
    o.tf32 = options.tf32 ? 1 : 0;
    char error[512] = {};
    Backend* b = m.create(&o, error, sizeof(error));
    if (!b) {
        error[sizeof(error) - 1] = '\0';
        throw BackendError(std::string("could not start CUDA: ") +
                           (error[0] ? error : "unknown error"));
    }
    return std::unique_ptr<Backend>(b);
}

} // namespace il
