// What a kind of task is before any data is open: its name, the files it reads, its layer
// presets, the metric it follows during training and what its models are for. There is one
// TaskType per kind (taskTypes()); every Task returns its own (Task::type()), and a model
// opened without its data finds its type from the saved task metadata (taskTypeOf()).
//
// The CLI's help, the studio's file dialog, samples menu, charts and output pages read these
// descriptions; nothing outside src/tasks compares a task's name with a string.
#pragma once

#include "PresetRecipe.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <memory>
#include <optional>
#include <vector>

namespace il::io {
struct PyTorchKinds;
namespace onnxexport {
class TaskGraph;
}
} // namespace il::io

// A kind's ONNX graph function (<Kind>Onnx.cpp, in its folder) where this build has the ONNX
// export; null where it has none, and then the kinds' *Onnx.cpp files are not built
// (src/tasks/CMakeLists.txt defines IRONLEARN_HAVE_ONNX for the task kinds' own sources).
#ifdef IRONLEARN_HAVE_ONNX
#define IRONLEARN_ONNX_GRAPH(function) (&(function))
#else
#define IRONLEARN_ONNX_GRAPH(function) nullptr
#endif

namespace il::tasks {

class Task;
struct TaskOptions;

struct LayerPreset {
    QString name;
    // The layer list; "VOCAB" stands for the data's vocabulary size (names), filled in by
    // Task::presetSpec.
    QString layers;
    QString note; // what it is for, in a few words ("" if the layer list says it)
    // The training settings its measured result was reached with, if any (train --preset starts
    // from them, the studio sets them with the preset).
    std::optional<PresetRecipe> recipe = std::nullopt;
    // On data its task cross-validates and can average (Task::averagesFolds), the folds' own
    // networks become the model, averaged and blended with the simpler one
    // (FoldModel::Averaged), instead of a network trained again on every row.
    bool averagesFolds = false;
};

// The metric the trainer records at evaluations (Task::trainingMetric) and the chart of it.
struct MetricInfo {
    QString title;        // chart title, e.g. "PSNR (dB), higher is sharper"
    QString pendingTitle; // before the first point: %1 = steps between evaluations; "" = title
    QString description;  // what it measures, for a tooltip
    // The loss chart: what its numbers are in ("" = the generic title), and what to expect of
    // the curve (its tooltip; "" = the generic one).
    QString lossTitle;
    QString lossNote;
};

// A setting of the data that only one kind of task reads (the names' context, a picture's training
// size): the kind declares it (TaskType::settings); `ironlearn-cli train` offers it as --NAME with
// this help, the kind's page on the studio's Data tab sets it, and TaskOptions::settings carries
// it by name to the kind. A number is an integer from min to max; a flag is 0 (off) unless given.
struct KindSetting {
    QString name;      // "context": --context, and its key in TaskOptions::settings
    QString help;      // its line in train --help
    QString valueName; // "N"; empty for a flag
    QString label;     // in the studio's words: "context", "training size"
    int defaultValue = 0;
    int min = 0, max = 1;
    // It changes how much of the data trains, not what the data is (a picture's training size):
    // the studio's run list shows runs at any value of it as runs on the same data.
    bool amountOnly = false;
    bool isFlag() const { return valueName.isEmpty(); }
};

class TaskType {
public:
    virtual ~TaskType() = default;

    // "tabular", "image", "names": --task, and the "task" key of a model's metadata.
    virtual QString name() const = 0;
    // For people, plural: "Tables", "Images", "Names" (menus, file dialogs).
    virtual QString title() const = 0;
    // Its place in every list of kinds (help, menus, file dialogs, the welcome page), lowest
    // first: tables 10, images 20, names 30.
    virtual int order() const = 0;

    // File name suffixes it reads, lower case without the dot.
    virtual QStringList fileSuffixes() const = 0;
    // Suffixes the file dialog offers (default: fileSuffixes()).
    virtual QStringList dialogSuffixes() const { return fileSuffixes(); }
    // "Tables (*.csv *.tsv *.json)"
    QString fileFilter() const;
    // Whether this task reads path, judged by its suffix.
    bool supportsFile(const QString& path) const;

    // The options of `ironlearn-cli train` that only some kinds read and this one does, besides its
    // settings (their names, without "--"): the CLI refuses such an option for a kind that does
    // not read it (readsOption), rather than train with it ignored.
    virtual QStringList trainOptions() const { return {}; }
    // The settings only this kind reads (KindSetting); none by default.
    virtual std::vector<KindSetting> settings() const { return {}; }
    // The `train` options this kind reads and some other kind does not: its trainOptions and the
    // names of its settings.
    QStringList optionNames() const;
    // Whether `train --NAME` means something for this kind (optionNames).
    bool readsOption(const QString& name) const { return optionNames().contains(name); }
    // Its setting `name` in options (TaskOptions::settings), or the setting's default.
    int setting(const TaskOptions& options, const QString& name) const;
    // Whether its models may be chosen by k-fold cross-validation (TaskOptions::folds;
    // CrossValidation.h): the kinds that read --folds. The studio's Cross-validation row follows.
    bool crossValidates() const { return trainOptions().contains(QStringLiteral("folds")); }

