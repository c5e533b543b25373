// The ONNX export (ModelExport.h): the network as an ONNX graph (opset 17), built with the ONNX
// project's protobuf classes (Debian's libonnx-dev), with the task's preprocessing inside it.
// The layer stack is OnnxLayers.cpp's; here the task around it: the inputs in the data's own
// units and the outputs as predict gives them, checked against the network before anything is
// built, and described in the model's metadata.
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

namespace {

using onnxexport::Graph;

constexpr int64_t kOpset = 17;

// How the CSV reader gives text cells (CsvTable.cpp), and so what a text input must hold.
const char* const kTableText =
    "each text input holds a cell as the CSV reader gives it: spaces and tabs around it removed, "
    "case kept; a text that is not one of its column's categories (one with spaces around it "
    "included: opset 17 has no string operators to trim it) gives the row no prediction";
const char* const kInvalidRows =
    "a row predict would refuse (a number that is NaN or infinite, a text that is not one of "
    "its column's categories) gets NaN in every output value and class_index -1";
// The same for a model that fills missing numbers (missing_fill).
const char* const kInvalidFilled =
    "a NaN number is a missing cell: it is replaced by its column's value in missing_fill (the "
    "training rows' mean, in the file's units, the order of the numbers input) before "
    "normalisation, as predict fills it; a row predict would refuse (an infinite number, a text "
    "that is not one of its column's categories) gets NaN in every output value and "
    "class_index -1";

// What went wrong with the task metadata: the field and why, without the file's name.
struct Problem {
    QString text;
};

QString json(const QJsonValue& v)
{
    if (v.isArray())
        return QString::fromUtf8(QJsonDocument(v.toArray()).toJson(QJsonDocument::Compact));
    if (v.isObject())
        return QString::fromUtf8(QJsonDocument(v.toObject()).toJson(QJsonDocument::Compact));
    return v.toString();
}

void metadata(onnx::ModelProto& proto, const char* key, const QString& value)
{
    auto* m = proto.add_metadata_props();
    m->set_key(key);
    m->set_value(value.toStdString());
}

// task[key]: an array of `count` strings.
QStringList strings(const QJsonObject& task, const char* key, qsizetype count)
{
    const QJsonValue v = task.value(QLatin1String(key));
    const QJsonArray a = v.toArray();
    if (!v.isArray() || (count >= 0 && a.size() != count))
        throw Problem{QStringLiteral("task: \"%1\" must be a list of %2 names")
                          .arg(QLatin1String(key),
                               count >= 0 ? QString::number(count) : QStringLiteral("some"))};
    QStringList out;
    for (const QJsonValue& e : a) {
        if (!e.isString())
            throw Problem{QStringLiteral("task: \"%1\" holds something that is not text")
                              .arg(QLatin1String(key))};
        out << e.toString();
    }
    return out;
}

// task[key]: `count` finite numbers (and not 0 where they divide), one per `what`.
std::vector<float> numbers(const QJsonObject& task, const char* key, size_t count,
                           const QString& what, bool divides)
{
    const QJsonArray a = task.value(QLatin1String(key)).toArray();
    if (static_cast<size_t>(a.size()) != count)
        throw Problem{
            QStringLiteral("task: \"%1\" has %2 values; the network has %3 %4")
                .arg(QLatin1String(key), QString::number(a.size()), QString::number(count), what)};
    std::vector<float> out;
    for (qsizetype i = 0; i < a.size(); ++i) {
        const auto f = static_cast<float>(a[i].toDouble(std::numeric_limits<double>::quiet_NaN()));
        if (!std::isfinite(f) || (divides && f == 0.f))
            throw Problem{QStringLiteral("task: \"%1\" value %2 is %3; it must be a finite "
                                         "number%4")
                              .arg(QLatin1String(key), QString::number(i + 1),
                                   a[i].isDouble() ? QString::number(a[i].toDouble())
                                                   : QStringLiteral("not a number"),
                                   divides ? QStringLiteral(", not 0") : QString())};
        out.push_back(f);
    }
    return out;
}

// Names a text column's input: the column's own name where it is a plain one no other value
// has, "column_3" otherwise.
std::string textInputName(Graph& g, const QString& column, int index)
{
    std::string name = column.toStdString();
    if (column.isEmpty() || printable(column) != column || column.size() > 64 || g.taken(name)) {
        name = "column_" + std::to_string(index + 1);
        for (int k = 2; g.taken(name); ++k)
            name = "column_" + std::to_string(index + 1) + "_" + std::to_string(k);
    }
    g.reserve(name);
    return name;
}

// A table's inputs: the numbers as one float input, each text column as a string input;
// normalisation and one-hot inside the graph, in the network's input order. x: the network's
// input; invalid: bool [N, 1], the rows predict would refuse.
// Long: checks the task's features, then emits their nodes in input order and the metadata;
// the categories, the numeric columns' statistics and the row flags run through all three.
void tableInputs(Graph& g, onnx::ModelProto& proto, const QJsonObject& task, const Network& net,
                 std::string& x, std::string& invalid, QStringList& lines)
{
    const QStringList features = strings(task, "features", -1);
    if (features.isEmpty()) throw Problem{QStringLiteral("task: \"features\" is empty")};
    const QJsonArray categoryLists = task.value(QLatin1String("feature_categories")).toArray();
    if (categoryLists.size() != features.size())
        throw Problem{QStringLiteral("task: \"feature_categories\" has %1 lists for %2 features")
                          .arg(categoryLists.size())
                          .arg(features.size())};
    std::vector<QStringList> categories;
    int64_t width = 0;
    for (int f = 0; f < features.size(); ++f) {
        QStringList cats;
        for (const QJsonValue& c : categoryLists[f].toArray()) {
            if (!c.isString())
                throw Problem{QStringLiteral("task: the categories of feature %1 hold something "
                                             "that is not text")
                                  .arg(f + 1)};
            cats << c.toString();
        }
        if (cats.removeDuplicates() > 0)
            throw Problem{QStringLiteral("task: feature %1 lists a category twice").arg(f + 1)};
        width += cats.isEmpty() ? 1 : cats.size();
        categories.push_back(cats);
    }
    if (width != net.inputWidth())
        throw Problem{QStringLiteral("task: its features make %1 inputs; the network has %2")
                          .arg(width)
                          .arg(net.inputWidth())};
    const QString inputs = QStringLiteral("inputs");
    const std::vector<float> offset =
        numbers(task, "input_offset", static_cast<size_t>(width), inputs, false);
    const std::vector<float> scale =
        numbers(task, "input_scale", static_cast<size_t>(width), inputs, true);
    const QString normalisation =
        task.value(QLatin1String("normalisation")).toString(QStringLiteral("zscore"));
    if (normalisation != QLatin1String("zscore") && normalisation != QLatin1String("minmax"))
        throw Problem{
            QStringLiteral("task: unknown normalisation %1").arg(quoted(normalisation, 40))};

    // Missing-value policy "mean": per feature, the value in the file's units a missing cell
    // stands for (the engine fills it before normalising); predict fills by default.
    std::vector<float> fill;
    if (task.value(QLatin1String("missing")).toString() == QLatin1String("mean"))
        fill = numbers(task, "missing_fill", static_cast<size_t>(features.size()),
                       QStringLiteral("features"), false);

    // The numeric columns' statistics, in the order of the "numbers" input.
    QStringList numericNames;
    std::vector<float> numericOffset, numericScale, numericFill;
    for (int f = 0, slot = 0; f < features.size(); ++f) {
        if (categories[f].isEmpty()) {
            numericNames << features[f];
            numericOffset.push_back(offset[slot]);
            numericScale.push_back(scale[slot]);
            if (!fill.empty()) numericFill.push_back(fill[static_cast<size_t>(f)]);
        }
        slot += categories[f].isEmpty() ? 1 : static_cast<int>(categories[f].size());
    }
    const auto numeric = static_cast<int64_t>(numericNames.size());
    std::vector<std::string> flags; // float [N, 1]: 1 for a row predict would refuse
    std::string normalised;
    if (numeric > 0) {
        const bool fills = !numericFill.empty();
        g.input("numbers", onnx::TensorProto::FLOAT, {-1, numeric},
                ("the numeric columns, in the file's units: " + numericNames.join(", ") +
                 (fills ? QStringLiteral("; NaN for a missing cell, filled with its column's "
                                         "mean over the training rows (missing_fill)")
                        : QString()))
                    .toStdString());
        QStringList shown;
        for (const QString& n : numericNames)
            shown << printable(n, 60);
        lines << QStringLiteral("input  numbers  float [N, %1]: %2%3")
                     .arg(QString::number(numeric), shown.join(", "),
                          fills ? QStringLiteral(" (NaN: missing, filled with the training mean)")
                                : QString());
        // Policy "mean": a NaN (a missing cell) becomes its column's fill value, in the file's
        // units, before normalisation, as the engine fills it.
        std::string values = "numbers";
        if (fills)
            values = g.node("Where",
                            {g.node("IsNaN", {values}, "missing"),
                             g.floats("missing_fill", {numeric}, numericFill), values},
                            "filled");
        normalised = g.node(
            "Div",
            {g.node("Sub", {values, g.floats("input_offset", {numeric}, numericOffset)}, "centred"),
             g.floats("input_scale", {numeric}, numericScale)},
            "normalised");
        // x - x is NaN exactly where x is NaN or infinite: a cell predict refuses (a missing one
        // only where nothing filled it).
        const std::string bad =
            g.node("IsNaN", {g.node("Sub", {values, values}, "finite_check")}, "not_finite");
        const std::string badFloat = g.node("Cast", {bad}, "not_finite");
        g.attr("to", int64_t{onnx::TensorProto::FLOAT});
        flags.push_back(g.node("ReduceMax", {badFloat}, "row_not_finite"));
        g.attr("axes", std::vector<int64_t>{1});
        g.attr("keepdims", int64_t{1});
    }
    if (numeric == features.size()) {
        x = normalised;
    } else {
        std::vector<std::string> pieces;
        QJsonObject textInputs;
        for (int f = 0, column = 0; f < features.size(); ++f) {
            const QStringList& cats = categories[f];
            if (cats.isEmpty()) {
                pieces.push_back(g.node("Slice",
                                        {normalised, g.ints("start", {column}),
                                         g.ints("end", {column + 1}), g.ints("axes", {1})},
                                        "column"));
                ++column;
                continue;
            }
            const std::string input = textInputName(g, features[f], f);
            textInputs.insert(QString::fromStdString(input), features[f]);
            g.input(input, onnx::TensorProto::STRING, {-1, 1},
                    ("the text column \"" + features[f] + "\": one of " + cats.join(", ") + "; " +
                     kTableText)
                        .toStdString());
            QStringList shown;
            for (const QString& c : cats)
                shown << printable(c, 40);
            lines << QStringLiteral("input  %1  string [N, 1]: %2 (%3)")
                         .arg(printable(QString::fromStdString(input), 60),
                              printable(features[f], 60), shown.join(", "));
            std::vector<int64_t> ids;
            for (int k = 0; k < cats.size(); ++k)
                ids.push_back(k);
            const std::string index = g.node("LabelEncoder", {input}, "category");
            g.attr("keys_strings", cats);
            g.attr("values_int64s", ids);
            g.attr("default_int64", int64_t{-1});
            const std::string unknown =
                g.node("Less", {index, g.intScalar("zero", 0)}, "unknown_category");
            flags.push_back(g.node("Cast", {unknown}, "unknown_category"));
            g.attr("to", int64_t{onnx::TensorProto::FLOAT});
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
        }
        x = pieces.size() == 1 ? pieces[0] : g.node("Concat", pieces, "inputs");
        if (pieces.size() > 1) g.attr("axis", int64_t{1});
        metadata(proto, "text_inputs", json(textInputs));
        metadata(proto, "text_normalisation", kTableText);
    }
    const std::string anyFlag = flags.size() == 1 ? flags[0] : g.node("Max", flags, "row_flags");
    invalid = g.node("Cast", {anyFlag}, "invalid_rows");
    g.attr("to", int64_t{onnx::TensorProto::BOOL});

    metadata(proto, "features", json(QJsonArray::fromStringList(features)));
    QJsonArray cats;
    for (const QStringList& c : categories)
        cats.append(QJsonArray::fromStringList(c));
    metadata(proto, "feature_categories", json(cats));
    metadata(proto, "numbers", json(QJsonArray::fromStringList(numericNames)));
    metadata(proto, "normalisation", normalisation);
    metadata(proto, "input_offset", json(task.value(QLatin1String("input_offset"))));
    metadata(proto, "input_scale", json(task.value(QLatin1String("input_scale"))));
    metadata(proto, "invalid_rows", fill.empty() ? QString(kInvalidRows) : QString(kInvalidFilled));
    if (!fill.empty()) {
        QJsonArray values;
        for (float v : numericFill)
            values.append(static_cast<double>(v));
        metadata(proto, "missing_fill", json(values));
    }
}

// A table's outputs from the network's (z): predictions in the file's units, or class
// probabilities and the most probable class; NaN and -1 for the invalid rows.
void tableOutputs(Graph& g, onnx::ModelProto& proto, const QJsonObject& task, const Network& net,
                  const std::string& z, const std::string& invalid, QStringList& lines)
{
    const QString kind = task.value(QLatin1String("kind")).toString();
    const int64_t outputs = net.outputWidth();
    const std::string nan = g.scalar("nan", std::numeric_limits<float>::quiet_NaN());
    if (kind == QLatin1String("regression")) {
        const QStringList targets = strings(task, "targets", outputs);
        const QString what = QStringLiteral("outputs");
        const auto n = static_cast<size_t>(outputs);
        const std::vector<float> offset = numbers(task, "target_offset", n, what, false);
        const std::vector<float> scale = numbers(task, "target_scale", n, what, true);
        const std::string y =
            g.node("Add",
                   {g.node("Mul", {z, g.floats("target_scale", {outputs}, scale)}, "scaled"),
                    g.floats("target_offset", {outputs}, offset)},
                   "in_units");
        g.node("Where", {invalid, nan, y}, "predictions", "predictions");
        g.output("predictions", onnx::TensorProto::FLOAT, {-1, outputs},
                 ("predictions in the file's units: " + targets.join(", ")).toStdString());
        QStringList shown;
        for (const QString& t : targets)
            shown << printable(t, 60);
        lines << QStringLiteral("output predictions  float [N, %1]: %2")
                     .arg(QString::number(outputs), shown.join(", "));
        metadata(proto, "targets", json(QJsonArray::fromStringList(targets)));
        metadata(proto, "target_offset", json(task.value(QLatin1String("target_offset"))));
        metadata(proto, "target_scale", json(task.value(QLatin1String("target_scale"))));
        return;
    }
    const bool binary = kind == QLatin1String("binary");
    if (!binary && kind != QLatin1String("multiclass"))
        throw Problem{QStringLiteral("task: unknown kind %1").arg(quoted(kind, 40))};
    const QStringList classes = strings(task, "classes", binary ? 2 : outputs);
    if (classes.size() < 2 || (binary && outputs != 1))
        throw Problem{QStringLiteral("task: %1 classes for a network of %2 outputs")
                          .arg(classes.size())
                          .arg(outputs)};
    std::string probabilities;
    if (binary) {
        // (p0, p1) = (sigmoid(-z), sigmoid(z)) as the softmax of (0, z): each to its own relative
        // precision, as predict gives them. 1 - sigmoid(z) rounds to 0 in float32 where p0 is
        // 1e-8, and ONNX Runtime's Sigmoid is accurate only to about 1e-7 absolute (it clamps z
        // to +-18), while its Softmax's exponentials keep p0 = 1e-11 to its digits.
        const std::string zero = g.node("Mul", {z, g.scalar("zero", 0.f)}, "zero_logit");
        const std::string logits = g.node("Concat", {zero, z}, "logits");
        g.attr("axis", int64_t{1});
        probabilities = g.node("Softmax", {logits}, "probabilities");
        g.attr("axis", int64_t{1});
    } else {
        probabilities = g.node("Softmax", {z}, "probabilities");
        g.attr("axis", int64_t{1});
    }
    g.node("Where", {invalid, nan, probabilities}, "probabilities", "probabilities");
    const std::string index = g.node("ArgMax", {probabilities}, "class_index");
    g.attr("axis", int64_t{1});
    g.attr("keepdims", int64_t{0});
    const std::string invalidFlat =
        g.node("Reshape", {invalid, g.ints("shape", {-1})}, "invalid_flat");
    g.node("Where", {invalidFlat, g.intScalar("no_class", -1), index}, "class_index",
           "class_index");
    g.output("probabilities", onnx::TensorProto::FLOAT, {-1, static_cast<int64_t>(classes.size())},
             ("the probability of each class: " + classes.join(", ")).toStdString());
    g.output("class_index", onnx::TensorProto::INT64, {-1},
             ("the most probable class, an index into: " + classes.join(", ") +
              " (-1: no prediction for the row)")
                 .toStdString());
    QStringList shown;
    for (const QString& c : classes)
        shown << printable(c, 40);
    lines << QStringLiteral("output probabilities  float [N, %1]: %2")
                 .arg(QString::number(classes.size()), shown.join(", "));
    lines << QStringLiteral("output class_index  int64 [N]: the most probable class (-1: none, "
                            "for a row predict would refuse)");
    metadata(proto, "classes", json(QJsonArray::fromStringList(classes)));
    metadata(proto, "target", task.value(QLatin1String("target")).toString());
}

// A table: its features in (numbers, with text columns as their category names), its
// predictions or class probabilities out.
void tableGraph(Graph& g, onnx::ModelProto& proto, const QJsonObject& task, const Network& net,
                QStringList& lines)
{
    for (const char* name : {"numbers", "predictions", "probabilities", "class_index"})
        g.reserve(name);
    std::string x, invalid;
    tableInputs(g, proto, task, net, x, invalid, lines);
    const onnxexport::Built z = onnxexport::network(g, net, x, false);
    if (!z.error.isEmpty()) throw Problem{z.error};
    tableOutputs(g, proto, task, net, z.value, invalid, lines);
    metadata(proto, "kind", task.value(QLatin1String("kind")).toString());
}

// An image: pixel coordinates in, intensities out.
void imageGraph(Graph& g, onnx::ModelProto& proto, const QJsonObject& task, const Network& net,
                QStringList& lines)
{
    const int64_t channels = net.outputWidth();
    if (net.inputWidth() != 2 || (channels != 1 && channels != 3))
        throw Problem{QStringLiteral("an image model maps 2 coordinates to 1 or 3 channels; "
                                     "this network has %1 inputs and %2 outputs")
                          .arg(net.inputWidth())
                          .arg(channels)};
    g.input("coordinates", onnx::TensorProto::FLOAT, {-1, 2},
            "(x, y) per pixel: pixel centres of the training picture's field of view, its "
            "longer side from -1 to 1 (model.py's image_coordinates)");
    lines << "input  coordinates  float [N, 2]: (x, y), the longer side of the picture "
             "from -1 to 1";
    const onnxexport::Built z = onnxexport::network(g, net, "coordinates", false);
    if (!z.error.isEmpty()) throw Problem{z.error};
    g.node("Clip", {z.value, g.scalar("low", 0.f), g.scalar("high", 1.f)}, "intensities",
           "intensities");
    g.output("intensities", onnx::TensorProto::FLOAT, {-1, channels},
             channels == 1 ? "grey level per pixel, 0 to 1" : "red, green, blue per pixel, 0 to 1");
    lines << QStringLiteral("output intensities  float [N, %1]: %2, 0 to 1")
                 .arg(channels)
                 .arg(channels == 1 ? "grey" : "red, green, blue");
    for (const char* key : {"width", "height"}) {
        const QJsonValue v = task.value(QLatin1String(key));
        if (!v.isDouble() || v.toDouble() < 1 || v.toDouble() != std::floor(v.toDouble()))
            throw Problem{
                QStringLiteral("task: \"%1\" is not a size in pixels").arg(QLatin1String(key))};
        metadata(proto, (std::string("training_") + key).c_str(), QString::number(v.toInteger()));
    }
    metadata(proto, "coordinates",
             "x = (2i + 1 - W) / L, y = (2j + 1 - H) / L for the pixel in column i, row j of "
             "a W x H picture, L = max(W, H)");
}

// Names: the ids of the last characters in, the next character's probabilities out.
void namesGraph(Graph& g, onnx::ModelProto& proto, const QJsonObject& task, const Network& net,
                QStringList& lines)
{
    const QJsonValue contextValue = task.value(QLatin1String("context"));
    if (!contextValue.isDouble() || contextValue.toDouble() != double(net.inputWidth()))
        throw Problem{QStringLiteral("task: \"context\" must be the network's %1 inputs")
                          .arg(net.inputWidth())};
    const int64_t context = net.inputWidth();
    const QStringList vocabulary = strings(task, "vocabulary", net.outputWidth());
    const bool keepCase = task.value(QLatin1String("case")).toString() == "keep";
    g.input("context", onnx::TensorProto::INT64, {-1, context},
            "the ids of the last characters, oldest first (0: before the name starts; ids "
            "index the vocabulary in the model's metadata)");
    lines << QStringLiteral("input  context  int64 [N, %1]: character ids, oldest first, 0 "
                            "before the name starts")
                 .arg(context);
    const onnxexport::Built z = onnxexport::network(g, net, "context", true);
    if (!z.error.isEmpty()) throw Problem{z.error};
    g.node("Softmax", {z.value}, "probabilities", "probabilities");
    g.attr("axis", int64_t{1});
    g.output("probabilities", onnx::TensorProto::FLOAT, {-1, net.outputWidth()},
             "the probability of each vocabulary entry coming next (0: the name ends)");
    lines << QStringLiteral("output probabilities  float [N, %1]: the next character (id 0: "
                            "the end)")
                 .arg(net.outputWidth());
    metadata(proto, "vocabulary", json(QJsonArray::fromStringList(vocabulary)));
    metadata(proto, "context", QString::number(context));
    metadata(proto, "case", keepCase ? "keep" : "lower");
    metadata(proto, "text_normalisation",
             QStringLiteral("a name is trimmed of Unicode white space at both ends%1, then "
                            "each character (code point) is looked up in vocabulary: its "
                            "index is its id; id 0 is the end of a name and fills the "
                            "context before the name starts")
                 .arg(keepCase ? QStringLiteral(" (case kept)")
                               : QStringLiteral(" and lowercased (full Unicode case mapping, "
                                                "as Qt's QString::toLower)")));
}

// What each kind of task's model takes and gives, by the kind's name in the saved task
// ("task"): one entry per kind, so a new kind adds its function and a line here.
struct KindGraph {
    const char* kind;
    void (*build)(Graph&, onnx::ModelProto&, const QJsonObject&, const Network&, QStringList&);
};
constexpr KindGraph kKindGraphs[] = {
    {"tabular", tableGraph},
    {"image", imageGraph},
    {"names", namesGraph},
};

void build(Graph& g, onnx::ModelProto& proto, const QJsonObject& task, const Network& net,
           QStringList& lines)
{
    const QString kind = task.value(QLatin1String("task")).toString();
    metadata(proto, "task", kind);
    for (const KindGraph& k : kKindGraphs)
        if (kind == QLatin1String(k.kind)) return k.build(g, proto, task, net, lines);
    throw Problem{QStringLiteral("no ONNX export for the task %1").arg(quoted(kind, 40))};
}

} // namespace

IoResult exportOnnx(const QString& modelPath, const QString& outPath, QString* summary)
{
    ExportSource opened;
    if (IoResult r = openForExport(modelPath, ExportFormat::Onnx, &opened); !r) return r;

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
    Graph g(graph);
    QStringList lines;
    try {
        build(g, proto, opened.task, *opened.model->network, lines);
    } catch (const Problem& p) {
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
