// `ironlearn-cli export --to onnx` run by a real ONNX client: ONNX Runtime, from the
// npm package onnxruntime-node (packaging/setup.sh installs it into build/tools; ort_check.js
// runs the graphs), and the ONNX checker (python3-onnx; ort_onnx_info.py).
//
// runtimeMatchesTheEngine: one model per task kind (regression, binary with a text column,
//   multi-class, image, a hash-grid image, names) whose layer stacks together hold every layer type
//   the ONNX export expresses (checked against the layer registry), each file's weights replaced by
//   deterministic random values of a moderate size (so no layer hides behind weights training
//   left near zero), is exported, passes the checker, and runs in ONNX Runtime: tables against
//   `ironlearn-cli predict` (to 2e-5 relative, predict prints 6 digits), images and names against
//   the engine's own outputs for the same inputs (names 1e-5; images 2e-5: sine:30 on random
//   weights magnifies the summation order's rounding). Rows predict refuses (NaN, infinity, a
//   category not seen, " Blue" included) give NaN outputs and class -1. A model trained with
//   --missing mean takes NaN for an empty cell and predicts its rows as predict fills them
//   (missing_fill in the metadata); one trained with --missing ignore has no input for the
//   columns it left out. A binary model pushed to
//   p0 = 1e-10..1e-6 keeps p0 to 1e-4 relative (the softmax of (0, z), not 1 - sigmoid(z)).
// craftedModels: what a damaged or hand-made file gets: an empty input_offset with text and
//   number features, leakyrelu:abc and sine:1e39 in the layer list or the spec, a layer list
//   that differs from the spec (refused for both exports), an old-format table (exported, in
//   today's form for model.py too), escape sequences in names and labels (escaped in the summary).
//   Each refusal is one line, exit 1, nothing written.
//
// Skips only where node (or npm) is not installed; with node but without onnxruntime-node it
// fails, saying to run packaging/setup.sh.
#include "CliRunner.h"

#include "Backend.h"
#include "LayerRegistry.h"
#include "LayerSpec.h"
#include "ModelFile.h"
#include "SafeTensors.h"
#include "Task.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace {

using clitest::readBytes;
using clitest::writeBytes;

const QString kSource = QStringLiteral(IRONLEARN_SOURCE_DIR);
const QString kSamples = QStringLiteral(IRONLEARN_SOURCE_DIR "/resources/samples");
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Debian's interpreter first: python3-onnx installs there (a PATH python3 may be another).
QString python()
{
    return QFileInfo::exists("/usr/bin/python3") ? QString("/usr/bin/python3")
                                                 : QStandardPaths::findExecutable("python3");
}

QString modulesDir()
{
    const QString env = qEnvironmentVariable("IRONLEARN_ORT_MODULES");
    return env.isEmpty() ? QStringLiteral(IRONLEARN_ORT_MODULES) : env;
}

// Deterministic values in [-1, 1).
struct Lcg {
    uint64_t state;
    double next()
    {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<double>(state >> 11) / 4503599627370496.0 - 1.0; // 2^52
    }
};

bool endsWith(const std::string& s, const char* tail)
{
    const std::string t(tail);
    return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

// Every weight of the model file replaced: dense-like matrices uniform with variance 1/fan-in,
// biases and running means small, norm gains near 1, running variances positive. The optimizer
// state and the dropout's generator state are kept.
bool randomiseWeights(const QString& path, uint64_t seed)
{
    il::io::SafeTensorsFile f;
    if (!il::io::readSafeTensors(path, f)) return false;
    Lcg r{seed};
    for (il::io::StoredTensor& t : f.tensors) {
        const std::string& n = t.name;
        if (n.starts_with("optimizer.") || endsWith(n, "rng_state")) continue;
        const int64_t rows = t.shape.size() > 1 ? t.shape[0] : 1;
        const double cols = static_cast<double>(t.shape.back());
        for (float& v : t.data) {
            const double u = r.next();
            if (endsWith(n, ".bias"))
                v = static_cast<float>(0.1 * u);
            else if (endsWith(n, "running_var"))
                v = static_cast<float>(0.5 + u * u);
            else if (endsWith(n, "running_mean"))
                v = static_cast<float>(0.2 * u);
            else if (rows == 1) // a norm's gain
                v = static_cast<float>(1 + 0.2 * u);
            else
                v = static_cast<float>(u * std::sqrt(3.0 / cols));
        }
    }
    return il::io::writeSafeTensors(path, f).ok;
}

// The metadata object `key` of a model file, changed by `change`, written to `to`.
template <class F>
bool editMetadata(const QString& from, const QString& to, const QString& key, F change)
{
    il::io::SafeTensorsFile f;
    if (!il::io::readSafeTensors(from, f)) return false;
    QJsonObject o = QJsonDocument::fromJson(f.metadata.value(key).toUtf8()).object();
    change(o);
    f.metadata[key] = QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact));
    return il::io::writeSafeTensors(to, f).ok;
}

