// Exports a model file for the tools the field uses: a PyTorch module (model.py, which reads the
// model file itself and rebuilds every layer and the task's preprocessing in plain PyTorch, and
// train_more.py, which continues training with the file's loss, schedule and optimizer state),
// and an ONNX graph for inference (OnnxExport.cpp), the task's preprocessing inside it.
#pragma once

#include "IoResult.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <memory>
#include <vector>

namespace il {
class Backend;
class Layer;
class Network;
} // namespace il

namespace il::io {

struct ModelInfo;
struct LoadedModel;

enum class ExportFormat { PyTorch, Onnx };

// "pytorch" -> PyTorch, "onnx" -> Onnx; false for another name.
bool exportFormatFromName(const QString& name, ExportFormat* format);

// Why the network cannot be exported to `format`, one line naming the first layer the format
// cannot express ("layer 2, foo:3: ..."); "" when it can.
QString exportRefusal(const Network& network, ExportFormat format);
// The same check on a stack's layers alone (parseLayerSpec makes them without any memory for
// weights): what the studio asks before it offers an export, so it offers only what the export
// will take.
QString exportRefusal(const std::vector<std::unique_ptr<Layer>>& layers, ExportFormat format);

// A model file's task metadata in today's form: each kind brings the fields its older files
// wrote under other names up to date (tasks::savedTaskInCurrentForm, TaskType::savedInCurrentForm).
// The exports are given it, as they are given each kind's graph and Python: io knows no kind.
using SavedTaskForm = QJsonObject (*)(const QJsonObject& task);

// A model opened for export, on its own one-thread CPU backend (the model is destroyed first).
struct ExportSource {
    std::unique_ptr<Backend> backend;
    std::unique_ptr<LoadedModel> model;
    // The model's task metadata in today's form (SavedTaskForm; as the file has it without
    // one): what the exports build the preprocessing from.
    QJsonObject task;
    ~ExportSource();
};
// Opens the model at modelPath (openModel checks every tensor and builds the network from the
// architecture's "spec", what every command runs), checks that the architecture's per-layer list
// (what model.py builds from, and what a reader of the file sees) describes that same network,
// and that `format` can express it; the failure names the file and the first layer that
// differs.
IoResult openForExport(const QString& modelPath, ExportFormat format, SavedTaskForm currentForm,
                       ExportSource* out);

// The task kinds' parts of the PyTorch export (tasks::pytorchKinds: each kind's Python, from its
// folder): their sections of model.py (preprocessing and outputs: encode_rows, render, generate...)
// and of train_more.py (a reader of each kind's data, in READERS).
struct PyTorchKinds {
    QByteArray model;
    QByteArray trainMore;
    SavedTaskForm currentForm = nullptr; // the task metadata in today's form (null: as it is)
};

// Opens and checks the model at modelPath (openForExport), then writes into directory `dir`
// (made if missing): model.safetensors (a copy of the model file; a file of an older form gets
// its task metadata in today's form, which model.py reads), model.py and train_more.py, each
// atomically. *written lists the files written. On failure nothing half-written is left
// and the error names the file at fault.
IoResult exportPyTorch(const QString& modelPath, const QString& dir, const PyTorchKinds& kinds,
                       QStringList* written);

namespace onnxexport {
class TaskGraph;
}
// The graph around the network for one kind of task (tasks::TaskType::onnxGraph), or null.
using OnnxTaskGraph = void (*)(onnxexport::TaskGraph& graph);

// Opens and checks the model at modelPath (openForExport), then writes the ONNX graph of the
// network the engine runs (opset 17; ai.onnx.ml 3 for the text columns of tables) to outPath,
// atomically. graphFor gives the graph around the network for the model's kind of task (by its
// name: tasks::onnxGraphFor); the kinds build:
//   tables: inputs "numbers" (float [N, numeric columns], the file's units) and one string input
//     [N, 1] per text column, its text as the CSV reader gives it (spaces and tabs around it
//     removed); outputs "predictions" (regression, the file's units) or "probabilities" and
//     "class_index" (classes, named in the metadata "classes"). A row that predict would refuse
//     (a number that is NaN or infinite, a text that is not one of its column's categories) gets
//     NaN predictions or probabilities and class_index -1;
//   images: "coordinates" (float [N, 2]) -> "intensities" (float [N, channels], 0 to 1);
//   names: "context" (int64 [N, context], ids oldest first) -> "probabilities" (next character).
// The model's metadata_props describe the task: names, normalisation, classes, vocabulary and
// how text is normalised (see the export's help). The task metadata is checked against the
// network first (sizes, finite statistics); a mismatch is refused, naming the field.
// *summary (if not null) describes the inputs and outputs, a line each, text from the model
// file shown printable (PrintableText.h).
IoResult exportOnnx(const QString& modelPath, const QString& outPath,
                    OnnxTaskGraph (*graphFor)(const QString& kind), SavedTaskForm currentForm,
                    QString* summary);

} // namespace il::io
