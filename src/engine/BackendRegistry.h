// Which backends this machine can train on, and creating one by name.
//
// "cpu" is always there. "cuda" comes from a separately built module (kernels/) that is loaded
// on first use; a machine with no NVIDIA driver, an old driver, no device or no module still
// runs everything on the CPU, and cudaStatus() says why CUDA is not offered.
#pragma once

#include "Backend.h"

#include <memory>
#include <string>
#include <vector>

namespace il {

struct BackendStatus {
    std::string name; // "cpu" or "cuda"
    bool available = false;
    std::string reason; // why not, when unavailable (one line)
    std::string device; // what it would run on, when available ("NVIDIA H200, 139 GiB, sm_90")
};

struct BackendOptions {
    int threads = 0;   // CPU: 0 = one per core
    int device = 0;    // CUDA device index
    bool tf32 = false; // CUDA: TF32 tensor-core products (off by default)
};

BackendStatus cpuStatus();
// Probes once per process (loading the module if there is one) and remembers the answer.
BackendStatus cudaStatus();
std::vector<BackendStatus> backendStatuses();

// Throws BackendError with the reason when the backend is unavailable, UsageError-like
// EngineError for an unknown name.
std::unique_ptr<Backend> createBackend(const std::string& name, const BackendOptions& options = {});

// Where the module is looked for, in order (for messages and `devices --verbose`).
std::vector<std::string> cudaModuleSearchPaths();
// The first of those paths that is a file: the module that is (or would be) loaded; empty when
// there is none.
std::string cudaModuleFile();

} // namespace il
