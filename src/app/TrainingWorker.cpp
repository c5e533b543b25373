#include "TrainingWorker.h"

#include "Errors.h"
#include "Snapshot.h"

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

bool sameOptimizer(const OptimizerConfig& a, const OptimizerConfig& b)
{
    return a.kind == b.kind && a.momentum == b.momentum && a.beta1 == b.beta1 &&
           a.beta2 == b.beta2 && a.eps == b.eps && a.weightDecay == b.weightDecay;
}

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

void TrainingWorker::train(const TrainerConfig& config, const DeviceChoice& device)
{
    if (m_training.exchange(true)) return;
    {
        QMutexLocker locker(&m_mutex);
        m_config = config;
        m_device = device;
    }
    m_stop = false;
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
    m_previewSide = std::max(tasks::kMinRenderSide, longestSide);
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
    if (const tasks::ImageGeometry* g = m.imageGeometry(); full && g)
        side = std::max({side, g->width, g->height});
    const QImage image = m.preview(side);
    if (seconds) *seconds = secondsSince(start);
    return image;
}

bool TrainingWorker::recoverOnCpu(ModelState& m, const BackendFactory& factory,
                                  std::shared_ptr<const HostSnapshot> good, QString* error)
{
    try {
        m.recoverOnCpu(factory("cpu", BackendOptions{}), std::move(good));
        m.device = DeviceChoice{};
        return true;
    } catch (const std::exception& e) {
        if (error) *error = e.what();
        return false;
    }
}

