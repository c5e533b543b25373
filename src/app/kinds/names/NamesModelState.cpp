// What the studio's model is as a names model: its schema (the alphabet, the context), from the
// task when the data is open, or from the model file's task metadata without it.
#include "NamesModelState.h"

namespace il::app {

const tasks::NamesSchema* namesSchemaOf(ModelState& m)
{
    if (auto* names = dynamic_cast<const tasks::NamesTask*>(m.task.get())) return &names->schema();
    if (auto* kept = std::any_cast<tasks::NamesSchema>(&m.kindView)) return kept;
    tasks::NamesSchema schema;
    if (!tasks::NamesSchema::fromJson(m.taskJson, schema, nullptr)) return nullptr;
    m.kindView = std::move(schema);
    return std::any_cast<tasks::NamesSchema>(&m.kindView);
}

} // namespace il::app
