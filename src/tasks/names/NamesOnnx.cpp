// Names' ONNX graph around their network (TaskType::onnxGraph, io::exportOnnx): the ids of the
// last characters in, the next character's probabilities out.
#include "OnnxGraph.h"

#include "NamesTask.h"

#include "Network.h"

#include <QJsonArray>

namespace il::tasks {

using io::onnxexport::Refusal;
using io::onnxexport::TaskGraph;

// Names: the ids of the last characters in, the next character's probabilities out.
void namesOnnxGraph(TaskGraph& t)
{
    const QJsonValue contextValue = t.task.value(QLatin1String("context"));
    if (!contextValue.isDouble() || contextValue.toDouble() != double(t.net.inputWidth()))
        throw Refusal{QStringLiteral("task: \"context\" must be the network's %1 inputs")
                          .arg(t.net.inputWidth())};
    const int64_t context = t.net.inputWidth();
    const QStringList vocabulary = t.strings("vocabulary", t.net.outputWidth());
    const bool keepCase = t.task.value(QLatin1String("case")).toString() == "keep";
    t.g.input("context", onnx::TensorProto::INT64, {-1, context},
              "the ids of the last characters, oldest first (0: before the name starts; ids "
              "index the vocabulary in the model's metadata)");
    t.lines << QStringLiteral("input  context  int64 [N, %1]: character ids, oldest first, 0 "
                              "before the name starts")
                   .arg(context);
    const std::string z = t.network("context", true);
    t.g.node("Softmax", {z}, "probabilities", "probabilities");
    t.g.attr("axis", int64_t{1});
    t.g.output("probabilities", onnx::TensorProto::FLOAT, {-1, t.net.outputWidth()},
               "the probability of each vocabulary entry coming next (0: the name ends)");
    t.lines << QStringLiteral("output probabilities  float [N, %1]: the next character (id 0: "
                              "the end)")
                   .arg(t.net.outputWidth());
    t.metadata("vocabulary", TaskGraph::json(QJsonArray::fromStringList(vocabulary)));
    t.metadata("context", QString::number(context));
    t.metadata("case", keepCase ? "keep" : "lower");
    t.metadata("text_normalisation",
               QStringLiteral("a name is trimmed of Unicode white space at both ends%1, then "
                              "each character (code point) is looked up in vocabulary: its "
                              "index is its id; id 0 is the end of a name and fills the "
                              "context before the name starts")
                   .arg(keepCase ? QStringLiteral(" (case kept)")
                                 : QStringLiteral(" and lowercased (full Unicode case mapping, "
                                                  "as Qt's QString::toLower)")));
}

} // namespace il::tasks
