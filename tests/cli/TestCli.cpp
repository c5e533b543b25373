// ironlearn-cli end to end: the real executable, run with QProcess in a temporary directory.
// Exit codes (0 ok, 1 data or model error, 2 usage error), one-line messages that name the file
// and line/column, field or tensor at fault, and the results of real training runs.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

namespace {

struct RunResult {
    int code = -1; // -1: crashed or timed out
    QString out, err;
};

QByteArray readBytes(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool writeBytes(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(bytes) == bytes.size();
}

// A message is one line: no newline before its end.
bool isOneLine(const QString& text)
{
    return !text.trimmed().isEmpty() && !text.trimmed().contains('\n');
}

} // namespace

class TestCli : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_xorModel; // a trained xor model, shared by the tests that only read it

    QString path(const QString& name) const { return m_dir.filePath(name); }

    RunResult run(const QStringList& args, int timeoutMs = 60000) const
    {
        QProcess p;
        p.setWorkingDirectory(m_dir.path());
        p.start(IRONLEARN_CLI, args);
        RunResult r;
        if (!p.waitForStarted(10000)) {
            r.err = "did not start: " + p.errorString();
            return r;
        }
        if (!p.waitForFinished(timeoutMs)) {
            p.kill();
            p.waitForFinished(5000);
            r.err = "timed out: " + args.join(' ');
            return r;
        }
        r.out = QString::fromUtf8(p.readAllStandardOutput());
        r.err = QString::fromUtf8(p.readAllStandardError());
        r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
        return r;
    }

    QJsonObject readJson(const QString& name) const
    {
        QJsonParseError e;
        const auto doc = QJsonDocument::fromJson(readBytes(path(name)), &e);
        return e.error == QJsonParseError::NoError ? doc.object() : QJsonObject();
    }

    // "trained    20 epochs, 20 steps, 0:00" from info.
    static bool trainedLine(const QString& info, qint64& epochs, qint64& steps)
    {
        const auto m = QRegularExpression(R"(^trained\s+(\d+) epochs, (\d+) steps)",
                                          QRegularExpression::MultilineOption)
                           .match(info);
        if (!m.hasMatch()) return false;
        epochs = m.captured(1).toLongLong();
        steps = m.captured(2).toLongLong();
        return true;
    }

private slots:
    void initTestCase();
    void version();
    void help();
    void trainHelp();
    void usageErrors_data();
    void usageErrors();
    void layerWidthMismatch();
    void trainXor();
    void regression();
    void irisTextTarget();
    void resume();
    void seeds();
    void badData_data();
    void badData();
    void evaluateBadData();
    void samplesAreNamedAsGiven();
    void badModel_data();
    void badModel();
    void evaluateMissingColumn();
    void backends();
    void samples();
};

