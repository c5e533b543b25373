// The studio's document: the open data, the layer stack, the hyperparameters, the model (held by
// the training worker) and the run's history. Panels read it and call it; it turns their
// requests into worker jobs and the worker's results into signals. It never touches the
// network itself: every call that needs the weights is a job on the worker thread, answered on
// the GUI thread.
#pragma once

#include "LatestRequest.h"
#include "LossHistory.h"
#include "NetworkInside.h"
#include "RunVerdict.h"
#include "TabularTask.h" // MissingValues: the table's missing cells (kinds/tabular/SessionTable.cpp)
#include "TrainingWorker.h"

#include <QByteArray>
#include <QImage>
#include <QObject>

#include <functional>
#include <memory>
#include <optional>

namespace il::app {

// One validation row of a table model: what it predicted against the truth.
using PredictionRow = tasks::PredictionRow;

struct Evaluation {
    QString summary;
    QJsonObject values;
    bool classification = false;
    QString where; // "validation" or "training"
    std::vector<PredictionRow> rows;
};

struct OpenedModel; // a model file as the worker read it (Session.cpp)

// One picture of an image model's training timeline (the Output tab's slider): what it drew at
// a step.
struct TimelineFrame {
    int64_t step = 0;
    QImage image;
};

// Which backends there are and how to make one. The studio uses the engine's registry; tests
// supply a simulated GPU (FaultyBackend in tests/support/ForwardingBackend.h).
struct BackendProvider {
    std::function<BackendStatus()> cudaStatus = &il::cudaStatus; // probed on the worker thread
    BackendFactory create = &il::createBackend;
};

class Session : public QObject {
    Q_OBJECT
public:
    enum class RunState { Idle, Training, Paused };

    explicit Session(QObject* parent = nullptr);
    ~Session() override;

    // ---- data -------------------------------------------------------------------------------
    // Reads a data file (or a bundled sample, ":/samples/...") and opens it as a task with the
    // studio's default options (each kind's StudioKindExtras::studioSettings). On failure the
    // previous data stays and datasetFailed says why. missing: how a table treats missing cells
    // (tasks::TaskOptions::missing); empty: it fails, and failedMissingValues() offers choices.
    bool openDataset(const QString& path, const QString& missing = {});
    // Reads and checks a data file as openDataset would, replacing nothing: false, with
    // datasetFailed, when it will not open. The window asks about unsaved training only after
    // this; the next openDataset of the same path and missing adopts what was checked.
    bool checkDataset(const QString& path, const QString& missing = {});
    void forgetCheckedDataset() { m_checked.reset(); }
    // The missing cells of the open table, and what each choice (the Data tab's) does with them;
    // !any() when none (or not a table).
    const tasks::MissingValues& missingValues() const { return m_missing; }
    // The table that last failed to open for its missing cells (empty: none since), and its
    // counts: the error bar offers the choices.
    QString failedMissingPath() const { return m_failedMissingPath; }
    const tasks::MissingValues& failedMissingValues() const { return m_failedMissing; }
    // Reopens the data with other options (target, ignored columns, image size...).
    bool setTaskOptions(const tasks::TaskOptions& options);
    const tasks::TaskOptions& taskOptions() const { return m_options; }
    std::shared_ptr<const tasks::Task> task() const { return m_task; }
    QString dataPath() const { return m_dataPath; }
    const QByteArray& dataBytes() const { return m_dataBytes; }
    // What kind of task the open data or model is: null when neither is open.
    const tasks::TaskType* taskType() const;
    // Whether the open data or model is of this kind (a kind's pages ask for their own).
    bool isKind(const tasks::TaskType& type) const { return taskType() == &type; }
    // The task metadata: the open data's, or the opened model's.
    QJsonObject taskJson() const { return m_task ? m_task->toJson() : m_modelTaskJson; }
    // Inputs, outputs and embedding vocabulary the network must have.
    int64_t inputWidth() const { return m_inputWidth; }
    int64_t outputWidth() const { return m_outputWidth; }
    int64_t vocab() const { return m_vocab; }

    // ---- model ------------------------------------------------------------------------------
    // Reads the model (and the data it was trained on) on the worker thread; modelOpened or
    // modelFailed follows. False, with modelFailed, when it cannot start (while training).
    bool openModel(const QString& path);
    // Reads the model file's header (what it is, how it trained) and checks it, replacing
    // nothing: false, with modelFailed, when it is not a model this studio opens.
    bool checkModel(const QString& path);
    // Saves through the worker (between two steps while training); modelSaved or saveFailed
    // follows. False, with saveFailed, when there is nothing to save. A trained model is saved
    // as it trained, even when the stack has been edited since (the edit waits for Start); an
    // untrained one is built from the current stack first.
    bool saveModel(const QString& path);
    QString modelPath() const { return m_modelPath; }
    bool isModified() const { return m_modified; }
    // The worker's model has trained steps that no file holds: replacing it (other data, another
    // model, Reset weights, a new model after a stack change) would lose them.
    bool hasUnsavedTraining() const { return m_modified && m_trainedSteps > 0; }
    bool hasModel() const { return m_hasNetwork || m_task; }