QJsonObject floatFeed(const std::vector<double>& data, qsizetype rows, qsizetype cols)
{
    QJsonArray values;
    for (double v : data)
        values.append(std::isnan(v) ? QJsonValue(QJsonValue::Null) : QJsonValue(v));
    return {
        {"type", "float32"}, {"dims", QJsonArray{qint64(rows), qint64(cols)}}, {"data", values}};
}

std::vector<double> numbersOf(const QJsonObject& output)
{
    std::vector<double> out;
    for (const QJsonValue& v : output.value("data").toArray())
        out.push_back(v.isNull() ? kNaN : v.toDouble());
    return out;
}

// A simple CSV (no quotes): the header and the rows, cells trimmed.
struct Csv {
    QStringList header;
    QList<QStringList> rows;
    int column(const QString& name) const { return static_cast<int>(header.indexOf(name)); }
};

Csv parseCsv(const QString& text)
{
    Csv c;
    for (const QString& line : text.split('\n', Qt::SkipEmptyParts)) {
        QStringList cells = line.split(',');
        for (QString& cell : cells)
            cell = cell.trimmed();
        if (c.header.isEmpty())
            c.header = cells;
        else
            c.rows << cells;
    }
    return c;
}

// |ours - theirs| within rel of max(|theirs|, floor); NaN never matches.
bool close(double ours, double theirs, double rel, double floor)
{
    return std::abs(ours - theirs) <= rel * std::max(std::abs(theirs), floor);
}

} // namespace

class TestCliOnnx : public CliTestCase {
    Q_OBJECT

public:
    TestCliOnnx()
    {
        m_quietTrain = true;
        m_oneThread = true;
    }

private slots:
    void initTestCase();
    void runtimeMatchesTheEngine();
    void craftedModels();

private:
    QString m_node;
    QSet<QString> m_covered; // layer types in the models checked

    // Trains `name` on data with the layers and extra options, then randomises its weights.
    QString trainModel(const QString& name, const QString& data, const QString& layers,
                       const QStringList& extra, uint64_t seed);
    // The checker on every file; their metadata, inputs and outputs (empty: no python3-onnx).
    QJsonObject checked(const QStringList& files);
    // ONNX Runtime's results for the jobs, one each.
    QJsonArray runtime(const QJsonArray& jobs);
    void checkTable(const QString& name, const QString& data, const QString& layers,
                    const QStringList& extra, bool pushBias);
    void checkEngine(const QString& name, const QString& data, const QString& layers,
                     const QStringList& extra);
};

void TestCliOnnx::initTestCase()
{
    QVERIFY(m_dir.isValid());
    m_node = QStandardPaths::findExecutable("node");
    if (m_node.isEmpty()) m_node = QStandardPaths::findExecutable("nodejs");
}

QString TestCliOnnx::trainModel(const QString& name, const QString& data, const QString& layers,
                                const QStringList& extra, uint64_t seed)
{
    const QString model = path(name + ".safetensors");
    const RunResult r = run(QStringList{"train", data, "--layers", layers, "--out", model} + extra);
    if (r.code != 0) qWarning("train %s: %s", qPrintable(name), qPrintable(r.err + r.out));
    for (const il::LayerItem& item : il::parseLayerItems(layers.toStdString()))
        m_covered.insert(QString::fromStdString(item.type->name));
    return r.code == 0 && randomiseWeights(model, seed) ? model : QString();
}

QJsonObject TestCliOnnx::checked(const QStringList& files)
{
    const QString py = python();
    if (py.isEmpty()) return {};
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(py, QStringList{kSource + "/tests/cli/ort_onnx_info.py"} + files);
    if (!p.waitForFinished(120000)) return {{"error", "the checker did not finish"}};
    const QByteArray out = p.readAll();
    if (p.exitCode() == 77) {
        qInfo("no ONNX checker: %s", out.trimmed().constData());
        return {};
    }
    if (p.exitCode() != 0) return {{"error", QString::fromUtf8(out.trimmed())}};
    return QJsonDocument::fromJson(out).object();
}

QJsonArray TestCliOnnx::runtime(const QJsonArray& jobs)
{
    QProcess p;
    p.start(m_node, {kSource + "/tests/cli/ort_check.js", modulesDir()});
    p.write(QJsonDocument(jobs).toJson(QJsonDocument::Compact));
    p.closeWriteChannel();
    if (!p.waitForFinished(120000)) return {};
    if (p.exitCode() != 0) {
        qWarning("ort_check.js: %s", p.readAllStandardError().constData());
        return {};
    }
    return QJsonDocument::fromJson(p.readAllStandardOutput()).array();
}

