#include "TabularTask.h"

#include "Random.h"

#include <QJsonArray>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace il::tasks {

namespace {

constexpr int kMaxClasses = 20;

QString cellWhere(const io::CsvTable& t, int64_t row, int col)
{
    return t.path + ":" + QString::number(t.lines[static_cast<size_t>(row)]) + ": column " +
           QString::number(col + 1) + " (\"" + t.columns[col] + "\")";
}

bool readCell(const io::CsvTable& t, int64_t row, int col, float& v, QString* error)
{
    const QString& text = t.cell(row, col);
    if (io::parseNumber(text, v)) return true;
    const QString trimmed = text.trimmed();
    QString why;
    if (trimmed.isEmpty() || trimmed.compare("NA", Qt::CaseInsensitive) == 0 ||
        trimmed.compare("NaN", Qt::CaseInsensitive) == 0)
        why = "missing value";
    else if (trimmed.contains("inf", Qt::CaseInsensitive))
        why = "infinite value \"" + trimmed + "\"";
    else {
        bool ok = false;
        trimmed.toDouble(&ok);
        why = ok ? "number \"" + trimmed + "\" is outside the float range"
                 : "\"" + trimmed.left(40) + "\" is not a number";
    }
    if (error) *error = cellWhere(t, row, col) + ": " + why;
    return false;
}

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
    for (const auto& x : a)
        v.push_back(static_cast<float>(x.toDouble()));
    return v;
}

// Encodes rows `rowIndex` of the table with the schema's columns and statistics.
bool encodeRows(const io::CsvTable& t, const TabularSchema& s, const std::vector<int>& featureCols,
                int targetCol, const std::vector<int64_t>& rowIndex, TabularSplit& out,
                QString* error)
{
    const auto f = static_cast<size_t>(featureCols.size());
    out.rows = static_cast<int64_t>(rowIndex.size());
    out.x.assign(rowIndex.size() * f, 0.f);
    out.y.assign(rowIndex.size(), 0.f);
    out.rawTarget.assign(rowIndex.size(), 0.f);
    out.lines.assign(rowIndex.size(), 0);
    for (size_t i = 0; i < rowIndex.size(); ++i) {
        const int64_t r = rowIndex[i];
        out.lines[i] = t.lines[static_cast<size_t>(r)];
        for (size_t j = 0; j < f; ++j) {
            float v = 0;
            if (!readCell(t, r, featureCols[j], v, error)) return false;
            out.x[i * f + j] = (v - s.featureMean[j]) / s.featureStd[j];
        }
        if (targetCol < 0) continue;
        if (s.textClasses) {
            const QString label = t.cell(r, targetCol).trimmed();
            const auto k = s.classes.indexOf(label);
            if (k < 0) {
                if (error)
                    *error = cellWhere(t, r, targetCol) + ": class \"" + label.left(40) +
                             "\" was not seen in training (classes: " + s.classes.join(", ") + ")";
                return false;
            }
            out.y[i] = static_cast<float>(k);
            out.rawTarget[i] = static_cast<float>(k);
            continue;
        }
        float v = 0;
        if (!readCell(t, r, targetCol, v, error)) return false;
        out.rawTarget[i] = v;
        if (s.kind == TabularKind::Regression) {
            out.y[i] = (v - s.targetMean) / s.targetStd;
        } else {
            const auto it = std::find(s.classValues.begin(), s.classValues.end(), v);
            if (it == s.classValues.end()) {
                if (error)
                    *error = cellWhere(t, r, targetCol) + ": class \"" +
                             t.cell(r, targetCol).trimmed() +
                             "\" was not seen in training (classes: " + s.classes.join(", ") + ")";
                return false;
            }
            out.y[i] = static_cast<float>(it - s.classValues.begin());
        }
    }
    return true;
}

} // namespace

