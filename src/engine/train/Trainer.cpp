// Trainer: the checks of a run's shape and settings, then one TrainingRun (TrainingRun.cpp).
#include "Trainer.h"
#include "Errors.h"
#include "HostCopy.h"
#include "Limits.h"
#include "TrainingRun.h"

#include <algorithm>
#include <chrono>

namespace il {

namespace {

// The class weights fit the loss and the setting: a weighting without weights (a caller that
// forgot Task::classWeights) would silently train unweighted.
void checkClassWeights(const TrainerConfig& cfg, const Network& net)
{
    const auto count = static_cast<int64_t>(cfg.classWeights.size());
    if (cfg.classWeighting != ClassWeighting::None && count == 0)
        throw EngineError("class weighting " + classWeightingName(cfg.classWeighting) +
                          " needs the class weights of the training rows, and none were given");
    if (count == 0) return;
    const int64_t want = cfg.loss == LossKind::CrossEntropy         ? net.outputWidth()
                         : cfg.loss == LossKind::BinaryCrossEntropy ? 2
                                                                    : 0;
    if (want == 0)
        throw EngineError("class weights apply to classification losses (bce, cross-entropy), "
                          "not to " +
                          lossName(cfg.loss));
    if (count != want)
        throw EngineError(std::to_string(count) + " class weights for a loss over " +
                          std::to_string(want) + " classes");
    for (float w : cfg.classWeights)
        if (!(w >= 0.f && std::isfinite(w)))
            throw EngineError("class weights must be finite and not negative, got " +
                              std::to_string(w));
}

RunShape checkRun(const Network& net, const TrainerConfig& cfg, const TrainingData& data)
{
    RunShape s;
    s.rows = data.trainX.rows();
    const int64_t yCols = cfg.loss == LossKind::CrossEntropy ? 1 : net.outputWidth();
    if (s.rows == 0) throw EngineError("there are no training rows");
    if (data.trainX.cols() != net.inputWidth())
        throw ShapeError("the data has " + std::to_string(data.trainX.cols()) +
                         " input columns but the network expects " +
                         std::to_string(net.inputWidth()));
    if (data.trainY.rows() != s.rows || data.trainY.cols() != yCols)
        throw ShapeError("targets are " + data.trainY.shape.toString() + ", expected " +
                         std::to_string(s.rows) + "x" + std::to_string(yCols));
    s.hasVal = data.valX.rows() > 0;
    if (s.hasVal && (data.valX.cols() != data.trainX.cols() ||
                     data.valY.rows() != data.valX.rows() || data.valY.cols() != yCols))
        throw ShapeError("validation data " + data.valX.shape.toString() + " / " +
                         data.valY.shape.toString() + " does not match the training data");

    checkClassWeights(cfg, net);
    s.batch = (cfg.batchSize <= 0 || cfg.batchSize >= s.rows) ? s.rows : cfg.batchSize;
    s.stepsPerEpoch = Trainer::stepsPerEpoch(s.rows, s.batch);
    if (cfg.epochs > 0) s.planned = cfg.epochs * s.stepsPerEpoch;
    if (cfg.steps > 0) s.planned = s.planned > 0 ? std::min(s.planned, cfg.steps) : cfg.steps;
    if (s.planned == 0 && cfg.maxSeconds <= 0)
        throw EngineError("no training budget: give a number of epochs, steps or seconds");
    return s;
}

} // namespace

std::string classWeightingName(ClassWeighting w)
{
    switch (w) {
    case ClassWeighting::None:
        return "none";
    case ClassWeighting::Balanced:
        return "balanced";
    }
    return "?";
}

bool parseClassWeighting(const std::string& s, ClassWeighting& w)
{
    if (s == "none")
        w = ClassWeighting::None;
    else if (s == "balanced")
        w = ClassWeighting::Balanced;
    else
        return false;
    return true;
}

std::vector<float> balancedClassWeights(const std::vector<int64_t>& counts)
{
    int64_t rows = 0, present = 0;
    for (int64_t c : counts) {
        rows += std::max<int64_t>(c, 0);
        present += c > 0 ? 1 : 0;
    }
    std::vector<float> w(counts.size(), 1.f);
    for (size_t c = 0; c < counts.size(); ++c)
        if (counts[c] > 0)
            w[c] = static_cast<float>(static_cast<double>(rows) / (static_cast<double>(present) *
                                                                   static_cast<double>(counts[c])));
    return w;
}

std::string stopReasonName(StopReason r)
{
    switch (r) {
    case StopReason::Finished:
        return "finished";
    case StopReason::TimeBudget:
        return "time budget reached";
    case StopReason::EarlyStopping:
        return "early stopping";
    case StopReason::TargetReached:
        return "target reached";
    case StopReason::Cancelled:
        return "cancelled";
    case StopReason::NonFinite:
        return "stopped on a non-finite value";
    case StopReason::DeviceFailure:
        return "the device failed";
    }
    return "?";
}

Trainer::Trainer(Network& network, Optimizer& optimizer, const TrainerConfig& config,
                 TrainingState& state, const RunPolicy& policy)
    : m_net(network), m_opt(optimizer), m_config(config), m_policy(policy), m_state(state)
{
}

Trainer::~Trainer() = default;

void Trainer::setMetricHook(MetricHook hook, double target, bool lowerIsBetter)
{
    m_metric = std::move(hook);
    m_metricTarget = target;
    m_metricLowerIsBetter = lowerIsBetter;
}

int64_t Trainer::stepsPerEpoch(int64_t rows, int64_t batchSize)
{
    if (rows <= 0) return 0;
    const int64_t batch = (batchSize <= 0 || batchSize >= rows) ? rows : batchSize;
    return (rows + batch - 1) / batch;
}

double Trainer::evaluateLoss(Network& net, LossKind loss, ConstTensor x, ConstTensor y,
                             Buffer& scratch, ConstTensor classWeights)
{
    Backend& b = net.backend();
    if (scratch.floats() < 1) scratch = Buffer(&b, 1);
    const int64_t chunk = inferenceChunkRows(net, 4096); // bounded memory at any width
    double total = 0;
    for (int64_t r = 0; r < x.rows(); r += chunk) {
        const int64_t n = std::min(chunk, x.rows() - r);
        Tensor out = net.forward(x.rowSlice(r, n), false);
        b.lossForward(loss, 0.f, classWeights, out, y.rowSlice(r, n), scratch.data(), false);
        float v = 0;
        b.download(&v, scratch.data(), sizeof(float));
        total += static_cast<double>(v) * static_cast<double>(n);
    }
    return x.rows() > 0 ? total / static_cast<double>(x.rows()) : NAN;
}

// One call of Trainer::run: the loop around the step, and its bookkeeping. Read run() top to
// bottom; each part of a step's aftermath is one member function below it.

TrainResult Trainer::run(const TrainingData& data)
{
    const RunShape shape = checkRun(m_net, m_config, data);
    m_state.plannedSteps = shape.planned;
    // A state saved with other data (or a file that claims it) can be past the end of this
    // data's epoch, where a batch would start beyond the last row: the rest of that epoch does
    // not exist here, so the run starts the next one.
    if (m_state.stepInEpoch >= shape.stepsPerEpoch) {
        m_state.stepInEpoch = 0;
        ++m_state.epoch;
    }
    TrainResult result;
    result.schedule = m_config.schedule;
    if (!m_state.history.empty()) { // until this run records its own
        result.trainLoss = m_state.history.back().trainLoss;
        result.valLoss = m_state.history.back().valLoss;
    }
    if (shape.planned > 0 && m_state.step >= shape.planned) {
        result.reason = StopReason::Finished;
        result.message = "already trained " + std::to_string(m_state.step) + " of " +
                         std::to_string(shape.planned) +
                         " steps; raise the budget to train further";
        return result;
    }
    return TrainingRun(*this, data, shape, std::move(result)).run();
}

void keepLoweredRates(TrainerConfig& config, const ScheduleConfig& lowered)
{
    const float factor = config.schedule.lrMax > 0.f ? lowered.lrMax / config.schedule.lrMax : 1.f;
    for (const GroupSettings& g : std::vector<GroupSettings>(config.optimizer.groups()))
        if (g.lr > 0.f) config.optimizer.setGroupLr(g.group, g.lr * factor);
    config.schedule = lowered;
}

} // namespace il
