#include "Optimizer.h"
#include "Errors.h"

#include <algorithm>

#include <cmath>
#include <numbers>

namespace il {

double learningRate(const ScheduleConfig& s, int64_t step, int64_t totalSteps)
{
    double lr = s.lrMax;
    switch (s.kind) {
    case ScheduleKind::Constant:
        break;
    case ScheduleKind::StepDecay:
        lr = s.lrMax * std::pow(static_cast<double>(s.gamma),
                                static_cast<double>(step / std::max<int64_t>(1, s.stepEvery)));
        break;
    case ScheduleKind::Cosine: {
        const double t = std::clamp(static_cast<double>(step), 0.0,
                                    static_cast<double>(std::max<int64_t>(totalSteps, 1)));
        const double T = static_cast<double>(std::max<int64_t>(totalSteps, 1));
        lr = s.lrMin + (s.lrMax - s.lrMin) * 0.5 * (1.0 + std::cos(std::numbers::pi * t / T));
        break;
    }
    }
    if (s.warmupSteps > 0 && step < s.warmupSteps)
        lr *= static_cast<double>(step + 1) / static_cast<double>(s.warmupSteps);
    return lr;
}

Optimizer::Optimizer(Backend& backend, const OptimizerConfig& config, int64_t parameterCount)
    : m_backend(backend), m_config(config), m_count(parameterCount)
{
    const auto n = static_cast<size_t>(parameterCount);
    switch (config.kind) {
    case OptimizerKind::SGD:
        break;
    case OptimizerKind::Momentum:
        m_first = Buffer(&backend, n);
        break;
    case OptimizerKind::Adam:
    case OptimizerKind::AdamW:
        m_first = Buffer(&backend, n);
        m_second = Buffer(&backend, n);
        break;
    }
    reset();
}

void Optimizer::reset()
{
    if (m_first.floats()) m_backend.fill(m_first.view(1, m_count), 0.f);
    if (m_second.floats()) m_backend.fill(m_second.view(1, m_count), 0.f);
}

void Optimizer::step(Tensor params, ConstTensor grads, float lr, int64_t step, const float* guard)
{
    if (params.size() != m_count)
        throw ShapeError("optimizer: " + std::to_string(params.size()) + " parameters, state for " +
                         std::to_string(m_count));
    switch (m_config.kind) {
    case OptimizerKind::SGD:
    case OptimizerKind::Momentum: {
        SgdParams p;
        p.lr = lr;
        p.momentum = m_config.kind == OptimizerKind::Momentum ? m_config.momentum : 0.f;
        p.weightDecay = m_config.weightDecay;
        m_backend.sgdStep(params, grads, m_first.floats() ? m_first.view(1, m_count) : Tensor{}, p,
                          guard);
        break;
    }
    case OptimizerKind::Adam:
    case OptimizerKind::AdamW: {
        AdamParams p;
        p.lr = lr;
        p.beta1 = m_config.beta1;
        p.beta2 = m_config.beta2;
        p.eps = m_config.eps;
        p.weightDecay = m_config.weightDecay;
        p.decoupled = m_config.kind == OptimizerKind::AdamW;
        p.step = step;
        m_backend.adamStep(params, grads, m_first.view(1, m_count), m_second.view(1, m_count), p,
                           guard);
        break;
    }
    }
}

std::vector<std::pair<std::string, Tensor>> Optimizer::state() const
{
    switch (m_config.kind) {
    case OptimizerKind::SGD:
        return {};
    case OptimizerKind::Momentum:
        return {{"optimizer.velocity", m_first.view(1, m_count)}};
    case OptimizerKind::Adam:
    case OptimizerKind::AdamW:
        return {{"optimizer.m", m_first.view(1, m_count)},
                {"optimizer.v", m_second.view(1, m_count)}};
    }
    return {};
}

std::string optimizerName(OptimizerKind k)
{
    switch (k) {
    case OptimizerKind::SGD:
        return "sgd";
    case OptimizerKind::Momentum:
        return "momentum";
    case OptimizerKind::Adam:
        return "adam";
    case OptimizerKind::AdamW:
        return "adamw";
    }
    return "?";
}

bool parseOptimizer(const std::string& s, OptimizerKind& k)
{
    if (s == "sgd")
        k = OptimizerKind::SGD;
    else if (s == "momentum" || s == "sgd-momentum")
        k = OptimizerKind::Momentum;
    else if (s == "adam")
        k = OptimizerKind::Adam;
    else if (s == "adamw")
        k = OptimizerKind::AdamW;
    else
        return false;
    return true;
}

std::string scheduleName(ScheduleKind k)
{
    switch (k) {
    case ScheduleKind::Constant:
        return "constant";
    case ScheduleKind::StepDecay:
        return "step";
    case ScheduleKind::Cosine:
        return "cosine";
    }
    return "?";
}

bool parseSchedule(const std::string& s, ScheduleKind& k)
{
    if (s == "constant")
        k = ScheduleKind::Constant;
    else if (s == "step")
        k = ScheduleKind::StepDecay;
    else if (s == "cosine")
        k = ScheduleKind::Cosine;
    else
        return false;
    return true;
}

std::string lossName(LossKind k)
{
    switch (k) {
    case LossKind::MSE:
        return "mse";
    case LossKind::MAE:
        return "mae";
    case LossKind::BinaryCrossEntropy:
        return "bce";
    case LossKind::CrossEntropy:
        return "cross-entropy";
    }
    return "?";
}

bool parseLoss(const std::string& s, LossKind& k)
{
    if (s == "mse")
        k = LossKind::MSE;
    else if (s == "mae")
        k = LossKind::MAE;
    else if (s == "bce" || s == "binary-cross-entropy")
        k = LossKind::BinaryCrossEntropy;
    else if (s == "cross-entropy" || s == "ce" || s == "crossentropy")
        k = LossKind::CrossEntropy;
    else
        return false;
    return true;
}

} // namespace il
