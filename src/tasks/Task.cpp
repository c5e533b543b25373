#include "Task.h"

#include "TabularTask.h"

#include "Limits.h"

namespace il::tasks {

std::vector<float> predictRows(Network& net, const std::vector<float>& x, int64_t rows)
{
    Backend& b = net.backend();
    std::vector<float> out(static_cast<size_t>(rows * net.outputWidth()));
    // Bounded memory for any number of rows and any width (Limits.h).
    const int64_t chunk = inferenceChunkRows(net, 16384);
    Buffer in(&b, static_cast<size_t>(std::min(rows, chunk) * net.inputWidth()));
    Buffer y(&b, static_cast<size_t>(std::min(rows, chunk) * net.outputWidth()));
    for (int64_t r = 0; r < rows; r += chunk) {
        const int64_t n = std::min(chunk, rows - r);
        b.upload(in.view(n, net.inputWidth()), x.data() + r * net.inputWidth());
        net.predict(in.view(n, net.inputWidth()), y.view(n, net.outputWidth()));
        b.download(out.data() + r * net.outputWidth(), y.view(n, net.outputWidth()));
    }
    return out;
}

UploadedData uploadTaskData(Backend& b, const TaskData& d)
{
    auto put = [&b](const std::vector<float>& host, int64_t rows, int64_t cols) {
        Buffer buf(&b, static_cast<size_t>(std::max<int64_t>(rows * cols, 1)));
        if (rows * cols > 0) b.upload(buf.view(rows, cols), host.data());
        return buf;
    };
    UploadedData u;
    u.trainX = put(d.trainX, d.trainRows, d.inputWidth);
    u.trainY = put(d.trainY, d.trainRows, d.targetWidth);
    u.valX = put(d.valX, d.valRows, d.inputWidth);
    u.valY = put(d.valY, d.valRows, d.targetWidth);
    u.view.trainX = u.trainX.view(d.trainRows, d.inputWidth);
    u.view.trainY = u.trainY.view(d.trainRows, d.targetWidth);
    if (d.valRows > 0) {
        u.view.valX = u.valX.view(d.valRows, d.inputWidth);
        u.view.valY = u.valY.view(d.valRows, d.targetWidth);
    }
    return u;
}

bool Task::classWeights(ClassWeighting w, std::vector<float>& out, QString* why) const
{
    out.clear();
    if (w == ClassWeighting::None) return true;
    if (why) *why = "class weighting is for classification tables, not " + kind() + " data";
    return false;
}

bool applyClassWeights(const Task& task, TrainerConfig& config, QString* why)
{
    std::vector<float> weights;
    if (!task.classWeights(config.classWeighting, weights, why)) return false;
    config.classWeights = std::move(weights);
    return true;
}

QStringList Task::presets() const
{
    QStringList names;
    for (const LayerPreset& p : type().presets())
        names << p.name;
    return names;
}

bool Task::averagesFoldsOf(const QString& preset) const
{
    if (!averagesFolds()) return false;
    for (const LayerPreset& p : type().presets())
        if (p.name == preset) return p.averagesFolds;
    return false;
}

QString Task::presetSpec(const QString& name) const
{
    for (const LayerPreset& p : type().presets())
        if (p.name == name) return p.layers;
    return {};
}

namespace {

std::unique_ptr<Task> open(const QString& path, const QByteArray& bytes, const TaskOptions& options,
                           const QJsonObject* saved, bool forEvaluation, QString* error)
{
    QString kind = saved ? saved->value("task").toString() : options.task;
    const TaskType* type = kind.isEmpty() ? taskTypeForPath(path) : findTaskType(kind);
    for (const TaskType* t : taskTypes())
        if (kind.isEmpty() && !type && t->readsUnclaimedFiles()) type = t;
    if (!type) {
        if (error) *error = path + ": the " + kind + " task is not available in this build yet";
        return nullptr;
    }
    return type->open(path, bytes, options, saved, forEvaluation, error);
}

} // namespace

double Task::validationLoss(Network& net, LossKind loss)
{
    const TaskData& d = data();
    Backend& b = net.backend();
    Buffer x(&b, d.valX.size()), y(&b, d.valY.size()), scratch;
    b.upload(x.view(d.valRows, d.inputWidth), d.valX.data());
    b.upload(y.view(d.valRows, d.targetWidth), d.valY.data());
    return Trainer::evaluateLoss(net, loss, x.view(d.valRows, d.inputWidth),
                                 y.view(d.valRows, d.targetWidth), scratch);
}

std::unique_ptr<Task> openTask(const QString& path, const QByteArray& bytes,
                               const TaskOptions& options, QString* error)
{
    return open(path, bytes, options, nullptr, false, error);
}

std::unique_ptr<Task> openTaskForModel(const QString& path, const QByteArray& bytes,
                                       const QJsonObject& savedTask, bool forEvaluation,
                                       const TaskOptions& options, QString* error)
{
    return open(path, bytes, options, &savedTask, forEvaluation, error);
}

Settled settleRun(Task& task, Network& net, const TrainerConfig& config, TrainResult& result)
{
    switch (result.reason) {
    case StopReason::Finished:
    case StopReason::TimeBudget:
    case StopReason::EarlyStopping:
    case StopReason::TargetReached:
        break;
    case StopReason::Cancelled:
    case StopReason::NonFinite:
    case StopReason::DeviceFailure:
        return {};
    }
    Settled s = task.settle(net, config);
    if (s.replaced) {
        result.trainLoss = s.trainLoss;
        result.valLoss = s.valLoss;
    }
    return s;
}

} // namespace il::tasks
