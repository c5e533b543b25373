// The shape contract of every Backend op (BackendOps.def). Backend's entry points run the op's
// check (shapes::op, at the end of this file) before the backend's implementation, so every
// backend (the CPU one, the CUDA module in kernels/, which includes this header but links
// nothing of the engine) is held to the same contract in one place. Each check throws ShapeError
// with a message naming the op and the shapes it was given.
#pragma once

#include "ActivationMath.h"
#include "Errors.h"
#include "HashGridMath.h"
#include "LossKind.h"
#include "OptimizerMath.h"
#include "Tensor.h"

#include <cstdint>
#include <span>
#include <string>

namespace il::shapes {

inline void same(const char* op, Shape a, Shape b)
{
    if (!(a == b))
        throw ShapeError(std::string(op) + ": shapes " + a.toString() + " and " + b.toString() +
                         " differ");
}

// The tensor an activation's derivative reads (x or y) must be shaped like dy.
inline void activationInput(const char* activation, Shape in, Shape dy)
{
    if (!(in == dy))
        throw ShapeError(std::string(activation) + " backward: shapes " + in.toString() + " and " +
                         dy.toString() + " differ");
}

// A dense layer's operands: x (n x in), w (out x in), bias (1 x out), y (n x out).
inline void linear(const char* op, ConstTensor x, ConstTensor w, ConstTensor bias, ConstTensor y)
{
    if (w.cols() != x.cols() || bias.rows() != 1 || bias.cols() != w.rows() ||
        y.rows() != x.rows() || y.cols() != w.rows())
        throw ShapeError(std::string(op) + ": x " + x.shape.toString() + ", w " +
                         w.shape.toString() + ", bias " + bias.shape.toString() + " -> " +
                         y.shape.toString() + " does not fit");
}

inline void broadcastRows(ConstTensor bias, ConstTensor y)
{
    if (bias.size() != y.cols())
        throw ShapeError("broadcastRows: bias " + bias.shape.toString() + " for " +
                         y.shape.toString());
}

inline void sumRows(ConstTensor x, ConstTensor out)
{
    if (out.size() != x.cols())
        throw ShapeError("sumRows: output " + out.shape.toString() + " for " + x.shape.toString());
}

struct GemmDims {
    int64_t m, n, k;
};

// C (m x n) = op(A) (m x k) * op(B) (k x n).
inline GemmDims gemm(bool transA, bool transB, ConstTensor a, ConstTensor b, ConstTensor c)
{
    const int64_t m = transA ? a.cols() : a.rows();
    const int64_t k = transA ? a.rows() : a.cols();
    const int64_t kb = transB ? b.cols() : b.rows();
    const int64_t n = transB ? b.rows() : b.cols();
    if (k != kb || c.rows() != m || c.cols() != n)
        throw ShapeError("gemm: " + a.shape.toString() + (transA ? "^T" : "") + " x " +
                         b.shape.toString() + (transB ? "^T" : "") + " -> " + c.shape.toString() +
                         " does not fit");
    return {m, n, k};
}

inline void fourierForward(ConstTensor z, ConstTensor y)
{
    if (y.rows() != z.rows() || y.cols() != 2 * z.cols())
        throw ShapeError("fourierForward: " + z.shape.toString() + " -> " + y.shape.toString());
}

inline void fourierBackward(ConstTensor z, ConstTensor dy, ConstTensor dz)
{
    if (dy.rows() != z.rows() || dy.cols() != 2 * z.cols() || !(dz.shape == z.shape))
        throw ShapeError("fourierBackward: shapes " + z.shape.toString() + ", " +
                         dy.shape.toString() + ", " + dz.shape.toString());
}

inline void hashGrid(const char* op, const HashGrid& g, ConstTensor x, ConstTensor tables,
                     ConstTensor y)
{
    if (x.cols() != 2 || y.rows() != x.rows() || y.cols() != g.outputs() ||
        tables.rows() != g.rows() || tables.cols() != g.features)
        throw ShapeError(std::string(op) + ": x " + x.shape.toString() + ", tables " +
                         tables.shape.toString() + " -> " + y.shape.toString() + " does not fit " +
                         std::to_string(g.levels) + " levels of " + std::to_string(g.tableRows()) +
                         " x " + std::to_string(g.features));
}

// Token ids travel as floats, which hold every whole number only up to 2^24: a larger
// vocabulary would merge neighbouring ids (16777217 reads as 16777216), so both backends
// refuse it.
inline constexpr int64_t kMaxEmbeddingVocabulary = int64_t(1) << 24;
inline void embeddingVocabulary(const char* op, int64_t vocabulary)
{
    if (vocabulary > kMaxEmbeddingVocabulary)
        throw ShapeError(std::string(op) + ": a vocabulary of " + std::to_string(vocabulary) +
                         " tokens is too large; at most 16777216 (2^24) tokens, since token ids "
                         "are stored as 32-bit floats, which hold whole numbers exactly only up "
                         "to 2^24");
}

inline void embeddingForward(ConstTensor ids, ConstTensor table, ConstTensor y)
{
    embeddingVocabulary("embeddingForward", table.rows());
    if (y.rows() != ids.rows() || y.cols() != ids.cols() * table.cols())
        throw ShapeError("embeddingForward: ids " + ids.shape.toString() + ", table " +
                         table.shape.toString() + " -> " + y.shape.toString());
}

inline void embeddingBackward(ConstTensor ids, ConstTensor dy, ConstTensor dtable)
{
    embeddingVocabulary("embeddingBackward", dtable.rows());
    if (dy.rows() != ids.rows() || dy.cols() != ids.cols() * dtable.cols())
        throw ShapeError("embeddingBackward: ids " + ids.shape.toString() + ", dy " +
                         dy.shape.toString() + ", table " + dtable.shape.toString());
}

// CrossEntropy takes one class id per row; the other losses a target shaped like pred.
inline void lossTargets(bool classIds, ConstTensor pred, ConstTensor target)
{
    if (!classIds) {
        same("loss targets", pred.shape, target.shape);
    } else if (target.rows() != pred.rows() || target.cols() != 1) {
        throw ShapeError("cross-entropy: targets " + target.shape.toString() + " for predictions " +
                         pred.shape.toString() + " (expected one class id per row)");
    }
}

// classWeights of a loss (Backend::lossForwardBackward): none, 1 x k for cross-entropy over k
// classes, 1 x 2 for binary cross-entropy (targets 0 and 1).
inline void lossWeights(LossKind kind, ConstTensor pred, ConstTensor weights)
{
    if (weights.empty()) return;
    const int64_t want = kind == LossKind::CrossEntropy         ? pred.cols()
                         : kind == LossKind::BinaryCrossEntropy ? 2
                                                                : 0;
    if (want == 0) throw ShapeError("class weights apply to bce and cross-entropy losses only");
    if (weights.rows() != 1 || weights.cols() != want)
        throw ShapeError("loss class weights " + weights.shape.toString() + " (expected 1x" +
                         std::to_string(want) + ": one per class)");
}

inline void sampleRows(ConstTensor probs, ConstTensor uniforms, ConstTensor ids)
{
    const int64_t rows = probs.rows();
    if (probs.cols() <= 0 || uniforms.rows() != rows || uniforms.cols() != 1 ||
        ids.rows() != rows || ids.cols() != 1)
        throw ShapeError("sampleRows: probabilities " + probs.shape.toString() + ", numbers " +
                         uniforms.shape.toString() + ", ids " + ids.shape.toString() +
                         " (expected rows x k, rows x 1, rows x 1)");
}

inline void shuffledOrder(int64_t n)
{
    if (n < 0 || n > INT32_MAX) throw ShapeError("shuffledOrder: " + std::to_string(n) + " rows");
}

inline void gatherRows(ConstTensor src, ConstTensor dst)
{
    if (src.cols() != dst.cols())
        throw ShapeError("gatherRows: " + src.shape.toString() + " -> " + dst.shape.toString());
}

// An optimizer rule's step: the gradients and each of its `slotCount` state tensors shaped like
// the parameters. (Not `slots`: Qt defines that word as a macro, and this header reaches Qt code.)
inline void optimizerStep(const char* rule, int slotCount, ConstTensor params, ConstTensor grads,
                          std::span<const Tensor> state)
{
    same(rule, params.shape, grads.shape);
    if (state.size() != static_cast<size_t>(slotCount))
        throw ShapeError(std::string(rule) + ": " + std::to_string(slotCount) +
                         " state tensors expected, got " + std::to_string(state.size()));
    for (const Tensor& t : state)
        if (!(t.shape == params.shape))
            throw ShapeError(std::string(rule) + ": state " + t.shape.toString() +
                             " for parameters " + params.shape.toString());
}

// Normalisation: x rows x C, gamma and beta (and running statistics) 1 x C, y like x.
inline void normalisation(const char* op, ConstTensor x, ConstTensor gamma, ConstTensor beta,
                          ConstTensor y)
{
    if (gamma.size() != x.cols() || beta.size() != x.cols() || !(y.shape == x.shape))
        throw ShapeError(std::string(op) + ": x " + x.shape.toString() + ", gamma " +
                         gamma.shape.toString() + ", beta " + beta.shape.toString() + ", y " +
                         y.shape.toString());
}

inline void layerNormStats(const char* op, ConstTensor x, ConstTensor stats)
{
    if (stats.rows() != x.rows() || stats.cols() != 2)
        throw ShapeError(std::string(op) + ": stats " + stats.shape.toString() + " for x " +
                         x.shape.toString() + " (rows x 2)");
}

// Windows of x's rows (Backend::windows): y holds Q = y.rows / x.rows whole windows of each row,
// step apart, y.cols wide, and they lie inside the row.
inline void windows(const char* op, ConstTensor x, int64_t step, ConstTensor y)
{
    const int64_t q = x.rows() > 0 ? y.rows() / x.rows() : 0;
    const bool whole = x.rows() > 0 ? q * x.rows() == y.rows() && q > 0 : y.rows() == 0;
    if (step <= 0 || !whole || (q > 0 && (q - 1) * step + y.cols() > x.cols()))
        throw ShapeError(std::string(op) + ": rows " + x.shape.toString() + " in windows " +
                         y.shape.toString() + ", " + std::to_string(step) + " apart");
}

// ---- one check per op, named after it and taking its arguments ---------------------------------
// An op with nothing to check about its shapes still has its (empty) entry here, so that the
// list and the checks stay one for one.
namespace op {

inline void fill(ConstTensor, float) {}
inline void broadcastRows(ConstTensor bias, ConstTensor y)
{
    shapes::broadcastRows(bias, y);
}
inline void sumRows(ConstTensor x, float, ConstTensor out)
{
    shapes::sumRows(x, out);
}
inline void sumSquares(ConstTensor, const float*) {}
inline void sumSquaresEach(std::span<const ConstTensor>, const float*) {}
inline void axpby(float, ConstTensor x, float, ConstTensor y)
{
    shapes::same("axpby", x.shape, y.shape);
}
inline void gemm(bool transA, bool transB, float, ConstTensor a, ConstTensor b, float,
                 ConstTensor c)
{
    shapes::gemm(transA, transB, a, b, c);
}
inline void linearForward(ConstTensor x, ConstTensor w, ConstTensor bias, ConstTensor y)
{
    shapes::linear("linearForward", x, w, bias, y);
}
inline void linearBackward(ConstTensor x, ConstTensor dy, ConstTensor dw, ConstTensor dbias)
{
    shapes::linear("linearBackward", x, dw, dbias, dy);
}
inline void activationForward(Activation, float, ConstTensor x, ConstTensor y)
{
    shapes::same("activation forward", x.shape, y.shape);
}
// The tensor the activation's derivative reads (x or y, ActivationMath.h) must be shaped like dy;
// the identity reads neither.
inline void activationBackward(Activation act, float, ConstTensor x, ConstTensor y, ConstTensor dy,
                               ConstTensor dx)
{
    shapes::same("activation backward", dy.shape, dx.shape);
    if (act == Activation::Identity) return;
    visitActivation(act, [&]<class Act>() {
        shapes::activationInput(Act::kName, (Act::kBackwardFromOutput ? y : x).shape, dy.shape);
    });
}
inline void fourierForward(ConstTensor z, ConstTensor y)
{
    shapes::fourierForward(z, y);
}
inline void fourierBackward(ConstTensor z, ConstTensor dy, ConstTensor dz)
{
    shapes::fourierBackward(z, dy, dz);
}
inline void hashGridForward(const HashGrid& g, ConstTensor x, ConstTensor tables, ConstTensor y)
{
    shapes::hashGrid("hashGridForward", g, x, tables, y);
}
inline void hashGridBackward(const HashGrid& g, ConstTensor x, ConstTensor dy, ConstTensor dtables)
{
    shapes::hashGrid("hashGridBackward", g, x, dtables, dy);
}
inline void embeddingForward(ConstTensor ids, ConstTensor table, ConstTensor y)
{
    shapes::embeddingForward(ids, table, y);
}
inline void embeddingBackward(ConstTensor ids, ConstTensor dy, ConstTensor dtable)
{
    shapes::embeddingBackward(ids, dy, dtable);
}
inline void windows(ConstTensor x, int64_t step, ConstTensor y)
{
    shapes::windows("windows", x, step, y);
}
inline void windowsBackward(ConstTensor dy, int64_t step, ConstTensor dx)
{
    shapes::windows("windowsBackward", dx, step, dy);
}
inline void layerNormForward(ConstTensor x, ConstTensor gamma, ConstTensor beta, float,
                             ConstTensor y, ConstTensor stats)
{
    shapes::normalisation("layerNormForward", x, gamma, beta, y);
    shapes::layerNormStats("layerNormForward", x, stats);
}
inline void layerNormBackward(ConstTensor x, ConstTensor gamma, ConstTensor stats, ConstTensor dy,
                              ConstTensor dx, ConstTensor dgamma, ConstTensor dbeta)
{
    shapes::normalisation("layerNormBackward", x, dgamma, dbeta, dy);
    shapes::normalisation("layerNormBackward", x, gamma, gamma, dy);
    shapes::layerNormStats("layerNormBackward", x, stats);
    if (dx.data) shapes::same("layerNormBackward", x.shape, dx.shape);
}
inline void batchNormForward(ConstTensor x, ConstTensor gamma, ConstTensor beta, float, float, bool,
                             ConstTensor runningMean, ConstTensor runningVar, ConstTensor y)
{
    shapes::normalisation("batchNormForward", x, gamma, beta, y);
    shapes::normalisation("batchNormForward", x, runningMean, runningVar, y);
}
inline void batchNormBackward(ConstTensor x, ConstTensor gamma, float, ConstTensor dy,
                              ConstTensor dx, ConstTensor dgamma, ConstTensor dbeta)
{
    shapes::normalisation("batchNormBackward", x, dgamma, dbeta, dy);
    shapes::normalisation("batchNormBackward", x, gamma, gamma, dy);
    if (dx.data) shapes::same("batchNormBackward", x.shape, dx.shape);
}
inline void dropoutForward(ConstTensor x, float, ConstTensor, ConstTensor y, ConstTensor mask)
{
    shapes::same("dropoutForward", x.shape, y.shape);
    shapes::same("dropoutForward", x.shape, mask.shape);
}
inline void dropoutBackward(ConstTensor dy, ConstTensor mask, ConstTensor dx)
{
    shapes::same("dropoutBackward", dy.shape, mask.shape);
    shapes::same("dropoutBackward", dy.shape, dx.shape);
}
inline void lossForward(LossKind kind, float, ConstTensor classWeights, ConstTensor pred,
                        ConstTensor target, const float*, bool)
{
    shapes::lossWeights(kind, pred, classWeights);
    shapes::lossTargets(kind == LossKind::CrossEntropy, pred, target);
}
inline void lossForwardBackward(LossKind kind, float smoothing, ConstTensor classWeights,
                                ConstTensor pred, ConstTensor target, ConstTensor grad,
                                const float* lossOut, bool accumulate)
{
    shapes::same("loss gradient", pred.shape, grad.shape);
    op::lossForward(kind, smoothing, classWeights, pred, target, lossOut, accumulate);
}
inline void softmaxRows(ConstTensor logits, float, ConstTensor probs)
{
    shapes::same("softmaxRows", logits.shape, probs.shape);
}
inline void sampleRows(ConstTensor probs, ConstTensor uniforms, int, int, ConstTensor ids)
{
    shapes::sampleRows(probs, uniforms, ids);
}
inline void guardAndClip(const float*, int, const float*, float, int64_t, const float*) {}
inline void optimizerStep(OptimizerRule rule, const OptimizerHyper&, ConstTensor params,
                          ConstTensor grads, std::span<const Tensor> state, const float*)
{
    visitOptimizerRule(rule, [&]<class Rule>() {
        shapes::optimizerStep(Rule::kName, Rule::kSlots, params, grads, state);
    });
}
inline void shuffledOrder(uint64_t, int64_t n, const int32_t*)
{
    shapes::shuffledOrder(n);
}
inline void gatherRows(ConstTensor src, const int32_t*, int64_t, ConstTensor dst)
{
    shapes::gatherRows(src, dst);
}

} // namespace op

} // namespace il::shapes
