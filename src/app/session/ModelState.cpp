#include "ModelState.h"

#include "Errors.h"
#include "HostCopy.h"
#include "StudioKind.h"
#include "TaskType.h"

namespace il::app {

QJsonObject ModelState::taskJsonForSaving() const
{
    QJsonObject json = task ? task->toJson() : taskJson;
    if (!dataPath.isEmpty()) json[kDataFileKey] = dataPath;
    return json;
}

std::unique_ptr<ModelState> ModelState::create(std::shared_ptr<tasks::Task> task,
                                               const QString& dataPath, const QString& spec,
                                               const TrainerConfig& config, QString* error)
{
    auto m = std::make_unique<ModelState>();
    m->backend = createCpuBackend(0);
    m->task = std::move(task);
    m->dataPath = dataPath;
    m->config = config;
    try {
        m->build(spec.toStdString());
    } catch (const EngineError& e) {
        if (error) *error = QString::fromStdString(e.what());
        return nullptr;
    } catch (const std::bad_alloc&) {
        if (error) *error = "not enough memory for this network";
        return nullptr;
    }
    return m;
}

const tasks::TaskType* ModelState::type() const
{
    return task ? &task->type() : tasks::taskTypeOf(taskJson);
}

bool ModelState::drawsPictures() const
{
    const StudioKind* kind = studioKindOf(type());
    return kind && kind->extras().picture;
}

QImage ModelState::picture(int longestSide)
{
    const StudioKind* kind = studioKindOf(type());
    if (!network || !kind || !kind->extras().picture) return {};
    return kind->extras().picture(*this, longestSide);
}

void ModelState::moveTo(std::unique_ptr<Backend> target, const DeviceChoice& where,
                        const HostCopy& copy)
{
    tasks::Model::moveTo(std::move(target), copy);
    device = where;
}

} // namespace il::app
