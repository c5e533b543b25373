// Session: the data section. Reading a data file (its bytes, the task, the missing cells a
// failure names), opening it and reading it again with other options.
#include "Session.h"

#include "PresetRecipe.h"

#include "DataFileRecord.h"
#include "LayerStack.h"
#include "StudioKind.h"

#include <QFile>
#include <QFileInfo>

#include <algorithm>

namespace il::app {

// ---- data -----------------------------------------------------------------------------------

Session::CheckedData Session::readDataset(const QString& path, const QString& missing)
{
    CheckedData c;
    c.path = path;
    c.missing = missing;
    if (const io::IoResult r = io::readDataFile(path, c.bytes, QFileInfo(path).fileName()); !r) {
        c.error = r.error;
        return c;
    }
    c.options.seed = m_config.seed;
    for (const StudioKind* kind : studioKinds()) // only its own kind reads a setting
        for (auto s = kind->extras().studioSettings.cbegin();
             s != kind->extras().studioSettings.cend(); ++s)
            c.options.settings[s.key()] = s.value();
    c.options.reader = tasks::MessageReader::Studio;
    if (!missing.isEmpty()) c.options.missing = missing;
    const QString name = QFileInfo(path).fileName();
    // A model opened without its data: this file may be that data.
    if (m_hasNetwork && !m_task && !m_modelTaskJson.isEmpty()) {
        QString error;
        auto task = std::shared_ptr<tasks::Task>(
            tasks::openTaskForModel(name, c.bytes, m_modelTaskJson, false, c.options, &error));
        if (task && task->data().inputWidth == m_inputWidth &&
            task->data().outputWidth == m_outputWidth) {
            c.task = std::move(task);
            c.attach = true;
            return c;
        }
    }
    c.task = tasks::openTask(name, c.bytes, c.options, &c.error);
    return c;
}

void Session::reportDatasetFailure(const CheckedData& c)
{
    findFailedMissingValues(c);
    emit datasetFailed(c.error);
}

bool Session::checkDataset(const QString& path, const QString& missing)
{
    m_checked.reset();
    if (m_runState != RunState::Idle) {
        emit message("Stop training before opening other data.");
        return false;
    }
    CheckedData c = readDataset(path, missing);
    if (!c.task) {
        reportDatasetFailure(c);
        return false;
    }
    m_checked = std::move(c);
    return true;
}

bool Session::openDataset(const QString& path, const QString& missing)
{
    if (m_runState != RunState::Idle) {
        // A refusal, not a broken file: said in the status bar, gone by itself.
        emit message("Stop training before opening other data.");
        return false;
    }
    CheckedData c = m_checked && m_checked->path == path && m_checked->missing == missing
                        ? std::move(*m_checked)
                        : readDataset(path, missing);
    m_checked.reset();
    if (!c.task) {
        reportDatasetFailure(c);
        return false;
    }
    m_failedMissingPath.clear();
    if (c.attach) {
        m_task = c.task;
        m_dataPath = path;
        m_dataBytes = c.bytes;
        m_options = c.options;
        c.task->describeOptions(m_options);
        updateMissingValues();
        m_worker->post(
            [task = c.task, path](ModelState& m) {
                if (m.attach(task, nullptr)) m.dataPath = path;
            },
            false);
        emit datasetOpened();
        emit message("Attached " + QFileInfo(path).fileName() + " to the model.");
        return true;
    }
    m_dataPath = path;
    m_dataBytes = c.bytes;
    m_options = c.options;
    adoptTask(std::move(c.task));
    return true;
}

bool Session::setTaskOptions(const tasks::TaskOptions& options)
{
    if (m_runState != RunState::Idle || m_dataBytes.isEmpty()) return false;
    const QString spec = m_spec;
    const TrainerConfig config = m_config;
    const QString recipePreset = m_recipePreset;
    // The stack this data starts with, not one the learner chose: it follows the data.
    const bool defaultStack =
        m_task && spec == canonicalSpec(m_task->presetSpec(m_task->defaultPreset()));
    if (!openTask(m_dataPath, m_dataBytes, options)) return false;
    // Keep the user's stack and settings; the loss follows the (possibly new) target.
    m_spec = spec;
    const LossKind loss = m_config.loss;
    m_config = config;
    m_config.loss = loss;
    m_recipePreset = recipePreset;
    // A table no longer cross-validated (or newly) gets that data's default stack and its
    // settings, as if opened so: the folds' ensemble without folds would be a plain network.
    const QString preset = m_task->defaultPreset();
    if (defaultStack && canonicalSpec(m_task->presetSpec(preset)) != m_spec) {
        m_spec = canonicalSpec(m_task->presetSpec(preset));
        applyPresetRecipe(preset);
    }
    // A target that is no longer a class (or other data) has nothing to weigh.
    if (!classWeightingApplies()) m_config.classWeighting = ClassWeighting::None;
    emit modelChanged();
    return true;
}

bool Session::classWeightingApplies() const
{
    std::vector<float> weights;
    return m_task && m_task->classWeights(ClassWeighting::Balanced, weights, nullptr);
}

bool Session::openTask(const QString& path, const QByteArray& bytes,
                       const tasks::TaskOptions& options)
{
    QString error;
    std::shared_ptr<tasks::Task> task(
        tasks::openTask(QFileInfo(path).fileName(), bytes, options, &error));
    if (!task) {
        emit datasetFailed(error);
        return false;
    }
    m_dataPath = path;
    m_dataBytes = bytes;
    m_options = options;
    adoptTask(std::move(task));
    return true;
}

void Session::adoptTask(std::shared_ptr<tasks::Task> task)
{
    ++m_generation;
    ++m_weightsGeneration;
    m_task = std::move(task);
    updateMissingValues();
    const tasks::TaskData& d = m_task->data();
    m_inputWidth = d.inputWidth;
    m_outputWidth = d.outputWidth;
    m_vocab = d.vocab;
    m_modelType = &m_task->type();
    m_modelTaskJson = {};
    // The data's default stack with its training settings (a small regression table's is the
    // ensemble preset, which trains like scikit-learn's MLP).
    const QString preset = m_task->defaultPreset();
    m_spec = canonicalSpec(m_task->presetSpec(preset));
    m_averagedFrom.clear();
    m_config = TrainerConfig{};
    m_task->applyDefaults(m_config);
    m_recipePreset.clear();
    if (const auto recipe = tasks::presetRecipe(m_task->type(), preset)) {
        recipe->applyTo(m_config);
        m_recipePreset = preset;
    }
    m_config.seed = m_options.seed;
    m_hasNetwork = false;
    m_trainedSteps = 0;
    m_modelPath.clear();
    m_history.clear();
    m_timeline.clear();
    m_worker->replaceModel(std::make_unique<ModelState>()); // free the previous model
    setModified(false);
    emit datasetOpened();
    emit modelChanged();
}

} // namespace il::app