void TestCli::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QVERIFY2(QFileInfo(IRONLEARN_CLI).isExecutable(), IRONLEARN_CLI);
    QVERIFY(QFile::copy(IRONLEARN_SAMPLES "/xor.csv", path("xor.csv")));
    QVERIFY(QFile::copy(IRONLEARN_SAMPLES "/iris.csv", path("iris.csv")));
    QVERIFY(QDir(m_dir.path()).mkpath("shared"));
    m_xorModel = path("shared/xor.safetensors");
    const RunResult r = run({"train", ":sample/xor.csv", "--out", m_xorModel, "--quiet"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(QFileInfo(m_xorModel).size() > 0);
}

void TestCli::version()
{
    const RunResult r = run({"--version"});
    QCOMPARE(r.code, 0);
    QVERIFY2(QRegularExpression(R"(^ironlearn-cli \d+\.\d+\.\d+\n$)").match(r.out).hasMatch(),
             qPrintable(r.out));
}

void TestCli::help()
{
    const RunResult r = run({"--help"});
    QCOMPARE(r.code, 0);
    for (const char* word :
         {"Usage: ironlearn-cli", "train", "evaluate", "info", "devices", "samples", "Exit status"})
        QVERIFY2(r.out.contains(word), word);
    // No command at all: the same text, but as a usage error on stderr.
    const RunResult none = run({});
    QCOMPARE(none.code, 2);
    QVERIFY(none.err.contains("Usage: ironlearn-cli"));
}

void TestCli::trainHelp()
{
    const RunResult r = run({"train", "--help"});
    QCOMPARE(r.code, 0);
    QVERIFY(r.out.startsWith("Usage: ironlearn-cli train DATA"));
    // Options, and the layer spec language with its items and an example.
    for (const char* word :
         {"--layers", "--preset", "--epochs", "--resume", "--metrics-json", "Layer list", "dense:N",
          "tanh", "relu", "sigmoid", "fourier", "dense:16,tanh,dense:1", "linear"})
        QVERIFY2(r.out.contains(word), word);
    QVERIFY(r.err.isEmpty());
}

void TestCli::usageErrors_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QStringList>("mentions");
    QTest::newRow("unknown command") << QStringList{"frobnicate"} << QStringList{"frobnicate"};
    QTest::newRow("unknown option")
        << QStringList{"train", ":sample/xor.csv", "--bogus-option"} << QStringList{"bogus-option"};
    QTest::newRow("train without DATA") << QStringList{"train"} << QStringList{"DATA"};
    QTest::newRow("evaluate without DATA")
        << QStringList{"evaluate", "shared/xor.safetensors"} << QStringList{"MODEL DATA"};
    QTest::newRow("info with two models") << QStringList{"info", "a", "b"} << QStringList{"MODEL"};
    QTest::newRow("--lr abc") << QStringList{"train", ":sample/xor.csv", "--lr", "abc"}
                              << QStringList{"--lr", "abc"};
    QTest::newRow("--epochs 0") << QStringList{"train", ":sample/xor.csv", "--epochs", "0"}
                                << QStringList{"--epochs"};
    QTest::newRow("--seed x") << QStringList{"train", ":sample/xor.csv", "--seed", "1.5"}
                              << QStringList{"--seed", "1.5"};
    QTest::newRow("--layers dense:abc")
        << QStringList{"train", ":sample/xor.csv", "--layers", "dense:abc"}
        << QStringList{"--layers", "dense:abc"};
    QTest::newRow("--layers unknown item")
        << QStringList{"train", ":sample/xor.csv", "--layers", "dense:8,swish,dense"}
        << QStringList{"swish"};
    QTest::newRow("--layers and --preset")
        << QStringList{"train", ":sample/xor.csv", "--layers", "dense", "--preset", "mlp"}
        << QStringList{"--layers", "--preset"};
    QTest::newRow("--preset unknown")
        << QStringList{"train", ":sample/xor.csv", "--preset", "huge"} << QStringList{"huge"};
    QTest::newRow("--backend tpu")
        << QStringList{"train", ":sample/xor.csv", "--backend", "tpu"} << QStringList{"tpu"};
    QTest::newRow("--loss on classification")
        << QStringList{"train", ":sample/xor.csv", "--loss", "mse"} << QStringList{"--loss"};
    QTest::newRow("--resume with --layers")
        << QStringList{"train", ":sample/xor.csv", "--resume", "shared/xor.safetensors", "--layers",
                       "dense"}
        << QStringList{"--layers", "resumed"};
}

void TestCli::usageErrors()
{
    QFETCH(QStringList, args);
    QFETCH(QStringList, mentions);
    const QString out = path("usage.safetensors");
    if (args.size() > 1 && args[0] == "train") args << "--out" << out;
    const RunResult r = run(args);
    QCOMPARE(r.code, 2);
    QVERIFY2(isOneLine(r.err), qPrintable(r.err));
    for (const QString& m : mentions)
        QVERIFY2(r.err.contains(m), qPrintable(m + " not in: " + r.err));
    QVERIFY(r.out.isEmpty());
    QVERIFY(!QFile::exists(out));
}

