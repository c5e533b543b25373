#include "ModelExport.h"

#include "AtomicFile.h"
#include "ExportScripts.h"
#include "ModelFile.h"
#include "PrintableText.h"
#include "SafeTensors.h"

#include "Backend.h"
#include "LayerRegistry.h"
#include "Network.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>

namespace il::io {

namespace {

// The line of model.py and train_more.py where the task kinds' sections go.
const QByteArray kKindsMarker = "# @KINDS@";

// script with the kinds' sections in place of its marker line.
QByteArray withKinds(QByteArray script, const QByteArray& sections)
{
    const qsizetype at = script.indexOf(kKindsMarker);
    Q_ASSERT(at >= 0); // testCliExport runs both scripts
    // The marker's line and the two blank lines after it.
    const qsizetype end = script.indexOf("\n\n\n", at);
    return script.replace(at, end + 3 - at, sections);
}

// model.py (resources/export/model.py) with the layer registry's PyTorch forms (ExportForms.h)
// filled in: the table of activations (each one's expression and its argument's default), and
// the other layers' module classes with their LAYERS table (each name and alias to its class);
// then the task kinds' sections.
QByteArray modelScript(const PyTorchKinds& kinds)
{
    QByteArray activations = "ACTIVATIONS = {\n";
    QByteArray modules;
    QByteArray layers = "LAYERS = {\n";
    for (const LayerType& t : layerTypes()) {
        if (t.exports.pytorch.empty()) continue;
        const QByteArray form = QByteArray::fromStdString(t.exports.pytorch);
        if (t.activation) {
            const QByteArray argument =
                t.args.empty() ? QByteArray("None")
                               : "\"" +
                                     QByteArray::fromStdString(formatFloat(
                                         static_cast<float>(t.args.front().defaultValue))) +
                                     "\"";
            activations += "    \"" + QByteArray::fromStdString(t.name) +
                           "\": (lambda x, a: " + form + ", " + argument + "),\n";
            continue;
        }
        // "class Name(nn.Module):" opens the source.
        const qsizetype at = form.indexOf("class ");
        const QByteArray name = form.mid(at + 6, form.indexOf('(', at) - at - 6);
        Q_ASSERT(at >= 0 && !name.isEmpty()); // testCliExport runs every type's module
        modules += form.trimmed() + "\n\n\n";
        std::vector<std::string> names = t.aliases;
        names.insert(names.begin(), t.name);
        for (const std::string& n : names)
            layers += "    \"" + QByteArray::fromStdString(n) + "\": " + name + ",\n";
    }
    activations += "}";
    layers += "}";
    QByteArray script(kExport_model);
    const QByteArray activationMarker = "ACTIVATIONS = {}  # @ACTIVATIONS@";
    const QByteArray layerMarker = "LAYERS = {}  # @LAYERS@";
    // Checked by testCliExport, which runs the script.
    Q_ASSERT(script.count(activationMarker) == 1 && script.count(layerMarker) == 1);
    script.replace(activationMarker, activations).replace(layerMarker, modules + layers);
    return withKinds(script, kinds.model);
}

} // namespace

bool exportFormatFromName(const QString& name, ExportFormat* format)
{
    if (name.compare(QLatin1String("pytorch"), Qt::CaseInsensitive) == 0) {
        *format = ExportFormat::PyTorch;
        return true;
    }
    if (name.compare(QLatin1String("onnx"), Qt::CaseInsensitive) == 0) {
        *format = ExportFormat::Onnx;
        return true;
    }
    return false;
}

QString exportRefusal(const Network& network, ExportFormat format)
{
    return exportRefusal(network.layers(), format);
}

QString exportRefusal(const std::vector<std::unique_ptr<Layer>>& layers, ExportFormat format)
{
    const QString name =
        format == ExportFormat::Onnx ? QStringLiteral("ONNX") : QStringLiteral("PyTorch");
    for (size_t i = 0; i < layers.size(); ++i) {
        const QString type = QString::fromStdString(layers[i]->kind());
        const ExportForms& forms = layers[i]->item().type->exports;
        if (format == ExportFormat::Onnx ? !forms.onnx : forms.pytorch.empty())
            return QStringLiteral("layer %1, %2: the %3 export has no %4 layer")
                .arg(i + 1)
                .arg(QString::fromStdString(layers[i]->spec()), name, type);
    }
    if (layers.empty()) return QStringLiteral("the model lists no layers");
#ifndef IRONLEARN_HAVE_ONNX
    if (format == ExportFormat::Onnx)
        return QStringLiteral("this build has no ONNX export (libonnx-dev was missing when it "
                              "was built)");
#endif
    return {};
}

namespace {

// Where the architecture's per-layer list (model.py builds from it; info and a reader of the
// file see it) differs from the network its "spec" makes (what every command runs), one line;
// "" when it describes that network. A listed item may be written another way ("linear:16" for
// "dense:16"): items are compared as the layer language reads them.
QString layerListMismatch(const ModelInfo& info, const Network& network)
{
    const QJsonArray listed = info.architecture.value(QStringLiteral("layers")).toArray();
    const std::vector<LayerSummary> made = network.summary();
    const QString spec = quoted(QString::fromStdString(info.spec), 80);
    if (listed.size() != static_cast<qsizetype>(made.size()))
        return QStringLiteral("its architecture lists %1 layers, its spec %2 makes %3; the file "
                              "was altered, and the export will not guess which is meant")
            .arg(QString::number(listed.size()), spec, QString::number(made.size()));
    for (size_t i = 0; i < made.size(); ++i) {
        const QJsonObject item = listed[static_cast<qsizetype>(i)].toObject();
        const QString text = item.value(QStringLiteral("spec")).toString();
        bool same = text.toStdString() == made[i].spec;
        if (!same) {
            try {
                same = parseLayerItem(text.toStdString()) == network.layers()[i]->item();
            } catch (const std::exception&) {
                same = false; // not a layer at all: differs
            }
        }
        const QJsonValue width = item.value(QStringLiteral("output_width"));
        if (!same || !width.isDouble() || width.toDouble() != double(made[i].outputWidth))
            return QStringLiteral("layer %1 is %2 with %3 outputs in its architecture's layer "
                                  "list, but its spec %4 makes %5 with %6; the file was altered, "
                                  "and the export will not guess which is meant")
                .arg(QString::number(i + 1), quoted(text, 40),
                     width.isDouble() ? QString::number(width.toDouble()) : QStringLiteral("no"),
                     spec, quoted(QString::fromStdString(made[i].spec), 40),
                     QString::number(made[i].outputWidth));
    }
    return {};
}

} // namespace

ExportSource::~ExportSource()
{
    model.reset(); // built on backend
}

IoResult openForExport(const QString& modelPath, ExportFormat format, SavedTaskForm currentForm,
                       ExportSource* out)
{
    out->backend = createCpuBackend(1);
    QString error;
    out->model = openModel(modelPath, *out->backend, &error); // validates every tensor
    if (!out->model) return IoResult::failure(error);
    const Network& network = *out->model->network;
    QString refusal = layerListMismatch(out->model->info, network);
    if (refusal.isEmpty()) refusal = exportRefusal(network, format);
    if (!refusal.isEmpty()) return IoResult::failure(modelPath + ": " + refusal);
    out->task = currentForm ? currentForm(out->model->info.task) : out->model->info.task;
    return {};
}

IoResult exportPyTorch(const QString& modelPath, const QString& dir, const PyTorchKinds& kinds,
                       QStringList* written)
{
    ExportSource opened;
    if (IoResult r = openForExport(modelPath, ExportFormat::PyTorch, kinds.currentForm, &opened);
        !r)
        return r;

    if (dir.isEmpty())
        return IoResult::failure(QStringLiteral("no folder name given for the export"));
    const QFileInfo target(dir);
    if (target.exists() && !target.isDir())
        return IoResult::failure(dir + ": is a file; the PyTorch export writes a directory");
    // The folders this export makes, deepest first: a failed export removes them again (and what
    // it wrote into them), so it leaves no empty folder behind.
    QStringList made;
    for (QFileInfo f(QFileInfo(dir).absoluteFilePath()); !f.exists();
         f = QFileInfo(f.absolutePath()))
        made << f.absoluteFilePath();
    if (!QDir().mkpath(dir)) return IoResult::failure(dir + ": cannot create the directory");
    QStringList done;
    const auto failed = [&](IoResult r) {
        if (!made.isEmpty()) {
            for (const QString& f : done)
                QFile::remove(f);
            for (const QString& d : made)
                QDir().rmdir(d); // only if empty: nothing of anyone else's goes
        }
        return r;
    };

    QByteArray bytes;
    if (opened.task == opened.model->info.task) {
        QFile source(modelPath);
        if (!source.open(QIODevice::ReadOnly))
            return failed(IoResult::failure(modelPath + ": cannot read: " + source.errorString()));
        bytes = source.readAll();
    } else { // an older file: the copy carries its task in today's form, which model.py reads
        SafeTensorsFile file;
        if (IoResult r = readSafeTensors(modelPath, file); !r) return failed(r);
        file.metadata[QStringLiteral("task")] =
            QString::fromUtf8(QJsonDocument(opened.task).toJson(QJsonDocument::Compact));
        if (IoResult r = encodeSafeTensors(file, bytes); !r)
            return failed(IoResult::failure(modelPath + ": " + r.error));
    }
    const QDir out(dir);
    const QString copy = out.filePath(QStringLiteral("model.safetensors"));
    const struct {
        QString path;
        QByteArray bytes;
    } files[] = {
        {copy, bytes},
        {out.filePath(QStringLiteral("model.py")), modelScript(kinds)},
        {out.filePath(QStringLiteral("train_more.py")),
         withKinds(QByteArray(kExport_train_more), kinds.trainMore)},
    };
    for (const auto& f : files) {
        if (f.path == copy &&
            QFileInfo(copy).canonicalFilePath() == QFileInfo(modelPath).canonicalFilePath())
            continue; // exporting into the model's own directory: it is there already
        const IoResult r = writeFileAtomically(f.path, f.bytes);
        if (!r) return failed(r);
        done << f.path;
        if (written) *written << f.path;
    }
    return {};
}

#ifndef IRONLEARN_HAVE_ONNX
IoResult exportOnnx(const QString& modelPath, const QString&, OnnxTaskGraph (*)(const QString&),
                    SavedTaskForm, QString*)
{
    return IoResult::failure(modelPath +
                             ": this build has no ONNX export (libonnx-dev was missing when it "
                             "was built)");
}
#endif

} // namespace il::io
