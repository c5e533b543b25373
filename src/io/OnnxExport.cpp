// The ONNX export (ModelExport.h): the network as an ONNX graph (opset 17), built with the ONNX
// project's protobuf classes (Debian's libonnx-dev), with the task's preprocessing inside it.
#include "ModelExport.h"

#include "AtomicFile.h"
#include "ModelFile.h"
#include "SafeTensors.h"

#include "Backend.h"

#include <onnx/onnx_pb.h>

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

namespace il::io {

namespace {

constexpr int64_t kOpset = 17;

// Nodes, initializers and values of one graph, with fresh names.
class Graph {
public:
    explicit Graph(onnx::GraphProto* g) : m_g(g) {}

    std::string fresh(const std::string& hint) { return hint + "_" + std::to_string(m_next++); }

    // A node; returns its (first) output's name.
    std::string node(const std::string& op, const std::vector<std::string>& inputs,
                     const std::string& hint, std::string output = {})
    {
        onnx::NodeProto* n = m_g->add_node();
        n->set_op_type(op);
        if (op == "LabelEncoder") n->set_domain("ai.onnx.ml");
        for (const auto& i : inputs)
            n->add_input(i);
        if (output.empty()) output = fresh(hint);
        n->add_output(output);
        n->set_name(output + "_" + op);
        m_last = n;
        return output;
    }
    // Attributes of the last node.
    void attr(const std::string& name, int64_t v)
    {
        auto* a = m_last->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(v);
    }
    void attr(const std::string& name, float v)
    {
        auto* a = m_last->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::FLOAT);
        a->set_f(v);
    }
    void attr(const std::string& name, const std::vector<int64_t>& v)
    {
        auto* a = m_last->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::INTS);
        for (int64_t x : v)
            a->add_ints(x);
    }
    void attr(const std::string& name, const QStringList& v)
    {
        auto* a = m_last->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::STRINGS);
        for (const QString& x : v)
            a->add_strings(x.toStdString());
    }

    std::string floats(const std::string& hint, const std::vector<int64_t>& shape,
                       const std::vector<float>& data)
    {
        onnx::TensorProto* t = m_g->add_initializer();
        const std::string name = fresh(hint);
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::FLOAT);
        for (int64_t d : shape)
            t->add_dims(d);
        t->set_raw_data(data.data(), data.size() * sizeof(float));
        return name;
    }
    std::string scalar(const std::string& hint, float v) { return floats(hint, {}, {v}); }
    std::string ints(const std::string& hint, const std::vector<int64_t>& data)
    {
        onnx::TensorProto* t = m_g->add_initializer();
        const std::string name = fresh(hint);
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::INT64);
        t->add_dims(static_cast<int64_t>(data.size()));
        t->set_raw_data(data.data(), data.size() * sizeof(int64_t));
        return name;
    }

    void input(const std::string& name, int type, const std::vector<int64_t>& dims,
               const std::string& doc)
    {
        describe(m_g->add_input(), name, type, dims, doc);
    }
    void output(const std::string& name, int type, const std::vector<int64_t>& dims,
                const std::string& doc)
    {
        describe(m_g->add_output(), name, type, dims, doc);
    }

private:
    // dims: -1 is the batch dimension ("N").
    static void describe(onnx::ValueInfoProto* v, const std::string& name, int type,
                         const std::vector<int64_t>& dims, const std::string& doc)
    {
        v->set_name(name);
        v->set_doc_string(doc);
        auto* t = v->mutable_type()->mutable_tensor_type();
        t->set_elem_type(type);
        for (int64_t d : dims) {
            auto* dim = t->mutable_shape()->add_dim();
            if (d < 0)
                dim->set_dim_param("N");
            else
                dim->set_dim_value(d);
        }
    }

    onnx::GraphProto* m_g;
    onnx::NodeProto* m_last = nullptr;
    int m_next = 0;
};

std::vector<float> transposed(const StoredTensor& t)
{
    const int64_t rows = t.shape[0], cols = t.elementCount() / rows;
    std::vector<float> out(t.data.size());
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
            out[c * rows + r] = t.data[r * cols + c];
    return out;
}

std::vector<float> doubles(const QJsonArray& a)
{
    std::vector<float> out;
    for (const auto& v : a)
        out.push_back(static_cast<float>(v.toDouble()));
    return out;
}

// A real argument of the layer language, read as the engine reads it (a float).
float realArg(const QStringList& args, int i, float fallback)
{
    if (i >= args.size() || args[i].isEmpty()) return fallback;
    return std::stof(args[i].toStdString());
}

struct Built {
    std::string value;
    QString error;
};

