// Session: the model and training sections (the data section is SessionData.cpp).
#include "Session.h"
#include "DataFileRecord.h"
#include "Samples.h"

#include "CpuKernels.h"
#include "ImageTask.h"
#include "LayerStack.h"
#include "ModelFile.h"
#include "StudioSettings.h"
#include "TabularTask.h"

#include <QFile>
#include <QFileInfo>
#include <QLocale>

#include <algorithm>

namespace il::app {

namespace {

constexpr size_t kMaxFrames = 240;
constexpr int kPreviewSide = 256;

} // namespace

Session::Session(QObject* parent) : QObject(parent), m_worker(std::make_unique<TrainingWorker>())
{
    qRegisterMetaType<Session::RunState>();
    qRegisterMetaType<Evaluation>();
    m_cuda.name = "cuda";
    m_backend = settings::device();
    m_tf32 = settings::tf32();
    m_threads = settings::cpuThreads();
    m_worker->setPreview(true, kPreviewSide);
    connect(m_worker.get(), &TrainingWorker::progressed, this, &Session::onProgress);
    connect(m_worker.get(), &TrainingWorker::previewReady, this, &Session::onPreview);
    connect(m_worker.get(), &TrainingWorker::trainingFinished, this, &Session::onFinished);
    connect(m_worker.get(), &TrainingWorker::rewound, this, &Session::onRewound);
    // New weights (a new model, Reset weights, a rewind): the kept best is not theirs to show.
    connect(this, &Session::historyReset, this, [this] { setBest({}); });
    connect(this, &Session::modelChanged, this, [this] { setBest({}); });
    // A cross-validation's folds: their curves until other weights or data come.
    connect(m_worker.get(), &TrainingWorker::crossValidationProgressed, this,
            &Session::crossValidationProgressed);
    connect(m_worker.get(), &TrainingWorker::foldFinished, this,
            [this](int fold, int, const QList<QPointF>& validation) {
                if (fold == 0) m_foldCurves.clear();
                m_foldCurves.push_back(validation);
                emit foldsChanged();
            });
    for (auto signal : {&Session::historyReset, &Session::modelChanged})
        connect(this, signal, this, [this] {
            if (m_foldCurves.empty()) return;
            m_foldCurves.clear();
            emit foldsChanged();
        });
    connect(m_worker.get(), &TrainingWorker::pausedChanged, this, [this](bool paused) {
        if (m_runState != RunState::Idle)
            setRunState(paused ? RunState::Paused : RunState::Training);
    });
    probeDevices(); // the worker's first job: loading the CUDA module can take a moment
}

Session::~Session()
{
    m_worker->stop();
}

const tasks::TaskType* Session::taskType() const
{
    return m_task ? &m_task->type() : m_modelType;
}

// ---- model ----------------------------------------------------------------------------------

// A model file as the worker thread reads it, with the data it was trained on when found.
struct OpenedModel {
    std::unique_ptr<ModelState> model; // null: error says why
    QString error;
    QString note;     // the optimizer state could not be restored
    QString dataNote; // why the recorded data file was not opened with it
    io::ModelInfo info;
    QByteArray dataBytes;
    tasks::TaskOptions options;
};

namespace {

// The whole data file at path; false with "NAME: why" in error (io::readDataFile).
bool readDataFile(const QString& path, QByteArray& bytes, QString* error)
{
    const io::IoResult r = io::readDataFile(path, bytes, QFileInfo(path).fileName());
    if (!r) *error = r.error;
    return r.ok;
}

// rememberedData: where the studio last saw the model's data (the settings).
OpenedModel readModel(const QString& path, const QString& rememberedData)
{
    OpenedModel out;
    auto st = std::make_unique<ModelState>();
    st->backend = createCpuBackend(0);
    if (!st->open(path, &out.info, &out.error)) return out;
    const io::ModelInfo& info = out.info;
    if (!st->makeOptimizer(info.config.optimizer, &out.note))
        out.note += "; training continues with a fresh optimizer state";

    // The data it was trained on. A model that records its data file (path, size and hash:
    // the CLI's and this studio's) opens it only when the content is the same, found where it
    // was or beside the model. Older files name it in the studio's own key, or the settings
    // remember it.
    QString dataPath;
    bool haveBytes = false;
    QString dataError;
    if (const auto record = io::DataFileRecord::fromTask(info.task)) {
        io::FoundDataFile found = io::findRecordedDataFile(*record, path);
        if (found.path.isEmpty()) {
            out.dataNote = found.problem;
        } else {
            dataPath = found.path;
            out.dataBytes = std::move(found.bytes);
            haveBytes = true;
        }
    } else {
        // A sample is stored as the file it was read from, or, by versions that compiled the
        // samples in, as ":/samples/NAME": either opens from where the samples are now.
        dataPath = info.task.value(kDataFileKey).toString();
        if (io::isSamplePath(dataPath) && !QFile::exists(dataPath))
            dataPath = io::samplePath(QFileInfo(dataPath).fileName());
        if (dataPath.isEmpty() || !QFile::exists(dataPath)) dataPath = rememberedData;
    }
    out.options.seed = info.config.seed;
    out.options.reader = tasks::MessageReader::Studio;
    if (!dataPath.isEmpty() && (haveBytes || readDataFile(dataPath, out.dataBytes, &dataError))) {
        std::shared_ptr<tasks::Task> task(tasks::openTaskForModel(QFileInfo(dataPath).fileName(),
                                                                  out.dataBytes, info.task, false,
                                                                  out.options, &dataError));
        if (task) st->attach(std::move(task), &dataError); // data that fits the model
        if (!st->task && haveBytes && !dataError.isEmpty()) out.dataNote = dataError;
    }
    st->dataPath = st->task ? dataPath : QString();
    if (!st->task) out.dataBytes.clear();
    out.model = std::move(st);
    return out;
}

} // namespace

bool Session::checkModel(const QString& path)
{
    io::ModelInfo info;
    QString error;
    if (io::readModelInfo(path, info, &error)) return true;
    emit modelFailed(error);
    return false;
}

bool Session::openModel(const QString& path)
{
    if (m_runState != RunState::Idle) {
        emit message("Stop training before opening another model.");
        return false;
    }
    const int generation = ++m_generation;
    ++m_weightsGeneration;
    const QString remembered = settings::modelDataFile(path);
    m_worker->postAndReply(
        this,
        [path, remembered](ModelState&) {
            try {
                return std::make_shared<OpenedModel>(readModel(path, remembered));
            } catch (const std::exception& e) {
                auto failed = std::make_shared<OpenedModel>();
                failed->error = QFileInfo(path).fileName() + ": " + e.what();
                return failed;
            }
        },
        [this, path, generation](std::shared_ptr<OpenedModel> opened) {
            if (generation != m_generation) return; // other data or another model came since
            if (!opened->model) return emit modelFailed(opened->error);
            if (m_runState != RunState::Idle)
                return emit message("Stop training before opening another model.");
            adoptModel(path, *opened);
        },
        false);
    return true;
}

void Session::adoptModel(const QString& path, OpenedModel& opened)
{
    const io::ModelInfo& info = opened.info;
    std::unique_ptr<ModelState> st = std::move(opened.model);
    if (!opened.note.isEmpty()) emit message(opened.note);
    m_task = st->task;
    m_dataPath = st->dataPath;
    m_dataBytes = opened.dataBytes;
    m_options = opened.options;
    if (m_task) m_task->describeOptions(m_options); // the options it trained with
    updateMissingValues();
    m_modelTaskJson = info.task;
    m_modelType = tasks::taskTypeOf(info.task);
    m_inputWidth = st->network->inputWidth();
    m_outputWidth = st->network->outputWidth();
    m_vocab = info.vocab;
    m_spec = canonicalSpec(QString::fromStdString(info.spec));
    m_averagedFrom.clear();
    m_config = info.config;
    m_recipePreset.clear();
    m_hasNetwork = true;
    m_builtSpec = m_spec;
    m_builtSeed = m_config.seed;
    m_trainedSteps = info.state.step;
    m_modelPath = path;
    m_history.load(info.state.history.rows());
    m_timeline.clear();
    const bool withData = m_task != nullptr;
    m_openedWeights = m_weightsGeneration;
    awaitSavedVerdict(info.task);
    m_worker->replaceModel(std::move(st));
    setModified(false);
    if (withData) emit datasetOpened();
    emit modelChanged();
    emit modelOpened(path);
    if (!withData)
        emit message("Opened the model without its data" +
                     (opened.dataNote.isEmpty() ? QString() : " (" + opened.dataNote + ")") +
                     ": outputs work; open the data it was trained on (File > Open Dataset) to "
                     "train further.");
    // A first look at what it has learned.
    m_worker->postAndReply(
        this,
        [](ModelState& m) {
            return std::make_pair(static_cast<qint64>(m.state.step), m.picture(0));
        },
        [this](const std::pair<qint64, QImage>& preview) {
            if (!preview.second.isNull()) onPreview(preview.first, preview.second);
        });
    evaluate();
}

bool Session::saveModel(const QString& path)
{
    QString why;
    if (!m_hasNetwork && !m_task) why = "there is no model to save yet: open a dataset first";
    // Trained weights are saved as they are: building the edited stack here would replace them.
    const bool trained = m_hasNetwork && m_trainedSteps > 0;
    if (why.isEmpty() && m_runState == RunState::Idle && !trained) buildIfNeeded(&why);
    if (!why.isEmpty()) {
        emit saveFailed(why);
        return false;
    }
    const bool idle = m_runState == RunState::Idle;
    const TrainerConfig config = m_config;
    // Which file the data came from, and its hash, so that the model reopens with it.
    std::optional<io::DataFileRecord> record;
    if (m_task && !m_dataPath.isEmpty() && !m_dataBytes.isEmpty())
        record = io::DataFileRecord::of(m_dataPath, m_dataBytes);
    // The verdict on the weights saved, when they are the ones it was made for.
    const std::optional<QJsonObject> verdict = idle ? verdictToSave() : std::nullopt;
    m_worker->postAndReply(
        this,
        [path, idle, config, record, verdict, dataPath = m_dataPath](ModelState& m) {
            if (idle) m.config = config; // the settings as the panels show them
            QString error;
            QJsonObject task = m.taskJsonForSaving();
            if (record && m.task && m.dataPath == dataPath) task = record->addTo(task);
            task.remove(tasks::kVerdictKey);
            if (verdict) task[tasks::kVerdictKey] = *verdict;
            if (!m.network)
                error = m.buildError.isEmpty() ? "there is no model to save" : m.buildError;
            else if (m.save(path, task, &error))
                error.clear();
            else if (error.isEmpty())
                error = "the model could not be saved";
            return error;
        },
        [this, path](const QString& error) {
            if (!error.isEmpty()) return emit saveFailed(error);
            m_modelPath = path;
            settings::setModelDataFile(path, m_dataPath);
            setModified(false);
            emit modelSaved(path);
        });
    return true;
}

void Session::setSpec(const QString& spec, const QString& error)
{
    m_specError = error;
    const QString canonical = canonicalSpec(spec);
    if (canonical == m_spec) return;
    m_spec = canonical;
    m_averagedFrom.clear(); // the learner's stack now
    emit specChanged();
}

void Session::setConfig(const TrainerConfig& config)
{
    m_config = config;
    emit configChanged();
}

int64_t Session::plannedSteps() const
{
    if (!m_task) return 0;
    const int64_t spe = Trainer::stepsPerEpoch(m_task->data().trainRows, m_config.batchSize);
    int64_t planned = m_config.epochs > 0 ? m_config.epochs * spe : 0;
    if (m_config.steps > 0)
        planned = planned > 0 ? std::min(planned, m_config.steps) : m_config.steps;
    return planned;
}

bool Session::needsNewModel() const
{
    return !m_hasNetwork || m_spec != m_builtSpec ||
           (m_trainedSteps == 0 && m_config.seed != m_builtSeed);
}

bool Session::buildIfNeeded(QString* error)
{
    if (!needsNewModel()) return true;
    if (!m_task) {
        if (error) *error = "Open a dataset first.";
        return false;
    }
    // Built on the worker thread; a failure travels with the model (buildError), so the run or
    // the save queued after it reports it, and the next Start tries again.
    m_worker->replaceModel(
        [task = m_task, dataPath = m_dataPath, spec = m_spec, config = m_config]() {
            QString why;
            auto st = ModelState::create(task, dataPath, spec, config, &why);
            if (!st) {
                st = std::make_unique<ModelState>();
                st->task = task;
                st->buildError = why;
            }
            return st;
        });
    const int generation = m_generation;
    m_worker->postAndReply(
        this, [](ModelState& m) { return m.buildError; },
        [this, generation](const QString& buildError) {
            if (!buildError.isEmpty() && generation == m_generation) m_hasNetwork = false;
        },
        false);
    m_hasNetwork = true;
    m_builtSpec = m_spec;
    m_builtSeed = m_config.seed;
    // A file that held the trained model does not hold this one: Save asks for a new name.
    if (m_trainedSteps > 0) m_modelPath.clear();
    m_trainedSteps = 0;
    m_history.clear();
    m_timeline.clear();
    ++m_weightsGeneration;
    emit historyReset();
    return true;
}

// ---- training -------------------------------------------------------------------------------

void Session::start()
{
    if (m_runState != RunState::Idle) return;
    if (m_racing) {
        emit message("A race between presets is running: stop it first (Train > Race presets…).");
        return;
    }
    if (!m_task) {
        emit message(m_hasNetwork ? "Open the data this model was trained on to train further "
                                    "(File > Open Dataset)."
                                  : "Open a dataset first (File > Open Dataset or Samples).");
        return;
    }
    QString error = m_specError.isEmpty() ? QString() : "Fix the layer stack first: " + m_specError;
    if (!error.isEmpty() || !buildIfNeeded(&error)) {
        TrainingOutcome outcome;
        outcome.failed = true;
        outcome.message = error;
        emit trainingFinished(outcome);
        return;
    }
    extendSpentBudget();
    m_worker->train(m_config, device(), foldModel());
    setRunState(RunState::Training);
}

bool Session::budgetSpent() const
{
    const int64_t planned = plannedSteps();
    return m_hasNetwork && !needsNewModel() && planned > 0 && m_trainedSteps >= planned;
}

void Session::extendSpentBudget()
{
    if (!budgetSpent()) return;
    // One more budget of the same length, in the units it was given in.
    const int64_t planned = plannedSteps();
    const int64_t target = m_trainedSteps + planned;
    const int64_t perEpoch = Trainer::stepsPerEpoch(m_task->data().trainRows, m_config.batchSize);
    if (m_config.epochs > 0) m_config.epochs = (target + perEpoch - 1) / perEpoch;
    if (m_config.steps > 0) m_config.steps = target;
    const QLocale l;
    QString text = QString("The planned %1 steps were done: training on to %2 steps.")
                       .arg(l.toString(static_cast<qlonglong>(planned)),
                            l.toString(static_cast<qlonglong>(plannedSteps())));
    // Cosine annealing spreads over the whole budget: at the old end of it the rate is back
    // at half its peak, and the loss jumps before it falls below where it was.
    if (m_config.schedule.kind == ScheduleKind::Cosine)
        text += " The cosine schedule now spans them all, so the learning rate rises again first "
                "(the loss too, for a while).";
    emit message(text);
    emit configChanged();
}

void Session::setRacing(bool racing)
{
    if (racing == m_racing) return;
    m_racing = racing;
    emit racingChanged(racing);
}

void Session::setPaused(bool paused)
{
    if (m_runState == RunState::Idle) return;
    m_worker->setPaused(paused);
    setRunState(paused ? RunState::Paused : RunState::Training);
}

void Session::stop()
{
    if (m_runState != RunState::Idle) m_worker->stop();
}

void Session::stopAfterStep(qint64 step)
{
    if (m_runState != RunState::Idle) m_worker->stopAfterStep(step);
}

void Session::resetWeights()
{
    if (m_runState != RunState::Idle) return;
    // The folds' averaged networks start again from the preset they averaged (the next Start
    // builds it and runs its folds).
    if (!m_averagedFrom.isEmpty()) {
        m_spec = m_averagedFrom;
        m_averagedFrom.clear();
        m_config.epochs = m_averagedFromEpochs;
        m_config.steps = m_averagedFromSteps;
        emit specChanged();
        emit configChanged();
    }
    if (!needsNewModel()) {
        const uint64_t seed = m_config.seed;
        m_builtSeed = seed;
        m_worker->post(
            [seed](ModelState& m) {
                m.config.seed = seed;
                m.resetWeights();
                m.best = {};
            },
            false);
    }
    m_trainedSteps = 0;
    m_history.clear();
    m_timeline.clear();
    setModified(m_hasNetwork);
    ++m_weightsGeneration;
    emit historyReset();
}

void Session::setRunState(RunState state)
{
    if (state == m_runState) return;
    m_runState = state;
    emit runStateChanged(state);
}

void Session::setModified(bool modified)
{
    if (modified == m_modified) return;
    m_modified = modified;
    emit modifiedChanged(modified);
}

void Session::onProgress(const TrainingUpdate& update)
{
    // In step order: each evaluation after the losses of its steps, as the run made them (the
    // history's overfit watch takes the training loss since the previous evaluation).
    auto loss = update.losses.begin();
    for (const HistoryPoint& h : update.evaluations) {
        for (; loss != update.losses.end() && loss->step <= h.step; ++loss)
            m_history.addTrainLoss(loss->step, loss->loss, loss->lr);
        m_history.addEvaluation(h.step, h.valLoss, h.metric);
    }
    for (; loss != update.losses.end(); ++loss)
        m_history.addTrainLoss(loss->step, loss->loss, loss->lr);
    for (const auto& [step, value] : update.sideMetric)
        m_history.addSideMetric(step, value);
    m_trainedSteps = update.step;
    if (!update.losses.empty()) setModified(true);
    emit progressed(update);
    for (QString notice : update.notices) {
        notice[0] = notice[0].toUpper();
        emit message(notice);
    }
}

void Session::onPreview(qint64 step, const QImage& image)
{
    if (!m_timeline.empty() && m_timeline.back().step == step)
        m_timeline.back().image = image;
    else if (m_timeline.empty() || m_timeline.back().step < step)
        m_timeline.push_back({step, image});
    if (m_timeline.size() > kMaxFrames) // thin out the older half, keep the recent ones
        for (size_t i = 1; i < m_timeline.size() / 2; ++i)
            m_timeline.erase(m_timeline.begin() + static_cast<std::ptrdiff_t>(i));
    emit frameAdded(static_cast<int>(m_timeline.size()) - 1);
}

void Session::onRewound(qint64 step)
{
    m_history.truncateAfter(step);
    while (!m_timeline.empty() && m_timeline.back().step > step)
        m_timeline.pop_back();
    m_trainedSteps = step;
    ++m_weightsGeneration;
    emit historyReset();
}

tasks::FoldModel Session::foldModel() const
{
    // A preset that averages its folds, on data that can (a small regression table): the stack
    // must be the preset's own, as the CLI's --preset.
    if (m_task)
        for (const QString& name : m_task->presets())
            if (m_task->averagesFoldsOf(name) && canonicalSpec(m_task->presetSpec(name)) == m_spec)
                return tasks::FoldModel::Averaged;
    return tasks::FoldModel::Refit;
}

void Session::onFinished(const TrainingOutcome& outcome)
{
    // The folds' networks, averaged, are the model now: its stack is theirs side by side.
    if (!outcome.averagedSpec.isEmpty()) {
        m_averagedFrom = m_spec;
        m_averagedFromEpochs = m_config.epochs;
        m_averagedFromSteps = m_config.steps;
        m_spec = m_builtSpec = canonicalSpec(outcome.averagedSpec);
        emit specChanged();
        // Its budget is the folds' length, spent: Continue asks for as much again, not for the
        // folds' planned thousands of steps on every row with nothing held out.
        m_config.epochs = 0;
        m_config.steps = outcome.step;
        emit configChanged();
    }
    // The chosen device could not start or failed: the next run (Continue on CPU) uses the CPU.
    // The remembered choice stays, so the next session tries the GPU again.
    if (outcome.deviceUnavailable || outcome.reason == StopReason::DeviceFailure)
        setDevice("cpu", m_tf32, false);
    m_trainedSteps = outcome.step;
    // A recovery lowered the learning rate: the next run starts from the rate that worked.
    if (outcome.recoveries > 0) {
        keepLoweredRates(m_config, outcome.schedule);
        emit configChanged();
    }
    if (outcome.best.kept()) setBest(outcome.best);
    setRunState(RunState::Idle);
    // From the evaluation asked for next; awaited before the signal, so a handler that saves
    // the model at once (a scripted --save) saves what the verdict is made from.
    awaitVerdict(outcome);
    emit trainingFinished(outcome);
    evaluate();
}

} // namespace il::app