    QString spec() const { return m_spec; }
    // The stack a save writes now (saveModel): the worker's network as it trained, even after an
    // edit, or during a run; otherwise the current stack, which the save builds first.
    QString specToSave() const
    {
        const bool built = m_hasNetwork && (m_trainedSteps > 0 || m_runState != RunState::Idle);
        return built ? m_builtSpec : m_spec;
    }
    // The Model panel's stack; error: why it cannot be built ("" when it can).
    void setSpec(const QString& spec, const QString& error = {});
    // The next Start builds a new network (the stack, seed or data changed); it replaces a
    // trained one, which then has no file (modelPath() is cleared).
    bool needsNewModel() const;
    const TrainerConfig& config() const { return m_config; }
    void setConfig(const TrainerConfig& config);
    // The Model tab chose a layer preset: the training settings it carries
    // (tasks::presetRecipe) replace the configuration's, or, when it carries none but the
    // preset chosen before did, that recipe's settings go back to the data's defaults. Emits
    // configChanged and recipeApplied; returns what changed, in a sentence ("" for nothing).
    QString applyPresetRecipe(const QString& preset);
    // Whether the open data has classes the loss can weigh (TrainerConfig::classWeighting): a
    // classification table. The task says (Task::classWeights); false without data.
    bool classWeightingApplies() const;
    // Steps the schedule plans for the current configuration and data (0 if unknown).
    int64_t plannedSteps() const;
    int64_t trainedSteps() const { return m_trainedSteps; }
    // The trained model has done the steps its budget plans (a finished run, or a reopened
    // model that finished): start() then continues for one more budget of the same length,
    // raising the configuration's budget (configChanged) and saying so (message).
    bool budgetSpent() const;
    // What a fresh model's folds leave (the worker's run): the averaged folds for a preset that
    // averages them (the ensemble stack of a small regression table), else a run on every row.
    tasks::FoldModel foldModel() const;
    // True once the weights have trained: the data options then wait for Reset weights. Also
    // after a stack edit: the trained weights are still there until Start replaces them, and
    // reopening the data would throw them away unasked.
    bool hasTrained() const { return m_trainedSteps > 0; }

    // ---- device -----------------------------------------------------------------------------
    // The device the next run trains on: the CPU unless CUDA is chosen and available. The
    // choice is remembered (QSettings "training/device", "training/tf32"); a device failure
    // switches it to the CPU for this session only.
    DeviceChoice device() const;
    // What the user asked for (CUDA stays asked for while it is unavailable, so a later start
    // with a GPU uses it); remember: store it in the settings.
    void setDevice(const QString& backend, bool tf32, bool remember = true);
    bool tf32Wanted() const { return m_tf32; }
    // The CPU's threads for the next run on the CPU (0: one per core, as the CLI's --threads
    // default); remembered (QSettings "training/threads"). A change moves the model to a CPU
    // backend of that many threads when the next run starts.
    int cpuThreads() const { return m_threads; }
    void setCpuThreads(int threads);
    // The CPU's model name, from the worker's first answer (devicesChanged); "" until then.
    QString cpuName() const { return m_cpuName; }
    // CUDA as last probed (on the worker thread, once at start and after setBackendProvider);
    // cudaProbed() is false until the first answer arrives (devicesChanged).
    const BackendStatus& cudaStatus() const { return m_cuda; }
    bool cudaProbed() const { return m_cudaProbed; }
    // "CPU — AMD EPYC (2 threads)" or "NVIDIA GPU (CUDA) — NVIDIA H200, 139 GiB, sm_90".
    QString deviceDescription() const;
    // Tests: another way to find and make backends (a simulated GPU). Probes again.
    void setBackendProvider(BackendProvider provider);

