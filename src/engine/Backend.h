// The Backend contract: where memory lives and how every op runs.
//
// Every numeric operation of training goes through this interface, so a backend that keeps
// memory on a GPU (kernels/, issue #5) can run a whole training step with no host copy: the
// data, weights, gradients and optimizer state are all backend memory, scalars such as the
// loss are written to backend memory too, and the trainer reads a handful of floats back only
// every K steps (Backend::download of the "scalars" block).
//
// Conventions
// - Tensors are row-major f32 views (Tensor.h). Ops never allocate; outputs are preallocated
//   by the caller and must not alias inputs unless an op says so.
// - Ops check shapes and throw ShapeError; backend failures throw BackendError.
// - Parameters that vary per step and live on the host (learning rate, step number) are plain
//   arguments: on a GPU they travel as kernel arguments, not as memory copies.
#pragma once

#include "ActivationMath.h"
#include "Errors.h"
#include "HashGridMath.h"
#include "HostDevice.h"
#include "OptimizerMath.h"
#include "Tensor.h"

#include <memory>
#include <span>
#include <string>
#include <vector>

namespace il {

enum class LossKind { MSE, MAE, BinaryCrossEntropy, CrossEntropy };

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

// Bumped whenever this interface changes: a separately built backend module (the CUDA one in
// kernels/) is refused unless it was built against the same version. The lists of activations
// (ActivationMath.h) and optimizer rules (OptimizerMath.h) are part of the interface, so their
// lengths are folded in.
inline constexpr int kBackendAbiVersion = 9 * 10000 + kOptimizerRuleCount * 100 + kActivationCount;

namespace shapes {
// A dense layer's operands: x (n x in), w (out x in), bias (1 x out), y (n x out).
inline void linear(const char* op, ConstTensor x, ConstTensor w, ConstTensor bias, ConstTensor y)
{
    if (w.cols() != x.cols() || bias.rows() != 1 || bias.cols() != w.rows() ||
        y.rows() != x.rows() || y.cols() != w.rows())
        throw ShapeError(std::string(op) + ": x " + x.shape.toString() + ", w " +
                         w.shape.toString() + ", bias " + bias.shape.toString() + " -> " +
                         y.shape.toString() + " does not fit");
}

} // namespace shapes

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

    // ---- element-wise and reductions --------------------------------------------------------
    virtual void fill(Tensor t, float value) = 0;
    // y[i, :] = bias[0, :] for every row i.
    virtual void broadcastRows(ConstTensor bias, Tensor y) = 0;
    // out[0, :] = beta * out[0, :] + sum_i x[i, :]   (bias gradient)
    virtual void sumRows(ConstTensor x, float beta, Tensor out) = 0;
    // *out = sum of x^2 over all elements (out: one float of backend memory).
    virtual void sumSquares(ConstTensor x, float* out) = 0;
    // out[i] = sum of xs[i]^2, for every tensor at once (out: xs.size() floats of backend
    // memory): the training step's gradient norms. Defined here as one sumSquares per tensor;
    // the CUDA backend does it in two launches for any number of tensors.
    virtual void sumSquaresEach(std::span<const ConstTensor> xs, float* out)
    {
        for (size_t i = 0; i < xs.size(); ++i)
            sumSquares(xs[i], out + i);
    }
    // y = a * x + b * y
    virtual void axpby(float a, ConstTensor x, float b, Tensor y) = 0;

    // ---- matrix products (BLAS sgemm semantics, row-major) -----------------------------------
    // C = alpha * op(A) * op(B) + beta * C, op(X) = X or X^T. Transposes are read in place.
    virtual void gemm(bool transA, bool transB, float alpha, ConstTensor a, ConstTensor b,
                      float beta, Tensor c) = 0;
    // The dense layer's products, with its bias. Defined here from the ops above (the CPU
    // backend's way); the CUDA backend folds the bias into the matrix product (cuBLASLt
    // epilogues) and saves the passes over y and dy that broadcastRows and sumRows make.
    //   y = x w^T + bias, every row; x: n x in, w: out x in, bias: 1 x out, y: n x out.
    virtual void linearForward(ConstTensor x, ConstTensor w, ConstTensor bias, Tensor y)
    {
        shapes::linear("linearForward", x, w, bias, y);
        broadcastRows(bias, y);
        gemm(false, true, 1.f, x, w, 1.f, y);
    }
    //   dw = dy^T x and dbias = the sum of dy's rows (both overwritten); dy: n x out.
    virtual void linearBackward(ConstTensor x, ConstTensor dy, Tensor dw, Tensor dbias)
    {
        shapes::linear("linearBackward", x, dw, dbias, dy);
        gemm(true, false, 1.f, dy, x, 0.f, dw);
        sumRows(dy, 0.f, dbias);
    }

