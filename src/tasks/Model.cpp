#include "Model.h"

#include <algorithm>

namespace il::tasks {

void Model::build(const std::string& spec)
{
    const TaskData& d = task->data();
    network = std::make_unique<Network>(*backend, d.inputWidth, spec, d.outputWidth, d.vocab);
    network->initialize(config.seed);
    task->warmStart(*network);
    optimizer = std::make_unique<Optimizer>(*backend, config.optimizer, network->parameterRanges());
    taskJson = task->toJson();
    m_opened.reset();
}

bool Model::open(const QString& path, io::ModelInfo* info, QString* error)
{
    auto loaded = io::openModel(path, *backend, error);
    if (!loaded) return false;
    taskJson = loaded->info.task;
    config = loaded->info.config;
    state = loaded->info.state;
    network = std::move(loaded->network);
    optimizer.reset();
    if (info) *info = loaded->info;
    m_opened = std::move(loaded);
    return true;
}

bool Model::attach(std::shared_ptr<Task> data, QString* error)
{
    const TaskData& d = data->data();
    if (network &&
        (d.inputWidth != network->inputWidth() || d.outputWidth != network->outputWidth())) {
        if (error)
            *error = "the data does not fit the model (it needs " +
                     QString::number(network->inputWidth()) + " inputs and " +
                     QString::number(network->outputWidth()) + " outputs)";
        return false;
    }
    task = std::move(data);
    this->data = UploadedData();
    uploaded = false;
    return true;
}

bool Model::makeOptimizer(const OptimizerConfig& optimizerConfig, QString* note)
{
    optimizer = std::make_unique<Optimizer>(*backend, optimizerConfig, network->parameterRanges());
    const std::unique_ptr<io::LoadedModel> opened = std::move(m_opened);
    return !opened || opened->optimizerState.empty() ||
           io::restoreOptimizer(*opened, *backend, *optimizer, note);
}

void Model::upload()
{
    if (uploaded || !task) return;
    data = uploadTaskData(*backend, task->data());
    uploaded = true;
}

bool Model::save(const QString& path, const QJsonObject& taskMetadata, QString* error) const
{
    return io::saveModel(path, *network, optimizer.get(), config, state, taskMetadata, error);
}

void Model::resetWeights()
{
    if (!network) return;
    network->initialize(config.seed);
    if (task) task->warmStart(*network);
    if (optimizer) optimizer->reset();
    state = TrainingState{};
}

void Model::moveTo(std::unique_ptr<Backend> target, const HostCopy& copy)
{
    const OptimizerConfig optimizerConfig = optimizer ? optimizer->config() : config.optimizer;
    MovedModel moved = moveModel(*network, optimizerConfig, copy, *target);
    // Everything that lives in the old backend goes before it does.
    data = UploadedData();
    uploaded = false;
    m_opened.reset();
    optimizer = std::move(moved.optimizer);
    network = std::move(moved.network);
    backend = std::move(target);
}

int64_t Model::recoverOnCpu(std::unique_ptr<Backend> cpu, std::shared_ptr<const HostCopy> good)
{
    if (!good) good = std::make_shared<HostCopy>(takeHostCopy(*network, *optimizer, state));
    const double seconds = state.seconds;
    moveTo(std::move(cpu), *good);
    state = good->state;
    state.seconds = std::max(seconds, state.seconds);
    return state.step;
}

} // namespace il::tasks