void TestCliOnnx::checkTable(const QString& name, const QString& data, const QString& layers,
                             const QStringList& extra, bool pushBias)
{
    const QString model = trainModel(name, data, layers, extra, qHash(name));
    QVERIFY2(!model.isEmpty(), qPrintable(name));
    // Pushed: the output layer's bias +18, so p0 is 1e-10 to 1e-6 (1 - sigmoid(z) in float32
    // keeps none of its digits; predict's 1 - p1 in double keeps 6 where p0 is 1e-10).
    if (pushBias) {
        il::io::SafeTensorsFile f;
        QVERIFY(il::io::readSafeTensors(model, f));
        il::io::StoredTensor* bias = nullptr;
        for (il::io::StoredTensor& t : f.tensors)
            if (t.name.starts_with("layers.") && endsWith(t.name, ".bias")) bias = &t;
        QVERIFY(bias && bias->data.size() == 1);
        bias->data[0] += 18.f;
        QVERIFY(il::io::writeSafeTensors(model, f));
    }
    const QString onnx = path(name + ".onnx");
    const RunResult ex = run({"export", model, "--to", "onnx", "--out", onnx});
    QVERIFY2(ex.code == 0, qPrintable(ex.err));
    const QJsonObject info = checked({onnx});
    QVERIFY2(!info.contains("error"), qPrintable(info.value("error").toString()));

    const RunResult predicted = run({"predict", model, data});
    QVERIFY2(predicted.code == 0, qPrintable(predicted.err));
    const Csv theirs = parseCsv(predicted.out);
    const Csv rows = parseCsv(QString::fromUtf8(readBytes(data)));
    QCOMPARE(theirs.rows.size(), rows.rows.size());
    il::io::ModelInfo mi;
    QVERIFY(il::io::readModelInfo(model, mi, nullptr));
    const QJsonObject task = mi.task;
    const QJsonArray features = task["features"].toArray();
    const QJsonArray categories = task["feature_categories"].toArray();
    // Missing values filled with the training mean: a missing number (an empty cell, NaN in the
    // graph) is predicted as predict fills it, and the metadata holds the fill values.
    const bool fills = task["missing"].toString() == "mean";
    if (fills && !info.isEmpty()) {
        const QJsonObject meta = info[onnx]["metadata"].toObject();
        const QJsonArray fill =
            QJsonDocument::fromJson(meta["missing_fill"].toString().toUtf8()).array();
        QVERIFY2(
            !fill.isEmpty() &&
                fill.size() ==
                    QJsonDocument::fromJson(meta["numbers"].toString().toUtf8()).array().size(),
            qPrintable(name +
                       ": missing_fill in the metadata: " + meta["missing_fill"].toString()));
    }

    // The rows, then the ones predict refuses: a NaN, an infinity, a category with a space
    // before it (the CSV reader would trim it; the graph cannot) and one never seen.
    QList<QStringList> cells = rows.rows;
    const QStringList first = rows.rows.first();
    QList<QStringList> refused;
    for (int f = 0; f < features.size(); ++f) {
        const int c = rows.column(features[f].toString());
        QVERIFY(c >= 0);
        const QStringList bad =
            categories[f].toArray().isEmpty()
                ? (fills ? QStringList{"inf"} : QStringList{"nan", "inf"})
                : QStringList{" " + categories[f].toArray()[0].toString(), "never-seen"};
        for (const QString& b : bad) {
            QStringList row = first;
            row[c] = b;
            refused << row;
        }
    }
    const qsizetype good = cells.size();
    cells += refused;
    const auto n = cells.size();
    QJsonObject feeds;
    std::vector<double> numbers;
    int numeric = 0;
    for (int f = 0; f < features.size(); ++f)
        numeric += categories[f].toArray().isEmpty() ? 1 : 0;
    for (const QStringList& row : cells)
        for (int f = 0; f < features.size(); ++f)
            if (categories[f].toArray().isEmpty()) {
                const QString cell = row[rows.column(features[f].toString())];
                numbers.push_back(cell == "nan" || cell.isEmpty() ? kNaN
                                  : cell == "inf" ? std::numeric_limits<double>::infinity()
                                                  : cell.toDouble());
            }
    if (numeric > 0) {
        // JSON has no infinity: a value beyond float's range becomes one in float32.
        for (double& v : numbers)
            if (std::isinf(v)) v = 1e300;
        feeds["numbers"] = floatFeed(numbers, n, numeric);
    }
    for (int f = 0; f < features.size(); ++f) {
        if (categories[f].toArray().isEmpty()) continue;
        const QString column = features[f].toString();
        QJsonArray texts;
        for (const QStringList& row : cells)
            texts.append(row[rows.column(column)]);
        feeds[column] =
            QJsonObject{{"type", "string"}, {"dims", QJsonArray{qint64(n), 1}}, {"data", texts}};
    }
    const QJsonArray results = runtime({QJsonObject{{"model", onnx}, {"feeds", feeds}}});
    QVERIFY2(results.size() == 1 && results[0].toObject().contains("outputs"),
             qPrintable(name + ": " + QJsonDocument(results).toJson(QJsonDocument::Compact)));
    const QJsonObject outputs = results[0]["outputs"].toObject();

    double worst = 0;
    auto compare = [&](double ours, double theirValue, const QString& what, double rel,
                       double floor) {
        const double d = std::abs(ours - theirValue) / std::max(std::abs(theirValue), floor);
        worst = std::max(worst, d);
        QVERIFY2(close(ours, theirValue, rel, floor),
                 qPrintable(QString("%1 %2: ONNX Runtime %3, predict %4")
                                .arg(name, what)
                                .arg(ours, 0, 'g', 9)
                                .arg(theirValue, 0, 'g', 9)));
    };
    if (task["kind"].toString() == "regression") {
        const QJsonArray targets = task["targets"].toArray();
        const std::vector<double> p = numbersOf(outputs["predictions"].toObject());
        QCOMPARE(p.size(), size_t(n * targets.size()));
        for (qsizetype i = 0; i < n; ++i)
            for (qsizetype j = 0; j < targets.size(); ++j) {
                const double v = p[size_t(i * targets.size() + j)];
                if (i >= good) {
                    QVERIFY2(std::isnan(v), qPrintable(name + ": a refused row predicts"));
                    continue;
                }
                const int c = theirs.column("predicted_" + targets[j].toString());
                QVERIFY(c >= 0);
                compare(v, theirs.rows[i][c].toDouble(), QString("row %1").arg(i + 1), 2e-5, 1e-3);
                if (QTest::currentTestFailed()) return;
            }
    } else {
        const QJsonArray classes = task["classes"].toArray();
        const std::vector<double> p = numbersOf(outputs["probabilities"].toObject());
        const std::vector<double> index = numbersOf(outputs["class_index"].toObject());
        QCOMPARE(p.size(), size_t(n * classes.size()));
        for (qsizetype i = 0; i < n; ++i) {
            if (i >= good) {
                QVERIFY2(index[size_t(i)] == -1,
                         qPrintable(QString("%1: refused row %2 has class %3")
                                        .arg(name)
                                        .arg(i - good + 1)
                                        .arg(index[size_t(i)])));
                for (qsizetype k = 0; k < classes.size(); ++k)
                    QVERIFY(std::isnan(p[size_t(i * classes.size() + k)]));
                continue;
            }
            const QString label = classes[qsizetype(index[size_t(i)])].toString();
            QCOMPARE(label,
                     theirs.rows[i][theirs.column("predicted_" + task["target"].toString())]);
            for (qsizetype k = 0; k < classes.size(); ++k) {
                const int c = theirs.column("p_" + classes[k].toString());
                QVERIFY(c >= 0);
                const double theirP = theirs.rows[i][c].toDouble();
                // Pushed: every p0 is tiny and must keep its digits, not round to 0.
                compare(p[size_t(i * classes.size() + k)], theirP,
                        QString("row %1 p_%2").arg(i + 1).arg(classes[k].toString()),
                        pushBias ? 1e-4 : 2e-5, pushBias ? 1e-30 : 1e-3);
                if (QTest::currentTestFailed()) return;
            }
        }
        if (pushBias)
            QVERIFY2(theirs.rows[0][theirs.column("p_" + classes[0].toString())].toDouble() < 1e-5,
                     "the pushed model's p0 is not tiny");
    }
    qInfo("%s: %lld rows match predict (worst relative difference %.1e), %lld refused rows "
          "give NaN",
          qPrintable(name), static_cast<long long>(good), worst, static_cast<long long>(n - good));
}