    // ---- activations -----------------------------------------------------------------------
    // The formulas are in ActivationMath.h. param: the activation's argument (LeakyReLU slope,
    // Sine w0). y = f(x) element-wise; y may alias x.
    virtual void activationForward(Activation act, float param, ConstTensor x, Tensor y) = 0;
    // dx = dy * f'(x), using x and/or y (whichever the activation needs). dx may alias dy.
    virtual void activationBackward(Activation act, float param, ConstTensor x, ConstTensor y,
                                    ConstTensor dy, Tensor dx) = 0;

    // ---- Fourier features: y = [sin(z) | cos(z)] with z = 2*pi * x * B^T computed by gemm --
    virtual void fourierForward(ConstTensor z, Tensor y) = 0;
    // dz = dy_sin * cos(z) - dy_cos * sin(z). dz may alias z (element-wise; saves a buffer).
    virtual void fourierBackward(ConstTensor z, ConstTensor dy, Tensor dz) = 0;

    // ---- multiresolution hash encoding (HashGridMath.h): x (rows x 2, in [-1, 1]) ----------
    // y (rows x g.outputs()) = the bilinear interpolation of each level's table at x; tables:
    // g.rows() x g.features.
    virtual void hashGridForward(const HashGrid& g, ConstTensor x, ConstTensor tables,
                                 Tensor y) = 0;
    // dtables (overwritten) = dy scattered back through the same interpolation weights. The
    // input gradient is not computed: the encoding is always a network's first layer.
    virtual void hashGridBackward(const HashGrid& g, ConstTensor x, ConstTensor dy,
                                  Tensor dtables) = 0;

    // ---- embedding: ids (rows x context, integral floats) -> y (rows x context*dim) --------
    virtual void embeddingForward(ConstTensor ids, ConstTensor table, Tensor y) = 0;
    // dtable = sum of dy slices scattered by id (dtable is overwritten).
    virtual void embeddingBackward(ConstTensor ids, ConstTensor dy, Tensor dtable) = 0;

    // ---- normalisation (NormMath.h), over rows x C, each row a position of C numbers ----------
    // Layer normalisation of each row: y = (x - mean) / sqrt(var + eps) * gamma + beta, with the
    // row's mean and biased variance; gamma, beta: 1 x C. stats (rows x 2) keeps each row's mean
    // and 1 / sqrt(var + eps) for the backward.
    virtual void layerNormForward(ConstTensor x, ConstTensor gamma, ConstTensor beta, float eps,
                                  Tensor y, Tensor stats) = 0;
    // dx from dy and the forward's stats; dgamma and dbeta (1 x C) are overwritten.
    virtual void layerNormBackward(ConstTensor x, ConstTensor gamma, ConstTensor stats,
                                   ConstTensor dy, Tensor dx, Tensor dgamma, Tensor dbeta) = 0;
    // Batch normalisation of each column: training, with the column's mean and biased variance
    // over the rows, and the running mean and variance (1 x C) move toward the batch's mean and
    // unbiased variance: r = (1 - momentum) r + momentum b (PyTorch's BatchNorm1d); otherwise
    // with the running mean and variance, which are then only read.
    virtual void batchNormForward(ConstTensor x, ConstTensor gamma, ConstTensor beta, float eps,
                                  float momentum, bool training, Tensor runningMean,
                                  Tensor runningVar, Tensor y) = 0;
    // The backward of a training forward of the same x (the batch statistics are computed again
    // from it): dx, and dgamma and dbeta (1 x C) overwritten.
    virtual void batchNormBackward(ConstTensor x, ConstTensor gamma, float eps, ConstTensor dy,
                                   Tensor dx, Tensor dgamma, Tensor dbeta) = 0;

    // ---- dropout (DropoutMath.h)
    // ------------------------------------------------------------------ y = x * mask, mask[i] = 0
    // or 1 / (1 - p) by the hash of (state[0], state[1], i); then the counter state[1] moves on (in
    // backend memory: a recorded step draws anew at each replay). state: 1 x 2 of backend memory;
    // mask shaped like x (kept for the backward).
    virtual void dropoutForward(ConstTensor x, float p, Tensor state, Tensor y, Tensor mask) = 0;
    // dx = dy * mask.
    virtual void dropoutBackward(ConstTensor dy, ConstTensor mask, Tensor dx) = 0;

