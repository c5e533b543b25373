// What the studio's model is as an image model: its task, when the data is open, and its
// geometry, from the task or from the model file's task metadata without it.
#include "ImageModelState.h"

namespace il::app {

const tasks::ImageTask* imageTaskOf(const ModelState& m)
{
    return dynamic_cast<const tasks::ImageTask*>(m.task.get());
}

const tasks::ImageGeometry* imageGeometryOf(ModelState& m)
{
    if (const auto* image = imageTaskOf(m)) return &image->geometry();
    if (auto* kept = std::any_cast<tasks::ImageGeometry>(&m.kindView)) return kept;
    tasks::ImageGeometry geometry;
    if (!tasks::ImageGeometry::fromJson(m.taskJson, geometry, nullptr)) return nullptr;
    m.kindView = geometry;
    return std::any_cast<tasks::ImageGeometry>(&m.kindView);
}

QImage imagePicture(ModelState& m, int longestSide)
{
    const tasks::ImageGeometry* g = imageGeometryOf(m);
    if (!g || !m.network) return {};
    QSize size(g->width, g->height);
    if (longestSide <= 0) longestSide = std::max(g->width, g->height);
    const tasks::ImageTask* task = imageTaskOf(m);
    if (task && size.width() <= longestSide && size.height() <= longestSide)
        return task->reconstruct(*m.network);
    size.scale(longestSide, longestSide, Qt::KeepAspectRatio);
    size = size.expandedTo(QSize(tasks::kMinRenderSide, tasks::kMinRenderSide));
    QString error;
    return tasks::renderImage(*m.network, *g, size, &error);
}

} // namespace il::app
