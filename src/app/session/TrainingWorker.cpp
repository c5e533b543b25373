#include "TrainingWorker.h"
#include "RunDriver.h"

#include "CrossValidation.h"

#include "Errors.h"
#include "HostCopy.h"

#include <QDebug>
#include <QMutexLocker>

#include <chrono>

namespace il::app {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t)
{
    return std::chrono::duration<double>(Clock::now() - t).count();
}

constexpr double kUpdateInterval = 1.0 / 30; // progress signals per second: about 30

void runGuarded(const TrainingWorker::Job& job, ModelState& m)
{
    try {
        job(m);
    } catch (const std::exception& e) {
        qWarning("ironlearn-studio: a worker job failed: %s", e.what());
    }
}

} // namespace

TrainingWorker::TrainingWorker(QObject* parent)
    : QThread(parent), m_factory(&il::createBackend), m_model(std::make_unique<ModelState>())
{
    qRegisterMetaType<TrainingUpdate>();
    qRegisterMetaType<TrainingOutcome>();
    start();
}

TrainingWorker::~TrainingWorker()
{
    {
        QMutexLocker locker(&m_mutex);
        m_quit = true;
        m_stop = true;
        m_paused = false;
        m_wake.wakeAll();
    }
    wait();
}

void TrainingWorker::post(Job job, bool betweenSteps)
{
    QMutexLocker locker(&m_mutex);
    m_jobs.push_back({std::move(job), betweenSteps});
    m_wake.wakeAll();
}

void TrainingWorker::replaceModel(std::unique_ptr<ModelState> model)
{
    // std::function needs a copyable callable: the model travels in a shared holder.
    auto holder = std::make_shared<std::unique_ptr<ModelState>>(std::move(model));
    post([this, holder](ModelState&) { m_model = std::move(*holder); }, false);
}

void TrainingWorker::replaceModel(std::function<std::unique_ptr<ModelState>()> make)
{
    post(
        [this, make = std::move(make)](ModelState&) {
            auto made = make();
            m_model = made ? std::move(made) : std::make_unique<ModelState>();
        },
        false);
}

void TrainingWorker::train(const TrainerConfig& config, const DeviceChoice& device,
                           tasks::FoldModel foldModel)
{
    if (m_training.exchange(true)) return;
    {
        QMutexLocker locker(&m_mutex);
        m_config = config;
        m_device = device;
        m_foldModel = foldModel;
    }
    m_stop = false;
    m_stopAfter = -1;
    m_paused = false;
    post([this](ModelState& m) { trainNow(m); }, false);
}

void TrainingWorker::setBackendFactory(BackendFactory factory)
{
    QMutexLocker locker(&m_mutex);
    m_factory = factory ? std::move(factory) : BackendFactory(&il::createBackend);
}

void TrainingWorker::setPaused(bool paused)
{
    QMutexLocker locker(&m_mutex);
    m_paused = paused;
    m_wake.wakeAll();
}

void TrainingWorker::stop()
{
    QMutexLocker locker(&m_mutex);
    m_stop = true;
    m_paused = false;
    m_wake.wakeAll();
}

void TrainingWorker::setPreview(bool enabled, int longestSide)
{
    QMutexLocker locker(&m_mutex);
    m_previewEnabled = enabled;
    m_previewSide = std::max(1, longestSide); // the kind keeps its pictures legible
}

void TrainingWorker::waitForIdle()
{
    QMutexLocker locker(&m_mutex);
    while (!m_jobs.empty() || m_busy)
        m_idle.wait(&m_mutex);
}

void TrainingWorker::run()
{
    // OpenMP settings are per thread: a CPU backend made here gives this thread the same team
    // as the CLI's main thread gets (one thread per core, denormals flushed in every member).
    createCpuBackend(0);
    for (;;) {
        Queued next;
        {
            QMutexLocker locker(&m_mutex);
            while (m_jobs.empty() && !m_quit) {
                m_busy = false;
                m_idle.wakeAll();
                m_wake.wait(&m_mutex);
            }
            if (m_jobs.empty()) break; // quitting, and every queued job has run
            next = std::move(m_jobs.front());
            m_jobs.pop_front();
            m_busy = true;
        }
        runGuarded(next.job, *m_model);
    }
    m_model.reset(); // its buffers are freed here, not on the thread that destroys the worker
    QMutexLocker locker(&m_mutex);
    m_busy = false;
    m_idle.wakeAll();
}

void TrainingWorker::runJobsBetweenSteps(ModelState& m)
{
    for (;;) {
        Queued next;
        {
            QMutexLocker locker(&m_mutex);
            if (m_jobs.empty() || !m_jobs.front().betweenSteps) return;
            next = std::move(m_jobs.front());
            m_jobs.pop_front();
        }
        runGuarded(next.job, m);
    }
}