    // ---- losses: value and gradient in one pass ----------------------------------------------
    // pred: rows x k. target: rows x k (MSE, MAE, BCE) or rows x 1 class ids (CrossEntropy).
    // Writes dL/dpred of the mean loss to grad and the mean loss to *lossOut, or adds it when
    // accumulate is set. CrossEntropy is softmax + cross-entropy fused, with label smoothing:
    // q = (1 - s) * onehot + s / k. BCE takes logits (stable form).
    // classWeights (backend memory; empty: every term weighs 1) weights each term by its class:
    // CrossEntropy: 1 x k, row i weighs w[class_i] (its smoothing part too); BCE: 1 x 2, an
    // element with target t weighs w0 + t (w1 - w0) (w0 for t = 0, w1 for t = 1). The weighted
    // mean still divides by the count of terms (rows, or elements), not by the sum of the
    // weights: a minibatch's loss is then an unbiased estimate of the whole data's, and with
    // weights that average 1 over the data (TrainerConfig::classWeights) it keeps the scale of
    // the unweighted loss. MSE and MAE take no weights (ShapeError).
    virtual void lossForwardBackward(LossKind kind, float smoothing, ConstTensor classWeights,
                                     ConstTensor pred, ConstTensor target, Tensor grad,
                                     float* lossOut, bool accumulate) = 0;
    // Loss value only (validation); grad is not touched. Same conventions as above.
    virtual void lossForward(LossKind kind, float smoothing, ConstTensor classWeights,
                             ConstTensor pred, ConstTensor target, float* lossOut,
                             bool accumulate) = 0;
    // Row-wise softmax of logits / temperature (inference and generation).
    virtual void softmaxRows(ConstTensor logits, float temperature, Tensor probs) = 0;

    // One draw per row of probs (rows x k, e.g. from softmaxRows) with the number in uniforms
    // (rows x 1, in [0, 1)), written as a float id to ids (rows x 1). Only ids >= firstAllowed
    // and, when 0 < topK < k, the topK most probable can be drawn. See sampleCategory
    // (Sampling.h) for the exact rule; every backend follows it, so the same probabilities and
    // numbers give the same ids everywhere. Generation downloads the ids, not the probabilities.
    virtual void sampleRows(ConstTensor probs, ConstTensor uniforms, int topK, int firstAllowed,
                            Tensor ids) = 0;

    // ---- training-step guard and optimizers ---------------------------------------------------
    // sq: count floats, the sum of squared gradients of each parameter tensor; loss: the loss
    // of this step. Writes the GuardSlot block: if the loss or any sq is non-finite, sets Bad
    // (sticky), BadStep and BadTensor and Scale = 0; otherwise Scale = min(1, maxNorm / norm)
    // (maxNorm <= 0: no clipping, Scale = 1).
    virtual void guardAndClip(const float* sq, int count, const float* loss, float maxNorm,
                              int64_t step, float* guard) = 0;
    // One step of an optimizer rule (OptimizerMath.h), in place over flat, contiguous parameter,
    // gradient and state vectors: state holds the rule's kSlots tensors, each with the
    // parameters' shape; h its learning rate, step number and values. Reads the guard block:
    // gradients are multiplied by guard[Scale]; nothing changes if guard[Bad].
    virtual void optimizerStep(OptimizerRule rule, const OptimizerHyper& h, Tensor params,
                               ConstTensor grads, std::span<const Tensor> state,
                               const float* guard) = 0;

    // ---- data movement -------------------------------------------------------------------------
    // order[i] = shuffledIndex(i) for i < n: a permutation of [0, n) chosen by key (Shuffle.h),
    // the same on every backend. order: n int32 of backend memory. The trainer draws one key per
    // epoch on the host, so an epoch's order costs a kernel argument, not a copy.
    virtual void shuffledOrder(uint64_t key, int64_t n, int32_t* order) = 0;
    // dst[i, :] = src[index[first + i], :] for i < dst.rows.
    virtual void gatherRows(ConstTensor src, const int32_t* index, int64_t first, Tensor dst) = 0;

    // ---- recorded sequences (optional; CUDA graphs) ---------------------------------------------
    // A backend may record the ops issued between beginRecording() and endRecording() and replay
    // them later for the cost of one launch. A recording bakes in every pointer, shape and host
    // scalar it was given, so only ops whose arguments do not change between replays may be
    // recorded, and the memory they touch must stay allocated while the recording is kept.
    // While recording, ops are recorded, not executed. beginRecording() returns false when the
    // backend does not record (the CPU backend): the caller then simply runs the ops.
    virtual bool beginRecording() { return false; }
    // Ends the recording and returns its handle (>= 0).
    virtual int endRecording() { return -1; }
    virtual void replay(int handle) { (void)handle; }
    // Forgets every recording; also ends one still open (after an op threw while recording).
    virtual void discardRecordings() {}
};

// The CPU backend, always present. threads <= 0: one per core.
std::unique_ptr<Backend> createCpuBackend(int threads = 0);

} // namespace il
