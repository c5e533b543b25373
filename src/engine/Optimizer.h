// Optimizers, learning-rate schedules and gradient clipping.
#pragma once

#include "Backend.h"

#include <string>
#include <vector>

namespace il {

enum class OptimizerKind { SGD, Momentum, Adam, AdamW };
enum class ScheduleKind { Constant, StepDecay, Cosine };

struct OptimizerConfig {
    OptimizerKind kind = OptimizerKind::Adam;
    float momentum = 0.9f; // Momentum
    float beta1 = 0.9f;    // Adam, AdamW
    float beta2 = 0.999f;
    float eps = 1e-8f;
    float weightDecay = 0.f; // L2 for SGD/Momentum/Adam, decoupled for AdamW (default 0.01)
};

// lr(t) for step t of a run of T steps:
//   constant:  lr_max
//   step:      lr_max * gamma^floor(t / stepEvery)
//   cosine:    lr_min + (lr_max - lr_min) * 0.5 * (1 + cos(pi * t / T))
// With warm-up, the first warmupSteps steps ramp linearly from lr_max / warmupSteps to the
// scheduled value (so step 0 never runs at lr 0).
struct ScheduleConfig {
    ScheduleKind kind = ScheduleKind::Cosine;
    float lrMax = 1e-3f;
    float lrMin = 0.f;
    int64_t stepEvery = 1000;
    float gamma = 0.5f;
    int64_t warmupSteps = 0;
};

double learningRate(const ScheduleConfig& s, int64_t step, int64_t totalSteps);

// Owns the optimizer state (one flat buffer per moment, same layout as the parameters).
class Optimizer {
public:
    Optimizer(Backend& backend, const OptimizerConfig& config, int64_t parameterCount);

    const OptimizerConfig& config() const { return m_config; }
    // One update of all parameters. step is 1-based (Adam's bias correction). The guard block
    // (Backend.h) scales gradients by its clip factor and skips the update after a bad step.
    void step(Tensor params, ConstTensor grads, float lr, int64_t step, const float* guard);
    // State tensors for saving: names "optimizer.m", "optimizer.v" or "optimizer.velocity".
    std::vector<std::pair<std::string, Tensor>> state() const;
    void reset();

private:
    Backend& m_backend;
    OptimizerConfig m_config;
    int64_t m_count;
    Buffer m_first;  // Adam m, or SGD velocity
    Buffer m_second; // Adam v
};

std::string optimizerName(OptimizerKind k);
bool parseOptimizer(const std::string& s, OptimizerKind& k);
std::string scheduleName(ScheduleKind k);
bool parseSchedule(const std::string& s, ScheduleKind& k);
std::string lossName(LossKind k);
bool parseLoss(const std::string& s, LossKind& k);

} // namespace il
