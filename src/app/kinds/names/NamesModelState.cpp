// What the studio's model is as a names model: its schema (the alphabet, the context), from the
// task when the data is open, or from the model file's task metadata without it.
#include "ModelState.h"

namespace il::app {

const tasks::NamesSchema* ModelState::namesSchema()
{
    if (auto* names = dynamic_cast<const tasks::NamesTask*>(task.get())) return &names->schema();
    if (!m_names) {
        tasks::NamesSchema schema;
        if (!tasks::NamesSchema::fromJson(taskJson, schema, nullptr)) return nullptr;
        m_names = std::move(schema);
    }
    return &*m_names;
}

} // namespace il::app
