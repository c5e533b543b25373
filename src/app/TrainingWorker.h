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
// Pausing happens in the worker's progress hook rather than through Trainer::setPaused, because
// the trainer's own pause loop gives no point at which queued jobs could run.
#pragma once

#include "ModelState.h"

#include <QImage>
#include <QMetaType>
#include <QMutex>
#include <QThread>
#include <QWaitCondition>

#include <atomic>
#include <deque>
#include <functional>

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
};

struct TrainingOutcome {
    StopReason reason = StopReason::Finished;
    bool failed = false; // an exception or a non-finite value
    QString message;
    int64_t step = 0;
    double trainLoss = NAN, valLoss = NAN;
};

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
    // Hands a new model to the worker (after any run and queued job).
    void replaceModel(std::unique_ptr<ModelState> model);
    // Starts a run with a copy of config. Ignored while a run is queued or going.
    void train(const TrainerConfig& config);
    void setPaused(bool paused);
    void stop();
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
    void trainingFinished(const il::app::TrainingOutcome& outcome);

protected:
    void run() override;

private:
    struct Queued {
        Job job;
        bool betweenSteps = true;
    };
    void trainNow(ModelState& m);
    // Runs the jobs at the front of the queue that may run between steps.
    void runJobsBetweenSteps(ModelState& m);
    // full: at the training size rather than the preview size (the last snapshot of a run).
    QImage renderPreview(ModelState& m, double* seconds, bool full);

    mutable QMutex m_mutex;
    QWaitCondition m_wake, m_idle;
    std::deque<Queued> m_jobs;
    bool m_busy = false;
    bool m_quit = false;
    TrainerConfig m_config; // the next run's, copied in under m_mutex
    bool m_previewEnabled = true;
    int m_previewSide = 256;
    std::atomic<bool> m_training{false};
    std::atomic<bool> m_paused{false};
    std::atomic<bool> m_stop{false};
    std::unique_ptr<ModelState> m_model; // touched only on the worker thread
};

} // namespace il::app

Q_DECLARE_METATYPE(il::app::TrainingUpdate)
Q_DECLARE_METATYPE(il::app::TrainingOutcome)