int64_t TabularSchema::outputWidth() const
{
    return kind == TabularKind::MultiClass ? classes.size() : 1;
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
    o["target"] = target;
    o["classes"] = QJsonArray::fromStringList(classes);
    o["class_labels_are_text"] = textClasses;
    o["class_values"] = toArray(classValues);
    o["normalisation"] = "zscore";
    o["feature_mean"] = toArray(featureMean);
    o["feature_std"] = toArray(featureStd);
    o["target_mean"] = static_cast<double>(targetMean);
    o["target_std"] = static_cast<double>(targetStd);
    o["val_split"] = valSplit;
    o["split_seed"] = QString::number(splitSeed);
    return o;
}

bool TabularSchema::fromJson(const QJsonObject& o, TabularSchema& s, QString* error)
{
    auto fail = [&](const QString& why) {
        if (error) *error = "task: " + why;
        return false;
    };
    if (o["task"].toString() != "tabular")
        return fail("this model was not trained on a table (task \"" + o["task"].toString() +
                    "\")");
    const QString kind = o["kind"].toString();
    if (kind == "regression")
        s.kind = TabularKind::Regression;
    else if (kind == "binary")
        s.kind = TabularKind::Binary;
    else if (kind == "multiclass")
        s.kind = TabularKind::MultiClass;
    else
        return fail("unknown kind \"" + kind + "\"");
    for (const auto& v : o["features"].toArray())
        s.features << v.toString();
    s.target = o["target"].toString();
    for (const auto& v : o["classes"].toArray())
        s.classes << v.toString();
    s.classValues = fromArray(o["class_values"].toArray());
    s.textClasses = o["class_labels_are_text"].toBool(false);
    s.featureMean = fromArray(o["feature_mean"].toArray());
    s.featureStd = fromArray(o["feature_std"].toArray());
    s.targetMean = static_cast<float>(o["target_mean"].toDouble(0));
    s.targetStd = static_cast<float>(o["target_std"].toDouble(1));
    s.valSplit = o["val_split"].toDouble(0);
    s.splitSeed = o["split_seed"].toString("1").toULongLong();
    if (s.features.isEmpty() || s.featureMean.size() != static_cast<size_t>(s.features.size()) ||
        s.featureStd.size() != s.featureMean.size())
        return fail("feature statistics do not match the feature list");
    if (s.isClassification() &&
        (s.classes.size() < 2 || s.classValues.size() != static_cast<size_t>(s.classes.size())))
        return fail("class list is incomplete");
    return true;
}

