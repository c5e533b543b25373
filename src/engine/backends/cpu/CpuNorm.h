// The CPU backend's layer and batch normalisation (Backend.h, NormMath.h): plain loops with the
// statistics in double, over the OpenMP threads. Every sum runs in a fixed order (a row's
// values left to right, a column's rows top to bottom), so results do not depend on the thread
// count. The shapes are checked by the caller (OpShapes.h).
#pragma once

#include "Tensor.h"

namespace il::cpu {

void layerNormForward(ConstTensor x, ConstTensor gamma, ConstTensor beta, float eps, Tensor y,
                      Tensor stats);
void layerNormBackward(ConstTensor x, ConstTensor gamma, ConstTensor stats, ConstTensor dy,
                       Tensor dx, Tensor dgamma, Tensor dbeta);
void batchNormForward(ConstTensor x, ConstTensor gamma, ConstTensor beta, float eps, float momentum,
                      bool training, Tensor runningMean, Tensor runningVar, Tensor y);
void batchNormBackward(ConstTensor x, ConstTensor gamma, float eps, ConstTensor dy, Tensor dx,
                       Tensor dgamma, Tensor dbeta);

} // namespace il::cpu