QImage TrainingWorker::renderPreview(ModelState& m, double* seconds, bool full)
{
    const auto start = Clock::now();
    int side = 256;
    {
        QMutexLocker locker(&m_mutex);
        side = m_previewSide;
    }
    const QImage image = m.picture(full ? 0 : side);
    if (seconds) *seconds = secondsSince(start);
    return image;
}

// Progress, previews and pauses of one run, driven by the trainer's progress callback.
class TrainingWorker::RunReporter {
public:
    RunReporter(TrainingWorker& worker, ModelState& m, bool preview)
        : w(worker), m(m), m_preview(preview), m_rateStep(m.state.step)
    {
        m_last.step = m.state.step;
    }

    // Seconds of this run, pauses excluded.
    double elapsed() const { return secondsSince(m_start) - m_pausedSeconds; }
    double pausedSeconds() const { return m_pausedSeconds; }
    // The side metric the metric hook measured at the evaluation being reported next.
    void setSideMetric(double value) { m_side = value; }

    // Sends the losses and evaluations since the previous update.
    void flush()
    {
        const double now = elapsed();
        const double dt = now - m_rateTime;
        if (dt >= 0.25) {
            const double r = static_cast<double>(m_last.step - m_rateStep) / dt;
            m_rate = m_rate > 0 ? 0.5 * m_rate + 0.5 * r : r;
            m_rateTime = now;
            m_rateStep = m_last.step;
        }
        m_pending.step = m_last.step;
        m_pending.plannedSteps = m_last.plannedSteps;
        m_pending.epoch = m_last.epoch;
        m_pending.lr = m_last.lr;
        m_pending.elapsed = now;
        m_pending.stepsPerSecond = m_rate;
        m_pending.eta = m_last.plannedSteps > 0 && m_rate > 0
                            ? static_cast<double>(m_last.plannedSteps - m_last.step) / m_rate
                            : NAN;
        emit w.progressed(m_pending);
        m_pending = TrainingUpdate{};
        m_lastEmit = now;
    }

    // An image model's picture, at most every previewEvery seconds unless forced; full: at
    // the training size (the last one of a run).
    void takePreview(bool force, bool full)
    {
        if (!m_preview || !m.drawsPictures()) return;
        if (!force && elapsed() - m_lastPreview < m_previewEvery) return;
        double cost = 0;
        QImage image;
        try {
            image = w.renderPreview(m, &cost, full);
        } catch (const std::exception& e) {
            // A failed device fails the preview too (the trainer's report of the failure comes
            // here): the run's own error is the one to report.
            qWarning("ironlearn-studio: no preview: %s", e.what());
        }
        // Keep previews to about 2.5% of the training time.
        if (!full) m_previewEvery = std::max(1.0, 40 * cost);
        m_lastPreview = elapsed();
        if (!image.isNull()) emit w.previewReady(m.state.step, image);
    }

    // After each step: report, preview, run queued jobs, pause, or ask the trainer to stop.
    void onStep(const Progress& p, Trainer& trainer)
    {
        m_last = p;
        m_pending.losses.push_back({p.step, p.trainLoss, p.lr});
        // The trainer reports every evaluation (the history itself merges rows in a long run).
        if (p.evaluated) {
            HistoryPoint h;
            h.step = p.step;
            h.epoch = p.epoch;
            h.valLoss = p.valLoss;
            h.lr = p.lr;
            h.metric = p.metric;
            m_pending.evaluations.push_back(h);
            if (!std::isnan(m_side)) m_pending.sideMetric.emplace_back(p.step, m_side);
            m_side = NAN;
        }
        if (!p.notice.empty()) m_pending.notices << QString::fromStdString(p.notice);
        if (!p.notice.empty() || elapsed() - m_lastEmit >= kUpdateInterval) flush();
        takePreview(false, false);
        w.runJobsBetweenSteps(m);
        if (w.m_stopAfter >= 0 && p.step >= w.m_stopAfter) w.m_stop = true;
        if (w.m_paused && !w.m_stop) pause(p.step);
        if (w.m_stop) trainer.requestCancel();
    }

private:
    // Waits while paused, still running the jobs that may run between steps.
    void pause(int64_t step)
    {
        flush();
        emit w.pausedChanged(true);
        const auto pauseStart = Clock::now();
        {
            QMutexLocker locker(&w.m_mutex);
            while (w.m_paused && !w.m_stop) {
                if (!w.m_jobs.empty() && w.m_jobs.front().betweenSteps) {
                    locker.unlock();
                    w.runJobsBetweenSteps(m);
                    locker.relock();
                    continue;
                }
                w.m_wake.wait(&w.m_mutex, 100);
            }
        }
        m_pausedSeconds += secondsSince(pauseStart);
        m_rateTime = elapsed();
        m_rateStep = step;
        emit w.pausedChanged(false);
    }

