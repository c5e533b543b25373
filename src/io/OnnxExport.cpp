// The ONNX export (ModelExport.h): the network as an ONNX graph (opset 17), built with the ONNX
// project's protobuf classes (Debian's libonnx-dev), with the task's preprocessing inside it.
// The layer stack is OnnxLayers.cpp's; the graph around it (the inputs in the data's own units,
// the outputs as predict gives them, checked against the network before anything is built, and
// described in the model's metadata) is the task kind's (TaskType::onnxGraph, in its folder).
// Here: the model, what a kind builds with (TaskGraph), and the file.
#include "ModelExport.h"
#include "OnnxGraph.h"

#include "AtomicFile.h"
#include "ModelFile.h"
#include "PrintableText.h"

#include "Backend.h"
#include "Network.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace il::io {

namespace onnxexport {

void TaskGraph::metadata(const std::string& key, const QString& value)
{
    auto* m = m_proto.add_metadata_props();
    m->set_key(key);
    m->set_value(value.toStdString());
}

std::string TaskGraph::network(const std::string& input, bool integerInput)
{
    const Built z = onnxexport::network(g, net, input, integerInput);
    if (!z.error.isEmpty()) throw Refusal{z.error};
    return z.value;
}

QString TaskGraph::json(const QJsonValue& v)
{
    if (v.isArray())
        return QString::fromUtf8(QJsonDocument(v.toArray()).toJson(QJsonDocument::Compact));
    if (v.isObject())
        return QString::fromUtf8(QJsonDocument(v.toObject()).toJson(QJsonDocument::Compact));
    return v.toString();
}

QStringList TaskGraph::strings(const char* key, qsizetype count) const
{
    const QJsonValue v = task.value(QLatin1String(key));
    const QJsonArray a = v.toArray();
    if (!v.isArray() || (count >= 0 && a.size() != count))
        throw Refusal{QStringLiteral("task: \"%1\" must be a list of %2 names")
                          .arg(QLatin1String(key),
                               count >= 0 ? QString::number(count) : QStringLiteral("some"))};
    QStringList out;
    for (const QJsonValue& e : a) {
        if (!e.isString())
            throw Refusal{QStringLiteral("task: \"%1\" holds something that is not text")
                              .arg(QLatin1String(key))};
        out << e.toString();
    }
    return out;
}

std::vector<float> TaskGraph::numbers(const char* key, size_t count, const QString& what,
                                      bool divides) const
{
    const QJsonArray a = task.value(QLatin1String(key)).toArray();
    if (static_cast<size_t>(a.size()) != count)
        throw Refusal{
            QStringLiteral("task: \"%1\" has %2 values; the network has %3 %4")
                .arg(QLatin1String(key), QString::number(a.size()), QString::number(count), what)};
    std::vector<float> out;
    for (qsizetype i = 0; i < a.size(); ++i) {
        const auto f = static_cast<float>(a[i].toDouble(std::numeric_limits<double>::quiet_NaN()));
        if (!std::isfinite(f) || (divides && f == 0.f))
            throw Refusal{QStringLiteral("task: \"%1\" value %2 is %3; it must be a finite "
                                         "number%4")
                              .arg(QLatin1String(key), QString::number(i + 1),
                                   a[i].isDouble() ? QString::number(a[i].toDouble())
                                                   : QStringLiteral("not a number"),
                                   divides ? QStringLiteral(", not 0") : QString())};
        out.push_back(f);
    }
    return out;
}

} // namespace onnxexport

namespace {

constexpr int64_t kOpset = 17;

} // namespace

IoResult exportOnnx(const QString& modelPath, const QString& outPath,
                    OnnxTaskGraph (*graphFor)(const QString& kind), SavedTaskForm currentForm,
                    QString* summary)
{
    ExportSource opened;
    if (IoResult r = openForExport(modelPath, ExportFormat::Onnx, currentForm, &opened); !r)
        return r;

    onnx::ModelProto proto;
    proto.set_ir_version(8);
    proto.set_producer_name("Iron Learn Studio");
    proto.set_producer_version(createdByString().section(' ', -1).toStdString());
    proto.set_doc_string(("Exported from " + QFileInfo(modelPath).fileName()).toStdString());
    auto* opset = proto.add_opset_import();
    opset->set_domain("");
    opset->set_version(kOpset);
    auto* ml = proto.add_opset_import();
    ml->set_domain("ai.onnx.ml");
    ml->set_version(3);
    onnx::GraphProto* graph = proto.mutable_graph();
    graph->set_name("ironlearn");
    onnxexport::Graph g(graph);
    QStringList lines;
    onnxexport::TaskGraph task(g, proto, opened.task, *opened.model->network, lines);
    // The model's kind of task names the graph around the network (TaskType::onnxGraph).
    const QString kind = task.text("task");
    task.metadata("task", kind);
    const OnnxTaskGraph kindGraph = graphFor ? graphFor(kind) : nullptr;
    if (!kindGraph)
        return IoResult::failure(modelPath + ": no ONNX export for the task " + quoted(kind, 40));
    try {
        kindGraph(task);
    } catch (const onnxexport::Refusal& p) {
        return IoResult::failure(modelPath + ": " + p.text);
    } catch (const std::exception& e) { // the engine's, reading the network back
        return IoResult::failure(modelPath + ": cannot build the ONNX graph: " +
                                 printable(QString::fromUtf8(e.what()), 200));
    }

    std::string bytes;
    if (!proto.SerializeToString(&bytes))
        return IoResult::failure(outPath + ": could not encode the ONNX model");
    if (const IoResult r = writeFileAtomically(
            outPath, QByteArray(bytes.data(), static_cast<qsizetype>(bytes.size())), {modelPath});
        !r)
        return r;
    if (summary)
        *summary = QString("ONNX opset %1, %2 nodes\n").arg(kOpset).arg(graph->node_size()) +
                   lines.join('\n');
    return {};
}

} // namespace il::io
