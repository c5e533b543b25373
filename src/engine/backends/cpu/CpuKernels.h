// The CPU backend's SIMD kernels: every element-wise loop and reduction of CpuBackend and
// CpuLoss, written once with Google Highway and compiled for several x86 targets (SSE4, AVX2,
// AVX-512) in one binary. The best target the CPU supports is chosen at run time; the
// environment variable IRONLEARN_SIMD (ssse3, sse4, avx2, avx512) forces one.
//
// Results are the same bits on every target: the formulas are the shared ones of
// ActivationMath.h, OptimizerMath.h, LossMath.h and FastMath.h with no fused multiply-add
// (CpuKernels.cpp is compiled with -ffp-contract=off), and every sum adds its terms in one fixed
// order, 16 lanes wide whatever the vector width, then those 16 partial sums pairwise. Only the
// speed depends on the target.
//
// These functions run on the calling thread over the range they are given; CpuBackend splits
// large tensors over its threads.
#pragma once

#include "ActivationMath.h"
#include "Backend.h"
#include "OptimizerMath.h"

#include <cstdint>
#include <string>
#include <vector>

namespace il::simd {

// ---- targets (CpuTargets.cpp) ---------------------------------------------------------------
struct Target {
    std::string key;  // what IRONLEARN_SIMD takes: "ssse3", "sse4", "avx2", "avx512"
    std::string name; // for people: "SSE4", "AVX2", "AVX-512"
};
// The targets this binary carries that this CPU runs, best first.
std::vector<Target> availableTargets();
// The target the kernels use now.
Target activeTarget();
// Uses the target with this key from now on ("" or "best": the best available). Throws
// BackendError naming the available targets when the key is unknown or this CPU lacks it.
// Not for use while kernels run on other threads (tests and startup only).
void useTarget(const std::string& key);
// Applies IRONLEARN_SIMD once per process (later calls do nothing). Throws like useTarget.
void applyTargetFromEnvironment();

// ---- element-wise --------------------------------------------------------------------------
void fill(float* p, float value, int64_t n);
// y = a x + b y
void axpby(float a, const float* x, float b, float* y, int64_t n);
// dst += src
void addTo(const float* src, float* dst, int64_t n);
// y = f(x); y may alias x.
void activationForward(Activation act, float param, const float* x, float* y, int64_t n);
// dx = backward(in, dy); in is x or y as the activation says. dx may alias dy.
void activationBackward(Activation act, float param, const float* in, const float* dy, float* dx,
                        int64_t n);
// s = sin(z), c = cos(z)
void sinCos(const float* z, float* s, float* c, int64_t n);
// dz = gs * cos(z) - gc * sin(z); dz may alias z.
void fourierBackward(const float* z, const float* gs, const float* gc, float* dz, int64_t n);
// The rule's update over n elements (OptimizerMath.h); gradients times scale.
void optimizerUpdate(OptimizerRule rule, const OptimizerHyper& h, float scale, float* w,
                     const float* g, const optimizers::Slots& slots, int64_t n);

// ---- multiresolution hash encoding (HashGridMath.h) -----------------------------------------
// y (rows x g.outputs()) from x (rows x 2): every level, vectorised over rows (gathers).
void hashGridForward(const HashGrid& g, const float* x, const float* tables, float* y,
                     int64_t rows);
// Level l's block of dtables += dy scattered through the interpolation weights of rows
// [0, rows), in row order (so a level's sums do not depend on threads or targets).
void hashGridBackwardLevel(const HashGrid& g, int level, const float* x, const float* dy,
                           float* dtables, int64_t rows);

// ---- reductions (fixed order, see above) ----------------------------------------------------
float sumSquares(const float* x, int64_t n);
// acc[c] += x[i * stride + c] for every row i < rows, column c < cols (rows in order).
void accumulateRows(const float* x, int64_t rows, int64_t stride, int64_t cols, float* acc);
// MSE, MAE or BCE-with-logits over n elements: the sum of the element losses; when grad is not
// null it gets the gradient of the mean (invN = 1 / total elements). weights: null, or for BCE
// the class weights w0, w1 (Backend::lossForwardBackward), each element weighing
// w0 + t (w1 - w0).
float pointLoss(LossKind kind, const float* z, const float* t, const float* weights, float* grad,
                float invN, int64_t n);
// Softmax cross-entropy with label smoothing s over rows [first, last) of k logits: the sum of
// the row losses; grad (if not null) gets the gradient of their mean (invRows = 1 / all rows).
// weights: null, or k class weights, row i weighing weights[class_i]. A class id outside
// 0..k-1 sets *badRow (the largest such row) and skips the row.
double crossEntropyRows(const float* z, const float* t, const float* weights, int64_t first,
                        int64_t last, int64_t k, float s, float invRows, float* grad,
                        int64_t* badRow);
// p = softmax(z * invT) over one row of k.
void softmaxRow(const float* z, float invT, float* p, int64_t k);

// ---- the approximations themselves (FastMath.h), for tests and benchmarks ----------------------
enum class MathFunction { Sin, Cos, Exp, Log1p, Tanh, Sigmoid };
void evaluate(MathFunction f, const float* x, float* y, int64_t n);

} // namespace il::simd