    // ---- training ---------------------------------------------------------------------------
    void start();
    void setPaused(bool paused);
    void stop();
    // Stops the run going after the step that brings the model to `step` (the scripted runs'
    // --train-steps), exactly, rather than at the next report.
    void stopAfterStep(qint64 step);
    void resetWeights();
    RunState runState() const { return m_runState; }
    // A race between presets (RaceWindow) is using the CPU: start() refuses until it ends, so
    // two trainings never share the machine.
    void setRacing(bool racing);
    bool isRacing() const { return m_racing; }
    TrainingWorker* worker() const { return m_worker.get(); }
    const LossHistory& history() const { return m_history; }
    // The validation curves (step, loss) of the folds of the run's cross-validation
    // (CrossValidation.h), one per fold finished; empty when the run had none.
    const std::vector<QList<QPointF>>& foldCurves() const { return m_foldCurves; }
    const std::vector<TimelineFrame>& timeline() const { return m_timeline; }

    // ---- the best weights (SessionBest.cpp) -------------------------------------------------
    // The weights with the best validation (or training) loss the model's training has seen,
    // as the last run reported them; none (step -1) after a new model or Reset weights.
    const BestWeightsInfo& best() const { return m_best; }
    // Idle, and kept weights from an earlier step than the current weights.
    bool canRevertToBest() const;
    // Goes back to the kept weights, their optimizer state and step (the loss curve after it is
    // cut off), marks the model unsaved and says so (message): Continue trains on from there.
    void revertToBest();

    // ---- the verdict on a table's run (kinds/tabular/SessionVerdict.cpp) --------------------
    // Which weights the last run kept and how they compare with the linear model, made once
    // from the run's end and its evaluation; the status bar, the table output page and the
    // charts show this one. !valid() while the weights are not those the run ended with (a run,
    // a revert, a reset, other data), and for other tasks.
    const tasks::RunVerdict& verdict() const;

    // ---- outputs (answered by the signals below) --------------------------------------------
    void evaluate();
    // What each unit of the network has learned (tasks::lookInside, SessionInside.cpp), answered
    // by insideReady: computed on the worker between two steps, one request in flight.
    void requestInside(const tasks::InsideRequest& request);

    // ---- a kind's own requests (kinds/<kind>/<Kind>Requests.h) -------------------------------
    // Runs work(ModelState&) on the training worker (between two steps while training) and then
    // reply(result) on the GUI thread, unless context is gone by then.
    template <typename Work, typename Reply> void ask(QObject* context, Work work, Reply reply)
    {
        m_worker->postAndReply(context, std::move(work), std::move(reply));
    }
    // The session's Part (a kind's requests, a QObject made from the session), made on first use
    // as a child of the session.
    template <class Part> Part& part()
    {
        if (auto* p = findChild<Part*>(QString(), Qt::FindDirectChildrenOnly)) return *p;
        return *new Part(this);
    }
    // Counts weight replacements (new data or model, a new network, Reset weights, a rewind): an
    // answer about weights that have since been replaced is dropped.
    int weightsGeneration() const { return m_weightsGeneration; }

signals:
    void datasetOpened();
    void datasetFailed(const QString& error);
    void modelChanged(); // new data or model: spec, configuration and history were replaced
    void specChanged();
    // A fresh network (Start after a change, Reset weights) or a history cut back to the step a
    // device failure kept: charts and snapshots are read again.
    void historyReset();
    void configChanged();
    void recipeApplied(); // the configuration was replaced, not edited: forms read it again
    void runStateChanged(il::app::Session::RunState state);
    void racingChanged(bool racing);
    void progressed(const il::app::TrainingUpdate& update);
    void frameAdded(int index);
    void trainingFinished(const il::app::TrainingOutcome& outcome);
    void modelOpened(const QString& path);
    void modelFailed(const QString& error);
    void modelSaved(const QString& path);
    void saveFailed(const QString& error);
    void modifiedChanged(bool modified);
    void evaluated(const il::app::Evaluation& evaluation);
    // inside.view None: inside.note says why (no network yet, a model without its data...).
    void insideReady(const il::tasks::NetworkInside& inside);
    void message(const QString& text);
    void devicesChanged(); // CUDA was probed: what is available, and why not
    void deviceChanged();  // the device of the next run
    void bestChanged();    // best() changed (a run ended, a revert, a new model)
    void verdictChanged(); // verdict() was made (before the evaluation it was made from)
    // Cross-validation before a run: fold `fold` (0-based) of `folds` is at step of planned.
    void crossValidationProgressed(int fold, int folds, qint64 step, qint64 plannedSteps);
    void foldsChanged(); // foldCurves() changed

private:
    std::vector<QList<QPointF>> m_foldCurves;
    // A data file read and opened as a task, not yet adopted (checkDataset, openDataset).
    struct CheckedData {
        QString path, missing;
        QByteArray bytes;
        tasks::TaskOptions options;
        std::shared_ptr<tasks::Task> task; // null: error says why
        bool attach = false;               // the data of the model opened without it
        QString error;
    };
    CheckedData readDataset(const QString& path, const QString& missing);
    void reportDatasetFailure(const CheckedData& checked);
    // The table's missing cells, for the error bar's choices (kinds/tabular/SessionTable.cpp).
    void findFailedMissingValues(const CheckedData& checked);
    void updateMissingValues();
    bool openTask(const QString& path, const QByteArray& bytes, const tasks::TaskOptions& options);
    void adoptTask(std::shared_ptr<tasks::Task> task);
    void adoptModel(const QString& path, OpenedModel& opened);
    bool buildIfNeeded(QString* error);
    void extendSpentBudget();
    void setRunState(RunState state);
    void setModified(bool modified);
    void onProgress(const TrainingUpdate& update);
    void onPreview(qint64 step, const QImage& image);
    void onFinished(const TrainingOutcome& outcome);
    void onRewound(qint64 step);
    void probeDevices();
    void setBest(const BestWeightsInfo& best);
    // The verdict waits for the evaluation that follows a run's end: asked for, then made.
    // say: the status bar says it when it is made.
    void awaitVerdict(const TrainingOutcome& outcome, bool say = true);
    // A model opened: the verdict its file kept, made again from its first evaluation when the
    // weights are still those it was made for.
    void awaitSavedVerdict(const QJsonObject& savedTask);
    // What saveModel writes under tasks::kVerdictKey: the current verdict's record, or the
    // opened model's own while its weights are untouched; none otherwise.
    std::optional<QJsonObject> verdictToSave() const;
    void makeVerdict(int evaluation, const Evaluation& ev);