void TrainingWorker::trainNow(ModelState& m)
{
    TrainerConfig cfg;
    DeviceChoice wanted;
    BackendFactory factory;
    bool preview = true;
    {
        QMutexLocker locker(&m_mutex);
        cfg = m_config;
        wanted = m_device;
        factory = m_factory;
        preview = m_previewEnabled;
    }
    if (wanted.backend != "cuda") wanted.tf32 = false;
    TrainingOutcome outcome;
    auto finish = [&] {
        outcome.step = m.state.step;
        m_training = false;
        m_paused = false;
        emit trainingFinished(outcome);
    };
    if (!m.network || !m.task) {
        outcome.failed = true;
        outcome.message = m.network ? "Open the data this model was trained on to continue "
                                      "training (File > Open Dataset)."
                          : m.buildError.isEmpty() ? "There is no model to train yet."
                                                   : m.buildError;
        return finish();
    }
    if (m_stop) {
        outcome.reason = StopReason::Cancelled;
        outcome.message = "stopped before the first step";
        return finish();
    }

    try {
        // Another optimizer (or other optimizer settings) starts with fresh state.
        if (!m.optimizer || !sameOptimizer(m.optimizer->config(), cfg.optimizer))
            m.optimizer =
                std::make_unique<Optimizer>(*m.backend, cfg.optimizer, m.network->parameterCount());
        m.config = cfg;
    } catch (const std::exception& e) {
        outcome.failed = true;
        outcome.message = QString("training failed: ") + e.what();
        return finish();
    }

    // ---- the device: move the model where the run asks, before the first step ---------------
    // The weights as they were when this run moved them onto a device, on the host: what a
    // failure before the trainer's own first copy goes back to.
    std::shared_ptr<const HostSnapshot> before;
    if (!(m.device == wanted)) {
        std::unique_ptr<Backend> target;
        try {
            BackendOptions options;
            options.tf32 = wanted.tf32;
            target = factory(wanted.backend.toStdString(), options);
        } catch (const std::exception& e) {
            outcome.failed = true;
            outcome.deviceUnavailable = true;
            outcome.message = QString::fromStdString(e.what());
            return finish();
        }
        const QString name = QString::fromStdString(target->info().name);
        try {
            auto snapshot =
                std::make_shared<HostSnapshot>(takeSnapshot(*m.network, *m.optimizer, m.state));
            m.moveTo(std::move(target), wanted, *snapshot);
            if (!m.backend->memoryOnHost()) before = std::move(snapshot);
        } catch (const std::exception& e) {
            outcome.failed = true;
            outcome.deviceUnavailable = true;
            outcome.message = "could not move the model to " + name + ": " + e.what();
            return finish();
        }
    }
    const bool onDevice = !m.backend->memoryOnHost();

    // A device that fails before the trainer's first host copy (say, the data does not fit in
    // its memory): back to the CPU with the weights the run started with.
    auto rescue = [&](const std::string& what, bool backendError) {
        if (!onDevice || !backendError || !recoverOnCpu(m, factory, before, nullptr)) return false;
        outcome.reason = StopReason::DeviceFailure;
        outcome.failed = true;
        outcome.movedToCpu = true;
        QString why = QString::fromStdString(what);
        if (why.endsWith('.')) why.chop(1);
        outcome.message = QString("the device failed: %1. The weights after step %2 were kept; "
                                  "training can continue on the CPU.")
                              .arg(why)
                              .arg(m.state.step);
        emit rewound(m.state.step);
        return true;
    };

    bool hasMetric = false;
    try {
        m.upload();
        hasMetric = m.task->hasTrainingMetric();
    } catch (const BackendError& e) {
        if (!rescue(e.what(), true)) {
            outcome.failed = true;
            outcome.message = QString("training failed: ") + e.what();
        }
        return finish();
    } catch (const std::exception& e) {
        outcome.failed = true;
        outcome.message = QString("training failed: ") + e.what();
        return finish();
    }

    TrainerConfig runConfig = cfg;
    if (onDevice) {
        // Each read of the loss makes the host wait for the device (the trainer reads at most
        // every 25 steps there): report about 30 times a second; the charts then get one point
        // per report, the mean loss of the steps since the previous one.
        runConfig.progressInterval = kUpdateInterval;
    } else {
        runConfig.progressInterval = 0; // a report after every step; the worker throttles them
    }
    auto trainer = std::make_unique<Trainer>(*m.network, *m.optimizer, runConfig, m.state);
    tasks::Task& task = *m.task;
    if (hasMetric)
        trainer->setMetricHook([&task](Network& n) { return task.trainingMetric(n); }, NAN,
                               task.metricLowerIsBetter());

    const auto start = Clock::now();
    double pausedSeconds = 0;
    auto elapsed = [&] { return secondsSince(start) - pausedSeconds; };
    TrainingUpdate pending;
    size_t historySent = m.state.history.size();
    Progress last;
    last.step = m.state.step;
    double lastEmit = -1, rate = 0, rateTime = 0;
    int64_t rateStep = m.state.step;
    double lastPreview = -1e9, previewEvery = 1.0;

    auto flush = [&] {
        const double now = elapsed();
        const double dt = now - rateTime;
        if (dt >= 0.25) {
            const double r = static_cast<double>(last.step - rateStep) / dt;
            rate = rate > 0 ? 0.5 * rate + 0.5 * r : r;
            rateTime = now;
            rateStep = last.step;
        }
        pending.step = last.step;
        pending.plannedSteps = last.plannedSteps;
        pending.epoch = last.epoch;
        pending.lr = last.lr;
        pending.elapsed = now;
        pending.stepsPerSecond = rate;
        pending.eta = last.plannedSteps > 0 && rate > 0
                          ? static_cast<double>(last.plannedSteps - last.step) / rate
                          : NAN;
        for (; historySent < m.state.history.size(); ++historySent)
            pending.evaluations.push_back(m.state.history[historySent]);
        emit progressed(pending);
        pending = TrainingUpdate{};
        lastEmit = now;
    };
    auto takePreview = [&](bool force, bool full) {
        if (!preview || !m.imageGeometry()) return;
        if (!force && elapsed() - lastPreview < previewEvery) return;
        double cost = 0;
        QImage image;
        try {
            image = renderPreview(m, &cost, full);
        } catch (const std::exception& e) {
            // A failed device fails the preview too (the trainer's report of the failure comes
            // here): the run's own error is the one to report.
            qWarning("ironlearn-studio: no preview: %s", e.what());
        }
        // Keep previews to about 2.5% of the training time.
        if (!full) previewEvery = std::max(1.0, 40 * cost);
        lastPreview = elapsed();
        if (!image.isNull()) emit previewReady(m.state.step, image);
    };

    trainer->setProgressCallback([&](const Progress& p) {
        last = p;
        pending.losses.push_back({p.step, p.trainLoss, p.lr});
        if (elapsed() - lastEmit >= kUpdateInterval) flush();
        takePreview(false, false);
        runJobsBetweenSteps(m);
        if (m_paused && !m_stop) {
            flush();
            emit pausedChanged(true);
            const auto pauseStart = Clock::now();
            {
                QMutexLocker locker(&m_mutex);
                while (m_paused && !m_stop) {
                    if (!m_jobs.empty() && m_jobs.front().betweenSteps) {
                        locker.unlock();
                        runJobsBetweenSteps(m);
                        locker.relock();
                        continue;
                    }
                    m_wake.wait(&m_mutex, 100);
                }
            }
            pausedSeconds += secondsSince(pauseStart);
            rateTime = elapsed();
            rateStep = p.step;
            emit pausedChanged(false);
        }
        if (m_stop) trainer->requestCancel();
    });

    if (m.state.step == 0) takePreview(true, false);
    TrainResult result;
    std::string error;
    bool threw = false, backendError = false;
    try {
        result = trainer->run(m.trainingData());
    } catch (const BackendError& e) {
        threw = backendError = true;
        error = e.what();
    } catch (const std::exception& e) {
        threw = true;
        error = e.what();
    }
    trainer.reset(); // it refers to the network, which may move now
    m.state.seconds = std::max(0.0, m.state.seconds - pausedSeconds);
    flush();
    if (threw) {
        if (!rescue(error, backendError)) {
            outcome.failed = true;
            outcome.message = QString("training failed: ") + QString::fromStdString(error);
        }
    } else {
        outcome.reason = result.reason;
        outcome.failed =
            result.reason == StopReason::NonFinite || result.reason == StopReason::DeviceFailure;
        outcome.message = QString::fromStdString(result.message);
        outcome.trainLoss = result.trainLoss;
        outcome.valLoss = result.valLoss;
    }
    if (result.reason == StopReason::DeviceFailure && result.lastGood) {
        // The trainer rewound the state to its last host copy; rebuild the weights from it.
        QString moveError;
        outcome.movedToCpu = recoverOnCpu(m, factory, result.lastGood, &moveError);
        if (!outcome.movedToCpu)
            outcome.message += " Moving the model to the CPU failed: " + moveError;
        emit rewound(m.state.step);
    }
    if (result.steps > 0 || outcome.movedToCpu)
        takePreview(true, true); // the final one at the training size
    finish();
}

} // namespace il::app