void TestCli::layerWidthMismatch()
{
    // xor has a binary target: one output. A last dense layer of 3 cannot fit.
    const QString out = path("mismatch.safetensors");
    const RunResult r =
        run({"train", ":sample/xor.csv", "--layers", "dense:4,tanh,dense:3", "--out", out});
    QVERIFY2(r.code == 1 || r.code == 2, qPrintable(QString::number(r.code)));
    QVERIFY2(isOneLine(r.err), qPrintable(r.err));
    const qsizetype at = r.err.indexOf("dense:3");
    QVERIFY2(at >= 0, qPrintable(r.err)); // the layer
    const QString after = r.err.mid(at + 7);
    QVERIFY2(QRegularExpression(R"(\b3\b)").match(after).hasMatch(), qPrintable(r.err));
    QVERIFY2(QRegularExpression(R"(\b1\b)").match(after).hasMatch(), qPrintable(r.err));
    QVERIFY(!QFile::exists(out));
    // The same list with the right width trains.
    const RunResult ok = run({"train", ":sample/xor.csv", "--layers", "dense:4,tanh,dense:1",
                              "--epochs", "5", "--quiet", "--out", out});
    QVERIFY2(ok.code == 0, qPrintable(ok.err));
    QVERIFY(QFile::exists(out));
}

