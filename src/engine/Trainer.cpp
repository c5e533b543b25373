// Long: Trainer and TrainingRun, its private run loop whose parts are members sharing one state.
#include "Trainer.h"
#include "Errors.h"
#include "Limits.h"
#include "Snapshot.h"
#include "TrainingStep.h"

#include <algorithm>
#include <chrono>

namespace il {

namespace {

using Clock = std::chrono::steady_clock;

// On a device each read makes the host wait for the GPU: at most every 25 steps there.
constexpr int64_t kDeviceReadEvery = 25;

// The shape of a run over the data: checked against the network.
struct RunShape {
    int64_t rows = 0;
    int64_t batch = 0;
    int64_t stepsPerEpoch = 0;
    int64_t planned = 0; // steps in total; 0: a time budget only
    bool hasVal = false;
};

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

// The loss of predicting the mean of the training targets, for the watch (NaN when it is off).
double watchBaseline(const RunPolicy& policy, const TrainerConfig& cfg, const Network& net,
                     const TrainingData& data)
{
    if (!policy.watch.enabled) return NAN;
    return baselineLoss(net.backend(), cfg.loss, cfg.labelSmoothing, data.trainY, net.outputWidth(),
                        cfg.classWeights);
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
class TrainingRun {
public:
    TrainingRun(Trainer& t, const TrainingData& data, const RunShape& shape, TrainResult result);
    TrainResult run();

private:
    bool budgetReached();                // finished, time budget or cancel: sets m_result
    bool afterStep(bool epochEnd);       // reads, evaluation, progress, snapshots; false: stop
    bool readScalars();                  // false: the guard saw a non-finite value
    void watch();                        // a window of the watch ends: a stall or divergence?
    void noticeOverfitting(bool atStop); // the overfit watch saw it: a notice
    void stopOnNonFinite();
    bool evaluate();          // a history point; true to stop (target, early stopping)
    HistoryPoint lossPoint(); // the mean loss since the previous row (pending sums reset)
    bool lossRowDue() const;  // RunPolicy::historyEvery: a loss-only row now?
    bool targetReached(const HistoryPoint& h);
    bool earlyStopping(const HistoryPoint& h);
    void report(bool evaluated);
    void snapshotIfDue(bool force);
    void deviceFailed(const BackendError& e, int64_t failedStep);
    TrainResult finish();

    double elapsed() const { return std::chrono::duration<double>(Clock::now() - m_start).count(); }
    double epochPosition() const
    {
        return static_cast<double>(m_state.epoch) + static_cast<double>(m_state.stepInEpoch) /
                                                        static_cast<double>(m_shape.stepsPerEpoch);
    }
    int64_t scheduleTotal() const;

    Trainer& m_t;
    const TrainerConfig& m_cfg;
    TrainingState& m_state;
    Backend& m_b;
    const TrainingData& m_data;
    const RunShape m_shape;
    TrainResult m_result;
    TrainingStep m_step;
    const int64_t m_readEvery;
    int64_t m_stepsSinceRead = 0;
    double m_lr = 0;
    ScheduleConfig m_schedule; // the config's, with the rates lowered by each recovery

    // The watch for a stall or divergence, and its line for the next report.
    TrainingWatch m_watch;
    std::string m_notice;
    // The watch for overfitting, and the training loss since the previous evaluation for it.
    OverfitWatch m_overfit;
    double m_evalLossSum = 0;
    int64_t m_evalLossSteps = 0;

    // Evaluation and early stopping.
    Buffer m_evalScratch;
    Buffer m_bestParams;      // the best weights seen in this call (an earlier session's are gone)
    bool m_haveBest = false;  // m_bestParams holds weights of this call
    bool m_bestInRun = false; // this call's evaluations improved on the best
    HistoryPoint m_bestPoint; // the best evaluation of this call (of m_bestParams)
    double m_lastValLoss = NAN, m_lastMetric = NAN;

    // Progress.
    const Clock::time_point m_start = Clock::now();
    const int64_t m_startStep;
    double m_lastReport = -1e9;
    double m_lastReportTime = 0;
    int64_t m_reportStep;
    double m_reportLossSum = 0;
    int64_t m_reportLossSteps = 0;

    // Host copies of good weights, on a device backend only.
    const bool m_device;
    std::shared_ptr<HostSnapshot> m_lastGood;
    double m_lastSnapshot = -1e9;
};

TrainingRun::TrainingRun(Trainer& t, const TrainingData& data, const RunShape& shape,
                         TrainResult result)
    : m_t(t), m_cfg(t.m_config), m_state(t.m_state), m_b(t.m_net.backend()), m_data(data),
      m_shape(shape), m_result(std::move(result)),
      m_step(t.m_net, t.m_opt, t.m_config, t.m_policy.recordSteps, data, shape.batch),
      m_readEvery(
          std::max<int64_t>(m_b.memoryOnHost() ? 1 : kDeviceReadEvery, t.m_policy.readEvery)),
      m_schedule(t.m_config.schedule),
      m_watch(t.m_policy.watch, t.m_net, t.m_opt, t.m_config.loss,
              watchBaseline(t.m_policy, t.m_config, t.m_net, data), t.m_state.step),
      m_overfit(t.m_policy.overfit), m_evalScratch(&m_b, 1), m_startStep(t.m_state.step),
      m_reportStep(t.m_state.step), m_device(!m_b.memoryOnHost())
{
    if (m_cfg.patience > 0 && m_cfg.restoreBest && shape.hasVal)
        m_bestParams = Buffer(&m_b, static_cast<size_t>(t.m_net.weights().size()));
    if (m_state.stepInEpoch > 0) m_step.loadEpochOrder(m_state.epoch);
    // A resumed run goes on watching the curve it continues: overfitting already seen there is
    // not noticed again (until the validation loss recovers).
    if (shape.hasVal) m_overfit.replay(m_state.history);
    // Loss-only rows come every few steps: no allocation for them inside the loop.
    if (t.m_policy.historyEvery > 0) m_state.history.reserve(m_state.history.limit());
}

TrainResult TrainingRun::run()
{
    snapshotIfDue(true);
    m_lr = learningRate(m_schedule, m_state.step, scheduleTotal());
    int64_t failedStep = -1;
    try {
        for (;;) {
            failedStep = m_state.step;
            if (budgetReached()) break;
            // gather, forward, loss, backward, guard
            if (m_state.stepInEpoch == 0) m_step.loadEpochOrder(m_state.epoch);
            m_step.gradients(m_state.stepInEpoch, m_state.step, m_state.step > m_startStep);
            // update
            m_lr = learningRate(m_schedule, m_state.step, scheduleTotal());
            m_step.update(static_cast<float>(m_lr), m_state.step);
            ++m_state.step;
            ++m_stepsSinceRead;
            bool epochEnd = false;
            if (++m_state.stepInEpoch >= m_shape.stepsPerEpoch) {
                m_state.stepInEpoch = 0;
                ++m_state.epoch;
                epochEnd = true;
            }
            // read back, evaluate, report, snapshot
            if (!afterStep(epochEnd)) break;
        }
        if (m_result.reason != StopReason::NonFinite && m_stepsSinceRead > 0 && !readScalars())
            stopOnNonFinite();
        m_b.synchronize();
    } catch (const BackendError& e) {
        if (!m_device || !m_lastGood) throw;
        deviceFailed(e, failedStep);
    }
    return finish();
}

int64_t TrainingRun::scheduleTotal() const
{
    if (m_shape.planned > 0) return m_shape.planned;
    // Time budget only: stretch the schedule over the seconds given.
    const double e = elapsed();
    const int64_t done = m_state.step - m_startStep;
    if (done < 2 || e <= 0) return std::max<int64_t>(m_state.step + 1, 1000);
    return std::max<int64_t>(
        m_state.step + 1, m_state.step + static_cast<int64_t>(done / e * (m_cfg.maxSeconds - e)));
}

bool TrainingRun::budgetReached()
{
    if ((m_shape.planned > 0 && m_state.step >= m_shape.planned) ||
        (m_cfg.stopAfter > 0 && m_state.step >= m_cfg.stopAfter)) {
        m_result.reason = StopReason::Finished;
        return true;
    }
    if (m_cfg.maxSeconds > 0 && elapsed() >= m_cfg.maxSeconds) {
        m_result.reason = StopReason::TimeBudget;
        m_result.message =
            "stopped after the time budget of " + std::to_string(m_cfg.maxSeconds) + " s";
        return true;
    }
    if (m_t.m_cancel) {
        m_result.reason = StopReason::Cancelled;
        m_result.message = "stopped at step " + std::to_string(m_state.step);
        return true;
    }
    return false;
}

bool TrainingRun::afterStep(bool epochEnd)
{
    const bool lastStep = (m_shape.planned > 0 && m_state.step >= m_shape.planned) ||
                          (m_cfg.stopAfter > 0 && m_state.step >= m_cfg.stopAfter);
    const bool evalNow = m_cfg.evalEvery > 0 ? (m_state.step % m_cfg.evalEvery == 0) : epochEnd;
    const double now = elapsed();
    // Without a progress callback there is nothing to report, and no reason to read.
    bool reportNow = m_t.m_progress && now - m_lastReport >= m_t.m_policy.progressInterval;
    const bool windowEnd = m_watch.windowEndsAt(m_state.step);
    if (m_stepsSinceRead >= m_readEvery || evalNow || lastStep || reportNow || windowEnd) {
        if (!readScalars()) {
            stopOnNonFinite();
            return false;
        }
    }
    if (windowEnd) {
        watch();
        reportNow = reportNow || (m_t.m_progress && !m_notice.empty());
    }
    bool stop = false;
    const bool evaluated = evalNow || (lastStep && m_state.pendingSteps > 0);
    if (evaluated)
        stop = evaluate();
    else if (lossRowDue())
        m_state.history.add(lossPoint());
    if (evaluated || reportNow || lastStep) report(evaluated);
    if (m_stepsSinceRead == 0) snapshotIfDue(false); // the scalars were just read: good
    return !stop;
}

bool TrainingRun::readScalars()
{
    double sum = 0;
    if (!m_step.read(sum)) return false;
    m_state.pendingLossSum += sum;
    m_state.pendingSteps += m_stepsSinceRead;
    m_watch.add(sum, m_stepsSinceRead);
    m_reportLossSum += sum;
    m_reportLossSteps += m_stepsSinceRead;
    m_evalLossSum += sum;
    m_evalLossSteps += m_stepsSinceRead;
    m_stepsSinceRead = 0;
    return true;
}

void TrainingRun::watch()
{
    const TrainingWatch::Verdict verdict = m_watch.closeWindow(m_state.step);
    if (verdict == TrainingWatch::Verdict::None) return;
    m_notice = m_watch.respond(verdict, m_state.step, m_schedule);
    m_result.notices.push_back(m_notice);
    m_lr = learningRate(m_schedule, m_state.step, scheduleTotal()); // lowered by a recovery
}

void TrainingRun::stopOnNonFinite()
{
    // Updates from the bad step on were skipped on the device: the weights are those after
    // step badStep. Rewind the counters to match, so a save + resume is consistent.
    const int64_t badStep = m_step.badStep();
    m_state.step = badStep;
    m_state.epoch = badStep / m_shape.stepsPerEpoch;
    m_state.stepInEpoch = badStep % m_shape.stepsPerEpoch;
    m_state.pendingLossSum = 0;
    m_state.pendingSteps = 0;
    m_result.reason = StopReason::NonFinite;
    m_result.message = "training stopped at step " + std::to_string(badStep + 1) + ": " +
                       m_step.describeFailure() +
                       "; the weights from before that step were kept. Try a lower learning "
                       "rate or gradient clipping.";
}

HistoryPoint TrainingRun::lossPoint()
{
    HistoryPoint h;
    h.step = m_state.step;
    h.epoch = epochPosition();
    h.trainLoss = m_state.pendingSteps > 0
                      ? m_state.pendingLossSum / static_cast<double>(m_state.pendingSteps)
                      : NAN;
    h.lr = m_lr;
    m_state.pendingLossSum = 0;
    m_state.pendingSteps = 0;
    return h;
}

bool TrainingRun::lossRowDue() const
{
    const int64_t every = m_t.m_policy.historyEvery;
    if (every <= 0 || m_stepsSinceRead > 0 || m_state.pendingSteps == 0) return false;
    const int64_t last = m_state.history.empty() ? 0 : m_state.history.back().step;
    return m_state.step - last >= every;
}

bool TrainingRun::evaluate()
{
    HistoryPoint h = lossPoint();
    if (m_shape.hasVal) {
        // Weighted like the training loss, so early stopping follows the weighted objective.
        h.valLoss = Trainer::evaluateLoss(m_t.m_net, m_cfg.loss, m_data.valX, m_data.valY,
                                          m_evalScratch, m_step.classWeights());
        m_lastValLoss = h.valLoss;
    }
    if (m_t.m_metric) {
        h.metric = m_t.m_metric(m_t.m_net);
        m_lastMetric = h.metric;
    }
    m_state.history.add(h);
    m_result.trainLoss = h.trainLoss;
    m_result.valLoss = h.valLoss;
    bool noticed = false;
    if (m_shape.hasVal) {
        // The training loss since the previous evaluation (history rows between evaluations, with
        // RunPolicy::historyEvery, cover only part of it).
        const double train =
            m_evalLossSteps > 0 ? m_evalLossSum / static_cast<double>(m_evalLossSteps) : NAN;
        noticed = m_overfit.add(h.step, train, h.valLoss);
    }
    m_evalLossSum = 0;
    m_evalLossSteps = 0;
    // Early stopping may end the run at this very evaluation: the notice then says so.
    const bool stop = targetReached(h) || earlyStopping(h);
    if (noticed) noticeOverfitting(stop && m_result.reason == StopReason::EarlyStopping);
    return stop;
}

void TrainingRun::noticeOverfitting(bool atStop)
{
    std::string line =
        "step " + std::to_string(m_state.step) + ": " + OverfitWatch::describe(m_overfit.last());
    if (m_cfg.patience <= 0)
        line += "; training goes on (early stopping is off)";
    else if (atStop)
        line += "; early stopping ends the run";
    else
        line += "; early stopping ends the run after " + std::to_string(m_cfg.patience) +
                " evaluations without a new best";
    m_result.notices.push_back(line);
    m_notice = m_notice.empty() ? line : m_notice + "; " + line;
}

bool TrainingRun::targetReached(const HistoryPoint& h)
{
    const bool val = m_shape.hasVal;
    const double monitored = val ? h.valLoss : h.trainLoss;
    if (!std::isnan(monitored) && monitored <= m_cfg.targetLoss) {
        m_result.reason = StopReason::TargetReached;
        m_result.message = std::string("reached the target ") + (val ? "validation" : "training") +
                           " loss at step " + std::to_string(m_state.step);
        return true;
    }
    const double target = m_t.m_metricTarget;
    if (m_t.m_metric && !std::isnan(target) && !std::isnan(h.metric) &&
        (m_t.m_metricLowerIsBetter ? h.metric <= target : h.metric >= target)) {
        m_result.reason = StopReason::TargetReached;
        m_result.message = "reached the target metric at step " + std::to_string(m_state.step);
        return true;
    }
    return false;
}

bool TrainingRun::earlyStopping(const HistoryPoint& h)
{
    if (m_cfg.patience <= 0 || !m_shape.hasVal) return false;
    const Tensor params = m_t.m_net.weights();
    const size_t bytes = m_bestParams.floats() * sizeof(float);
    if (h.valLoss < m_state.bestValLoss - m_cfg.minDelta) {
        m_state.bestValLoss = h.valLoss;
        m_state.evalsWithoutImprovement = 0;
        m_bestInRun = true;
        m_bestPoint = h;
        if (m_bestParams.floats()) {
            m_b.copy(m_bestParams.data(), params.data, bytes);
            m_haveBest = true;
        }
        return false;
    }
    if (++m_state.evalsWithoutImprovement < m_cfg.patience) return false;
    // The patience is a sustained stretch of its own: overfitting the watch has not yet
    // confirmed is said now, before the run's last message.
    if (m_overfit.stretchAtStop(m_state.step)) noticeOverfitting(true);
    const std::string best = "best " + std::to_string(m_state.bestValLoss);
    const std::string at = m_bestInRun ? " at step " + std::to_string(m_bestPoint.step) : "";
    std::string kept;
    if (m_haveBest) {
        m_b.copy(params.data, m_bestParams.data(), bytes);
        // Report the losses of the weights we keep, not of the last evaluation.
        m_result.trainLoss = m_bestPoint.trainLoss;
        m_result.valLoss = m_bestPoint.valLoss;
        m_result.restoredStep = m_bestPoint.step;
        kept =
            "; the best weights, of step " + std::to_string(m_bestPoint.step) + ", were restored";
    } else if (!m_cfg.restoreBest) {
        kept = "; the weights of the last step were kept (restoring the best is off)";
    } else {
        kept = " (reached in an earlier session; the current weights were kept)";
    }
    m_result.reason = StopReason::EarlyStopping;
    m_result.message = "validation loss did not improve for " + std::to_string(m_cfg.patience) +
                       " evaluations; " + best + at + kept;
    return true;
}

void TrainingRun::report(bool evaluated)
{
    if (!m_t.m_progress) return;
    const int64_t planned = m_shape.planned;
    Progress p;
    p.step = m_state.step;
    p.plannedSteps = planned;
    p.epoch = epochPosition();
    p.trainLoss =
        m_reportLossSteps > 0 ? m_reportLossSum / static_cast<double>(m_reportLossSteps) : NAN;
    p.valLoss = m_lastValLoss;
    p.metric = m_lastMetric;
    p.lr = m_lr;
    const double now = elapsed();
    const double dt = now - m_lastReportTime;
    p.stepsPerSecond = dt > 0 ? static_cast<double>(m_state.step - m_reportStep) / dt : 0;
    p.elapsed = now;
    if (planned > 0) {
        const double rate = static_cast<double>(m_state.step - m_startStep) / std::max(now, 1e-9);
        p.eta = rate > 0 ? static_cast<double>(planned - m_state.step) / rate : NAN;
    }
    if (m_cfg.maxSeconds > 0)
        p.eta =
            std::isnan(p.eta) ? m_cfg.maxSeconds - now : std::min(p.eta, m_cfg.maxSeconds - now);
    p.evaluated = evaluated;
    p.notice = std::move(m_notice);
    m_notice.clear();
    m_reportStep = m_state.step;
    m_lastReportTime = now;
    m_reportLossSum = 0;
    m_reportLossSteps = 0;
    m_lastReport = now;
    m_t.m_progress(p);
}

void TrainingRun::snapshotIfDue(bool force)
{
    if (!m_device || (!force && elapsed() - m_lastSnapshot < m_t.m_policy.snapshotSeconds)) return;
    m_lastGood = std::make_shared<HostSnapshot>(takeSnapshot(m_t.m_net, m_t.m_opt, m_state));
    m_lastSnapshot = elapsed();
}

void TrainingRun::deviceFailed(const BackendError& e, int64_t failedStep)
{
    // The device failed: its memory may be unreadable now. Go back to the last host copy.
    const int64_t goodStep = m_lastGood->state.step;
    std::string what = e.what();
    if (!what.empty() && what.back() != '.') what += '.';
    m_state = m_lastGood->state;
    std::vector<std::string> notices = std::move(m_result.notices);
    m_result = TrainResult();
    m_result.notices = std::move(notices);
    m_result.reason = StopReason::DeviceFailure;
    m_result.message = "the device failed at step " + std::to_string(failedStep + 1) + ": " + what +
                       " The weights after step " + std::to_string(goodStep) +
                       " were kept; training can continue on the CPU.";
    m_result.lastGood = m_lastGood;
    if (!m_state.history.empty()) {
        m_result.trainLoss = m_state.history.back().trainLoss;
        m_result.valLoss = m_state.history.back().valLoss;
    }
    report(false);
}

TrainResult TrainingRun::finish()
{
    if (m_result.reason == StopReason::NonFinite) {
        report(false);
    } else if (m_result.reason == StopReason::Finished && m_result.message.empty()) {
        m_result.message = "finished " + std::to_string(m_state.step) + " steps (" +
                           std::to_string(m_state.epoch) + " epochs)";
    }
    if (const std::string summary = m_watch.summary(m_schedule); !summary.empty())
        m_result.message += "; " + summary;
    m_result.overfitting = m_overfit.last();
    if (m_overfit.overfitting() && m_result.reason != StopReason::EarlyStopping) {
        // Said again at the end: the weights kept are the memorising ones.
        const int64_t since = m_overfit.last().bestStep;
        m_result.message += "; the validation loss has risen since step " + std::to_string(since) +
                            " while the training loss fell (overfitting): these are the weights "
                            "of the last step";
        if (m_cfg.patience <= 0)
            m_result.message +=
                ", early stopping would have kept those of step " + std::to_string(since);
    }
    m_result.recoveries = m_watch.recoveriesDone();
    m_result.schedule = m_schedule;
    m_result.steps = m_state.step - m_startStep;
    m_result.seconds = elapsed();
    m_state.seconds += m_result.seconds;
    if (std::isnan(m_result.trainLoss) && m_state.pendingSteps > 0)
        m_result.trainLoss = m_state.pendingLossSum / static_cast<double>(m_state.pendingSteps);
    return m_result;
}

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