    TrainingWorker& w;
    ModelState& m;
    const bool m_preview;
    const Clock::time_point m_start = Clock::now();
    double m_pausedSeconds = 0;
    TrainingUpdate m_pending;
    Progress m_last;
    double m_lastEmit = -1, m_rate = 0, m_rateTime = 0;
    int64_t m_rateStep;
    double m_lastPreview = -1e9, m_previewEvery = 1.0;
    double m_side = NAN;
};

void TrainingWorker::trainNow(ModelState& m)
{
    RunRequest run;
    {
        QMutexLocker locker(&m_mutex);
        run.config = m_config;
        run.device = m_device;
        run.factory = m_factory;
        run.preview = m_previewEnabled;
        run.foldModel = m_foldModel;
    }
    if (run.device.backend != "cuda") run.device.tf32 = false;
    TrainingOutcome outcome;
    std::shared_ptr<const HostCopy> before;
    if (prepareRun(m, run, outcome, before)) runTrainer(m, run, before, outcome);
    outcome.step = m.state.step;
    m_training = false;
    m_paused = false;
    emit trainingFinished(outcome);
}

bool TrainingWorker::prepareRun(ModelState& m, const RunRequest& run, TrainingOutcome& outcome,
                                std::shared_ptr<const HostCopy>& before)
{
    const TrainerConfig& cfg = run.config;
    if (!m.network || !m.task) {
        outcome.failed = true;
        outcome.message = m.network ? "Open the data this model was trained on to continue "
                                      "training (File > Open Dataset)."
                          : m.buildError.isEmpty() ? "There is no model to train yet."
                                                   : m.buildError;
        return false;
    }
    if (m_stop) {
        outcome.reason = StopReason::Cancelled;
        outcome.message = "stopped before the first step";
        return false;
    }

    try {
        // Another optimizer (or other optimizer settings) starts with fresh state.
        if (!m.optimizer || m.optimizer->config() != cfg.optimizer)
            m.optimizer = std::make_unique<Optimizer>(*m.backend, cfg.optimizer,
                                                      m.network->parameterRanges());
        m.config = cfg;
    } catch (const std::exception& e) {
        outcome.failed = true;
        outcome.message = QString("training failed: ") + e.what();
        return false;
    }

    // ---- the device: move the model where the run asks, before the first step ---------------
    // The weights as they were when this run moved them onto a device, on the host: what a
    // failure before the trainer's own first copy goes back to.
    const DeviceChoice& wanted = run.device;
    if (m.device == wanted) return true;
    std::unique_ptr<Backend> target;
    try {
        BackendOptions options;
        options.tf32 = wanted.tf32;
        options.threads = wanted.threads;
        target = run.factory(wanted.backend.toStdString(), options);
    } catch (const std::exception& e) {
        outcome.failed = true;
        outcome.deviceUnavailable = true;
        outcome.message = QString::fromStdString(e.what());
        return false;
    }
    const QString name = QString::fromStdString(target->info().name);
    try {
        auto copy = std::make_shared<HostCopy>(takeHostCopy(*m.network, *m.optimizer, m.state));
        m.moveTo(std::move(target), wanted, *copy);
        if (!m.backend->memoryOnHost()) before = std::move(copy);
    } catch (const std::exception& e) {
        outcome.failed = true;
        outcome.deviceUnavailable = true;
        outcome.message = "could not move the model to " + name + ": " + e.what();
        return false;
    }
    return true;
}

tasks::FoldHooks TrainingWorker::foldHooks(ModelState& m)
{
    const int folds = m.task->folds();
    auto active = std::make_shared<Trainer*>(nullptr);
    auto lastEmit = std::make_shared<Clock::time_point>(Clock::now() - std::chrono::seconds(1));
    tasks::FoldHooks hooks;
    hooks.active = [active](int, Trainer* t) { *active = t; };
    hooks.progress = [this, &m, folds, active, lastEmit](int fold, const Progress& p) {
        if (secondsSince(*lastEmit) >= kUpdateInterval) {
            emit crossValidationProgressed(fold, folds, p.step, p.plannedSteps);
            *lastEmit = Clock::now();
        }
        runJobsBetweenSteps(m); // the model's own network is idle meanwhile
        if (m_stop && *active) (*active)->requestCancel();
    };
    hooks.foldDone = [this](int fold, const tasks::CrossValidation& cv) {
        QList<QPointF> validation;
        for (const HistoryPoint& h : cv.runs.back().history)
            if (std::isfinite(h.valLoss))
                validation.append(QPointF(static_cast<double>(h.step), h.valLoss));
        emit foldFinished(fold, cv.folds, validation);
    };
    hooks.stopRequested = [this] { return m_stop.load(); };
    return hooks;
}

