#include "Trainer.h"
#include "Errors.h"
#include "Snapshot.h"

#include <chrono>
#include <map>
#include <numeric>
#include <sstream>
#include <thread>

namespace il {

namespace {

using Clock = std::chrono::steady_clock;

// Layout of the small block of backend memory the hot loop writes its scalars to.
constexpr int SlotLossSum = 0;  // sum of step losses since the last read
constexpr int SlotStepLoss = 1; // this step's loss
constexpr int SlotGuard = 2;    // GuardSlots floats (Backend.h)
constexpr int SlotNorms = 8;    // one squared gradient norm per trainable tensor

std::string describeValue(float v)
{
    if (std::isnan(v)) return "NaN";
    return v > 0 ? "+Inf" : "-Inf";
}

} // namespace

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
                 TrainingState& state)
    : m_net(network), m_opt(optimizer), m_config(config), m_state(state)
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
                             Buffer& scratch)
{
    Backend& b = net.backend();
    if (scratch.floats() < 1) scratch = Buffer(&b, 1);
    const int64_t chunk = 4096;
    double total = 0;
    for (int64_t r = 0; r < x.rows(); r += chunk) {
        const int64_t n = std::min(chunk, x.rows() - r);
        Tensor out = net.forward(x.rowSlice(r, n));
        b.lossForward(loss, 0.f, out, y.rowSlice(r, n), scratch.data(), false);
        float v = 0;
        b.download(&v, scratch.data(), sizeof(float));
        total += static_cast<double>(v) * static_cast<double>(n);
    }
    return x.rows() > 0 ? total / static_cast<double>(x.rows()) : NAN;
}

