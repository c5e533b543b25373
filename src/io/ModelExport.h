// Exports a model file for the tools the field uses: a PyTorch module (model.py, which reads the
// model file itself and rebuilds every layer and the task's preprocessing in plain PyTorch, and
// train_more.py, which continues training with the file's loss, schedule and optimizer state).
#pragma once

#include "IoResult.h"

#include <QString>
#include <QStringList>

namespace il::io {

struct ModelInfo;

enum class ExportFormat { PyTorch };

// "pytorch" -> PyTorch; false for another name.
bool exportFormatFromName(const QString& name, ExportFormat* format);

// Why `info`'s model cannot be exported to `format`, one line naming the first layer the format
// cannot express ("layer 2, foo:3: ..."); "" when it can.
QString exportRefusal(const ModelInfo& info, ExportFormat format);

// Opens and checks the model at modelPath (as openModel does), then writes into directory `dir`
// (made if missing): model.safetensors (a copy of the model file), model.py and train_more.py,
// each atomically. *written lists the files written. On failure nothing half-written is left
// and the error names the file at fault.
IoResult exportPyTorch(const QString& modelPath, const QString& dir, QStringList* written);

} // namespace il::io
