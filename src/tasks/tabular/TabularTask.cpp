// The table schema (what a model remembers about its data) and reading tables.
// Preparing and encoding rows: TabularEncode.cpp; metrics: TabularMetrics.cpp; the Task
// adapter: TabularTaskAdapter.cpp.
#include "TabularTask.h"

#include "CrossValidation.h"
#include "JsonDataset.h"
#include "PrintableText.h"

#include <QFile>
#include <QJsonArray>

#include <algorithm>
#include <cmath>

namespace il::tasks {

namespace {

QJsonArray toArray(const std::vector<float>& v)
{
    QJsonArray a;
    for (float f : v)
        a.append(static_cast<double>(f));
    return a;
}

std::vector<float> fromArray(const QJsonArray& a)
{
    std::vector<float> v;
    v.reserve(static_cast<size_t>(a.size()));
    for (const auto& x : a)
        v.push_back(static_cast<float>(x.toDouble(NAN)));
    return v;
}

QStringList toStrings(const QJsonArray& a)
{
    QStringList s;
    for (const auto& v : a)
        s << v.toString();
    return s;
}

bool finiteScales(const std::vector<float>& offset, const std::vector<float>& scale)
{
    for (size_t i = 0; i < offset.size(); ++i)
        if (!std::isfinite(offset[i]) || !std::isfinite(scale[i]) || scale[i] == 0.f) return false;
    return true;
}

} // namespace

int64_t TabularSchema::inputWidth() const
{
    int64_t w = 0;
    for (int i = 0; i < features.size(); ++i) {
        const auto& cats = featureCategories[static_cast<size_t>(i)];
        w += cats.isEmpty() ? 1 : cats.size();
    }
    return w;
}

QStringList TabularSchema::inputNames() const
{
    QStringList names;
    for (int i = 0; i < features.size(); ++i) {
        const auto& cats = featureCategories[static_cast<size_t>(i)];
        if (cats.isEmpty()) names << features[i];
        for (const QString& c : cats)
            names << features[i] + "=" + c;
    }
    return names;
}

int64_t TabularSchema::outputWidth() const
{
    switch (kind) {
    case TabularKind::Regression:
        return targets.size();
    case TabularKind::Binary:
        return 1;
    case TabularKind::MultiClass:
        return classes.size();
    }
    return 1;
}

LossKind TabularSchema::loss() const
{
    switch (kind) {
    case TabularKind::Regression:
        return LossKind::MSE;
    case TabularKind::Binary:
        return LossKind::BinaryCrossEntropy;
    case TabularKind::MultiClass:
        return LossKind::CrossEntropy;
    }
    return LossKind::MSE;
}

QString TabularSchema::kindName() const
{
    switch (kind) {
    case TabularKind::Regression:
        return "regression";
    case TabularKind::Binary:
        return "binary classification";
    case TabularKind::MultiClass:
        return "multi-class classification";
    }
    return {};
}

QJsonObject TabularSchema::toJson() const
{
    QJsonObject o;
    o["task"] = "tabular";
    o["kind"] = kind == TabularKind::Regression ? "regression"
                : kind == TabularKind::Binary   ? "binary"
                                                : "multiclass";
    o["features"] = QJsonArray::fromStringList(features);
    QJsonArray cats;
    for (const QStringList& c : featureCategories)
        cats.append(QJsonArray::fromStringList(c));
    o["feature_categories"] = cats;
    o["target"] = target;
    o["targets"] = QJsonArray::fromStringList(targets);
    o["classes"] = QJsonArray::fromStringList(classes);
    o["class_labels_are_text"] = textClasses;
    o["class_values"] = toArray(classValues);
    o["normalisation"] = normalisation;
    o["input_offset"] = toArray(inputOffset);
    o["input_scale"] = toArray(inputScale);
    o["target_offset"] = toArray(targetOffset);
    o["target_scale"] = toArray(targetScale);
    o["val_split"] = valSplit;
    o["test_split"] = testSplit;
    o["split_seed"] = QString::number(splitSeed);
    if (folds > 0) o["folds"] = folds;
    o["missing"] = missing;
    if (!missingFill.empty()) o["missing_fill"] = toArray(missingFill);
    return o;
}

bool TabularSchema::fromJson(const QJsonObject& saved, TabularSchema& s, QString* error)
{
    // Older files' fields under today's names (the exports read through the same hook).
    const QJsonObject o = tabularTaskType().savedInCurrentForm(saved);
    auto fail = [&](const QString& why) {
        if (error) *error = "task: " + why;
        return false;
    };
    if (o["task"].toString() != "tabular")
        return fail("this model was not trained on a table (task " +
                    io::quoted(o["task"].toString(), 40) + ")");
    s = TabularSchema{};
    const QString kind = o["kind"].toString();
    if (kind == "regression")
        s.kind = TabularKind::Regression;
    else if (kind == "binary")
        s.kind = TabularKind::Binary;
    else if (kind == "multiclass")
        s.kind = TabularKind::MultiClass;
    else
        return fail("unknown kind " + io::quoted(kind, 40));
    s.features = toStrings(o["features"].toArray());
    const QJsonArray cats = o["feature_categories"].toArray();
    for (int i = 0; i < s.features.size(); ++i)
        s.featureCategories.push_back(i < cats.size() ? toStrings(cats[i].toArray())
                                                      : QStringList{});
    s.target = o["target"].toString();
    s.targets = o.contains("targets") ? toStrings(o["targets"].toArray()) : QStringList{s.target};
    s.classes = toStrings(o["classes"].toArray());
    s.classValues = fromArray(o["class_values"].toArray());
    s.textClasses = o["class_labels_are_text"].toBool(false);
    s.normalisation = o["normalisation"].toString("zscore");
    s.inputOffset = fromArray(o["input_offset"].toArray());
    s.inputScale = fromArray(o["input_scale"].toArray());
    s.targetOffset = fromArray(o["target_offset"].toArray());
    s.targetScale = fromArray(o["target_scale"].toArray());
    s.valSplit = o["val_split"].toDouble(0);
    s.testSplit = o["test_split"].toDouble(0);
    s.splitSeed = o["split_seed"].toString("1").toULongLong();
    s.folds = o["folds"].toInt(0);
    if (s.folds != 0 && (s.folds < 2 || s.folds > kMaxFolds))
        return fail(QString("folds %1 must be 0 or from 2 to %2").arg(s.folds).arg(kMaxFolds));
    s.missing = o["missing"].toString("fail");
    s.missingFill = fromArray(o["missing_fill"].toArray());
    if (!kSplitRange.contains(s.valSplit) || !kSplitRange.contains(s.testSplit) ||
        s.valSplit + s.testSplit >= 1)
        return fail(QString("val_split %1 and test_split %2 must each be %3, together below 1")
                        .arg(s.valSplit)
                        .arg(s.testSplit)
                        .arg(QString::fromStdString(kSplitRange.describe())));
    if (s.features.isEmpty() || s.targets.isEmpty() || s.targets.first() != s.target)
        return fail("the feature or target list is missing");
    const auto width = static_cast<size_t>(s.inputWidth());
    if (s.inputOffset.size() != width || s.inputScale.size() != width ||
        !finiteScales(s.inputOffset, s.inputScale))
        return fail("normalisation statistics do not match the " + QString::number(width) +
                    " inputs");
    if (s.kind == TabularKind::Regression &&
        (s.targetOffset.size() != static_cast<size_t>(s.targets.size()) ||
         s.targetScale.size() != s.targetOffset.size() ||
         !finiteScales(s.targetOffset, s.targetScale)))
        return fail("target statistics do not match the targets");
    if (s.isClassification() && (s.targets.size() != 1 || s.classes.size() < 2 ||
                                 s.classValues.size() != static_cast<size_t>(s.classes.size())))
        return fail("class list is incomplete");
    if (s.normalisation != "zscore" && s.normalisation != "minmax")
        return fail("unknown normalisation " + io::quoted(s.normalisation, 40));
    if (!QStringList{"fail", "drop", "ignore", "mean"}.contains(s.missing))
        return fail("unknown missing-value policy " + io::quoted(s.missing, 40));
    if (s.missing == "mean" && (s.missingFill.size() != static_cast<size_t>(s.features.size()) ||
                                !std::all_of(s.missingFill.begin(), s.missingFill.end(),
                                             [](float v) { return std::isfinite(v); })))
        return fail("missing_fill does not hold a value for each of the " +
                    QString::number(s.features.size()) + " features");
    return true;
}

bool readTable(const QString& path, const QByteArray& bytes, io::CsvTable& out, QString* error)
{
    io::CsvReadResult r = io::isJsonDataset(path, bytes) ? io::readJsonDataset(bytes, path)
                                                         : io::parseCsv(bytes, path);
    if (!r.ok) {
        if (error) *error = r.error;
        return false;
    }
    out = std::move(r.table);
    return true;
}

bool readTableFile(const QString& path, const QString& filePath, io::CsvTable& out, QString* error)
{
    QFile f(filePath);
    if (!f.open(QIODevice::ReadOnly)) {
        if (error) *error = path + ": cannot open: " + f.errorString();
        return false;
    }
    if (io::isJsonDataset(path, f.peek(4096))) return readTable(path, f.readAll(), out, error);
    io::CsvReadResult r = io::readCsv(f, path);
    if (!r.ok) {
        if (error) *error = r.error;
        return false;
    }
    out = std::move(r.table);
    return true;
}

} // namespace il::tasks
