#include "ModelState.h"

#include "Errors.h"
#include "Snapshot.h"

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

QImage ModelState::preview(int longestSide)
{
    const tasks::ImageGeometry* g = imageGeometry();
    if (!g || !network) return {};
    QSize size(g->width, g->height);
    if (imageTask() && size.width() <= longestSide && size.height() <= longestSide)
        return imageTask()->reconstruct(*network);
    size.scale(longestSide, longestSide, Qt::KeepAspectRatio);
    size = size.expandedTo(QSize(tasks::kMinRenderSide, tasks::kMinRenderSide));
    QString error;
    return tasks::renderImage(*network, *g, size, &error);
}

void ModelState::moveTo(std::unique_ptr<Backend> target, const DeviceChoice& where,
                        const HostSnapshot& snapshot)
{
    tasks::Model::moveTo(std::move(target), snapshot);
    device = where;
}

} // namespace il::app
