// The training worker: one thread that owns the model (ModelState) and runs everything that
// touches its weights, in order — training runs, renders, name generation, saving — so the GUI
// thread never waits on the engine and never sees half-updated weights.
//
// Shaped like Qt's Mandelbrot example: the configuration is copied in under a mutex, pause and
// stop are atomic flags, results leave as queued value signals, and the destructor stops and
// waits. During a run the trainer reports after every step; the worker
//   - throttles progress to about 30 updates a second (TrainingUpdate carries every step's loss
//     since the last update, so the charts keep the full history),
//   - runs queued jobs between two steps, so a save or a render sees one consistent set of
//     weights (and its optimizer state and step counter),
//   - pauses there too: while paused it still runs jobs (render, save, generate), and Stop
//     cancels the trainer within one step.
// Pausing happens in the worker's progress hook (the trainer has no pause of its own), because
// that is the point at which queued jobs can run.
//
// Devices. A run names the backend it wants (DeviceChoice); before the first step the worker
// moves the model there if it lives elsewhere (a host copy rebuilt on the new backend, the
// data uploaded again), so creating a CUDA context and copying weights never happen on the GUI
// thread. Backends come from a BackendFactory (il::createBackend unless a test supplies
// another). When the device fails during a run (StopReason::DeviceFailure), the worker rebuilds
// the model on the CPU from the trainer's last good host copy before it reports the outcome, so
// outputs, saving and a new run work at once.
#pragma once

#include "CrossValidation.h"
#include "ModelState.h"

#include "BackendRegistry.h"

#include <QImage>
#include <QMetaType>
#include <QMutex>
#include <QPointF>
#include <QStringList>
#include <QThread>
#include <QWaitCondition>

#include <atomic>
#include <deque>
#include <functional>
#include <type_traits>

namespace il::tasks {
struct FoldHooks;
}

namespace il::app {

struct LossSample {
    int64_t step = 0;
    double loss = NAN;
    double lr = NAN;
};

struct TrainingUpdate {
    int64_t step = 0;
    int64_t plannedSteps = 0;
    double epoch = 0;
    double lr = 0;
    double stepsPerSecond = 0;             // over the last second or so, pauses excluded
    double eta = NAN;                      // seconds
    double elapsed = 0;                    // seconds of this run, pauses excluded
    std::vector<LossSample> losses;        // every step since the previous update
    std::vector<HistoryPoint> evaluations; // evaluations since the previous update
    // The task's side metric (Task::sideMetric) at those evaluations: step, value.
    std::vector<std::pair<int64_t, double>> sideMetric;
    // The trainer's notices since the previous update (a stall, a divergence, a recovery:
    // Progress::notice), one line each.
    QStringList notices;
};

struct TrainingOutcome {
    StopReason reason = StopReason::Finished;
    bool failed = false; // an exception, a non-finite value or a device failure
    QString message;
    int64_t step = 0;
    double trainLoss = NAN, valLoss = NAN;
    // The chosen backend could not be created or take the model (message: why); nothing ran
    // and the model stayed where it was.
    bool deviceUnavailable = false;
    // DeviceFailure: the model now lives on the CPU with the last good weights (step).
    bool movedToCpu = false;
    // The run recovered from a stall or divergence this many times (TrainResult::recoveries);
    // the model's configuration now has the lowered learning rates of schedule.
    int recoveries = 0;
    ScheduleConfig schedule;
    // The best weights kept so far, and how the current ones compare (BestWeights.h).
    BestWeightsInfo best;
    // What Task::settle did at the end (a table's verdict, RunVerdict.h, says it; the message
    // does not) and the step early stopping went back to (-1: none).
    tasks::Settled settled;
    int64_t restoredStep = -1;
    // Seconds the cross-validation before the run took (0: none ran).
    double crossValidationSeconds = 0;
    // The folds' networks averaged became the model (FoldModel::Averaged): its layer list.
    QString averagedSpec;
};

// Creates a backend by name ("cpu" or "cuda"); throws BackendError with the reason when it
// cannot. The worker's default is il::createBackend; tests supply a simulated device.
using BackendFactory =
    std::function<std::unique_ptr<Backend>(const std::string& name, const BackendOptions& options)>;

class TrainingWorker : public QThread {
    Q_OBJECT
public:
    using Job = std::function<void(ModelState&)>;

    explicit TrainingWorker(QObject* parent = nullptr);
    // Stops a run, finishes the queued jobs (a pending save is never lost) and waits.
    ~TrainingWorker() override;

