// The CPU backend's losses: value and gradient in one pass, summed deterministically. The
// formulas are LossMath.h's, shared with the CUDA kernels. Internal to the CPU backend.
#pragma once

#include "Backend.h"
#include "CpuParallel.h"

namespace il::cpu {

// The mean loss of pred against target (class ids for cross-entropy), each term weighed by its
// class when classWeights is not empty (Backend::lossForwardBackward). Writes the gradient of
// that mean into grad (pred's shape) unless grad is null. Throws ShapeError for mismatched
// shapes and BackendError for a class id outside 0..k-1.
double meanLoss(ChunkedSum& sum, LossKind kind, float smoothing, ConstTensor classWeights,
                ConstTensor pred, ConstTensor target, float* grad);

} // namespace il::cpu