bool prepareTabular(const io::CsvTable& t, const TabularOptions& opt, TabularDataset& out,
                    QString* error)
{
    auto fail = [&](const QString& why) {
        if (error) *error = why;
        return false;
    };
    if (t.columns.size() < 2)
        return fail(t.path + ": a table needs at least two columns (features and a target)");
    int targetCol = static_cast<int>(t.columns.size()) - 1;
    if (!opt.target.isEmpty()) {
        targetCol = t.findColumn(opt.target);
        if (targetCol < 0)
            return fail(t.path + ": no column \"" + opt.target +
                        "\" (columns: " + t.columns.join(", ") + ")");
    }
    TabularSchema& s = out.schema;
    s = TabularSchema{};
    s.target = t.columns[targetCol];
    std::vector<int> featureCols;
    for (int c = 0; c < t.columns.size(); ++c)
        if (c != targetCol) {
            featureCols.push_back(c);
            s.features << t.columns[c];
        }

    // Read the target once to decide the kind of problem. A target with text labels
    // (e.g. "setosa") is a classification target whose class names the model keeps.
    std::vector<float> target(static_cast<size_t>(t.rows));
    bool textTarget = false;
    for (int64_t r = 0; r < t.rows && !textTarget; ++r) {
        const QString cell = t.cell(r, targetCol).trimmed();
        float v = 0;
        if (io::parseNumber(cell, v))
            target[static_cast<size_t>(r)] = v;
        else if (!cell.isEmpty() && cell.compare("NA", Qt::CaseInsensitive) != 0 &&
                 cell.compare("NaN", Qt::CaseInsensitive) != 0 &&
                 !cell.contains("inf", Qt::CaseInsensitive) && !cell.front().isDigit() &&
                 cell.front() != '-' && cell.front() != '.')
            textTarget = true;
        else if (!readCell(t, r, targetCol, v, error))
            return false;
    }
    if (textTarget && !opt.fixedSchema) {
        if (opt.kind == "regression")
            return fail(t.path + ": target \"" + s.target +
                        "\" holds text, so it cannot be a regression target");
        QStringList labels;
        for (int64_t r = 0; r < t.rows; ++r) {
            const QString cell = t.cell(r, targetCol).trimmed();
            if (cell.isEmpty()) {
                float dummy;
                readCell(t, r, targetCol, dummy, error);
                return false;
            }
            if (!labels.contains(cell)) labels << cell;
            if (labels.size() > 1000)
                return fail(t.path + ": target \"" + s.target +
                            "\" has over 1000 distinct labels; too many classes");
        }
        labels.sort();
        if (labels.size() < 2)
            return fail(t.path + ": target \"" + s.target +
                        "\" has a single value; nothing to classify");
        s.textClasses = true;
        s.classes = labels;
        for (int k = 0; k < labels.size(); ++k)
            s.classValues.push_back(static_cast<float>(k));
        s.kind = labels.size() == 2 ? TabularKind::Binary : TabularKind::MultiClass;
        for (int64_t r = 0; r < t.rows; ++r)
            target[static_cast<size_t>(r)] =
                static_cast<float>(labels.indexOf(t.cell(r, targetCol).trimmed()));
    }
    std::set<float> distinct(target.begin(), target.end());
    const bool integral =
        std::all_of(target.begin(), target.end(), [](float v) { return v == std::round(v); });
    bool classify;
    if (opt.kind == "regression")
        classify = false;
    else if (opt.kind == "classification")
        classify = true;
    else if (opt.kind == "auto" || opt.kind.isEmpty())
        classify = integral && distinct.size() >= 2 && distinct.size() <= kMaxClasses &&
                   static_cast<int64_t>(distinct.size()) * 2 <= std::max<int64_t>(t.rows, 4);
    else
        return fail("--kind must be auto, regression or classification, not \"" + opt.kind + "\"");
    if (textTarget) classify = true;
    if (classify && !opt.fixedSchema && !textTarget) {
        if (distinct.size() < 2)
            return fail(t.path + ": target \"" + s.target +
                        "\" has a single value; nothing to classify");
        if (distinct.size() > 1000)
            return fail(t.path + ": target \"" + s.target + "\" has " +
                        QString::number(distinct.size()) +
                        " distinct values; too many classes (is it a regression target?)");
        s.kind = distinct.size() == 2 ? TabularKind::Binary : TabularKind::MultiClass;
        for (float v : distinct) {
            s.classValues.push_back(v);
            s.classes << QString::number(static_cast<double>(v));
        }
    }

    if (opt.fixedSchema) {
        const TabularSchema& fixed = *opt.fixedSchema;
        if (fixed.features != s.features || fixed.target != s.target)
            return fail(t.path + ": columns differ from the model's training data (model: " +
                        fixed.features.join(", ") + " -> " + fixed.target + ")");
        s = fixed;
    }

    // Split with the seed; tiny tables train on everything.
    double split = opt.valSplit;
    if (split < 0) split = t.rows >= 20 ? 0.2 : 0.0;
    if (split >= 1.0)
        return fail("the validation split must be below 1 (got " + QString::number(split) + ")");
    std::vector<int32_t> order = Rng::derive(opt.seed, "split").permutation(t.rows);
    auto valRows = static_cast<int64_t>(std::floor(split * static_cast<double>(t.rows)));
    if (split > 0 && valRows == 0) valRows = 1;
    if (t.rows - valRows < 1)
        return fail(t.path + ": no rows left for training after the validation split");
    if (split == 0 && opt.valSplit < 0)
        out.note =
            QString::number(t.rows) + " rows: too few for a validation split, training on all";
    std::vector<int64_t> trainIdx, valIdx;
    for (int64_t i = 0; i < t.rows; ++i)
        (i < valRows ? valIdx : trainIdx).push_back(order[static_cast<size_t>(i)]);
    std::sort(trainIdx.begin(), trainIdx.end());
    std::sort(valIdx.begin(), valIdx.end());
    s.valSplit = split;
    s.splitSeed = opt.seed;
    if (opt.fixedSchema)
        return encodeRows(t, s, featureCols, targetCol, trainIdx, out.train, error) &&
               encodeRows(t, s, featureCols, targetCol, valIdx, out.val, error);

    // Normalisation statistics from the training rows only.
    const size_t f = featureCols.size();
    std::vector<double> sum(f, 0), sumSq(f, 0);
    double tSum = 0, tSq = 0;
    for (int64_t r : trainIdx) {
        for (size_t j = 0; j < f; ++j) {
            float v = 0;
            if (!readCell(t, r, featureCols[j], v, error)) return false;
            sum[j] += v;
            sumSq[j] += static_cast<double>(v) * v;
        }
        tSum += target[static_cast<size_t>(r)];
        tSq += static_cast<double>(target[static_cast<size_t>(r)]) * target[static_cast<size_t>(r)];
    }
    const auto n = static_cast<double>(trainIdx.size());
    auto stdOf = [n](double s1, double s2) {
        const double var = std::max(0.0, s2 / n - (s1 / n) * (s1 / n));
        const double sd = std::sqrt(var);
        return sd > 1e-12 ? sd : 1.0; // a constant column passes through centred
    };
    for (size_t j = 0; j < f; ++j) {
        s.featureMean.push_back(static_cast<float>(sum[j] / n));
        s.featureStd.push_back(static_cast<float>(stdOf(sum[j], sumSq[j])));
    }
    if (s.kind == TabularKind::Regression) {
        s.targetMean = static_cast<float>(tSum / n);
        s.targetStd = static_cast<float>(stdOf(tSum, tSq));
    }
    return encodeRows(t, s, featureCols, targetCol, trainIdx, out.train, error) &&
           encodeRows(t, s, featureCols, targetCol, valIdx, out.val, error);
}