void TestCliOnnx::checkEngine(const QString& name, const QString& data, const QString& layers,
                              const QStringList& extra)
{
    const QString model = trainModel(name, data, layers, extra, qHash(name));
    QVERIFY2(!model.isEmpty(), qPrintable(name));
    const QString onnx = path(name + ".onnx");
    const RunResult ex = run({"export", model, "--to", "onnx", "--out", onnx});
    QVERIFY2(ex.code == 0, qPrintable(ex.err));
    const QJsonObject info = checked({onnx});
    QVERIFY2(!info.contains("error"), qPrintable(info.value("error").toString()));

    auto backend = il::createCpuBackend(1);
    QString error;
    auto opened = il::io::openModel(model, *backend, &error);
    QVERIFY2(opened, qPrintable(error));
    il::Network& net = *opened->network;
    const bool names = opened->info.task["task"].toString() == "names";
    const int64_t in = net.inputWidth(), out = net.outputWidth();
    const int64_t rows = 64;
    std::vector<float> x;
    QJsonObject feeds;
    Lcg r{7};
    if (names) { // character ids, 0 (before the name) now and then
        QJsonArray ids;
        for (int64_t i = 0; i < rows * in; ++i) {
            const auto id = static_cast<int64_t>((r.next() + 1) / 2 * static_cast<double>(out));
            x.push_back(static_cast<float>(std::min(id, out - 1)));
            ids.append(qint64(x.back()));
        }
        feeds["context"] = QJsonObject{
            {"type", "int64"}, {"dims", QJsonArray{qint64(rows), qint64(in)}}, {"data", ids}};
    } else { // an 8 x 8 grid over the field of view
        std::vector<double> coords;
        for (int j = 0; j < 8; ++j)
            for (int i = 0; i < 8; ++i) {
                coords.push_back((2 * i + 1 - 8) / 8.0);
                coords.push_back((2 * j + 1 - 8) / 8.0);
            }
        for (double c : coords)
            x.push_back(static_cast<float>(c));
        feeds["coordinates"] = floatFeed(coords, rows, 2);
    }
    const std::vector<float> z = il::tasks::predictRows(net, x, rows);
    std::vector<double> expected(z.size());
    for (int64_t i = 0; i < rows; ++i) {
        if (names) { // softmax, in double
            double top = -1e300, sum = 0;
            for (int64_t k = 0; k < out; ++k)
                top = std::max(top, double(z[size_t(i * out + k)]));
            for (int64_t k = 0; k < out; ++k)
                sum += std::exp(double(z[size_t(i * out + k)]) - top);
            for (int64_t k = 0; k < out; ++k)
                expected[size_t(i * out + k)] =
                    std::exp(double(z[size_t(i * out + k)]) - top) / sum;
        } else {
            for (int64_t k = 0; k < out; ++k)
                expected[size_t(i * out + k)] =
                    std::clamp(double(z[size_t(i * out + k)]), 0.0, 1.0);
        }
    }
    const QJsonArray results = runtime({QJsonObject{{"model", onnx}, {"feeds", feeds}}});
    QVERIFY2(results.size() == 1 && results[0].toObject().contains("outputs"),
             qPrintable(name + ": " + QJsonDocument(results).toJson(QJsonDocument::Compact)));
    const QJsonObject outputs = results[0]["outputs"].toObject();
    const std::vector<double> ours =
        numbersOf(outputs[names ? "probabilities" : "intensities"].toObject());
    QCOMPARE(ours.size(), expected.size());
    double worst = 0;
    for (size_t i = 0; i < ours.size(); ++i) {
        const double floor = names ? 1e-3 : 1e-2;
        worst = std::max(worst, std::abs(ours[i] - expected[i]) / std::max(expected[i], floor));
        QVERIFY2(close(ours[i], expected[i], names ? 1e-5 : 2e-5, floor),
                 qPrintable(QString("%1 value %2: ONNX Runtime %3, the engine %4")
                                .arg(name)
                                .arg(i)
                                .arg(ours[i], 0, 'g', 9)
                                .arg(expected[i], 0, 'g', 9)));
    }
    // Not every intensity clamped to 0 or 1: some were compared as the network computed them.
    const auto inside =
        std::count_if(expected.begin(), expected.end(), [](double v) { return v > 0 && v < 1; });
    if (!names)
        QVERIFY2(inside >= 4, qPrintable(QString("%1: only %2 of %3 intensities inside 0..1")
                                             .arg(name)
                                             .arg(inside)
                                             .arg(expected.size())));
    qInfo("%s: %lld rows match the engine (worst relative difference %.1e; %lld of %lld values "
          "inside 0..1)",
          qPrintable(name), static_cast<long long>(rows), worst, static_cast<long long>(inside),
          static_cast<long long>(expected.size()));
}

