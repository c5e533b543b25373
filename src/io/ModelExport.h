// Exports a model file for the tools the field uses: a PyTorch module (model.py, which reads the
// model file itself and rebuilds every layer and the task's preprocessing in plain PyTorch, and
// train_more.py, which continues training with the file's loss, schedule and optimizer state),
// and an ONNX graph for inference (OnnxExport.cpp), the task's preprocessing inside it.
#pragma once

#include "IoResult.h"

#include <QString>
#include <QStringList>

#include <memory>

namespace il {
class Backend;
}

namespace il::io {

struct ModelInfo;
struct LoadedModel;

enum class ExportFormat { PyTorch, Onnx };

// "pytorch" -> PyTorch, "onnx" -> Onnx; false for another name.
bool exportFormatFromName(const QString& name, ExportFormat* format);

// Why `info`'s model cannot be exported to `format`, one line naming the first layer the format
// cannot express ("layer 2, foo:3: ..."); "" when it can.
QString exportRefusal(const ModelInfo& info, ExportFormat format);

// A model opened for export, on its own one-thread CPU backend (the model is destroyed first).
struct ExportSource {
    std::unique_ptr<Backend> backend;
    std::unique_ptr<LoadedModel> model;
    ~ExportSource();
};
// Opens the model at modelPath (openModel checks every tensor) and checks that `format` can
// express it; the failure names the file.
IoResult openForExport(const QString& modelPath, ExportFormat format, ExportSource* out);

// Opens and checks the model at modelPath (as openModel does), then writes into directory `dir`
// (made if missing): model.safetensors (a copy of the model file), model.py and train_more.py,
// each atomically. *written lists the files written. On failure nothing half-written is left
// and the error names the file at fault.
IoResult exportPyTorch(const QString& modelPath, const QString& dir, QStringList* written);

// Opens and checks the model at modelPath, then writes the ONNX graph (opset 17; ai.onnx.ml 3 for
// the text columns of tables) to outPath, atomically:
//   tables: inputs "numbers" (float [N, numeric columns], the file's units) and one string input
//     [N, 1] per text column; outputs "predictions" (regression, the file's units) or
//     "probabilities" and "class_index" (classes, named in the metadata "classes");
//   images: "coordinates" (float [N, 2]) -> "intensities" (float [N, channels], 0 to 1);
//   names: "context" (int64 [N, context], ids oldest first) -> "probabilities" (next character).
// *summary (if not null) describes the inputs and outputs, a line each.
IoResult exportOnnx(const QString& modelPath, const QString& outPath, QString* summary);

// Why the ONNX graph cannot express the model (the hash grid), one line; "" when it can.
QString onnxRefusal(const ModelInfo& info);

} // namespace il::io