bool encodeTabular(const io::CsvTable& t, const TabularSchema& s, TabularSplit& out, QString* error)
{
    std::vector<int> featureCols;
    for (const QString& name : s.features) {
        const int c = static_cast<int>(t.columns.indexOf(name));
        if (c < 0) {
            if (error)
                *error =
                    t.path + ": the model needs column \"" + name + "\", which this file lacks";
            return false;
        }
        featureCols.push_back(c);
    }
    const int targetCol = static_cast<int>(t.columns.indexOf(s.target));
    std::vector<int64_t> all(static_cast<size_t>(t.rows));
    for (int64_t i = 0; i < t.rows; ++i)
        all[static_cast<size_t>(i)] = i;
    if (!encodeRows(t, s, featureCols, targetCol, all, out, error)) return false;
    if (targetCol < 0) out.rawTarget.clear(); // no target column: predictions only
    return true;
}

std::vector<double> tabularProbabilities(const TabularSchema& s, const std::vector<float>& outputs)
{
    std::vector<double> p;
    if (s.kind == TabularKind::Binary) {
        for (float z : outputs) {
            const double p1 = 1.0 / (1.0 + std::exp(-static_cast<double>(z)));
            p.push_back(1.0 - p1);
            p.push_back(p1);
        }
    } else if (s.kind == TabularKind::MultiClass) {
        const auto k = static_cast<size_t>(s.classes.size());
        for (size_t r = 0; r + k <= outputs.size(); r += k) {
            double mx = outputs[r];
            for (size_t j = 1; j < k; ++j)
                mx = std::max(mx, static_cast<double>(outputs[r + j]));
            double sum = 0;
            const size_t base = p.size();
            for (size_t j = 0; j < k; ++j) {
                p.push_back(std::exp(outputs[r + j] - mx));
                sum += p.back();
            }
            for (size_t j = 0; j < k; ++j)
                p[base + j] /= sum;
        }
    }
    return p;
}