    // A small file of this kind's data, made here (a few table rows, a tiny picture, a dozen
    // names): the registry-wide tests open every kind's (each preset builds on it, the task
    // knows its type), so that a new kind is covered by them with no test edits.
    struct Example {
        QString fileName; // a name whose suffix the kind reads: "example.csv"
        QByteArray bytes;
    };
    virtual Example example() const = 0;

    // Layer presets; the first is the default.
    virtual std::vector<LayerPreset> presets() const = 0;
    // The presets for --help: one line each, "mlp (default): dense:32,tanh,dense", indented.
    QString presetHelp(int indent) const;

    // The training metric of a model with this saved task metadata (a table's depends on
    // whether it classifies).
    virtual MetricInfo metric(const QJsonObject& savedTask) const = 0;
    // Whether a saved model's task metadata is whole and in range (its splits, vocabulary,
    // statistics...): false with why, without the file's name, otherwise. open() checks it too;
    // a caller checks it first to name the model file in the message.
    virtual bool checkSaved(const QJsonObject& savedTask, QString* error) const = 0;
    // savedTask with the fields this kind's older files wrote under other names brought to
    // today's names, and the ones they left out filled in as their readers always did; nothing
    // is checked (the reader checks the result as it checks a new file). Default: as it is.
    virtual QJsonObject savedInCurrentForm(const QJsonObject& savedTask) const { return savedTask; }
    // Reads a data file whose suffix no kind claims (tables: a CSV under any name). One kind.
    virtual bool readsUnclaimedFiles() const { return false; }
    // One line about a saved model's task for `info`: "tabular: classification, 4 features ->
    // species (classes: a, b, c)". Default: the name.
    virtual QString describeSaved(const QJsonObject& savedTask) const;

    // The ONNX export around the network for this kind's models (src/io/OnnxGraph.h): the graph's
    // inputs in the data's own units, its outputs as predict gives them, and the metadata that
    // describes them. Null: the ONNX export refuses this kind's models.
    // A kind returns IRONLEARN_ONNX_GRAPH(itsGraphFunction) (above).
    using OnnxGraph = void (*)(io::onnxexport::TaskGraph& graph);
    virtual OnnxGraph onnxGraph() const { return nullptr; }

    // The PyTorch export's parts for this kind's models, Python from the kind's folder
    // (pytorch.py, in two parts): its section of model.py (its preprocessing and
    // outputs) and of train_more.py (a reader of its data, in READERS). Empty: none.
    struct PyTorchSections {
        const char* model = "";
        const char* trainMore = "";
    };
    virtual PyTorchSections pytorch() const { return {}; }

    // Opens data (see openTask / openTaskForModel in Task.h). Null + one-line message.
    virtual std::unique_ptr<Task> open(const QString& pathForMessages, const QByteArray& bytes,
                                       const TaskOptions& options, const QJsonObject* savedTask,
                                       bool forEvaluation, QString* error) const = 0;
};

// Every task type, in the order menus and help list them (TaskType::order). The list is made
// when the project is configured from the folders under src/tasks: the folder `<kind>/` defines
// `const TaskType& <kind>TaskType()`, and no other file names it.
const std::vector<const TaskType*>& taskTypes();
// The type named name, or null.
const TaskType* findTaskType(const QString& name);
// The type that reads path (by its suffix), or null.
const TaskType* taskTypeForPath(const QString& path);
// The type of a saved model's task metadata, or null if it names none.
const TaskType* taskTypeOf(const QJsonObject& savedTask);
// Why the task metadata of the model file at modelPath is one its type refuses (as predict
// would read it): "PATH: ..."; "" when it is fine, or when the file cannot be read at all (the
// caller's open says why). The PyTorch export asks before writing: model.py reads the task.
QString savedTaskProblem(const QString& modelPath);
// The ONNX graph of the kind named `kind` (TaskType::onnxGraph); null for an unknown kind or one
// with no ONNX export. What io::exportOnnx is given.
TaskType::OnnxGraph onnxGraphFor(const QString& kind);
// A saved model's task metadata in today's form (its kind's savedInCurrentForm; as it is for no
// kind): what every reader of a model file reads, the exports included (io::SavedTaskForm).
QJsonObject savedTaskInCurrentForm(const QJsonObject& savedTask);
// Every kind's PyTorch sections (TaskType::pytorch), in taskTypes() order: what io::exportPyTorch
// writes into model.py and train_more.py.
io::PyTorchKinds pytorchKinds();
// "tabular, image or names"
QString taskTypeNames();
// Every type's presets for --help, under a heading.
QString presetHelp();
// "Data files (*.csv ... *.txt);;Tables (*.csv *.tsv *.json);;...;;All files (*)"
QString dataFileFilter();

} // namespace il::tasks