// One run (tasks::runModel) from upload to outcome; RunReporter does the reporting.
// Long: the reporter and hooks live on this stack for the run; the run and each way it ends fill
// the outcome in order.
void TrainingWorker::runTrainer(ModelState& m, const RunRequest& run,
                                const std::shared_ptr<const HostCopy>& before,
                                TrainingOutcome& outcome)
{
    tasks::RunSetup setup;
    setup.policy.watch = m.task->watchSettings();
    setup.foldPolicy = setup.policy;
    setup.foldPolicy.progressInterval = kUpdateInterval;
    // The history (saved with the model) as fine as the chart: reopened, it draws the same curve.
    setup.policy.historyEvery = 1;
    // On a device each read of the loss makes the host wait for it (the trainer reads at most
    // every 25 steps there): report about 30 times a second; the charts then get one point per
    // report, the mean loss of the steps since the previous one. On the CPU a report after
    // every step; the reporter throttles them.
    setup.policy.progressInterval = m.backend->memoryOnHost() ? 0 : kUpdateInterval;
    setup.cpuRescue = [&run] { return run.factory("cpu", BackendOptions{}); };
    setup.keepBest = &m.best;
    setup.startWeights = before;
    setup.foldModel = run.foldModel;

    tasks::Task& task = *m.task;
    RunReporter reporter(*this, m, run.preview);
    tasks::RunHooks hooks;
    // The untrained network's picture, once the data is on the run's device.
    hooks.uploaded = [&] {
        if (m.state.step == 0) reporter.takePreview(true, false);
    };
    hooks.folds = foldHooks(m);
    hooks.progress = [&reporter](const Progress& p, Trainer& t) { reporter.onStep(p, t); };
    // At each evaluation the side metric where the task has one (a names model's innovation
    // rate, charted beside the validation loss), measured before the task's metric.
    if (!task.sideMetricKey().isEmpty())
        hooks.evaluation = [&task, &reporter](Network& n) {
            reporter.setSideMetric(task.sideMetric(n));
        };
    tasks::RunOutcome ran = tasks::runModel(m, setup, hooks);
    const TrainResult& result = ran.result;
    const bool folds = ran.cv.has_value();
    if (ran.movedToCpu) m.device = DeviceChoice{};
    if (folds) outcome.crossValidationSeconds = ran.cv->seconds;
    if (folds && ran.cv->averaged && ran.ran())
        outcome.averagedSpec = QString::fromStdString(ran.cv->averagedSpec);
    if (ran.foldsStopped) { // no run: the model is its untrained start
        outcome.reason = StopReason::Cancelled;
        outcome.message = QString::fromStdString(result.message);
        return;
    }
    if (!ran.failure.empty() && ran.movedToCpu) {
        // A failed device gave the CPU the weights the run started with.
        outcome.reason = StopReason::DeviceFailure;
        outcome.failed = true;
        outcome.movedToCpu = true;
        QString why = QString::fromStdString(ran.deviceError);
        if (why.endsWith('.')) why.chop(1);
        outcome.message = QString("the device failed: %1. The weights after step %2 were kept; "
                                  "training can continue on the CPU.")
                              .arg(why)
                              .arg(m.state.step);
        emit rewound(m.state.step);
        return;
    }
    if (!ran.failure.empty()) {
        outcome.failed = true;
        outcome.message = QString::fromStdString(ran.failure);
        return;
    }
    m.state.seconds = std::max(0.0, m.state.seconds - reporter.pausedSeconds());
    reporter.flush();
    outcome.reason = result.reason;
    outcome.failed =
        result.reason == StopReason::NonFinite || result.reason == StopReason::DeviceFailure;
    outcome.message = QString::fromStdString(result.message);
    outcome.settled = ran.settled;
    outcome.restoredStep = result.restoredStep;
    outcome.trainLoss = result.trainLoss;
    outcome.valLoss = result.valLoss;
    outcome.recoveries = result.recoveries;
    outcome.schedule = result.schedule;
    // The kept copy (tasks::RunSetup::keepBest): none after folds, whose run holds no rows out.
    outcome.best = ran.best;
    if (result.reason == StopReason::DeviceFailure && result.lastGood) {
        // The run driver rebuilt the weights on the CPU from the trainer's last host copy.
        outcome.movedToCpu = ran.movedToCpu;
        if (!ran.movedToCpu)
            outcome.message +=
                " Moving the model to the CPU failed: " + QString::fromStdString(ran.rescueFailure);
        emit rewound(m.state.step);
    }
    if (result.steps > 0 || outcome.movedToCpu)
        reporter.takePreview(true, true); // the final one at the training size
}

} // namespace il::app