std::vector<double> tabularPredictions(const TabularSchema& s, const std::vector<float>& outputs)
{
    std::vector<double> pred;
    if (s.kind == TabularKind::Regression) {
        for (float z : outputs)
            pred.push_back(static_cast<double>(z) * s.targetStd + s.targetMean);
        return pred;
    }
    const auto k = static_cast<size_t>(s.classes.size());
    const auto probs = tabularProbabilities(s, outputs);
    for (size_t r = 0; r + k <= probs.size(); r += k)
        pred.push_back(static_cast<double>(
            std::max_element(probs.begin() + static_cast<std::ptrdiff_t>(r),
                             probs.begin() + static_cast<std::ptrdiff_t>(r + k)) -
            (probs.begin() + static_cast<std::ptrdiff_t>(r))));
    return pred;
}

TabularMetrics tabularMetrics(const TabularSchema& s, const std::vector<float>& outputs,
                              const TabularSplit& data)
{
    TabularMetrics m;
    m.rows = data.rows;
    m.classification = s.isClassification();
    if (data.rows == 0 || data.rawTarget.empty()) return m;
    const auto pred = tabularPredictions(s, outputs);
    const auto n = static_cast<double>(data.rows);
    if (m.classification) {
        int64_t correct = 0;
        for (int64_t i = 0; i < data.rows; ++i)
            correct += static_cast<int64_t>(pred[static_cast<size_t>(i)]) ==
                       static_cast<int64_t>(data.y[static_cast<size_t>(i)]);
        m.accuracy = static_cast<double>(correct) / n;
        return m;
    }
    double mean = 0;
    for (int64_t i = 0; i < data.rows; ++i)
        mean += data.rawTarget[static_cast<size_t>(i)];
    mean /= n;
    double se = 0, ae = 0, tot = 0;
    for (int64_t i = 0; i < data.rows; ++i) {
        const double y = data.rawTarget[static_cast<size_t>(i)];
        const double d = pred[static_cast<size_t>(i)] - y;
        se += d * d;
        ae += std::fabs(d);
        tot += (y - mean) * (y - mean);
    }
    m.mse = se / n;
    m.rmse = std::sqrt(m.mse);
    m.mae = ae / n;
    m.r2 = tot > 0 ? 1.0 - se / tot : 0.0;
    return m;
}

QString defaultTabularSpec(const TabularSchema& s)
{
    (void)s;
    return "dense:32,tanh,dense:32,tanh,dense";
}

QJsonObject tabularMetricsJson(const TabularSchema& schema, const TabularMetrics& m,
                               const std::vector<float>& outputs, const TabularSplit& data)
{
    (void)schema;
    (void)outputs;
    (void)data;
    QJsonObject j;
    if (m.classification) {
        j["accuracy"] = m.accuracy;
    } else {
        j["mse"] = m.mse;
        j["rmse"] = m.rmse;
        j["mae"] = m.mae;
        j["r2"] = m.r2;
    }
    j["rows"] = static_cast<qint64>(m.rows);
    return j;
}

QString describeTabularMetrics(const TabularMetrics& m, const QString& where)
{
    if (m.rows == 0)
        return where + ": no rows";
    if (m.classification)
        return QString("%1: accuracy %2% (%3 rows)")
            .arg(where)
            .arg(m.accuracy * 100, 0, 'f', 2)
            .arg(m.rows);
    return QString("%1: RMSE %2, MAE %3, R2 %4 (%5 rows)")
        .arg(where)
        .arg(m.rmse, 0, 'g', 5)
        .arg(m.mae, 0, 'g', 5)
        .arg(m.r2, 0, 'f', 4)
        .arg(m.rows);
}

} // namespace il::tasks
