// The Backend contract: where memory lives and how every op runs.
//
// Every numeric operation of training goes through this interface, so a backend that keeps
// memory on a GPU (kernels/) can run a whole training step with no host copy: the
// data, weights, gradients and optimizer state are all backend memory, scalars such as the
// loss are written to backend memory too, and the trainer reads a handful of floats back only
// every K steps (Backend::download of the "scalars" block).
//
// The ops are listed once, in BackendOps.def (their contracts are written there); each has a
// public entry point here that checks its operands' shapes (OpShapes.h) and then calls the
// backend's protected <op>Impl. Ops check shapes and throw ShapeError; backend failures throw
// BackendError.
#pragma once

#include "ActivationMath.h"
#include "Errors.h"
#include "HashGridMath.h"
#include "HostDevice.h"
#include "LossKind.h"
#include "OpShapes.h"
#include "OptimizerMath.h"
#include "Tensor.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace il {

struct DeviceInfo {
    std::string backend; // "cpu" or "cuda"
    std::string name;    // e.g. "AMD EPYC (2 threads)" or "NVIDIA H200"
    std::string details; // BLAS library, threads, memory
    int threads = 1;
};

// The slots of the small "guard" block that the Trainer keeps in backend memory.
// guardAndClip() writes them; optimizers read slot Scale and skip the update when Bad is set.
enum GuardSlot : int {
    GuardScale = 0,     // factor applied to every gradient (clipping), 0 once a step went bad
    GuardBad = 1,       // 1 once a non-finite loss or gradient was seen (sticky until cleared)
    GuardBadStep = 2,   // the step at which it first happened: its low 24 bits, and
    GuardBadTensor = 3, // index of the first parameter tensor with a non-finite gradient, -1: loss
    GuardBadStepHigh = 4, // the rest of the step (step / 2^24): both halves are exact in a float
    GuardSlots = 5
};

// The step in the guard block, split so that a float holds each half exactly (a float alone is
// exact only to 2^24 steps, about 70 minutes of small CUDA steps).
IL_HOST_DEVICE inline void storeGuardStep(float* guard, int64_t step)
{
    guard[GuardBadStep] = static_cast<float>(step & 0xFFFFFF);
    guard[GuardBadStepHigh] = static_cast<float>(step >> 24);
}
inline int64_t guardStep(const float* guard)
{
    return (static_cast<int64_t>(guard[GuardBadStepHigh]) << 24) +
           static_cast<int64_t>(guard[GuardBadStep]);
}

namespace backendabi {
// The op list's own text (names and parameter lists), for the ABI version below.
#define IL_OP(name, params, args) #name #params ";"
#define IL_COMPOSED_OP(name, params, args) "composed " #name #params ";"
inline constexpr char kBackendOpList[] =
#include "BackendOps.def"
    ;

constexpr uint32_t fnv1a(const char* s)
{
    uint32_t h = 2166136261u;
    for (; *s; ++s)
        h = (h ^ static_cast<unsigned char>(*s)) * 16777619u;
    return h;
}
} // namespace backendabi

// A separately built backend module (the CUDA one in kernels/) is refused unless it was built
// against the same interface: the same op list (hashed from its text, so any change to an op's
// name or parameters changes it), the same lists of activations (ActivationMath.h) and
// optimizer rules (OptimizerMath.h), and the same revision of the rest (memory, recording, the
// guard block): bump kBackendRevision when those change.
inline constexpr int kBackendRevision = 10;
inline constexpr int kBackendAbiVersion =
    static_cast<int>((backendabi::fnv1a(backendabi::kBackendOpList) ^
                      static_cast<uint32_t>(kBackendRevision * 1000000 +
                                            kOptimizerRuleCount * 1000 + kActivationCount)) &
                     0x7FFFFFFFu);

class Backend {
public:
    virtual ~Backend() = default;

    virtual DeviceInfo info() const = 0;
    // True when backend memory is host memory (the CPU backend). A device backend's memory can
    // become unreadable after a failure, so the trainer keeps host copies of good weights.
    virtual bool memoryOnHost() const { return true; }

    // ---- memory ---------------------------------------------------------------------------
    virtual void* allocateBytes(size_t bytes) = 0;
    virtual void freeBytes(void* p) noexcept = 0;
    virtual void upload(void* deviceDst, const void* hostSrc, size_t bytes) = 0;
    virtual void download(void* hostDst, const void* deviceSrc, size_t bytes) = 0;
    virtual void copy(void* deviceDst, const void* deviceSrc, size_t bytes) = 0;
    virtual void synchronize() = 0;

    // Convenience wrappers over the byte-level calls.
    void upload(Tensor dst, const float* host) { upload(dst.data, host, dst.size() * 4); }
    void download(float* host, ConstTensor src) { download(host, src.data, src.size() * 4); }
    std::vector<float> toHost(ConstTensor src);

    // ---- the ops (BackendOps.def) --------------------------------------------------------------
    // Each entry point checks the operands' shapes, then runs the backend's implementation.
#define IL_OP(name, params, args)                                                                  \
    void name params                                                                               \
    {                                                                                              \
        shapes::op::name args;                                                                     \
        name##Impl args;                                                                           \
    }
#define IL_COMPOSED_OP IL_OP
#include "BackendOps.def"

    // ---- recorded sequences (optional; CUDA graphs) ---------------------------------------------
    // A backend may record the ops issued between beginRecording() and endRecording() and replay
    // them later for the cost of one launch. A recording bakes in every pointer, shape and host
    // scalar it was given, so only ops whose arguments do not change between replays may be
    // recorded, and the memory they touch must stay allocated while the recording is kept.
    // While recording, ops are recorded, not executed. beginRecording() returns false when the
    // backend does not record (the CPU backend): the caller then simply runs the ops.
    virtual bool beginRecording()
    {
        return false;
    }
    // Ends the recording and returns its handle (>= 0).
    virtual int endRecording()
    {
        return -1;
    }
    virtual void replay(int handle)
    {
        (void)handle;
    }
    // Forgets every recording; also ends one still open (after an op threw while recording).
    virtual void discardRecordings() {}

protected:
    // What a backend implements: every op of the list, shapes already checked.
#define IL_OP(name, params, args) virtual void name##Impl params = 0;
#include "BackendOps.def"

    // The composed ops, from the ops above; a backend may override them with a faster form.
    virtual void sumSquaresEachImpl(std::span<const ConstTensor> xs, float* out)
    {
        for (size_t i = 0; i < xs.size(); ++i)
            sumSquares(xs[i], out + i);
    }
    virtual void linearForwardImpl(ConstTensor x, ConstTensor w, ConstTensor bias, Tensor y)
    {
        broadcastRows(bias, y);
        gemm(false, true, 1.f, x, w, 1.f, y);
    }
    virtual void linearBackwardImpl(ConstTensor x, ConstTensor dy, Tensor dw, Tensor dbias)
    {
        gemm(true, false, 1.f, dy, x, 0.f, dw);
        sumRows(dy, 0.f, dbias);
    }
};

// The CPU backend, always present. threads <= 0: one per core.
std::unique_ptr<Backend> createCpuBackend(int threads = 0);

} // namespace il
