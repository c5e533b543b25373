// ironlearn-cli end to end: the real executable, run with QProcess in a temporary directory.
// Exit codes (0 ok, 1 data or model error, 2 usage error), one-line messages that name the file
// and line/column, field or tensor at fault, and the results of real training runs.
#include "CliRunner.h"

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

using clitest::isOneLine;
using clitest::readBytes;
using clitest::writeBytes;

} // namespace

class TestCli : public CliTestCase {
    Q_OBJECT

public:
    TestCli() { m_validationSplit = true; }

private:
    QString m_xorModel; // a trained xor model, shared by the tests that only read it

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
    void tableBaselines();
    void predict();
    void predictBadInput_data();
    void predictBadInput();
    void tableOptions();
    void jsonDataset();
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
    void infoOfAStudioModel();
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
    for (const char* word : {"Usage: ironlearn-cli", "train", "evaluate", "predict", "info",
                             "devices", "samples", "Exit status"})
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
          "tanh", "relu", "sigmoid", "fourier", "dense:16,tanh,dense:1", "linear",
          // Every task's presets, names included.
          "tabular, image or names", "fourier-relu", "  names    mlp (default): embedding:VOCAB:16",
          "small: embedding:VOCAB:10", "large: embedding:VOCAB:24"})
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
    QTest::newRow("--context on a table")
        << QStringList{"train", ":sample/xor.csv", "--context", "4"}
        << QStringList{"--context applies to names, not to tables (:sample/xor.csv)"};
    QTest::newRow("--missing on a picture")
        << QStringList{"train", ":sample/camera.png", "--missing", "mean"}
        << QStringList{"--missing applies to tables, not to images"};
    QTest::newRow("--layers unknown item")
        << QStringList{"train", ":sample/xor.csv", "--layers", "dense:8,squiggle,dense"}
        << QStringList{"squiggle"};
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
    const char* rows[] = {R"(^\s*1\s+dense:32\s+n x 32\s+96$)",
                          R"(^\s*2\s+tanh\s+n x 32\s+0$)",
                          R"(^\s*3\s+dense:32\s+n x 32\s+1056$)",
                          R"(^\s*4\s+tanh\s+n x 32\s+0$)",
                          R"(^\s*5\s+dense:1\s+n x 1\s+33$)",
                          R"(^\s*6\s+skip\s+n x 1\s+2$)",
                          R"(^\s*total\s+1187$)"};
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