    std::unique_ptr<TrainingWorker> m_worker;
    // Counts opened data and models: a model read on the worker is dropped when other data or
    // another model was opened after it was asked for.
    int m_generation = 0;
    // Counts weight replacements (new data or model, a new network, Reset weights, a rewind): an
    // evaluation of weights that have since been replaced is dropped.
    int m_weightsGeneration = 0;
    tasks::TaskOptions m_options;
    std::optional<CheckedData> m_checked;
    tasks::MissingValues m_missing, m_failedMissing;
    QString m_failedMissingPath;
    std::shared_ptr<tasks::Task> m_task;
    QString m_dataPath;
    QByteArray m_dataBytes;
    QJsonObject m_modelTaskJson;                  // of an opened model (to attach its data later)
    const tasks::TaskType* m_modelType = nullptr; // of the data or the opened model
    int64_t m_inputWidth = 0, m_outputWidth = 0, m_vocab = 0;
    QString m_modelPath;
    QString m_spec;
    QString m_specError;
    TrainerConfig m_config;
    QString m_recipePreset; // whose recipe m_config carries (applyPresetRecipe)
    // The worker's network, when it matches the data: built from this spec and seed.
    bool m_hasNetwork = false;
    QString m_builtSpec;
    // The preset's stack the folds' averaged networks replaced (onFinished): Reset weights goes
    // back to it, so the next Start trains the preset again. Empty otherwise.
    QString m_averagedFrom;
    int64_t m_averagedFromEpochs = 0, m_averagedFromSteps = 0; // and its budget
    uint64_t m_builtSeed = 0;
    bool m_modified = false;
    int64_t m_trainedSteps = 0;
    RunState m_runState = RunState::Idle;
    bool m_racing = false;
    LossHistory m_history;
    std::vector<TimelineFrame> m_timeline;
    BestWeightsInfo m_best;
    // The verdict: made from the outcome of the run and the evaluation numbered
    // m_verdictEvaluation (each evaluate() takes the next number), for weights generation
    // m_verdictWeights.
    tasks::RunVerdict m_verdict;
    tasks::VerdictRecord m_verdictRecord; // what m_verdict was made from
    int m_openedWeights = -1;             // m_weightsGeneration of the model opened last
    bool m_verdictSay = true; // the status bar says the verdict awaited (not a reopened one)
    std::optional<TrainingOutcome> m_verdictOutcome;
    int m_evaluations = 0, m_verdictEvaluation = -1, m_verdictWeights = -1;
    // Devices: what the user asked for, and what there is.
    BackendProvider m_provider;
    QString m_backend = "cpu";
    bool m_tf32 = false;
    int m_threads = 0;
    QString m_cpuName;
    BackendStatus m_cuda;
    bool m_cudaProbed = false;
    // The network's insides: one request in flight, the latest one waiting.
    LatestRequest<tasks::InsideRequest> m_inside;
    void sendInside(const tasks::InsideRequest& request);
};

} // namespace il::app

Q_DECLARE_METATYPE(il::app::Session::RunState)
Q_DECLARE_METATYPE(il::app::Evaluation)
Q_DECLARE_METATYPE(il::tasks::NetworkInside)