void TestCliOnnx::runtimeMatchesTheEngine()
{
    if (m_node.isEmpty() || QStandardPaths::findExecutable("npm").isEmpty())
        QSKIP("node and npm are not installed (Debian: nodejs npm); packaging/setup.sh "
              "installs them and onnxruntime-node");
    QVERIFY2(QFileInfo::exists(modulesDir() + "/onnxruntime-node/package.json"),
             qPrintable("no onnxruntime-node in " + modulesDir() +
                        ": run packaging/setup.sh (it installs it with npm)"));

    QVERIFY(writeBytes(path("colours.csv"), [] {
        QByteArray csv = "size,colour,price\n";
        for (int i = 0; i < 60; ++i)
            csv += QByteArray::number(1 + (i * 7) % 10) + "," +
                   QByteArray(i % 3 == 0   ? "red"
                              : i % 3 == 1 ? "green"
                                           : "Blue") +
                   "," + QByteArray((i * 7 % 10 + i % 3) % 2 ? "dear" : "cheap") + "\n";
        return csv;
    }()));
    checkTable("regression", kSamples + "/diabetes.csv",
               "dense:16,leakyrelu:0.2,layernorm,dense:8,sigmoid,dropout:0.1,dense,skip",
               {"--epochs", "1"}, false);
    if (QTest::currentTestFailed()) return;
    checkTable("binary", path("colours.csv"), "dense:8,gelu,batchnorm,dense,skip",
               {"--epochs", "2"}, false);
    if (QTest::currentTestFailed()) return;
    checkTable("binary-pushed", path("colours.csv"), "dense:8,tanh,dense", {"--epochs", "1"}, true);
    if (QTest::currentTestFailed()) return;
    checkTable("multiclass", kSamples + "/iris.csv", "dense:8,tanh,dense:8,relu,dense",
               {"--epochs", "1"}, false);
    if (QTest::currentTestFailed()) return;
    // Empty cells in two numeric columns (one row has both): filled with the training mean
    // ("mean": the graph fills a NaN as predict fills the cell), or those columns left out
    // ("ignore": they are no input of the graph, and predict does not read them either).
    QVERIFY(writeBytes(path("gaps.csv"), [] {
        QByteArray csv = "size,weight,age,colour,price\n";
        for (int i = 0; i < 60; ++i)
            csv += QByteArray::number(1 + (i * 7) % 10) + "," +
                   (i % 5 == 1 ? QByteArray() : QByteArray::number(40 + (i * 13) % 30)) + "," +
                   (i % 7 == 1 ? QByteArray() : QByteArray::number(0.5 * (i % 9))) + "," +
                   QByteArray(i % 3 == 0   ? "red"
                              : i % 3 == 1 ? "green"
                                           : "Blue") +
                   "," + QByteArray::number(10.25 + i % 4 + (i * 7) % 10) + "\n";
        return csv;
    }()));
    checkTable("mean-fill", path("gaps.csv"), "dense:8,tanh,dense",
               {"--epochs", "1", "--missing", "mean"}, false);
    if (QTest::currentTestFailed()) return;
    checkTable("ignore", path("gaps.csv"), "dense:8,tanh,dense",
               {"--epochs", "1", "--missing", "ignore"}, false);
    if (QTest::currentTestFailed()) return;
    if (const QJsonObject ignored = checked({path("ignore.onnx")}); !ignored.isEmpty()) {
        const QJsonObject meta = ignored[path("ignore.onnx")]["metadata"].toObject();
        QCOMPARE(meta["numbers"].toString(), QString(R"(["size"])"));
        QVERIFY(!meta.contains("missing_fill"));
    }
    checkEngine("image", kSamples + "/camera.png",
                "fourier:8:10,dense:16,sine:30,dense:8,relu,dense",
                {"--image-size", "16", "--steps", "1"});
    if (QTest::currentTestFailed()) return;
    // Tables of 64 rows: the coarsest level (4 cells, 25 vertices) has a row per vertex, the
    // finer two (8 and 16 cells) share rows through the spatial hash (its xor in arithmetic).
    checkEngine("hashgrid", kSamples + "/camera.png", "hashgrid:3:2:6:4:2,dense:8,relu,dense",
                {"--image-size", "16", "--steps", "1"});
    if (QTest::currentTestFailed()) return;
    checkEngine("names", kSamples + "/names-ssa2018.txt",
                "embedding:4,merge:2,dense:8,batchnorm,tanh,merge:2,dense:8,layernorm,gelu,dense,"
                "skip",
                {"--context", "4", "--steps", "1"});
    if (QTest::currentTestFailed()) return;

    // Every activation of the registry, one after another, each with its default argument: a
    // new activation is run here with no change to this test.
    QString chain;
    for (const il::LayerType& t : il::layerTypes())
        if (t.activation) chain += "dense:6," + QString::fromStdString(t.name) + ",";
    checkTable("activations", kSamples + "/diabetes.csv", chain + "dense", {"--epochs", "1"},
               false);
    if (QTest::currentTestFailed()) return;

    // A type that none of the stacks above holds runs in its registry example
    // (LayerType::example): a new layer type is checked here with no change to this test.
    for (const il::LayerType& t : il::layerTypes()) {
        const QString name = QString::fromStdString(t.name);
        if (m_covered.contains(name) || t.example.layers.empty()) continue;
        const QString layers = QString::fromStdString(t.example.layers);
        if (t.example.data == "names")
            checkEngine("example-" + name, kSamples + "/names-ssa2018.txt", layers,
                        {"--context", "4", "--steps", "1"});
        else if (t.example.data == "image")
            checkEngine("example-" + name, kSamples + "/camera.png", layers,
                        {"--image-size", "16", "--steps", "1"});
        else
            checkTable("example-" + name, kSamples + "/diabetes.csv", layers, {"--epochs", "1"},
                       false);
        if (QTest::currentTestFailed()) return;
    }

    // Every layer type, and each carries its export forms (ExportForms.h).
    for (const il::LayerType& t : il::layerTypes()) {
        QVERIFY2(m_covered.contains(QString::fromStdString(t.name)),
                 qPrintable("no model here has a " + QString::fromStdString(t.name) +
                            " layer: give its type an example (LayerType::example), so ONNX "
                            "Runtime runs it"));
        QVERIFY2(!t.exports.pytorch.empty() && (!t.activation || t.exports.onnx),
                 qPrintable(QString::fromStdString(t.name) + " has no export forms"));
    }
}

