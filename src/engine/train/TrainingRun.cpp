// The loop of one training run (TrainingRun.h).
#include "TrainingRun.h"

#include "Errors.h"
#include "Limits.h"

#include <algorithm>

namespace il {

namespace {

// On a device each read makes the host wait for the GPU: at most every 25 steps there.
constexpr int64_t kDeviceReadEvery = 25;

// The loss of predicting the mean of the training targets, for the watch (NaN when it is off).
double watchBaseline(const RunPolicy& policy, const TrainerConfig& cfg, const Network& net,
                     const TrainingData& data)
{
    if (!policy.watch.enabled) return NAN;
    return baselineLoss(net.backend(), cfg.loss, cfg.labelSmoothing, data.trainY, net.outputWidth(),
                        cfg.classWeights);
}

} // namespace

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
    copyToHostIfDue(true);
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
            // read back, evaluate, report, copy
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
    if (m_stepsSinceRead == 0) copyToHostIfDue(false); // the scalars were just read: good
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

void TrainingRun::copyToHostIfDue(bool force)
{
    if (!m_device || (!force && elapsed() - m_lastSnapshot < m_t.m_policy.hostCopySeconds)) return;
    m_lastGood = std::make_shared<HostCopy>(takeHostCopy(m_t.m_net, m_t.m_opt, m_state));
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

} // namespace il