void TestCli::tableBaselines()
{
    // 400 rows, 8% of them "spam" (x > 0.92, a line logistic regression finds); one epoch of
    // training leaves a network without the linear start (mlp) behind it.
    QByteArray csv = "x,noise,label\n";
    QRandomGenerator rng(7);
    for (int i = 0; i < 400; ++i) {
        const double x = rng.generateDouble();
        csv += QByteArray::number(x, 'f', 5) + "," +
               QByteArray::number(rng.generateDouble(), 'f', 5) + (x > 0.92 ? ",spam\n" : ",ham\n");
    }
    QVERIFY(writeBytes(path("spam.csv"), csv));
    const RunResult r =
        run({"train", "spam.csv", "--test-split", "0.2", "--epochs", "1", "--preset", "mlp",
             "--metrics-json", "spam.json", "--out", "spam.safetensors"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    // At load, the rare class with what always answering the other scores.
    QVERIFY2(QRegularExpression(R"(^note: class 'spam' is \d+\.\d% of the training rows: always )"
                                R"(answering 'ham' scores \d+\.\d% accuracy; look at balanced )"
                                R"(accuracy, or weight the classes \(--class-weight balanced\)$)",
                                QRegularExpression::MultilineOption)
                 .match(r.err)
                 .hasMatch(),
             qPrintable(r.err));
    QVERIFY2(QRegularExpression(R"(^validation: accuracy [\d.]+% \(80 rows\), balanced accuracy )",
                                QRegularExpression::MultilineOption)
                 .match(r.out)
                 .hasMatch(),
             qPrintable(r.out));
    QVERIFY2(QRegularExpression(R"(^baselines on validation: majority class \(always 'ham'\) )"
                                R"(accuracy [\d.]+% \(balanced 50\.00%\), logistic regression )"
                                R"(accuracy [\d.]+% \(balanced [\d.]+%\); the network accuracy )",
                                QRegularExpression::MultilineOption)
                 .match(r.out)
                 .hasMatch(),
             qPrintable(r.out));
    QVERIFY2(r.out.contains("\nbaselines on test: majority class (always 'ham')"),
             qPrintable(r.out));
    QVERIFY2(r.out.contains("\nthe network does not beat logistic regression here: "),
             qPrintable(r.out));
    // --metrics-json: each baseline with the network's metric keys, for the test rows too.
    const QJsonObject m = readJson("spam.json");
    QVERIFY(m.contains("balanced_accuracy"));
    const QJsonObject b = m["baselines"].toObject();
    for (const char* part : {"majority_class", "logistic_regression"})
        for (const char* key :
             {"accuracy", "balanced_accuracy", "macro_f1", "per_class", "confusion_matrix", "rows"})
            QVERIFY2(b[part].toObject().contains(key), qPrintable(QString(part) + "." + key));
    QCOMPARE(b["majority_class"]["class"].toString(), QString("ham"));
    QCOMPARE(b["majority_class"]["balanced_accuracy"].toDouble(), 0.5);
    QVERIFY(b["logistic_regression"]["balanced_accuracy"].toDouble() > 0.6); // 0.75 here
    QCOMPARE(b["network_beats_linear_model"].toBool(true), false);
    QCOMPARE(b["training_rows"].toInteger(), qint64(240));
    QVERIFY(m["test"]["baselines"]["logistic_regression"].isObject());
    QCOMPARE(m["test"]["baselines"]["logistic_regression"]["rows"].toInteger(), qint64(80));

    // evaluate: the baselines of the model's own training rows, measured on the file.
    const RunResult e =
        run({"evaluate", "spam.safetensors", "spam.csv", "--metrics-json", "e.json"});
    QVERIFY2(e.code == 0, qPrintable(e.err));
    QVERIFY2(e.out.contains("\nbaselines on spam.csv: majority class (always 'ham')"),
             qPrintable(e.out));
    const QJsonObject j = readJson("e.json");
    QCOMPARE(j["baselines"]["logistic_regression"]["rows"].toInteger(), qint64(400));
    QCOMPARE(j["baselines"]["training_rows"].toInteger(), qint64(240));

    // Regression: the mean and least squares, in the file's units.
    QByteArray plane = "x1,x2,y\n";
    for (int i = 0; i < 100; ++i) {
        const double x1 = rng.bounded(4.0) - 2, x2 = rng.bounded(4.0) - 2;
        plane += QByteArray::number(x1, 'f', 5) + "," + QByteArray::number(x2, 'f', 5) + "," +
                 QByteArray::number(3 * x1 - 2 * x2 + 0.5, 'f', 5) + "\n";
    }
    QVERIFY(writeBytes(path("plane.csv"), plane));
    const RunResult g = run({"train", "plane.csv", "--steps", "1", "--preset", "mlp",
                             "--metrics-json", "g.json", "--out", "g.safetensors", "--quiet"});
    QVERIFY2(g.code == 0, qPrintable(g.err));
    QVERIFY2(QRegularExpression(R"(^baselines on validation: the mean MSE [\d.e+-]+ \(R2 )"
                                R"([\d.-]+\), linear regression \(least squares\) MSE )",
                                QRegularExpression::MultilineOption)
                 .match(g.out)
                 .hasMatch(),
             qPrintable(g.out));
    QVERIFY2(g.out.contains("\nthe network does not beat linear regression here: MSE "),
             qPrintable(g.out));
    const QJsonObject k = readJson("g.json")["baselines"].toObject();
    for (const char* part : {"mean", "linear_regression"})
        for (const char* key : {"mse", "rmse", "mae", "r2", "rows"})
            QVERIFY2(k[part].toObject().contains(key), qPrintable(QString(part) + "." + key));
    QVERIFY(k["linear_regression"]["r2"].toDouble() > 0.9999); // y = 3 x1 - 2 x2 + 0.5
}

void TestCli::predict()
{
    const RunResult t =
        run({"train", "iris.csv", "--epochs", "60", "--out", "pi.safetensors", "--quiet"});
    QVERIFY2(t.code == 0, qPrintable(t.err));
    // Every input row as written, then the predicted class and one probability per class.
    const RunResult r = run({"predict", "pi.safetensors", "iris.csv", "--out", "pred.csv"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("predicted 150 rows"), qPrintable(r.out));
    const QStringList in = QString::fromUtf8(readBytes(path("iris.csv"))).trimmed().split('\n');
    const QStringList out = QString::fromUtf8(readBytes(path("pred.csv"))).trimmed().split('\n');
    QCOMPARE(out.size(), in.size());
    QCOMPARE(out[0], in[0].trimmed() + ",predicted_species,p_setosa,p_versicolor,p_virginica");
    int right = 0;
    for (int i = 1; i < out.size(); ++i) {
        QVERIFY2(out[i].startsWith(in[i].trimmed() + ","), qPrintable(out[i]));
        const QStringList f = out[i].split(',');
        QCOMPARE(f.size(), 9);
        const double sum = f[6].toDouble() + f[7].toDouble() + f[8].toDouble();
        QVERIFY2(std::fabs(sum - 1.0) < 1e-4, qPrintable(out[i]));
        right += f[5] == f[4];
    }
    QVERIFY2(right >= 130, qPrintable(QString::number(right)));

    // No target column: the features are enough; without --out the rows go to stdout.
    QStringList features;
    for (const QString& line : in)
        features << line.section(',', 0, 3);
    QVERIFY(writeBytes(path("features.csv"), (features.join('\n') + '\n').toUtf8()));
    const RunResult s = run({"predict", "pi.safetensors", "features.csv"});
    QVERIFY2(s.code == 0, qPrintable(s.err));
    QCOMPARE(s.out.trimmed().split('\n').size(), 151);
    QVERIFY(s.out.startsWith(features[0] + ",predicted_species,p_setosa"));

    // Regression: predictions in the file's units (y = 3 x1 - 2 x2 + 0.5 fits exactly).
    QByteArray csv = "x1,x2,y\n";
    for (int i = 0; i < 60; ++i)
        csv += QByteArray::number(i % 7 - 3) + "," + QByteArray::number(i % 5 * 10) + "," +
               QByteArray::number(3 * (i % 7 - 3) - 2 * (i % 5 * 10) + 0.5) + "\n";
    QVERIFY(writeBytes(path("lin.csv"), csv));
    // No weight decay: the tables' default (AdamW's decoupled decay, lr * 0.3 of each weight
    // a step) would pull an exact fit toward zero at this rate.
    const RunResult l = run({"train", "lin.csv", "--preset", "linear", "--epochs", "600", "--lr",
                             "0.05", "--weight-decay", "0", "--out", "lin.safetensors", "--quiet"});
    QVERIFY2(l.code == 0, qPrintable(l.err));
    QVERIFY(writeBytes(path("lin-new.csv"), "x2;x1\n10;2\n-20;0\n"));
    const RunResult p = run({"predict", "lin.safetensors", "lin-new.csv"});
    QVERIFY2(p.code == 0, qPrintable(p.err));
    const QStringList rows = p.out.trimmed().split('\n');
    QCOMPARE(rows.size(), 3);
    QCOMPARE(rows[0], QString("x2;x1;predicted_y"));
    QVERIFY2(std::fabs(rows[1].section(';', 2).toDouble() - (6 - 20 + 0.5)) < 0.2,
             qPrintable(rows[1]));
    QVERIFY2(std::fabs(rows[2].section(';', 2).toDouble() - (0 + 40 + 0.5)) < 0.4,
             qPrintable(rows[2]));
}

void TestCli::predictBadInput_data()
{
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<QStringList>("extra");
    QTest::addColumn<int>("code");
    QTest::addColumn<QStringList>("mentions");
    QTest::newRow("missing column")
        << QByteArray("x1\n1\n") << QStringList{} << 1 << QStringList{"pbad.csv", "\"x2\""};
    QTest::newRow("missing value") << QByteArray("x1,x2\n1,2\n3,\n") << QStringList{} << 1
                                   << QStringList{"pbad.csv:3", "\"x2\"", "--missing drop"};
    QTest::newRow("text cell") << QByteArray("x1,x2\n1,2\n3,4\nfive,6\n") << QStringList{} << 1
                               << QStringList{"pbad.csv:4", "\"five\""};
    QTest::newRow("empty") << QByteArray() << QStringList{} << 1 << QStringList{"pbad.csv"};
    QTest::newRow("bad --missing") << QByteArray("x1,x2\n1,2\n") << QStringList{"--missing", "x"}
                                   << 2 << QStringList{"--missing"};
    QTest::newRow("output over input")
        << QByteArray("x1,x2\n1,2\n") << QStringList{"--out", "pbad.csv"} << 2
        << QStringList{"is the input file"};
}

void TestCli::predictBadInput()
{
    QFETCH(QByteArray, content);
    QFETCH(QStringList, extra);
    QFETCH(int, code);
    QFETCH(QStringList, mentions);
    QVERIFY(writeBytes(path("pbad.csv"), content));
    const QString out = path("pbad-out.csv");
    QStringList args{"predict", "lin.safetensors", "pbad.csv"};
    args << (extra.contains("--out") ? extra : extra + QStringList{"--out", out});
    const RunResult r = run(args);
    QCOMPARE(r.code, code);
    QVERIFY2(isOneLine(r.err), qPrintable(r.err));
    for (const QString& m : mentions)
        QVERIFY2(r.err.contains(m), qPrintable(m + " not in: " + r.err));
    QVERIFY(r.out.isEmpty());
    QVERIFY(!QFile::exists(out));
    QCOMPARE(readBytes(path("pbad.csv")), content);
    // Dropping the rows with missing values predicts the others, and says which were left out.
    if (QTest::currentDataTag() == QString("missing value")) {
        const RunResult d = run({"predict", "lin.safetensors", "pbad.csv", "--missing", "drop"});
        QVERIFY2(d.code == 0, qPrintable(d.err));
        QCOMPARE(d.out.trimmed().split('\n').size(), 2);
        QVERIFY2(d.err.contains("line 3"), qPrintable(d.err));
    }
}

void TestCli::tableOptions()
{
    // A text feature (one-hot), an ignored id column, gaps dropped, min-max, a test split.
    QByteArray csv = "id,colour,size,label\n";
    for (int i = 0; i < 200; ++i)
        csv += "row" + QByteArray::number(i) + "," + (i % 2 ? "red" : "blue") + "," +
               (i % 37 == 5 ? QByteArray("NA") : QByteArray::number(i % 10)) + "," +
               (i % 2 ? "warm" : "cold") + "\n";
    QVERIFY(writeBytes(path("opts.csv"), csv));
    const RunResult r = run({"train", "opts.csv", "--ignore", "id", "--missing", "drop",
                             "--normalise", "minmax", "--test-split", "0.25", "--epochs", "30",
                             "--metrics-json", "opts.json", "--out", "opts.safetensors"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains("dropped 6 rows with missing values"), qPrintable(r.err));
    QVERIFY2(r.err.contains("2 features (3 inputs after one-hot encoding)"), qPrintable(r.err));
    QVERIFY2(r.out.contains("\ntest: accuracy"), qPrintable(r.out));
    const QJsonObject m = readJson("opts.json");
    for (const char* key : {"accuracy", "per_class", "confusion_matrix", "roc_auc", "test"})
        QVERIFY2(m.contains(key), key);
    QCOMPARE(m["test"].toObject()["rows"].toInteger(), qint64(48)); // 25% of 194
    QVERIFY(m["per_class"].toObject().contains("warm"));

    // Without --ignore the id column (200 distinct texts) is refused, naming it.
    const RunResult refused = run({"train", "opts.csv", "--missing", "drop", "--out", "no.st"});
    QCOMPARE(refused.code, 1);
    QVERIFY2(isOneLine(refused.err) && refused.err.contains("column 1 (\"id\")"),
             qPrintable(refused.err));
    QVERIFY(!QFile::exists(path("no.st")));
    const RunResult norm = run({"train", "opts.csv", "--normalise", "l2", "--out", "no.st"});
    QCOMPARE(norm.code, 1);
    QVERIFY2(norm.err.contains("--normalise"), qPrintable(norm.err));
}

void TestCli::jsonDataset()
{
    // Iron Learn's JSON format: x_test/y_test are the test split, and what evaluate measures.
    QByteArray x, y, xt, yt;
    for (int i = 0; i < 40; ++i) {
        const int a = i % 2, b = (i / 2) % 2;
        x += (i ? "," : "") + QByteArray::number(a) + "," + QByteArray::number(b);
        y += (i ? "," : "") + QByteArray::number(a ^ b);
    }
    xt = "0,0,0,1,1,0,1,1";
    yt = "0,1,1,0";
    QVERIFY(writeBytes(path("xor.json"), "{\"m\": 40, \"n\": 2, \"x\": [" + x + "], \"y\": [" + y +
                                             "], \"x_test\": [" + xt + "], \"y_test\": [" + yt +
                                             "], \"m_test\": 4}"));
    const RunResult r = run({"train", "xor.json", "--epochs", "300", "--patience", "0",
                             "--metrics-json", "xj.json", "--out", "xj.safetensors", "--quiet"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QCOMPARE(readJson("xj.json")["test"].toObject()["rows"].toInteger(), qint64(4));
    const RunResult e = run({"evaluate", "xj.safetensors", "xor.json"});
    QVERIFY2(e.code == 0, qPrintable(e.err));
    QVERIFY2(e.out.contains("xor.json (test examples): accuracy 100.00% (4 rows)"),
             qPrintable(e.out));
    QVERIFY(writeBytes(path("bad.json"), R"({"m": 2, "n": 2, "x": [1, 2, 3], "y": [0, 1]})"));
    const RunResult b = run({"train", "bad.json", "--out", "bad-json.safetensors"});
    QCOMPARE(b.code, 1);
    QVERIFY2(isOneLine(b.err) && b.err.contains("bad.json") && b.err.contains("\"x\" has 3"),
             qPrintable(b.err));
    QVERIFY(!QFile::exists(path("bad-json.safetensors")));
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

// A model the studio saved keeps a training loss for every step and a validation loss at each
// evaluation (tests/fixtures/studio/iris-studio.safetensors: iris, 326 steps in the studio). info
// lists the last evaluations, not the steps in between with "-" for their validation.
void TestCli::infoOfAStudioModel()
{
    const RunResult i = run({"info", IRONLEARN_FIXTURES "/studio/iris-studio.safetensors"});
    QVERIFY2(i.code == 0, qPrintable(i.err));
    QVERIFY2(i.out.contains("last evaluations (step: train / validation)"), qPrintable(i.out));
    QVERIFY2(!i.out.contains("/ -"), qPrintable(i.out));
    const QRegularExpression row(R"(^\s+(\d+): [0-9.e-]+ / [0-9.e-]+$)",
                                 QRegularExpression::MultilineOption);
    QList<int> steps;
    for (auto m = row.globalMatch(i.out); m.hasNext();)
        steps << m.next().captured(1).toInt();
    QCOMPARE(steps, (QList<int>{308, 312, 316, 320, 324}));
    // A run without validation (xor: 4 rows) lists its last training losses.
    const RunResult x = run({"info", m_xorModel});
    QVERIFY2(x.out.contains("last losses (step: train; no validation)"), qPrintable(x.out));
}

QTEST_GUILESS_MAIN(TestCli)
#include "TestCli.moc"
