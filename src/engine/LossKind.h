// The losses a backend computes (Backend::lossForwardBackward; formulas in LossMath.h).
#pragma once

namespace il {

enum class LossKind { MSE, MAE, BinaryCrossEntropy, CrossEntropy };

} // namespace il