void TestCli::trainXor()
{
    QDir(m_dir.path()).remove("xor.safetensors");
    const RunResult r = run({"train", ":sample/xor.csv", "--metrics-json", "m.json", "--quiet"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.err.isEmpty(), qPrintable(r.err)); // --quiet
    // Saved next to the working directory under the sample's name.
    QVERIFY(r.out.contains("saved model to xor.safetensors"));
    QVERIFY(QFileInfo(path("xor.safetensors")).size() > 0);

    const QJsonObject m = readJson("m.json");
    for (const char* key :
         {"task", "steps", "epochs", "seconds", "train_loss", "val_loss", "accuracy"})
        QVERIFY2(m.contains(key), key);
    QVERIFY(!m.contains("r2"));
    QCOMPARE(m["task"].toString(), QString("tabular"));
    QCOMPARE(m["accuracy"].toDouble(), 1.0);
    QVERIFY(m["steps"].toInteger() > 0);
    QVERIFY(m["epochs"].toDouble() > 0);
    QVERIFY(m["seconds"].toDouble() >= 0);
    QVERIFY(m["train_loss"].toDouble(-1) >= 0 && m["train_loss"].toDouble() < 0.1);

    // evaluate: every row of a small file, as Iron Learn printed it, in file order.
    const RunResult e = run({"evaluate", "xor.safetensors", "xor.csv"});
    QVERIFY2(e.code == 0, qPrintable(e.err));
    const QRegularExpression line(R"(^Predicted: (\d+\.\d{4}), Actual: ([01]\.0000), ✓$)",
                                  QRegularExpression::MultilineOption);
    auto it = line.globalMatch(e.out);
    const double actual[] = {0, 1, 1, 0};
    int n = 0;
    while (it.hasNext()) {
        const auto match = it.next();
        QVERIFY(n < 4);
        QCOMPARE(match.captured(2).toDouble(), actual[n]);
        QVERIFY(std::fabs(match.captured(1).toDouble() - actual[n]) < 0.5);
        ++n;
    }
    QCOMPARE(n, 4);
    QVERIFY(!e.out.contains("✗"));
    QVERIFY(e.out.contains("accuracy 100.00% (4 rows)"));

    // info: the layers with their parameter counts, the total, and the training so far.
    const RunResult i = run({"info", "xor.safetensors"});
    QVERIFY2(i.code == 0, qPrintable(i.err));
    const char* rows[] = {R"(^\s*1\s+dense:32\s+n x 32\s+96$)",   R"(^\s*2\s+tanh\s+n x 32\s+0$)",
                          R"(^\s*3\s+dense:32\s+n x 32\s+1056$)", R"(^\s*4\s+tanh\s+n x 32\s+0$)",
                          R"(^\s*5\s+dense:1\s+n x 1\s+33$)",     R"(^\s*total\s+1185$)"};
    for (const char* row : rows)
        QVERIFY2(
            QRegularExpression(row, QRegularExpression::MultilineOption).match(i.out).hasMatch(),
            row);
    QVERIFY(i.out.contains("binary classification"));
    qint64 epochs = 0, steps = 0;
    QVERIFY(trainedLine(i.out, epochs, steps));
    QCOMPARE(steps, m["steps"].toInteger());
    QCOMPARE(static_cast<double>(epochs), m["epochs"].toDouble());
}

void TestCli::regression()
{
    // y = 3 x1 - 2 x2 + 0.5 over 200 rows: a linear model fits it exactly.
    QByteArray csv = "x1,x2,y\n";
    QRandomGenerator rng(42);
    for (int i = 0; i < 200; ++i) {
        const double x1 = rng.bounded(4.0) - 2, x2 = rng.bounded(4.0) - 2;
        csv += QByteArray::number(x1, 'f', 5) + "," + QByteArray::number(x2, 'f', 5) + "," +
               QByteArray::number(3 * x1 - 2 * x2 + 0.5, 'f', 5) + "\n";
    }
    QVERIFY(writeBytes(path("linear.csv"), csv));
    const RunResult r = run({"train", "linear.csv", "--preset", "linear", "--metrics-json",
                             "r.json", "--out", "linear.safetensors", "--quiet"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QJsonObject m = readJson("r.json");
    for (const char* key : {"mse", "rmse", "mae", "r2", "steps", "train_loss", "val_loss"})
        QVERIFY2(m.contains(key), key);
    QVERIFY(!m.contains("accuracy"));
    QVERIFY2(m["r2"].toDouble() > 0.99, qPrintable(QString::number(m["r2"].toDouble())));
    QVERIFY(m["r2"].toDouble() <= 1.0);
    const double mse = m["mse"].toDouble(-1), rmse = m["rmse"].toDouble(-1);
    QVERIFY(mse >= 0 && rmse >= 0);
    QVERIFY(std::fabs(rmse - std::sqrt(mse)) <= 1e-6 + 1e-4 * rmse);
    QVERIFY(m["mae"].toDouble(-1) >= 0 && m["mae"].toDouble() <= rmse + 1e-9);
    QCOMPARE(m["metrics_on"].toString(), QString("validation"));
    QCOMPARE(m["rows"].toInteger(), qint64(40)); // the default 20% of 200

    // The linear preset: one dense layer, 2 weights and a bias.
    const RunResult i = run({"info", "linear.safetensors"});
    QVERIFY2(i.code == 0, qPrintable(i.err));
    QVERIFY(i.out.contains("regression"));
    QVERIFY2(
        QRegularExpression(R"(^\s*1\s+dense:1\s+n x 1\s+3$)", QRegularExpression::MultilineOption)
            .match(i.out)
            .hasMatch(),
        qPrintable(i.out));
    QVERIFY(QRegularExpression(R"(^\s*total\s+3$)", QRegularExpression::MultilineOption)
                .match(i.out)
                .hasMatch());
}

void TestCli::irisTextTarget()
{
    const RunResult r = run({"train", "iris.csv", "--metrics-json", "iris.json", "--out",
                             "iris.safetensors", "--quiet"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QJsonObject m = readJson("iris.json");
    QVERIFY(m.contains("accuracy"));
    QCOMPARE(m["metrics_on"].toString(), QString("validation"));
    QCOMPARE(m["rows"].toInteger(), qint64(30));
    QVERIFY2(m["accuracy"].toDouble() >= 0.9,
             qPrintable(QString::number(m["accuracy"].toDouble())));
    QVERIFY(m["accuracy"].toDouble() <= 1.0);

    const RunResult i = run({"info", "iris.safetensors"});
    QVERIFY2(i.code == 0, qPrintable(i.err));
    QVERIFY2(i.out.contains("classes: setosa, versicolor, virginica"), qPrintable(i.out));
    QVERIFY(i.out.contains("n x 3")); // one output per class

    // A few rows, one of each class: evaluate names the labels.
    const QStringList lines = QString::fromUtf8(readBytes(path("iris.csv"))).split('\n');
    QVERIFY(lines.size() > 150);
    QVERIFY(writeBytes(
        path("iris3.csv"),
        (lines[0] + '\n' + lines[1] + '\n' + lines[51] + '\n' + lines[101] + '\n').toUtf8()));
    const RunResult e = run({"evaluate", "iris.safetensors", "iris3.csv"});
    QVERIFY2(e.code == 0, qPrintable(e.err));
    for (const char* label : {"setosa", "versicolor", "virginica"})
        QVERIFY2(QRegularExpression(
                     QString(R"(^Predicted: \w+ \(p=[01]\.\d{4}\), Actual: %1, )").arg(label),
                     QRegularExpression::MultilineOption)
                     .match(e.out)
                     .hasMatch(),
                 qPrintable(e.out));
}

void TestCli::resume()
{
    const RunResult a = run({"train", ":sample/xor.csv", "--epochs", "10", "--out",
                             "resumed.safetensors", "--metrics-json", "a.json", "--quiet"});
    QVERIFY2(a.code == 0, qPrintable(a.err));
    const QJsonObject ma = readJson("a.json");
    QCOMPARE(ma["epochs"].toDouble(), 10.0);
    const qint64 stepsA = ma["steps"].toInteger();
    QVERIFY(stepsA > 0);

    // Continue to 20 epochs in total; the model file is updated in place.
    const RunResult b = run({"train", ":sample/xor.csv", "--resume", "resumed.safetensors",
                             "--epochs", "20", "--metrics-json", "b.json", "--quiet"});
    QVERIFY2(b.code == 0, qPrintable(b.err));
    const auto done = QRegularExpression(R"(trained (\d+) steps)").match(b.out);
    QVERIFY2(done.hasMatch(), qPrintable(b.out));
    const qint64 stepsThisRun = done.captured(1).toLongLong();
    QVERIFY(stepsThisRun > 0);
    const QJsonObject mb = readJson("b.json");
    QCOMPARE(mb["epochs"].toDouble(), 20.0);
    QCOMPARE(mb["steps"].toInteger(), stepsA + stepsThisRun);
    QCOMPARE(mb["steps"].toInteger(), 2 * stepsA); // xor: one step per epoch either way

    const RunResult i = run({"info", "resumed.safetensors"});
    QVERIFY2(i.code == 0, qPrintable(i.err));
    qint64 epochs = 0, steps = 0;
    QVERIFY(trainedLine(i.out, epochs, steps));
    QCOMPARE(epochs, qint64(20));
    QCOMPARE(steps, mb["steps"].toInteger());
}

void TestCli::seeds()
{
    auto trainLoss = [this](const QString& seed, const QString& json) {
        const RunResult r = run({"train", ":sample/xor.csv", "--seed", seed, "--epochs", "50",
                                 "--out", "seed.safetensors", "--metrics-json", json, "--quiet"});
        if (r.code != 0) qWarning("%s", qPrintable(r.err));
        return r.code == 0 ? readJson(json)["train_loss"].toDouble(-1) : -1.0;
    };
    const double a = trainLoss("5", "s5a.json");
    const double b = trainLoss("5", "s5b.json");
    const double c = trainLoss("6", "s6.json");
    QVERIFY(a > 0 && b > 0 && c > 0);
    QCOMPARE(a, b); // exact: the same seed repeats the run
    QVERIFY2(a != c, qPrintable(QString::number(a, 'g', 17)));
}

void TestCli::badData_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<int>("make"); // 0 write content, 1 nothing, 2 a directory
    QTest::addColumn<QStringList>("mentions");

    QTest::newRow("empty") << "empty.csv" << QByteArray() << 0 << QStringList{"empty.csv"};
    QTest::newRow("header only") << "header.csv" << QByteArray("height,weight,y\n") << 0
                                 << QStringList{"header.csv"};
    QTest::newRow("ragged row") << "ragged.csv"
                                << QByteArray("height,weight,y\n1,2,3\n4,5\n6,7,8\n") << 0
                                << QStringList{"ragged.csv:3"};
    QTest::newRow("non-numeric cell")
        << "text.csv" << QByteArray("height,weight,y\n1,2,3\n4,5,6\n7,heavy,9\n") << 0
        << QStringList{"text.csv:4", "weight", "heavy"};
    QTest::newRow("NaN cell") << "nan.csv" << QByteArray("height,weight,y\n1,2,3\n4,NaN,6\n") << 0
                              << QStringList{"nan.csv:3", "weight"};
    QTest::newRow("NaN target") << "nantarget.csv"
                                << QByteArray("height,weight,y\n1,2,3\n4,5,6\n7,8,NaN\n") << 0
                                << QStringList{"nantarget.csv:4", "\"y\""};
    QTest::newRow("1e60") << "huge.csv" << QByteArray("height,weight,y\n1,2,3\n4,5,6\n1e60,8,9\n")
                          << 0 << QStringList{"huge.csv:4", "height", "1e60"};
    QTest::newRow("unterminated quote")
        << "quote.csv" << QByteArray("height,weight,y\n1,2,3\n\"4,5,6\n") << 0
        << QStringList{"quote.csv:3"};
    QTest::newRow("one column") << "onecol.csv" << QByteArray("y\n1\n2\n3\n") << 0
                                << QStringList{"onecol.csv"};

    QByteArray garbage(4096, '\0');
    QRandomGenerator rng(7);
    for (qsizetype i = 0; i < garbage.size(); ++i)
        garbage[i] = static_cast<char>(i % 97 == 0 ? 0 : rng.bounded(256));
    QTest::newRow("binary garbage") << "garbage.csv" << garbage << 0 << QStringList{"garbage.csv"};

    QByteArray longLine = "a,b,y\n";
    while (longLine.size() < 2 * 1024 * 1024)
        longLine += "1234567,";
    longLine += "1\n";
    QTest::newRow("2 MB line") << "long.csv" << longLine << 0 << QStringList{"long.csv:2"};
    QByteArray longFirst = longLine.mid(6);
    QTest::newRow("2 MB first line") << "long1.csv" << longFirst << 0 << QStringList{"long1.csv:1"};
    QTest::newRow("blank lines") << "blank.csv" << QByteArray("\n\n \n\r\n\n") << 0
                                 << QStringList{"blank.csv"};
    QTest::newRow("nonexistent") << "missing.csv" << QByteArray() << 1
                                 << QStringList{"missing.csv"};
    QTest::newRow("directory") << "folder.csv" << QByteArray() << 2 << QStringList{"folder.csv"};
}

void TestCli::badData()
{
    QFETCH(QString, file);
    QFETCH(QByteArray, content);
    QFETCH(int, make);
    QFETCH(QStringList, mentions);
    if (make == 0)
        QVERIFY(writeBytes(path(file), content));
    else if (make == 2)
        QVERIFY(QDir(m_dir.path()).mkpath(file));
    QCOMPARE(QFileInfo::exists(path(file)), make != 1);

    const QString out = path("bad.safetensors");
    const RunResult r = run({"train", file, "--out", out, "--quiet"});
    QCOMPARE(r.code, 1);
    QVERIFY2(isOneLine(r.err), qPrintable(r.err.left(300)));
    QVERIFY(r.err.size() < 500);
    for (const QString& m : mentions)
        QVERIFY2(r.err.contains(m), qPrintable(m + " not in: " + r.err));
    QVERIFY(r.out.isEmpty());
    QVERIFY(!QFile::exists(out));
}

void TestCli::evaluateBadData()
{
    // The model's own columns, but a bad cell: evaluate names the line and the column.
    QVERIFY(writeBytes(path("evalbad.csv"), "a,b,a_xor_b\n0,0,0\n1,one,1\n"));
    const RunResult r = run({"evaluate", m_xorModel, "evalbad.csv"});
    QCOMPARE(r.code, 1);
    QVERIFY2(isOneLine(r.err), qPrintable(r.err));
    QVERIFY2(r.err.contains("evalbad.csv:3") && r.err.contains("\"b\""), qPrintable(r.err));
    QVERIFY(r.out.isEmpty());

    // A label the model never saw.
    QVERIFY(writeBytes(path("evalclass.csv"), "a,b,a_xor_b\n0,0,0\n1,1,7\n"));
    const RunResult c = run({"evaluate", m_xorModel, "evalclass.csv"});
    QCOMPARE(c.code, 1);
    QVERIFY2(isOneLine(c.err), qPrintable(c.err));
    QVERIFY2(c.err.contains("evalclass.csv:3") && c.err.contains("7"), qPrintable(c.err));
}

void TestCli::samplesAreNamedAsGiven()
{
    // Messages about a bundled sample name it as the user wrote it, not by its resource path.
    const RunResult r =
        run({"train", ":sample/xor.csv", "--target", "nosuch", "--out", path("named.safetensors")});
    QCOMPARE(r.code, 1);
    QVERIFY2(isOneLine(r.err), qPrintable(r.err));
    QVERIFY2(r.err.contains(":sample/xor.csv") && r.err.contains("nosuch"), qPrintable(r.err));
    QVERIFY2(!r.err.contains(":/"), qPrintable(r.err));

    const RunResult u = run({"train", ":sample/nosuch.csv", "--out", path("named.safetensors")});
    QCOMPARE(u.code, 1);
    QVERIFY2(u.err.contains("nosuch.csv"), qPrintable(u.err));
    QVERIFY(!QFile::exists(path("named.safetensors")));
}

void TestCli::badModel_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<QString>("mentions"); // besides the file name

    const QByteArray good = readBytes(m_xorModel);
    QVERIFY(good.size() > 1000);
    QTest::newRow("truncated header") << "trunc-header.safetensors" << good.left(200) << "";
    QTest::newRow("truncated tensors")
        << "trunc-data.safetensors" << good.left(good.size() - 100) << "";
    QTest::newRow("8 bytes") << "eight.safetensors" << good.left(8) << "";
    QTest::newRow("empty") << "empty.safetensors" << QByteArray() << "";
    QByteArray garbage(5000, '\0');
    QRandomGenerator rng(11);
    for (char& ch : garbage)
        ch = static_cast<char>(rng.bounded(256));
    QTest::newRow("garbage") << "garbage.safetensors" << garbage << "";
    QTest::newRow("text") << "text.safetensors" << QByteArray("this is not a model\n") << "";

    // A valid safetensors file that is not an Iron Learn model.
    const QByteArray header = R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
    QByteArray plain(8, '\0');
    for (int i = 0; i < 8; ++i)
        plain[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
    plain += header + QByteArray(4, '\0');
    QTest::newRow("plain safetensors") << "plain.safetensors" << plain << "format";

    // The header names a tensor the architecture does not have: the error names the tensor.
    QByteArray renamed = good;
    const qsizetype at = renamed.indexOf("\"layers.2.weight\"");
    QVERIFY(at > 0);
    renamed.replace(at, 17, "\"layers.9.weight\"");
    QTest::newRow("tensor renamed") << "renamed.safetensors" << renamed << "layers.2.weight";
}

void TestCli::badModel()
{
    QFETCH(QString, file);
    QFETCH(QByteArray, content);
    QFETCH(QString, mentions);
    QVERIFY(writeBytes(path(file), content));
    const QStringList commands[] = {
        {"info", file},
        {"evaluate", file, "xor.csv"},
        {"train", "xor.csv", "--resume", file, "--epochs", "3000", "--quiet"},
    };
    for (const QStringList& args : commands) {
        const RunResult r = run(args);
        QCOMPARE(r.code, 1);
        QVERIFY2(isOneLine(r.err), qPrintable(args[0] + ": " + r.err));
        QVERIFY2(r.err.contains(file), qPrintable(r.err));
        if (!mentions.isEmpty()) QVERIFY2(r.err.contains(mentions), qPrintable(r.err));
        QVERIFY2(r.out.isEmpty(), qPrintable(r.out));
    }
    QCOMPARE(readBytes(path(file)), content); // --resume left the broken file as it was
}

void TestCli::evaluateMissingColumn()
{
    QVERIFY(writeBytes(path("nob.csv"), "a,a_xor_b\n0,0\n1,1\n"));
    const RunResult r = run({"evaluate", m_xorModel, "nob.csv"});
    QCOMPARE(r.code, 1);
    QVERIFY2(isOneLine(r.err), qPrintable(r.err));
    QVERIFY2(r.err.contains("nob.csv") && r.err.contains("\"b\""), qPrintable(r.err));
    QVERIFY(r.out.isEmpty());

    // The features but no target: nothing to compare with; the message names the target.
    QVERIFY(writeBytes(path("notarget.csv"), "a,b\n0,0\n1,1\n"));
    const RunResult t = run({"evaluate", m_xorModel, "notarget.csv"});
    QCOMPARE(t.code, 1);
    QVERIFY2(t.err.contains("notarget.csv") && t.err.contains("a_xor_b"), qPrintable(t.err));

    // Columns in another order are found by name.
    QVERIFY(writeBytes(path("swapped.csv"), "a_xor_b,b,a\n0,0,0\n1,1,0\n1,0,1\n0,1,1\n"));
    const RunResult s = run({"evaluate", m_xorModel, "swapped.csv"});
    QVERIFY2(s.code == 0, qPrintable(s.err));
    QVERIFY2(s.out.contains("accuracy 100.00% (4 rows)"), qPrintable(s.out));
}

void TestCli::backends()
{
    const QString out = path("cuda.safetensors");
    const RunResult r = run({"train", ":sample/xor.csv", "--backend", "cuda", "--out", out});
    QCOMPARE(r.code, 1);
    QVERIFY2(isOneLine(r.err), qPrintable(r.err));
    QVERIFY2(r.err.contains("CUDA") && r.err.contains("unavailable", Qt::CaseInsensitive),
             qPrintable(r.err));
    QVERIFY(!QFile::exists(out));
    const RunResult e = run({"evaluate", m_xorModel, "xor.csv", "--backend", "cuda"});
    QCOMPARE(e.code, 1);
    QVERIFY(e.err.contains("CUDA"));

    const RunResult d = run({"devices"});
    QCOMPARE(d.code, 0);
    QVERIFY2(QRegularExpression(R"(^cpu\s+available\s+\S)", QRegularExpression::MultilineOption)
                 .match(d.out)
                 .hasMatch(),
             qPrintable(d.out));
    QVERIFY(QRegularExpression(R"(^cuda\s+unavailable)", QRegularExpression::MultilineOption)
                .match(d.out)
                .hasMatch());
}

void TestCli::samples()
{
    const RunResult r = run({"samples"});
    QCOMPARE(r.code, 0);
    for (const char* name : {":sample/xor.csv", ":sample/iris.csv", ":sample/diabetes.csv"})
        QVERIFY2(r.out.split('\n').contains(name), name);
}

QTEST_GUILESS_MAIN(TestCli)
#include "TestCli.moc"