void TestCliOnnx::craftedModels()
{
    QVERIFY(writeBytes(path("mixed.csv"), [] {
        QByteArray csv = "size,colour,price\n";
        for (int i = 0; i < 30; ++i)
            csv += QByteArray::number(i % 7) + "," + QByteArray(i % 2 ? "red" : "blue") + "," +
                   QByteArray::number(i % 5 + 0.5) + "\n";
        return csv;
    }()));
    const QString mixed = path("mixed.safetensors");
    QVERIFY(run({"train", path("mixed.csv"), "--layers",
                 "dense:8,leakyrelu:0.2,dense:4,sine:3,dense", "--epochs", "1", "--out", mixed})
                .code == 0);
    // Refusals: one line naming the file and what is wrong, exit 1, nothing written.
    struct Refusal {
        const char* name;
        QString key;
        std::function<void(QJsonObject&)> change;
        QString says;
        QString pytorchSays; // what the PyTorch export's refusal says
    };
    auto layerList = [](int index, const QString& spec) {
        return [=](QJsonObject& arch) {
            QJsonArray layers = arch["layers"].toArray();
            QJsonObject l = layers[index].toObject();
            l["spec"] = spec;
            layers[index] = l;
            arch["layers"] = layers;
        };
    };
    const Refusal refusals[] = {
        {"empty-offset", "task", [](QJsonObject& t) { t["input_offset"] = QJsonArray{}; },
         "\"input_offset\" has 0 values", "task:"},
        {"list-abc", "architecture", layerList(1, "leakyrelu:abc"), "layer 2", "layer 2"},
        {"list-1e39", "architecture", layerList(3, "sine:1e39"), "layer 4", "layer 4"},
        {"list-differs", "architecture", layerList(1, "leakyrelu:0.9"), "layer 2", "layer 2"},
        {"spec-abc", "architecture",
         [](QJsonObject& a) { a["spec"] = "dense:8,leakyrelu:abc,dense:4,sine:3,dense"; }, "abc",
         "abc"},
        {"spec-1e39", "architecture",
         [](QJsonObject& a) { a["spec"] = "dense:8,leakyrelu:0.2,dense:4,sine:1e39,dense"; },
         "1e39", "1e39"},
    };
    for (const Refusal& c : refusals) {
        const QString file = path(QString(c.name) + ".safetensors");
        QVERIFY(editMetadata(mixed, file, c.key, c.change));
        for (const char* format : {"onnx", "pytorch"}) {
            const QString says = QByteArray(format) == "onnx" ? c.says : c.pytorchSays;
            const QString out = path(QString(c.name) + "-out." + format);
            const RunResult r = run({"export", file, "--to", format, "--out", out});
            QVERIFY2(
                r.code == 1 && clitest::isOneLine(r.err) && r.err.contains(says) &&
                    r.err.contains(c.name) && !QFileInfo::exists(out + "/model.py") &&
                    !QFileInfo(out).isFile(),
                qPrintable(
                    QString("%1 to %2: exit %3: %4").arg(c.name, format).arg(r.code).arg(r.err)));
        }
    }

    // An old-format table (before one-hot features and several targets): exported, checked,
    // and the PyTorch copy carries today's task fields, which model.py reads.
    const QString old = path("old-format.safetensors");
    const QString numeric = path("numeric.safetensors");
    QVERIFY(run({"train", kSamples + "/diabetes.csv", "--layers", "dense:8,tanh,dense", "--epochs",
                 "1", "--out", numeric})
                .code == 0);
    QVERIFY(editMetadata(numeric, old, "task", [](QJsonObject& t) {
        t["feature_mean"] = t.take("input_offset");
        t["feature_std"] = t.take("input_scale");
        t["target_mean"] = t.take("target_offset").toArray()[0];
        t["target_std"] = t.take("target_scale").toArray()[0];
        t.remove("feature_categories");
        t.remove("targets");
    }));
    const RunResult predicted = run({"predict", old, kSamples + "/diabetes.csv"});
    QVERIFY2(predicted.code == 0, qPrintable(predicted.err));
    const RunResult onnx = run({"export", old, "--to", "onnx", "--out", path("old.onnx")});
    QVERIFY2(onnx.code == 0, qPrintable(onnx.err));
    const QJsonObject info = checked({path("old.onnx")});
    QVERIFY2(!info.contains("error"), qPrintable(info.value("error").toString()));
    if (!info.isEmpty()) {
        const QJsonObject meta = info[path("old.onnx")]["metadata"].toObject();
        QCOMPARE(meta["targets"].toString(), QString("[\"progression\"]"));
        QVERIFY(meta["features"].toString().contains("\"bmi\""));
        QCOMPARE(meta["normalisation"].toString(), QString("zscore"));
        QVERIFY(meta.contains("input_offset") && meta.contains("target_scale"));
    }
    const RunResult torch = run({"export", old, "--to", "pytorch", "--out", path("old-pytorch")});
    QVERIFY2(torch.code == 0, qPrintable(torch.err));
    il::io::ModelInfo copied;
    QVERIFY(il::io::readModelInfo(path("old-pytorch/model.safetensors"), copied, nullptr));
    QCOMPARE(copied.task["input_offset"].toArray().size(), qsizetype(10));
    QCOMPARE(copied.task["targets"].toArray().size(), qsizetype(1));
    QVERIFY(!copied.task.contains("feature_mean"));
    // model.py reads that copy: predict_rows gives predict's first prediction (where Debian's
    // python3-torch is installed; export_check.py covers model.py otherwise).
    const QString py = python();
    QProcess p;
    p.setWorkingDirectory(path("old-pytorch"));
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(py, {"-c",
                 "import csv, sys\n"
                 "try:\n    import torch\nexcept ImportError:\n    sys.exit(77)\n"
                 "import model\n"
                 "net = model.load('model.safetensors')\n"
                 "rows = list(csv.DictReader(open(sys.argv[1])))\n"
                 "print(repr(model.predict_rows(net, rows)[0]['progression']))\n",
                 kSamples + "/diabetes.csv"});
    QVERIFY(p.waitForFinished(120000));
    const QString said = QString::fromUtf8(p.readAll()).trimmed();
    if (p.exitCode() == 77) {
        qInfo("no python3-torch: model.py on the old-format model not run");
    } else {
        QVERIFY2(p.exitCode() == 0, qPrintable(said));
        const Csv theirs = parseCsv(predicted.out);
        const double expected = theirs.rows[0][theirs.column("predicted_progression")].toDouble();
        QVERIFY2(close(said.toDouble(), expected, 2e-5, 1e-3),
                 qPrintable("model.py: " + said + ", predict " + QString::number(expected)));
    }

    // Names and labels with escape sequences: shown escaped in the summary.
    const QString esc = path("escapes.safetensors");
    QVERIFY(editMetadata(mixed, esc, "task", [](QJsonObject& t) {
        t["features"] = QJsonArray{"size\x1b[2J", "colour\x1b]0;title\x07"};
        t["feature_categories"] = QJsonArray{QJsonArray{}, QJsonArray{"blue\x1b[31m", "red"}};
        t["targets"] = QJsonArray{"price\u202e"};
        t["target"] = "price\u202e";
    }));
    const RunResult shown = run({"export", esc, "--to", "onnx", "--out", path("escapes.onnx")});
    QVERIFY2(shown.code == 0, qPrintable(shown.err));
    QVERIFY2(!shown.out.contains(QChar(0x1b)) && !shown.out.contains(QChar(0x07)) &&
                 !shown.out.contains(QChar(0x202e)) && shown.out.contains("\\x1b[31m"),
             qPrintable(shown.out));
    const QJsonObject escInfo = checked({path("escapes.onnx")});
    QVERIFY2(!escInfo.contains("error"), qPrintable(escInfo.value("error").toString()));
}

QTEST_GUILESS_MAIN(TestCliOnnx)
#include "TestCliOnnx.moc"