// The layer stack on `x` (the network's input, `inputs` for skip layers).
Built network(Graph& g, const QJsonObject& architecture, const SafeTensorsFile& file, std::string x)
{
    const std::string inputs = x;
    int64_t width = architecture.value("input_width").toInteger();
    const int64_t inputWidth = width;
    int64_t positions = 1, positionWidth = 0;
    const QJsonArray layers = architecture.value("layers").toArray();
    for (int i = 0; i < layers.size(); ++i) {
        const QJsonObject item = layers[i].toObject();
        const QString spec = item.value("spec").toString();
        const QStringList parts = spec.split(':');
        const QString kind = parts[0];
        const QStringList args = parts.mid(1);
        const int64_t out = item.value("output_width").toInteger();
        const std::string prefix = "layers." + std::to_string(i) + ".";
        auto tensor = [&](const char* name) -> const StoredTensor* {
            return file.find(prefix + name);
        };
        const std::string hint = "layer" + std::to_string(i) + "_" + kind.toStdString();
        const int64_t channels = width / positions;
        if (kind == "dense") {
            const StoredTensor* w = tensor("weight");
            const StoredTensor* b = tensor("bias");
            if (!w || !b) return {{}, QString("layer %1: no weights").arg(i + 1)};
            const int64_t units = w->shape[0];
            const std::string wn = g.floats(prefix + "weight", w->shape, w->data);
            const std::string bn = g.floats(prefix + "bias", {units}, b->data);
            if (positions > 1) {
                const std::string rows =
                    g.node("Reshape", {x, g.ints("shape", {-1, channels})}, hint + "_rows");
                const std::string y = g.node("Gemm", {rows, wn, bn}, hint);
                g.attr("transB", int64_t{1});
                x = g.node("Reshape", {y, g.ints("shape", {-1, units * positions})}, hint);
                width = units * positions;
                positionWidth = units;
            } else {
                x = g.node("Gemm", {x, wn, bn}, hint);
                g.attr("transB", int64_t{1});
                width = units;
                positionWidth = 0;
            }
        } else if (kind == "relu") {
            x = g.node("Relu", {x}, hint);
        } else if (kind == "tanh") {
            x = g.node("Tanh", {x}, hint);
        } else if (kind == "sigmoid") {
            x = g.node("Sigmoid", {x}, hint);
        } else if (kind == "leakyrelu") {
            x = g.node("LeakyRelu", {x}, hint);
            g.attr("alpha", realArg(args, 0, 0.01f));
        } else if (kind == "sine") {
            x = g.node("Sin", {g.node("Mul", {x, g.scalar("w0", realArg(args, 0, 30.f))}, hint)},
                       hint);
        } else if (kind == "gelu") { // tanh approximation: x/2 (1 + tanh(sqrt(2/pi)(x + c x^3)))
            const std::string cube = g.node("Mul", {g.node("Mul", {x, x}, hint), x}, hint);
            const std::string inner =
                g.node("Add", {x, g.node("Mul", {cube, g.scalar("c", 0.044715f)}, hint)}, hint);
            const std::string t = g.node(
                "Tanh",
                {g.node(
                    "Mul",
                    {inner, g.scalar("k", static_cast<float>(std::sqrt(2.0 / std::numbers::pi)))},
                    hint)},
                hint);
            x = g.node("Mul",
                       {g.node("Mul", {x, g.scalar("half", 0.5f)}, hint),
                        g.node("Add", {t, g.scalar("one", 1.f)}, hint)},
                       hint);
        } else if (kind == "skip") {
            const StoredTensor* s = tensor("weight");
            if (!s) return {{}, QString("layer %1: no weights").arg(i + 1)};
            const std::string st =
                g.floats(prefix + "weight_t", {s->shape[1], s->shape[0]}, transposed(*s));
            x = g.node("Add", {x, g.node("MatMul", {inputs, st}, hint)}, hint);
            positions = 1;
            positionWidth = 0;
        } else if (kind == "fourier") {
            const StoredTensor* b = tensor("projection");
            if (!b) return {{}, QString("layer %1: no projection").arg(i + 1)};
            const std::string z =
                g.node("Gemm", {x, g.floats(prefix + "projection", b->shape, b->data)}, hint);
            g.attr("transB", int64_t{1});
            g.attr("alpha", static_cast<float>(2 * std::numbers::pi));
            x = g.node("Concat", {g.node("Sin", {z}, hint), g.node("Cos", {z}, hint)}, hint);
            g.attr("axis", int64_t{1});
            width = out;
            positions = 1;
            positionWidth = 0;
        } else if (kind == "embedding") {
            const StoredTensor* w = tensor("weight");
            if (!w) return {{}, QString("layer %1: no weights").arg(i + 1)};
            const int64_t dim = w->shape[1];
            const std::string rows =
                g.node("Gather", {g.floats(prefix + "weight", w->shape, w->data), x}, hint);
            x = g.node("Reshape", {rows, g.ints("shape", {-1, width * dim})}, hint);
            width = width * dim;
            positions = 1;
            positionWidth = dim;
        } else if (kind == "merge") {
            const int64_t group = positions > 1 ? channels : positionWidth;
            const int64_t n = args.value(0).toLongLong();
            if (group <= 0 || n <= 0)
                return {{}, QString("layer %1: %2 without positions").arg(i + 1).arg(spec)};
            positions = width / group / n;
            positionWidth = group * n;
        } else if (kind == "layernorm" || kind == "batchnorm") {
            const StoredTensor* w = tensor("weight");
            const StoredTensor* b = tensor("bias");
            if (!w || !b) return {{}, QString("layer %1: no weights").arg(i + 1)};
            const int64_t c = width / positions;
            std::string rows = x;
            if (positions > 1) rows = g.node("Reshape", {x, g.ints("shape", {-1, c})}, hint);
            std::string y;
            if (kind == "layernorm") {
                y = g.node("LayerNormalization",
                           {rows, g.floats(prefix + "weight", {c}, w->data),
                            g.floats(prefix + "bias", {c}, b->data)},
                           hint);
                g.attr("axis", int64_t{-1});
                g.attr("epsilon", 1e-5f);
            } else {
                const StoredTensor* mean = tensor("running_mean");
                const StoredTensor* var = tensor("running_var");
                if (!mean || !var)
                    return {{}, QString("layer %1: no running statistics").arg(i + 1)};
                y = g.node("BatchNormalization",
                           {rows, g.floats(prefix + "weight", {c}, w->data),
                            g.floats(prefix + "bias", {c}, b->data),
                            g.floats(prefix + "running_mean", {c}, mean->data),
                            g.floats(prefix + "running_var", {c}, var->data)},
                           hint);
                g.attr("epsilon", 1e-5f);
            }
            x = positions > 1 ? g.node("Reshape", {y, g.ints("shape", {-1, width})}, hint) : y;
        } else if (kind == "dropout") {
            // evaluation: everything passes through
        } else {
            return {
                {},
                QString("layer %1, %2: ONNX export has no %3 layer").arg(i + 1).arg(spec, kind)};
        }
        if (width != out && kind != "merge")
            return {{},
                    QString("layer %1, %2: width %3, the file says %4")
                        .arg(i + 1)
                        .arg(spec)
                        .arg(width)
                        .arg(out)};
    }
    (void)inputWidth;
    return {x, {}};
}

} // namespace

