// What the studio's model is as an image model: its task, when the data is open, and its
// geometry, from the task or from the model file's task metadata without it.
#include "ModelState.h"

namespace il::app {

const tasks::ImageTask* ModelState::imageTask() const
{
    return dynamic_cast<const tasks::ImageTask*>(task.get());
}

const tasks::ImageGeometry* ModelState::imageGeometry()
{
    if (const auto* image = imageTask()) return &image->geometry();
    if (!m_geometry) {
        tasks::ImageGeometry geometry;
        if (!tasks::ImageGeometry::fromJson(taskJson, geometry, nullptr)) return nullptr;
        m_geometry = geometry;
    }
    return &*m_geometry;
}

} // namespace il::app
