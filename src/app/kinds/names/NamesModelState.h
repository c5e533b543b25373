// What the studio's model is as a names model (NamesModelState.cpp).
#pragma once

#include "ModelState.h"
#include "NamesTask.h"

namespace il::app {

// Its schema (the alphabet, the context): the task's when the data is open, or read once from
// the model file's task metadata without it (kept in ModelState::kindView); null for another
// kind.
const tasks::NamesSchema* namesSchemaOf(ModelState& m);

} // namespace il::app
