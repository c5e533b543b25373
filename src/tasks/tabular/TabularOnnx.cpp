// A table's ONNX graph around its network (TaskType::onnxGraph, io::exportOnnx): its features in
// (numbers in the file's units, text columns as their category names), its predictions or class
// probabilities out, with normalisation, one-hot encoding and the rows predict would refuse
// inside the graph.
#include "OnnxGraph.h"

#include "PrintableText.h"
#include "TabularTask.h"

#include "Network.h"

#include <QJsonArray>

#include <limits>

namespace il::tasks {

using io::printable;
using io::quoted;
using io::onnxexport::Graph;
using io::onnxexport::Refusal;
using io::onnxexport::TaskGraph;

namespace {

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
void tableInputs(TaskGraph& t, std::string& x, std::string& invalid)
{
    Graph& g = t.g;
    const QJsonObject& task = t.task;
    const Network& net = t.net;
    QStringList& lines = t.lines;
    const QStringList features = t.strings("features", -1);
    if (features.isEmpty()) throw Refusal{QStringLiteral("task: \"features\" is empty")};
    const QJsonArray categoryLists = task.value(QLatin1String("feature_categories")).toArray();
    if (categoryLists.size() != features.size())
        throw Refusal{QStringLiteral("task: \"feature_categories\" has %1 lists for %2 features")
                          .arg(categoryLists.size())
                          .arg(features.size())};
    std::vector<QStringList> categories;
    int64_t width = 0;
    for (int f = 0; f < features.size(); ++f) {
        QStringList cats;
        for (const QJsonValue& c : categoryLists[f].toArray()) {
            if (!c.isString())
                throw Refusal{QStringLiteral("task: the categories of feature %1 hold something "
                                             "that is not text")
                                  .arg(f + 1)};
            cats << c.toString();
        }
        if (cats.removeDuplicates() > 0)
            throw Refusal{QStringLiteral("task: feature %1 lists a category twice").arg(f + 1)};
        width += cats.isEmpty() ? 1 : cats.size();
        categories.push_back(cats);
    }
    if (width != net.inputWidth())
        throw Refusal{QStringLiteral("task: its features make %1 inputs; the network has %2")
                          .arg(width)
                          .arg(net.inputWidth())};
    const QString inputs = QStringLiteral("inputs");
    const std::vector<float> offset =
        t.numbers("input_offset", static_cast<size_t>(width), inputs, false);
    const std::vector<float> scale =
        t.numbers("input_scale", static_cast<size_t>(width), inputs, true);
    const QString normalisation =
        task.value(QLatin1String("normalisation")).toString(QStringLiteral("zscore"));
    if (normalisation != QLatin1String("zscore") && normalisation != QLatin1String("minmax"))
        throw Refusal{
            QStringLiteral("task: unknown normalisation %1").arg(quoted(normalisation, 40))};

    // Missing-value policy "mean": per feature, the value in the file's units a missing cell
    // stands for (the engine fills it before normalising); predict fills by default.
    std::vector<float> fill;
    if (task.value(QLatin1String("missing")).toString() == QLatin1String("mean"))
        fill = t.numbers("missing_fill", static_cast<size_t>(features.size()),
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
        t.metadata("text_inputs", TaskGraph::json(textInputs));
        t.metadata("text_normalisation", kTableText);
    }
    const std::string anyFlag = flags.size() == 1 ? flags[0] : g.node("Max", flags, "row_flags");
    invalid = g.node("Cast", {anyFlag}, "invalid_rows");
    g.attr("to", int64_t{onnx::TensorProto::BOOL});

    t.metadata("features", TaskGraph::json(QJsonArray::fromStringList(features)));
    QJsonArray cats;
    for (const QStringList& c : categories)
        cats.append(QJsonArray::fromStringList(c));
    t.metadata("feature_categories", TaskGraph::json(cats));
    t.metadata("numbers", TaskGraph::json(QJsonArray::fromStringList(numericNames)));
    t.metadata("normalisation", normalisation);
    t.metadata("input_offset", TaskGraph::json(task.value(QLatin1String("input_offset"))));
    t.metadata("input_scale", TaskGraph::json(task.value(QLatin1String("input_scale"))));
    t.metadata("invalid_rows", fill.empty() ? QString(kInvalidRows) : QString(kInvalidFilled));
    if (!fill.empty()) {
        QJsonArray values;
        for (float v : numericFill)
            values.append(static_cast<double>(v));
        t.metadata("missing_fill", TaskGraph::json(values));
    }
}

// A table's outputs from the network's (z): predictions in the file's units, or class
// probabilities and the most probable class; NaN and -1 for the invalid rows.
void tableOutputs(TaskGraph& t, const std::string& z, const std::string& invalid)
{
    Graph& g = t.g;
    const QJsonObject& task = t.task;
    const Network& net = t.net;
    QStringList& lines = t.lines;
    const QString kind = task.value(QLatin1String("kind")).toString();
    const int64_t outputs = net.outputWidth();
    const std::string nan = g.scalar("nan", std::numeric_limits<float>::quiet_NaN());
    if (kind == QLatin1String("regression")) {
        const QStringList targets = t.strings("targets", outputs);
        const QString what = QStringLiteral("outputs");
        const auto n = static_cast<size_t>(outputs);
        const std::vector<float> offset = t.numbers("target_offset", n, what, false);
        const std::vector<float> scale = t.numbers("target_scale", n, what, true);
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
        t.metadata("targets", TaskGraph::json(QJsonArray::fromStringList(targets)));
        t.metadata("target_offset", TaskGraph::json(task.value(QLatin1String("target_offset"))));
        t.metadata("target_scale", TaskGraph::json(task.value(QLatin1String("target_scale"))));
        return;
    }
    const bool binary = kind == QLatin1String("binary");
    if (!binary && kind != QLatin1String("multiclass"))
        throw Refusal{QStringLiteral("task: unknown kind %1").arg(quoted(kind, 40))};
    const QStringList classes = t.strings("classes", binary ? 2 : outputs);
    if (classes.size() < 2 || (binary && outputs != 1))
        throw Refusal{QStringLiteral("task: %1 classes for a network of %2 outputs")
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
    t.metadata("classes", TaskGraph::json(QJsonArray::fromStringList(classes)));
    t.metadata("target", task.value(QLatin1String("target")).toString());
}

} // namespace

// A table: its features in (numbers, with text columns as their category names), its
// predictions or class probabilities out.
void tabularOnnxGraph(TaskGraph& t)
{
    for (const char* name : {"numbers", "predictions", "probabilities", "class_index"})
        t.g.reserve(name);
    std::string x, invalid;
    tableInputs(t, x, invalid);
    const std::string z = t.network(x, false);
    tableOutputs(t, z, invalid);
    t.metadata("kind", t.text("kind"));
}

} // namespace il::tasks