QString onnxRefusal(const ModelInfo& info)
{
    const QJsonArray layers = info.architecture.value(QStringLiteral("layers")).toArray();
    for (int i = 0; i < layers.size(); ++i) {
        const QString spec = layers[i].toObject().value(QStringLiteral("spec")).toString();
        if (spec.section(':', 0, 0) == QLatin1String("hashgrid"))
            return QStringLiteral(
                       "layer %1, %2: the ONNX export has no hash grid: its spatial hash needs "
                       "a bitwise xor, which ONNX gains in opset 18, and this export writes "
                       "opset %3 (the newest Debian's onnx 1.12 checks); export it to PyTorch "
                       "instead")
                .arg(i + 1)
                .arg(spec)
                .arg(kOpset);
    }
    return {};
}

IoResult exportOnnx(const QString& modelPath, const QString& outPath, QString* summary)
{
    ExportSource opened;
    if (IoResult r = openForExport(modelPath, ExportFormat::Onnx, &opened); !r) return r;
    const LoadedModel* model = opened.model.get();
    SafeTensorsFile file;
    if (const IoResult r = readSafeTensors(modelPath, file); !r) return r;

    const QJsonObject& task = model->info.task;
    const QString kind = task.value("task").toString();
    onnx::ModelProto proto;
    proto.set_ir_version(8);
    proto.set_producer_name("Iron Learn Studio");
    proto.set_producer_version(createdByString().section(' ', -1).toStdString());
    proto.set_doc_string(("Exported from " + QFileInfo(modelPath).fileName()).toStdString());
    auto* opset = proto.add_opset_import();
    opset->set_domain("");
    opset->set_version(kOpset);
    onnx::GraphProto* graph = proto.mutable_graph();
    graph->set_name("ironlearn");
    Graph g(graph);
    QStringList lines;

    std::string x;
    if (kind == "tabular") {
        // Raw features in the file's units: the numbers as one float input, each text column as a
        // string input; normalisation and one-hot inside the graph, in the network's input order.
        const QJsonArray features = task.value("features").toArray();
        const QJsonArray categories = task.value("feature_categories").toArray();
        const std::vector<float> offset = doubles(task.value("input_offset").toArray());
        const std::vector<float> scale = doubles(task.value("input_scale").toArray());
        std::vector<int64_t> numeric;
        QStringList numericNames;
        for (int f = 0; f < features.size(); ++f)
            if (categories[f].toArray().isEmpty()) {
                numeric.push_back(f);
                numericNames << features[f].toString();
            }
        std::string numbers;
        if (!numeric.empty()) {
            g.input("numbers", onnx::TensorProto::FLOAT, {-1, static_cast<int64_t>(numeric.size())},
                    ("the numeric columns, in the file's units: " + numericNames.join(", "))
                        .toStdString());
            lines << "input  numbers  float [N, " + QString::number(numeric.size()) +
                         "]: " + numericNames.join(", ");
            numbers = "numbers";
        }
        std::vector<std::string> pieces;
        int64_t slot = 0, column = 0;
        if (static_cast<qsizetype>(numeric.size()) == features.size()) { // numbers only
            x = g.node("Div",
                       {g.node("Sub",
                               {numbers, g.floats("input_offset",
                                                  {static_cast<int64_t>(offset.size())}, offset)},
                               "centred"),
                        g.floats("input_scale", {static_cast<int64_t>(scale.size())}, scale)},
                       "inputs");
        }
        for (int f = 0; x.empty() && f < features.size(); ++f) {
            const QJsonArray cats = categories[f].toArray();
            if (cats.isEmpty()) {
                const std::string col = g.node("Slice",
                                               {numbers, g.ints("start", {column}),
                                                g.ints("end", {column + 1}), g.ints("axes", {1})},
                                               "column");
                const std::string norm = g.node(
                    "Div",
                    {g.node("Sub", {col, g.floats("offset", {1}, {offset[slot]})}, "centred"),
                     g.floats("scale", {1}, {scale[slot]})},
                    "normalised");
                pieces.push_back(norm);
                ++slot;
                ++column;
                continue;
            }
            QStringList names;
            std::vector<int64_t> ids;
            for (int k = 0; k < cats.size(); ++k) {
                names << cats[k].toString();
                ids.push_back(k);
            }
            // Named after the column, unless that name is taken or empty.
            std::string input = features[f].toString().toStdString();
            if (input.empty() || input == "numbers") input = "column_" + std::to_string(f + 1);
            g.input(input, onnx::TensorProto::STRING, {-1, 1},
                    ("the text column \"" + features[f].toString() + "\": one of " +
                     names.join(", ") + " (anything else gives all zeros)")
                        .toStdString());
            lines << QString("input  %1  string [N, 1]: %2 (%3)")
                         .arg(QString::fromStdString(input), features[f].toString(),
                              names.join(", "));
            const std::string index = g.node("LabelEncoder", {input}, "category");
            g.attr("keys_strings", names);
            g.attr("values_int64s", ids);
            g.attr("default_int64", int64_t{-1});
            // -1 (unknown) picks the extra last column, which is then dropped: all zeros.
            const int64_t depth = cats.size() + 1;
            const std::string hot = g.node(
                "OneHot", {index, g.ints("depth", {depth}), g.floats("values", {2}, {0.f, 1.f})},
                "onehot");
            g.attr("axis", int64_t{-1});
            const std::string flat =
                g.node("Reshape", {hot, g.ints("shape", {-1, depth})}, "onehot_rows");
            pieces.push_back(g.node(
                "Slice",
                {flat, g.ints("start", {0}), g.ints("end", {depth - 1}), g.ints("axes", {1})},
                "onehot_known"));
            slot += cats.size();
        }
        if (x.empty()) {
            x = pieces.size() == 1 ? pieces[0] : g.node("Concat", pieces, "inputs");
            if (pieces.size() > 1) g.attr("axis", int64_t{1});
        }
    } else if (kind == "image") {
        g.input("coordinates", onnx::TensorProto::FLOAT, {-1, 2},
                "(x, y) per pixel: pixel centres of the training picture's field of view, its "
                "longer side from -1 to 1 (model.py's image_coordinates)");
        lines << "input  coordinates  float [N, 2]: (x, y), the longer side of the picture "
                 "from -1 to 1";
        x = "coordinates";
    } else if (kind == "names") {
        const int64_t context = task.value("context").toInteger();
        g.input("context", onnx::TensorProto::INT64, {-1, context},
                "the ids of the last characters, oldest first (0: before the name starts; ids "
                "index the vocabulary in the model's metadata)");
        lines << QString("input  context  int64 [N, %1]: character ids, oldest first, 0 before "
                         "the name starts")
                     .arg(context);
        x = "context";
    } else {
        return IoResult::failure(modelPath + ": no ONNX export for the task \"" + kind + "\"");
    }

    const Built net = network(g, model->info.architecture, file, x);
    if (!net.error.isEmpty()) return IoResult::failure(modelPath + ": " + net.error);
    const int64_t outputs = model->info.outputWidth;
    if (kind == "tabular") {
        const QString type = task.value("kind").toString();
        if (type == "regression") {
            const QJsonArray targets = task.value("targets").toArray();
            g.node("Add",
                   {g.node("Mul",
                           {net.value, g.floats("target_scale", {outputs},
                                                doubles(task.value("target_scale").toArray()))},
                           "scaled"),
                    g.floats("target_offset", {outputs},
                             doubles(task.value("target_offset").toArray()))},
                   "predictions", "predictions");
            QStringList names;
            for (const auto& t : targets)
                names << t.toString();
            g.output("predictions", onnx::TensorProto::FLOAT, {-1, outputs},
                     ("predictions in the file's units: " + names.join(", ")).toStdString());
            lines << "output predictions  float [N, " + QString::number(outputs) +
                         "]: " + names.join(", ");
        } else {
            QStringList classes;
            for (const auto& c : task.value("classes").toArray())
                classes << c.toString();
            std::string probabilities;
            if (type == "binary") {
                const std::string p1 = g.node("Sigmoid", {net.value}, "p1");
                const std::string p0 = g.node("Sub", {g.scalar("one", 1.f), p1}, "p0");
                probabilities = g.node("Concat", {p0, p1}, "probabilities", "probabilities");
                g.attr("axis", int64_t{1});
            } else {
                probabilities = g.node("Softmax", {net.value}, "probabilities", "probabilities");
                g.attr("axis", int64_t{1});
            }
            g.node("ArgMax", {probabilities}, "class_index", "class_index");
            g.attr("axis", int64_t{1});
            g.attr("keepdims", int64_t{0});
            g.output("probabilities", onnx::TensorProto::FLOAT,
                     {-1, static_cast<int64_t>(classes.size())},
                     ("the probability of each class: " + classes.join(", ")).toStdString());
            g.output(
                "class_index", onnx::TensorProto::INT64, {-1},
                ("the most probable class, an index into: " + classes.join(", ")).toStdString());
            lines << QString("output probabilities  float [N, %1]: %2")
                         .arg(classes.size())
                         .arg(classes.join(", "));
            lines << "output class_index  int64 [N]: the most probable class";
            auto* meta = proto.add_metadata_props();
            meta->set_key("classes");
            meta->set_value(QJsonDocument(task.value("classes").toArray())
                                .toJson(QJsonDocument::Compact)
                                .toStdString());
        }
    } else if (kind == "image") {
        g.node("Clip", {net.value, g.scalar("low", 0.f), g.scalar("high", 1.f)}, "intensities",
               "intensities");
        g.output("intensities", onnx::TensorProto::FLOAT, {-1, outputs},
                 outputs == 1 ? "grey level per pixel, 0 to 1"
                              : "red, green, blue per pixel, 0 to 1");
        lines << QString("output intensities  float [N, %1]: %2, 0 to 1")
                     .arg(outputs)
                     .arg(outputs == 1 ? "grey" : "red, green, blue");
        for (const char* key : {"width", "height"}) {
            auto* meta = proto.add_metadata_props();
            meta->set_key(std::string("training_") + key);
            meta->set_value(std::to_string(task.value(key).toInteger()));
        }
    } else {
        g.node("Softmax", {net.value}, "probabilities", "probabilities");
        g.attr("axis", int64_t{1});
        g.output("probabilities", onnx::TensorProto::FLOAT, {-1, outputs},
                 "the probability of each vocabulary entry coming next (0: the name ends)");
        lines << QString("output probabilities  float [N, %1]: the next character (id 0: the end)")
                     .arg(outputs);
        auto* meta = proto.add_metadata_props();
        meta->set_key("vocabulary");
        meta->set_value(QJsonDocument(task.value("vocabulary").toArray())
                            .toJson(QJsonDocument::Compact)
                            .toStdString());
    }
    auto* ml = proto.add_opset_import();
    ml->set_domain("ai.onnx.ml");
    ml->set_version(3);

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