TrainResult Trainer::run(const TrainingData& data)
{
    Backend& b = m_net.backend();
    const TrainerConfig& cfg = m_config;
    const int64_t rows = data.trainX.rows();
    const bool classIds = cfg.loss == LossKind::CrossEntropy;
    const int64_t yCols = classIds ? 1 : m_net.outputWidth();

    // ---- check the data against the network -------------------------------------------------
    if (rows == 0) throw EngineError("there are no training rows");
    if (data.trainX.cols() != m_net.inputWidth())
        throw ShapeError("the data has " + std::to_string(data.trainX.cols()) +
                         " input columns but the network expects " +
                         std::to_string(m_net.inputWidth()));
    if (data.trainY.rows() != rows || data.trainY.cols() != yCols)
        throw ShapeError("targets are " + data.trainY.shape.toString() + ", expected " +
                         std::to_string(rows) + "x" + std::to_string(yCols));
    const bool hasVal = data.valX.rows() > 0;
    if (hasVal && (data.valX.cols() != data.trainX.cols() || data.valY.rows() != data.valX.rows() ||
                   data.valY.cols() != yCols))
        throw ShapeError("validation data " + data.valX.shape.toString() + " / " +
                         data.valY.shape.toString() + " does not match the training data");

    const int64_t batch = (cfg.batchSize <= 0 || cfg.batchSize >= rows) ? rows : cfg.batchSize;
    const int64_t spe = stepsPerEpoch(rows, batch);
    int64_t planned = 0;
    if (cfg.epochs > 0) planned = cfg.epochs * spe;
    if (cfg.steps > 0) planned = planned > 0 ? std::min(planned, cfg.steps) : cfg.steps;
    if (planned == 0 && cfg.maxSeconds <= 0)
        throw EngineError("no training budget: give a number of epochs, steps or seconds");
    m_state.plannedSteps = planned;

    TrainResult result;
    if (!m_state.history.empty()) { // until this run records its own
        result.trainLoss = m_state.history.back().trainLoss;
        result.valLoss = m_state.history.back().valLoss;
    }
    if (planned > 0 && m_state.step >= planned) {
        result.reason = StopReason::Finished;
        result.message = "already trained " + std::to_string(m_state.step) + " of " +
                         std::to_string(planned) + " steps; raise the budget to train further";
        return result;
    }

    // ---- memory for the whole run: nothing below allocates inside the loop ----------------------
    const auto gradTensors = m_net.namedGradients();
    const int tensorCount = static_cast<int>(gradTensors.size());
    Buffer scalars(&b, static_cast<size_t>(SlotNorms + tensorCount));
    float* stepLoss = scalars.data() + SlotStepLoss;
    float* guard = scalars.data() + SlotGuard;
    float* norms = scalars.data() + SlotNorms;
    b.fill(scalars.view(1, static_cast<int64_t>(scalars.floats())), 0.f);
    const float guardInit[GuardSlots] = {1.f, 0.f, 0.f, 0.f};
    b.upload(guard, guardInit, sizeof(guardInit));

    const bool gather = batch < rows;
    Buffer batchX, batchY;
    IndexBuffer order;
    if (gather) {
        batchX = Buffer(&b, static_cast<size_t>(batch * data.trainX.cols()));
        batchY = Buffer(&b, static_cast<size_t>(batch * yCols));
        order = IndexBuffer(&b, static_cast<size_t>(rows));
        if (!cfg.shuffle) { // the same order every epoch: uploaded once
            std::vector<int32_t> identity(static_cast<size_t>(rows));
            std::iota(identity.begin(), identity.end(), 0);
            b.upload(order.data(), identity.data(), identity.size() * sizeof(int32_t));
        }
    }
    Buffer grad(&b, static_cast<size_t>(batch * m_net.outputWidth()));
    Buffer evalScratch(&b, 1);
    Buffer bestParams; // the best weights seen in this call (an earlier session's are gone)
    bool haveBest = false;
    if (cfg.patience > 0 && cfg.restoreBest && hasVal)
        bestParams = Buffer(&b, static_cast<size_t>(m_net.parameterCount()));
    m_net.reserve(batch);
    const Tensor params = m_net.parameters();
    const ConstTensor grads = m_net.gradients();
    const Tensor lossSumT = scalars.view(1, 1, SlotLossSum);
    const ConstTensor stepLossT = scalars.view(1, 1, SlotStepLoss);
    float readBack[SlotNorms];

    // Recorded steps (CUDA graphs), one per batch row count (a short last batch is another).
    // They point at the buffers above, so they are dropped before those are freed.
    struct DropRecordings {
        Backend& b;
        ~DropRecordings() { b.discardRecordings(); }
    } dropRecordings{b};
    bool record = cfg.recordSteps;
    std::map<int64_t, int> recordings;
    int64_t recordedReserve = -1;

    // Host copies of good weights, on a device backend only.
    const bool device = !b.memoryOnHost();
    std::shared_ptr<HostSnapshot> lastGood;

    // The order of an epoch's rows is made on the backend from one key: no copy per epoch.
    auto loadEpochOrder = [&](int64_t epoch) {
        if (!gather || !cfg.shuffle) return;
        b.shuffledOrder(Rng::derive(cfg.seed, "shuffle", static_cast<uint64_t>(epoch)).next(), rows,
                        order.data());
    };
    if (m_state.stepInEpoch > 0) loadEpochOrder(m_state.epoch);

    // ---- timing and reporting -------------------------------------------------------------
    const auto start = Clock::now();
    double pausedSeconds = 0;
    auto elapsed = [&] {
        return std::chrono::duration<double>(Clock::now() - start).count() - pausedSeconds;
    };
    const int64_t startStep = m_state.step;
    double lastReport = -1e9;
    int64_t reportStep = m_state.step;
    double reportLossSum = 0;
    int64_t reportLossSteps = 0;
    double lastReportTime = 0;
    int64_t stepsSinceRead = 0;
    double lastValLoss = NAN, lastMetric = NAN;
    double lastSnapshot = -1e9;
    // On a device each read makes the host wait for the GPU: at most every 25 steps there.
    constexpr int64_t kDeviceReadEvery = 25;
    const int64_t readEvery =
        std::max<int64_t>(b.memoryOnHost() ? 1 : kDeviceReadEvery, cfg.readEvery);

    auto scheduleTotal = [&]() -> int64_t {
        if (planned > 0) return planned;
        // Time budget only: stretch the schedule over the seconds given.
        const double e = elapsed();
        const int64_t done = m_state.step - startStep;
        if (done < 2 || e <= 0) return std::max<int64_t>(m_state.step + 1, 1000);
        return std::max<int64_t>(
            m_state.step + 1, m_state.step + static_cast<int64_t>(done / e * (cfg.maxSeconds - e)));
    };

    auto report = [&](bool evaluated, double lr) {
        if (!m_progress) return;
        Progress p;
        p.step = m_state.step;
        p.plannedSteps = planned;
        p.epoch = static_cast<double>(m_state.epoch) +
                  static_cast<double>(m_state.stepInEpoch) / static_cast<double>(spe);
        p.trainLoss =
            reportLossSteps > 0 ? reportLossSum / static_cast<double>(reportLossSteps) : NAN;
        p.valLoss = lastValLoss;
        p.metric = lastMetric;
        p.lr = lr;
        const double now = elapsed();
        const double dt = now - lastReportTime;
        p.stepsPerSecond = dt > 0 ? static_cast<double>(m_state.step - reportStep) / dt : 0;
        p.elapsed = now;
        if (planned > 0) {
            const double rate = static_cast<double>(m_state.step - startStep) / std::max(now, 1e-9);
            p.eta = rate > 0 ? static_cast<double>(planned - m_state.step) / rate : NAN;
        }
        if (cfg.maxSeconds > 0)
            p.eta =
                std::isnan(p.eta) ? cfg.maxSeconds - now : std::min(p.eta, cfg.maxSeconds - now);
        p.evaluated = evaluated;
        reportStep = m_state.step;
        lastReportTime = now;
        reportLossSum = 0;
        reportLossSteps = 0;
        lastReport = now;
        m_progress(p);
    };

    // Reads the loss sum and the guard back (the only host copy, every readEvery steps).
    // Returns false if the guard saw a non-finite value.
    auto readScalars = [&]() -> bool {
        b.download(readBack, scalars.data(), sizeof(readBack));
        if (readBack[SlotGuard + GuardBad] != 0.f) return false;
        const double sum = readBack[SlotLossSum];
        m_state.pendingLossSum += sum;
        m_state.pendingSteps += stepsSinceRead;
        reportLossSum += sum;
        reportLossSteps += stepsSinceRead;
        stepsSinceRead = 0;
        b.fill(lossSumT, 0.f);
        return true;
    };

    auto snapshotIfDue = [&](bool force) {
        if (!device || (!force && elapsed() - lastSnapshot < cfg.snapshotSeconds)) return;
        lastGood = std::make_shared<HostSnapshot>(takeSnapshot(m_net, m_opt, m_state));
        lastSnapshot = elapsed();
    };
    snapshotIfDue(true);

    auto nonFinite = [&]() {
        const auto badStep = static_cast<int64_t>(readBack[SlotGuard + GuardBadStep]);
        const auto badTensor = static_cast<int>(readBack[SlotGuard + GuardBadTensor]);
        // Updates from the bad step on were skipped on the device: the weights are those after
        // step badStep. Rewind the counters to match, so a save + resume is consistent.
        m_state.step = badStep;
        m_state.epoch = badStep / spe;
        m_state.stepInEpoch = badStep % spe;
        m_state.pendingLossSum = 0;
        m_state.pendingSteps = 0;
        std::ostringstream msg;
        msg << "training stopped at step " << (badStep + 1) << ": ";
        // Find where it went bad: the first layer whose output (last forward) is not finite...
        std::string where;
        const auto& layers = m_net.layers();
        for (size_t i = 0; i < layers.size() && where.empty(); ++i) {
            const auto out = b.toHost(m_net.layerOutput(static_cast<int>(i)));
            for (float v : out)
                if (!std::isfinite(v)) {
                    where = "the output of layer " + std::to_string(i + 1) + " \"" +
                            layers[i]->spec() + "\" became " + describeValue(v);
                    break;
                }
        }
        // ...otherwise the loss or the first gradient that did.
        if (where.empty() && badTensor >= 0 && badTensor < tensorCount) {
            const int layer = m_net.layerOfTensor(badTensor);
            where = "the gradient of " + gradTensors[static_cast<size_t>(badTensor)].name +
                    " (layer " + std::to_string(layer + 1) + " \"" +
                    layers[static_cast<size_t>(layer)]->spec() + "\") became NaN or Inf";
        }
        if (where.empty()) {
            const float loss = readBack[SlotStepLoss];
            where = std::string("the loss became ") +
                    (std::isfinite(loss) ? std::string("NaN or Inf") : describeValue(loss));
        }
        msg << where
            << "; the weights from before that step were kept. Try a lower learning "
               "rate or gradient clipping.";
        result.reason = StopReason::NonFinite;
        result.message = msg.str();
    };

    // Validation, history, early stopping and targets. Returns true to stop.
    auto evaluateAndRecord = [&](double lr) -> bool {
        HistoryPoint h;
        h.step = m_state.step;
        h.epoch = static_cast<double>(m_state.epoch) +
                  static_cast<double>(m_state.stepInEpoch) / static_cast<double>(spe);
        h.trainLoss = m_state.pendingSteps > 0
                          ? m_state.pendingLossSum / static_cast<double>(m_state.pendingSteps)
                          : NAN;
        h.lr = lr;
        m_state.pendingLossSum = 0;
        m_state.pendingSteps = 0;
        if (hasVal) {
            h.valLoss = evaluateLoss(m_net, cfg.loss, data.valX, data.valY, evalScratch);
            lastValLoss = h.valLoss;
        }
        if (m_metric) {
            h.metric = m_metric(m_net);
            lastMetric = h.metric;
        }
        m_state.history.push_back(h);
        result.trainLoss = h.trainLoss;
        result.valLoss = h.valLoss;

        const double monitored = hasVal ? h.valLoss : h.trainLoss;
        if (!std::isnan(monitored) && monitored <= cfg.targetLoss) {
            result.reason = StopReason::TargetReached;
            result.message = std::string("reached the target ") +
                             (hasVal ? "validation" : "training") + " loss at step " +
                             std::to_string(m_state.step);
            return true;
        }
        if (m_metric && !std::isnan(m_metricTarget) && !std::isnan(h.metric) &&
            (m_metricLowerIsBetter ? h.metric <= m_metricTarget : h.metric >= m_metricTarget)) {
            result.reason = StopReason::TargetReached;
            result.message = "reached the target metric at step " + std::to_string(m_state.step);
            return true;
        }
        if (cfg.patience > 0 && hasVal) {
            if (h.valLoss < m_state.bestValLoss - cfg.minDelta) {
                m_state.bestValLoss = h.valLoss;
                m_state.evalsWithoutImprovement = 0;
                if (bestParams.floats()) {
                    b.copy(bestParams.data(), params.data, bestParams.floats() * sizeof(float));
                    haveBest = true;
                }
            } else if (++m_state.evalsWithoutImprovement >= cfg.patience) {
                if (haveBest) {
                    b.copy(params.data, bestParams.data(), bestParams.floats() * sizeof(float));
                    // Report the losses of the weights we keep, not of the last evaluation.
                    for (auto it = m_state.history.rbegin(); it != m_state.history.rend(); ++it)
                        if (it->valLoss == m_state.bestValLoss) {
                            result.trainLoss = it->trainLoss;
                            result.valLoss = it->valLoss;
                            break;
                        }
                }
                result.reason = StopReason::EarlyStopping;
                result.message = "validation loss did not improve for " +
                                 std::to_string(cfg.patience) + " evaluations; best " +
                                 std::to_string(m_state.bestValLoss) +
                                 (haveBest ? " (those weights were restored)"
                                           : " (reached in an earlier session; the current "
                                             "weights were kept)");
                return true;
            }
        }
        return false;
    };

    // ---- the loop -----------------------------------------------------------------------------
    double lr = learningRate(cfg.schedule, m_state.step, scheduleTotal());
    bool stop = false;
    int64_t failedStep = -1;
    try {
        while (!stop) {
            failedStep = m_state.step;
            if (planned > 0 && m_state.step >= planned) {
                result.reason = StopReason::Finished;
                break;
            }
            if (cfg.maxSeconds > 0 && elapsed() >= cfg.maxSeconds) {
                result.reason = StopReason::TimeBudget;
                result.message =
                    "stopped after the time budget of " + std::to_string(cfg.maxSeconds) + " s";
                break;
            }
            if (m_paused && !m_cancel) {
                const auto pauseStart = Clock::now();
                while (m_paused && !m_cancel)
                    std::this_thread::sleep_for(std::chrono::milliseconds(5));
                pausedSeconds += std::chrono::duration<double>(Clock::now() - pauseStart).count();
            }
            if (m_cancel) {
                result.reason = StopReason::Cancelled;
                result.message = "cancelled at step " + std::to_string(m_state.step);
                break;
            }

            // One step.
            if (m_state.stepInEpoch == 0) loadEpochOrder(m_state.epoch);
            const int64_t first = m_state.stepInEpoch * batch;
            const int64_t n = std::min(batch, rows - first);
            ConstTensor xb = data.trainX, yb = data.trainY;
            if (gather) {
                Tensor bx = batchX.view(n, data.trainX.cols());
                Tensor by = batchY.view(n, yCols);
                b.gatherRows(data.trainX, order.data(), first, bx);
                b.gatherRows(data.trainY, order.data(), first, by);
                xb = bx;
                yb = by;
            }
            // Forward, loss, backward and norms take the same pointers and shapes every step (the
            // batch is gathered into one buffer), so a backend that records replays them.
            auto body = [&, xb, yb, n] {
                Tensor out = m_net.forward(xb);
                Tensor g = grad.view(n, m_net.outputWidth());
                b.lossForwardBackward(cfg.loss, cfg.labelSmoothing, out, yb, g, stepLoss, false);
                b.axpby(1.f, stepLossT, 1.f, lossSumT);
                m_net.backward(xb, g);
                for (int i = 0; i < tensorCount; ++i)
                    b.sumSquares(gradTensors[static_cast<size_t>(i)].tensor, norms + i);
            };
            // The first step of a call runs directly: it sizes every workspace, so nothing is
            // allocated while recording.
            int handle = -1;
            if (record && m_state.step > startStep) {
                if (m_net.reservedRows() != recordedReserve) { // activation buffers moved
                    b.discardRecordings();
                    recordings.clear();
                    recordedReserve = m_net.reservedRows();
                }
                if (const auto it = recordings.find(n); it != recordings.end()) {
                    handle = it->second;
                } else if (!b.beginRecording()) {
                    record = false; // this backend runs ops directly
                } else {
                    try {
                        body();
                        handle = b.endRecording();
                        recordings.emplace(n, handle);
                    } catch (const BackendError&) {
                        // Could not record (say, a workspace had to grow): run directly.
                        b.discardRecordings();
                        recordings.clear();
                        record = false;
                        handle = -1;
                    }
                }
            }
            if (handle >= 0)
                b.replay(handle);
            else
                body();
            // The guard and the update take per-step host values (step, learning rate): direct.
            b.guardAndClip(norms, tensorCount, stepLoss, cfg.clipNorm, m_state.step, guard);
            lr = learningRate(cfg.schedule, m_state.step, scheduleTotal());
            m_opt.step(params, grads, static_cast<float>(lr), m_state.step + 1, guard);

            ++m_state.step;
            ++stepsSinceRead;
            bool epochEnd = false;
            if (++m_state.stepInEpoch >= spe) {
                m_state.stepInEpoch = 0;
                ++m_state.epoch;
                epochEnd = true;
            }
            const bool lastStep = planned > 0 && m_state.step >= planned;
            const bool evalNow = cfg.evalEvery > 0 ? (m_state.step % cfg.evalEvery == 0) : epochEnd;
            const double now = elapsed();
            // Without a progress callback there is nothing to report, and no reason to read.
            const bool reportNow = m_progress && now - lastReport >= cfg.progressInterval;
            if (stepsSinceRead >= readEvery || evalNow || lastStep || reportNow) {
                if (!readScalars()) {
                    nonFinite();
                    break;
                }
            }
            bool evaluated = false;
            if (evalNow || (lastStep && m_state.pendingSteps > 0)) {
                evaluated = true;
                stop = evaluateAndRecord(lr);
            }
            if (evaluated || reportNow || lastStep) report(evaluated, lr);
            if (stepsSinceRead == 0) snapshotIfDue(false); // the scalars were just read: good
        }
        if (result.reason != StopReason::NonFinite && stepsSinceRead > 0 && !readScalars())
            nonFinite();
        b.synchronize();
    } catch (const BackendError& e) {
        if (!device || !lastGood) throw;
        // The device failed: its memory may be unreadable now. Go back to the last host copy.
        const int64_t goodStep = lastGood->state.step;
        std::string what = e.what();
        if (!what.empty() && what.back() != '.') what += '.';
        m_state = lastGood->state;
        result = TrainResult();
        result.reason = StopReason::DeviceFailure;
        result.message = "the device failed at step " + std::to_string(failedStep + 1) + ": " +
                         what + " The weights after step " + std::to_string(goodStep) +
                         " were kept; training can continue on the CPU.";
        result.lastGood = lastGood;
        if (!m_state.history.empty()) {
            result.trainLoss = m_state.history.back().trainLoss;
            result.valLoss = m_state.history.back().valLoss;
        }
        report(false, lr);
    }

    if (result.reason == StopReason::NonFinite) {
        report(false, lr);
    } else if (result.reason == StopReason::Finished && result.message.empty()) {
        result.message = "finished " + std::to_string(m_state.step) + " steps (" +
                         std::to_string(m_state.epoch) + " epochs)";
    }
    result.steps = m_state.step - startStep;
    result.seconds = elapsed();
    m_state.seconds += result.seconds;
    if (std::isnan(result.trainLoss) && m_state.pendingSteps > 0)
        result.trainLoss = m_state.pendingLossSum / static_cast<double>(m_state.pendingSteps);
    return result;
}

} // namespace il
