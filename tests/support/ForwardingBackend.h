// Test doubles for backends: a decorator that forwards every op to a real backend (the CPU
// one), so a test can override the few calls it is about.
//
//   ForwardingBackend  forwards everything; subclass it.
//   RecordingBackend   records ops between beginRecording/endRecording instead of running them
//                      and replays them later, the way CUDA graphs behave: whatever arguments
//                      an op had when it was recorded are the ones it replays with.
//   FaultyBackend      claims device memory (memoryOnHost() == false) and fails like a GPU:
//                      after `failAfter` gemm calls every op throws BackendError, as a CUDA
//                      context does after a kernel fault.
#pragma once

#include "Backend.h"
#include "Errors.h"

#include <algorithm>
#include <array>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <tuple>
#include <vector>

namespace testsupport {

// The types the op list's parameters name (BackendOps.def is written inside namespace il).
using il::Activation;
using il::ConstTensor;
using il::HashGrid;
using il::LossKind;
using il::OptimizerHyper;
using il::OptimizerRule;
using il::Tensor;

// An op's arguments as a forwarder keeps them: by value, with a span of tensors (an optimizer's
// state) copied, since the caller's array is gone by the time a recording replays it.
struct KeptTensors {
    std::array<Tensor, il::kMaxOptimizerSlots> tensors{};
    size_t count = 0;
    operator std::span<const Tensor>() const { return {tensors.data(), count}; } // NOLINT
};
template <class T> T keep(const T& value)
{
    return value;
}
inline KeptTensors keep(std::span<const Tensor> span)
{
    KeptTensors k;
    if (span.size() > k.tensors.size()) throw il::ShapeError("too many state tensors");
    std::copy(span.begin(), span.end(), k.tensors.begin());
    k.count = span.size();
    return k;
}
template <class... A> auto keepAll(const A&... args)
{
    return std::make_tuple(keep(args)...);
}

class ForwardingBackend : public il::Backend {
public:
    explicit ForwardingBackend(std::unique_ptr<il::Backend> inner) : m_inner(std::move(inner)) {}
    il::Backend& inner() { return *m_inner; }

    il::DeviceInfo info() const override { return m_inner->info(); }
    bool memoryOnHost() const override { return m_inner->memoryOnHost(); }
    void* allocateBytes(size_t bytes) override { return m_inner->allocateBytes(bytes); }
    void freeBytes(void* p) noexcept override { m_inner->freeBytes(p); }
    void upload(void* d, const void* h, size_t bytes) override
    {
        before();
        m_inner->upload(d, h, bytes);
    }
    void download(void* h, const void* d, size_t bytes) override
    {
        before();
        m_inner->download(h, d, bytes);
    }
    void copy(void* d, const void* s, size_t bytes) override
    {
        run([=, this] { m_inner->copy(d, s, bytes); });
    }
    void synchronize() override
    {
        before();
        m_inner->synchronize();
    }
    using il::Backend::download;
    using il::Backend::upload;

protected:
    // Every op of the list (BackendOps.def) goes to the inner backend's entry point, with its
    // arguments kept by value (a recording replays them later).
#define IL_OP(name, params, args)                                                                  \
    void name##Impl params override                                                                \
    {                                                                                              \
        onOp(#name);                                                                               \
        run([this, kept = keepAll args] {                                                          \
            std::apply([this](const auto&... a) { m_inner->name(a...); }, kept);                   \
        });                                                                                        \
    }
#include "BackendOps.def"

    // Called before every op; may throw.
    virtual void before() {}
    // Called with each op's name as it is issued (recorded or not).
    virtual void onOp(std::string_view op)
    {
        (void)op;
    }
    // Runs (or, in a subclass, records) one op.
    virtual void run(const std::function<void()>& op)
    {
        before();
        op();
    }

private:
    std::unique_ptr<il::Backend> m_inner;
};

// Records like a CUDA graph: ops issued while recording are stored, not run.
class RecordingBackend : public ForwardingBackend {
public:
    using ForwardingBackend::ForwardingBackend;

    bool beginRecording() override
    {
        m_recording = true;
        m_current.clear();
        return true;
    }
    int endRecording() override
    {
        m_recording = false;
        m_recordings.push_back(std::move(m_current));
        m_current.clear();
        ++recorded;
        return static_cast<int>(m_recordings.size()) - 1;
    }
    void replay(int handle) override
    {
        ++replays;
        for (const auto& op : m_recordings.at(static_cast<size_t>(handle)))
            op();
    }
    void discardRecordings() override
    {
        m_recording = false;
        m_current.clear();
        m_recordings.clear();
        ++discards;
    }
    // Host copies while recording would be a bug in the caller (a graph cannot contain them).
    void download(void* h, const void* d, size_t bytes) override
    {
        if (m_recording) throw il::BackendError("download while recording");
        ForwardingBackend::download(h, d, bytes);
    }
    using ForwardingBackend::download;

    int recorded = 0, replays = 0, discards = 0;

protected:
    void run(const std::function<void()>& op) override
    {
        if (m_recording)
            m_current.push_back(op);
        else
            op();
    }

private:
    bool m_recording = false;
    std::vector<std::function<void()>> m_current;
    std::vector<std::vector<std::function<void()>>> m_recordings;
};

// Device memory that fails like a GPU: gemm number failAfter + 1 throws, and so does every op
// after it, downloads included (a CUDA context stays failed after a kernel fault). Allocating
// and freeing keep working, so a model can still be torn down. failAfter < 0: never fails.
class FaultyBackend : public ForwardingBackend {
public:
    static constexpr const char* kError =
        "CUDA error in gemm: an illegal memory access was encountered (cudaErrorIllegalAddress)";

    FaultyBackend(std::unique_ptr<il::Backend> inner, int failAfter)
        : ForwardingBackend(std::move(inner)), m_failAfter(failAfter)
    {
    }
    il::DeviceInfo info() const override
    {
        il::DeviceInfo d = ForwardingBackend::info();
        d.backend = "cuda";
        d.name = "Faulty test GPU";
        return d;
    }
    bool memoryOnHost() const override { return false; }
    bool failed() const { return m_failAfter >= 0 && m_gemms > m_failAfter; }
    int gemms() const { return m_gemms; }

protected:
    void onOp(std::string_view op) override
    {
        if (op == "gemm") ++m_gemms;
    }
    void before() override
    {
        if (failed()) throw il::BackendError(kError);
    }

private:
    int m_failAfter;
    int m_gemms = 0;
};

} // namespace testsupport
