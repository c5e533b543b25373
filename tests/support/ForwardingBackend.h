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
#include <vector>

namespace testsupport {

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

    void fill(il::Tensor t, float v) override
    {
        run([=, this] { m_inner->fill(t, v); });
    }
    void broadcastRows(il::ConstTensor bias, il::Tensor y) override
    {
        run([=, this] { m_inner->broadcastRows(bias, y); });
    }
    void sumRows(il::ConstTensor x, float beta, il::Tensor out) override
    {
        run([=, this] { m_inner->sumRows(x, beta, out); });
    }
    void sumSquares(il::ConstTensor x, float* out) override
    {
        run([=, this] { m_inner->sumSquares(x, out); });
    }
    void sumSquaresEach(std::span<const il::ConstTensor> xs, float* out) override
    {
        run([=, this] { m_inner->sumSquaresEach(xs, out); });
    }
    void axpby(float a, il::ConstTensor x, float b, il::Tensor y) override
    {
        run([=, this] { m_inner->axpby(a, x, b, y); });
    }
    void gemm(bool ta, bool tb, float alpha, il::ConstTensor a, il::ConstTensor b, float beta,
              il::Tensor c) override
    {
        onGemm();
        run([=, this] { m_inner->gemm(ta, tb, alpha, a, b, beta, c); });
    }
    void activationForward(il::Activation act, float p, il::ConstTensor x, il::Tensor y) override
    {
        run([=, this] { m_inner->activationForward(act, p, x, y); });
    }
    void activationBackward(il::Activation act, float p, il::ConstTensor x, il::ConstTensor y,
                            il::ConstTensor dy, il::Tensor dx) override
    {
        run([=, this] { m_inner->activationBackward(act, p, x, y, dy, dx); });
    }
    void fourierForward(il::ConstTensor z, il::Tensor y) override
    {
        run([=, this] { m_inner->fourierForward(z, y); });
    }
    void fourierBackward(il::ConstTensor z, il::ConstTensor dy, il::Tensor dz) override
    {
        run([=, this] { m_inner->fourierBackward(z, dy, dz); });
    }
    void hashGridForward(const il::HashGrid& g, il::ConstTensor x, il::ConstTensor tables,
                         il::Tensor y) override
    {
        run([=, this] { m_inner->hashGridForward(g, x, tables, y); });
    }
    void hashGridBackward(const il::HashGrid& g, il::ConstTensor x, il::ConstTensor dy,
                          il::Tensor dtables) override
    {
        run([=, this] { m_inner->hashGridBackward(g, x, dy, dtables); });
    }
    void embeddingForward(il::ConstTensor ids, il::ConstTensor table, il::Tensor y) override
    {
        run([=, this] { m_inner->embeddingForward(ids, table, y); });
    }
    void embeddingBackward(il::ConstTensor ids, il::ConstTensor dy, il::Tensor dtable) override
    {
        run([=, this] { m_inner->embeddingBackward(ids, dy, dtable); });
    }
    void layerNormForward(il::ConstTensor x, il::ConstTensor gamma, il::ConstTensor beta, float eps,
                          il::Tensor y, il::Tensor stats) override
    {
        run([=, this] { m_inner->layerNormForward(x, gamma, beta, eps, y, stats); });
    }
    void layerNormBackward(il::ConstTensor x, il::ConstTensor gamma, il::ConstTensor stats,
                           il::ConstTensor dy, il::Tensor dx, il::Tensor dgamma,
                           il::Tensor dbeta) override
    {
        run([=, this] { m_inner->layerNormBackward(x, gamma, stats, dy, dx, dgamma, dbeta); });
    }
    void batchNormForward(il::ConstTensor x, il::ConstTensor gamma, il::ConstTensor beta, float eps,
                          float momentum, bool training, il::Tensor runningMean,
                          il::Tensor runningVar, il::Tensor y) override
    {
        run([=, this] {
            m_inner->batchNormForward(x, gamma, beta, eps, momentum, training, runningMean,
                                      runningVar, y);
        });
    }
    void dropoutForward(il::ConstTensor x, float p, il::Tensor state, il::Tensor y,
                        il::Tensor mask) override
    {
        run([=, this] { m_inner->dropoutForward(x, p, state, y, mask); });
    }
    void dropoutBackward(il::ConstTensor dy, il::ConstTensor mask, il::Tensor dx) override
    {
        run([=, this] { m_inner->dropoutBackward(dy, mask, dx); });
    }
    void batchNormBackward(il::ConstTensor x, il::ConstTensor gamma, float eps, il::ConstTensor dy,
                           il::Tensor dx, il::Tensor dgamma, il::Tensor dbeta) override
    {
        run([=, this] { m_inner->batchNormBackward(x, gamma, eps, dy, dx, dgamma, dbeta); });
    }
    void lossForwardBackward(il::LossKind k, float s, il::ConstTensor w, il::ConstTensor pred,
                             il::ConstTensor target, il::Tensor grad, float* loss,
                             bool acc) override
    {
        run([=, this] { m_inner->lossForwardBackward(k, s, w, pred, target, grad, loss, acc); });
    }
    void lossForward(il::LossKind k, float s, il::ConstTensor w, il::ConstTensor pred,
                     il::ConstTensor target, float* loss, bool acc) override
    {
        run([=, this] { m_inner->lossForward(k, s, w, pred, target, loss, acc); });
    }
    void softmaxRows(il::ConstTensor logits, float t, il::Tensor probs) override
    {
        run([=, this] { m_inner->softmaxRows(logits, t, probs); });
    }
    void sampleRows(il::ConstTensor probs, il::ConstTensor u, int topK, int firstAllowed,
                    il::Tensor ids) override
    {
        run([=, this] { m_inner->sampleRows(probs, u, topK, firstAllowed, ids); });
    }
    void guardAndClip(const float* sq, int count, const float* loss, float maxNorm, int64_t step,
                      float* guard) override
    {
        run([=, this] { m_inner->guardAndClip(sq, count, loss, maxNorm, step, guard); });
    }
    void optimizerStep(il::OptimizerRule rule, const il::OptimizerHyper& h, il::Tensor params,
                       il::ConstTensor grads, std::span<const il::Tensor> state,
                       const float* guard) override
    {
        // The state views by value, as a recording keeps every argument.
        std::array<il::Tensor, il::kMaxOptimizerSlots> slots{};
        if (state.size() > slots.size())
            throw il::ShapeError("optimizerStep: too many state tensors");
        std::copy(state.begin(), state.end(), slots.begin());
        const size_t count = state.size();
        run([=, this] {
            m_inner->optimizerStep(rule, h, params, grads, {slots.data(), count}, guard);
        });
    }
    void shuffledOrder(uint64_t key, int64_t n, int32_t* order) override
    {
        run([=, this] { m_inner->shuffledOrder(key, n, order); });
    }
    void gatherRows(il::ConstTensor src, const int32_t* index, int64_t first,
                    il::Tensor dst) override
    {
        run([=, this] { m_inner->gatherRows(src, index, first, dst); });
    }

protected:
    // Called before every op; may throw.
    virtual void before() {}
    virtual void onGemm() {}
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
    void onGemm() override { ++m_gemms; }
    void before() override
    {
        if (failed()) throw il::BackendError(kError);
    }

private:
    int m_failAfter;
    int m_gemms = 0;
};

} // namespace testsupport
