#include "TaskType.h"

#include "PresetRecipe.h"
#include "Task.h"

#include "ModelExport.h"
#include "ModelFile.h"

#include <QFileInfo>

#include <algorithm>

namespace il::tasks {

namespace {

QString patterns(const QStringList& suffixes)
{
    QStringList out;
    for (const QString& s : suffixes)
        out << "*." + s;
    return out.join(' ');
}

} // namespace

QString TaskType::fileFilter() const
{
    return title() + " (" + patterns(dialogSuffixes()) + ")";
}

bool TaskType::supportsFile(const QString& path) const
{
    return fileSuffixes().contains(QFileInfo(path).suffix().toLower());
}

QString TaskType::presetHelp(int indent) const
{
    QString text;
    bool first = true;
    for (const LayerPreset& p : presets()) {
        text += QString(indent, ' ') + p.name + (first ? " (default): " : ": ") + p.layers;
        if (!p.note.isEmpty()) text += " (" + p.note + ")";
        if (p.recipe) text += "; trains with " + p.recipe->flags();
        text += "\n";
        first = false;
    }
    return text;
}

QStringList TaskType::optionNames() const
{
    QStringList names = trainOptions();
    for (const KindSetting& s : settings())
        names << s.name;
    return names;
}

int TaskType::setting(const TaskOptions& options, const QString& name) const
{
    for (const KindSetting& s : settings())
        if (s.name == name) return options.settings.value(name, s.defaultValue);
    Q_ASSERT_X(false, "TaskType::setting", "a setting the kind does not declare");
    return 0;
}

QString TaskType::describeSaved(const QJsonObject& savedTask) const
{
    (void)savedTask;
    return name();
}

// Each kind's folder (TaskKinds.inc is written by CMake from the folders' names).
#define IRONLEARN_TASK_KIND(kind) const TaskType& kind##TaskType();
#include "TaskKinds.inc"
#undef IRONLEARN_TASK_KIND

const std::vector<const TaskType*>& taskTypes()
{
    static const std::vector<const TaskType*> types = [] {
        std::vector<const TaskType*> list{
#define IRONLEARN_TASK_KIND(kind) &kind##TaskType(),
#include "TaskKinds.inc"
#undef IRONLEARN_TASK_KIND
        };
        std::stable_sort(list.begin(), list.end(), [](const TaskType* a, const TaskType* b) {
            return a->order() < b->order();
        });
        return list;
    }();
    return types;
}

const TaskType* findTaskType(const QString& name)
{
    for (const TaskType* t : taskTypes())
        if (t->name() == name) return t;
    return nullptr;
}

const TaskType* taskTypeForPath(const QString& path)
{
    for (const TaskType* t : taskTypes())
        if (t->supportsFile(path)) return t;
    return nullptr;
}

const TaskType* taskTypeOf(const QJsonObject& savedTask)
{
    return findTaskType(savedTask.value("task").toString());
}

QString savedTaskProblem(const QString& modelPath)
{
    io::ModelInfo info;
    QString error;
    if (!io::readModelInfo(modelPath, info, &error)) return {};
    const TaskType* type = taskTypeOf(info.task);
    if (type && !type->checkSaved(info.task, &error)) return modelPath + ": " + error;
    return {};
}

TaskType::OnnxGraph onnxGraphFor(const QString& kind)
{
    const TaskType* type = findTaskType(kind);
    return type ? type->onnxGraph() : nullptr;
}

QJsonObject savedTaskInCurrentForm(const QJsonObject& savedTask)
{
    const TaskType* type = taskTypeOf(savedTask);
    return type ? type->savedInCurrentForm(savedTask) : savedTask;
}

io::PyTorchKinds pytorchKinds()
{
    io::PyTorchKinds kinds;
    kinds.currentForm = savedTaskInCurrentForm;
    for (const TaskType* t : taskTypes()) {
        const TaskType::PyTorchSections s = t->pytorch();
        // Each section ends in a newline; two blank lines part it from the next (PEP 8).
        kinds.model += QByteArray(s.model) + "\n\n";
        kinds.trainMore += QByteArray(s.trainMore) + "\n\n";
    }
    return kinds;
}

QString taskTypeNames()
{
    QStringList names;
    for (const TaskType* t : taskTypes())
        names << t->name();
    const QString last = names.takeLast();
    return names.isEmpty() ? last : names.join(", ") + " or " + last;
}

QString presetHelp()
{
    qsizetype width = 0;
    for (const TaskType* t : taskTypes())
        width = std::max(width, t->name().size());
    const int indent = static_cast<int>(width) + 4;
    QString text = "Presets (--preset), by task:\n";
    for (const TaskType* t : taskTypes()) {
        // The first line carries the task's name in the indent.
        QString lines = t->presetHelp(indent);
        lines.replace(0, t->name().size() + 2, "  " + t->name());
        text += lines;
    }
    return text;
}

QString dataFileFilter()
{
    QStringList all, each;
    for (const TaskType* t : taskTypes()) {
        all << patterns(t->dialogSuffixes());
        each << t->fileFilter();
    }
    return "Data files (" + all.join(' ') + ");;" + each.join(";;") + ";;All files (*)";
}

} // namespace il::tasks