    // Runs job on the worker thread after the jobs before it. betweenSteps: it may run between
    // two steps of a run (it must not replace or rebuild the network); otherwise it waits for
    // the run to end.
    void post(Job job, bool betweenSteps = true);
    // Runs work(model) on the worker thread like post, then reply(result) on context's thread
    // (the GUI thread) through its event loop; reply() takes no argument when work returns
    // nothing, and no reply comes when work throws. context must outlive the worker (the
    // Session owns it).
    template <typename Work, typename Reply>
    void postAndReply(QObject* context, Work work, Reply reply, bool betweenSteps = true);
    // Hands a new model to the worker (after any run and queued job).
    void replaceModel(std::unique_ptr<ModelState> model);
    // Makes the model on the worker thread (after any run and queued job) and hands it over, so
    // building a network never runs on the caller's thread.
    void replaceModel(std::function<std::unique_ptr<ModelState>()> make);
    // Starts a run with a copy of config on the given device (the model moves there first).
    // Ignored while a run is queued or going.
    void train(const TrainerConfig& config, const DeviceChoice& device = {},
               tasks::FoldModel foldModel = tasks::FoldModel::Refit);
    // Where backends come from (il::createBackend by default). Takes effect at the next run.
    void setBackendFactory(BackendFactory factory);
    void setPaused(bool paused);
    void stop();
    // Stops the run going (or just started) after the step that brings the model to `step`, as
    // stop() would there, exactly: the scripted runs' --train-steps. A new run forgets it.
    void stopAfterStep(int64_t step) { m_stopAfter = step; }
    bool isTraining() const { return m_training; }
    bool isPaused() const { return m_paused; }
    // Longest side of the live image preview, and whether it is drawn at all.
    void setPreview(bool enabled, int longestSide);
    // Runs every queued job and returns when the queue is empty (tests, closing).
    void waitForIdle();

signals:
    void progressed(const il::app::TrainingUpdate& update);
    void previewReady(qint64 step, const QImage& image);
    void pausedChanged(bool paused);
    // Cross-validation before a fresh table's run (CrossValidation.h): fold `fold` (0-based) of
    // `folds` is at step of plannedSteps; and a fold finished, with its validation losses
    // (step, loss) at each evaluation.
    void crossValidationProgressed(int fold, int folds, qint64 step, qint64 plannedSteps);
    void foldFinished(int fold, int folds, const QList<QPointF>& validation);
    void trainingFinished(const il::app::TrainingOutcome& outcome);
    // The run went back to an earlier step (a device failure kept the weights of that step):
    // losses and timeline frames after it are gone. Sent before the outcome.
    void rewound(qint64 step);

protected:
    void run() override;

private:
    struct Queued {
        Job job;
        bool betweenSteps = true;
    };
    // One run's inputs, copied under m_mutex when it starts.
    struct RunRequest {
        TrainerConfig config;
        DeviceChoice device;
        BackendFactory factory;
        bool preview = true;
        tasks::FoldModel foldModel = tasks::FoldModel::Refit;
    };
    class RunReporter; // progress, previews and pauses of one run (TrainingWorker.cpp)
    // What the folds of a fresh model (a task with folds) report: their progress, each fold's
    // curve, and Stop.
    tasks::FoldHooks foldHooks(ModelState& m);
    // A run: prepareRun (checks, optimizer, the move to the run's device; before: the host copy
    // taken for that move), then runTrainer (upload, train, outcome).
    void trainNow(ModelState& m);
    bool prepareRun(ModelState& m, const RunRequest& run, TrainingOutcome& outcome,
                    std::shared_ptr<const HostCopy>& before);
    void runTrainer(ModelState& m, const RunRequest& run,
                    const std::shared_ptr<const HostCopy>& before, TrainingOutcome& outcome);
    // Runs the jobs at the front of the queue that may run between steps.
    void runJobsBetweenSteps(ModelState& m);
    // full: at the training size rather than the preview size (the last picture of a run).
    QImage renderPreview(ModelState& m, double* seconds, bool full);

    mutable QMutex m_mutex;
    QWaitCondition m_wake, m_idle;
    std::deque<Queued> m_jobs;
    bool m_busy = false;
    bool m_quit = false;
    TrainerConfig m_config; // the next run's, copied in under m_mutex
    DeviceChoice m_device;  // the next run's device, likewise
    tasks::FoldModel m_foldModel = tasks::FoldModel::Refit; // the next run's folds' model
    BackendFactory m_factory;
    bool m_previewEnabled = true;
    int m_previewSide = 256;
    std::atomic<bool> m_training{false};
    std::atomic<bool> m_paused{false};
    std::atomic<bool> m_stop{false};
    std::atomic<int64_t> m_stopAfter{-1}; // stopAfterStep's step; -1: none
    std::unique_ptr<ModelState> m_model;  // touched only on the worker thread
};

template <typename Work, typename Reply>
void TrainingWorker::postAndReply(QObject* context, Work work, Reply reply, bool betweenSteps)
{
    post(
        [context, work = std::move(work), reply = std::move(reply)](ModelState& m) mutable {
            using Result = std::invoke_result_t<Work&, ModelState&>;
            if constexpr (std::is_void_v<Result>) {
                work(m);
                QMetaObject::invokeMethod(context, reply, Qt::QueuedConnection);
            } else {
                // Shared, so a result that cannot be copied can still travel in the reply.
                auto result = std::make_shared<Result>(work(m));
                QMetaObject::invokeMethod(
                    context, [reply, result]() mutable { reply(std::move(*result)); },
                    Qt::QueuedConnection);
            }
        },
        betweenSteps);
}

} // namespace il::app

Q_DECLARE_METATYPE(il::app::TrainingUpdate)
Q_DECLARE_METATYPE(il::app::TrainingOutcome)
