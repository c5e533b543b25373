// train --class-weight: the option's values and refusals (exit 2, one line naming the option,
// nothing written), the setting kept in the model file (info shows it, --resume keeps it,
// --class-weight none drops it), and what it is for: on an imbalanced table it finds the rare
// class far more often, binary (one logit, BCE) and multi-class (softmax cross-entropy).
#include "CliRunner.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstdint>

namespace {

using clitest::isOneLine;
using clitest::readBytes;
using clitest::writeBytes;

// A small deterministic generator (the same table on every machine and library).
struct Lcg {
    uint64_t s;
    double uniform()
    {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        return (static_cast<double>(s >> 11) + 0.5) / 9007199254740992.0;
    }
    double normal()
    {
        return std::sqrt(-2 * std::log(uniform())) * std::cos(6.283185307 * uniform());
    }
};

// x1, x2 -> y with 6% in the rare class, whose x1 is shifted by 1.5 (overlapping classes). With
// three classes the common ones split on x2's sign, and the labels are words.
QByteArray imbalancedTable(uint64_t seed, int rows, bool threeClasses)
{
    Lcg rng{seed};
    QByteArray csv = "x1,x2,y\n";
    for (int i = 0; i < rows; ++i) {
        const bool rare = rng.uniform() < 0.06;
        const double x1 = rng.normal() + (rare ? 1.5 : 0.0), x2 = rng.normal();
        const QByteArray label = threeClasses ? (rare     ? "rare"
                                                 : x2 > 0 ? "up"
                                                          : "down")
                                              : (rare ? "1" : "0");
        csv += QByteArray::number(x1, 'f', 4) + "," + QByteArray::number(x2, 'f', 4) + "," + label +
               "\n";
    }
    return csv;
}

QJsonObject readJson(const QString& path)
{
    return QJsonDocument::fromJson(readBytes(path)).object();
}

} // namespace

class TestCliClassWeight : public CliTestCase {
    Q_OBJECT

private:

private slots:
    void initTestCase();
    void refusals_data();
    void refusals();
    void keptInTheModelFile();
    void findsTheRareClass_data();
    void findsTheRareClass();
};

void TestCliClassWeight::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QVERIFY(writeBytes(path("binary.csv"), imbalancedTable(1, 1500, false)));
    QVERIFY(writeBytes(path("binary-test.csv"), imbalancedTable(2, 3000, false)));
    QVERIFY(writeBytes(path("three.csv"), imbalancedTable(3, 1500, true)));
    QVERIFY(writeBytes(path("three-test.csv"), imbalancedTable(4, 3000, true)));
    QByteArray regression = "x,price\n";
    for (int i = 0; i < 40; ++i)
        regression += QByteArray::number(i) + "," + QByteArray::number(0.37 * i * i + 1.1) + "\n";
    QVERIFY(writeBytes(path("prices.csv"), regression));
}

void TestCliClassWeight::refusals_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QStringList>("says");
    QTest::newRow("unknown value")
        << QStringList{"train", "binary.csv", "--class-weight", "heavy"}
        << QStringList{"--class-weight", "none or balanced", "\"heavy\""};
    QTest::newRow("regression table")
        << QStringList{"train", "prices.csv", "--class-weight", "balanced"}
        << QStringList{"--class-weight balanced", "classification", "\"price\"", "regression"};
    QTest::newRow("names") << QStringList{"train", ":sample/names-ssa2018.txt", "--class-weight",
                                          "balanced"}
                           << QStringList{"--class-weight balanced", "classification tables"};
}

void TestCliClassWeight::refusals()
{
    QFETCH(QStringList, args);
    QFETCH(QStringList, says);
    const RunResult r = run(args + QStringList{"--epochs", "1", "--out", "refused.safetensors"});
    QCOMPARE(r.code, 2);
    QVERIFY2(isOneLine(r.err), qPrintable(r.err));
    for (const QString& s : says)
        QVERIFY2(r.err.contains(s), qPrintable(r.err));
    QVERIFY(!QFile::exists(path("refused.safetensors")));
}

void TestCliClassWeight::keptInTheModelFile()
{
    RunResult r = run({"train", "binary.csv", "--class-weight", "balanced", "--epochs", "3",
                       "--out", "weighted.safetensors", "--metrics-json", "train.json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    // The header names the weights it computed, the report says the losses are weighted.
    QVERIFY2(r.err.contains("loss: class-weighted, balanced, from the training rows: 0: 0."),
             qPrintable(r.err));
    QVERIFY2(r.out.contains("(class-weighted, balanced)"), qPrintable(r.out));
    const QJsonObject j = readJson(path("train.json"));
    QCOMPARE(j["class_weight"].toString(), QString("balanced"));
    QCOMPARE(j["class_weights"].toArray().size(), 2);
    // ~6% positives: the rare class weighs about 1 / (2 * 0.06), the common one about 0.53.
    QVERIFY(j["class_weights"][1].toDouble() > 5 && j["class_weights"][1].toDouble() < 15);
    QVERIFY(j["class_weights"][0].toDouble() > 0.5 && j["class_weights"][0].toDouble() < 0.56);
    // In the file's hyperparameters, and shown by info.
    QVERIFY(
        readBytes(path("weighted.safetensors")).contains("\\\"class_weight\\\":\\\"balanced\\\""));
    r = run({"info", "weighted.safetensors"});
    QVERIFY2(r.code == 0 && r.out.contains("loss       bce, class-weighted (balanced)"),
             qPrintable(r.out + r.err));

    // --resume keeps it...
    r = run({"train", "binary.csv", "--resume", "weighted.safetensors", "--epochs", "5",
             "--metrics-json", "resumed.json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("(class-weighted, balanced)"), qPrintable(r.out));
    QCOMPARE(readJson(path("resumed.json"))["class_weight"].toString(), QString("balanced"));
    // ... evaluate says its loss is the plain one ...
    r = run({"evaluate", "weighted.safetensors", "binary-test.csv"});
    QVERIFY2(r.code == 0 && r.out.contains("(not class-weighted; the model trained with balanced"),
             qPrintable(r.out + r.err));
    // ... and --class-weight none turns it off from then on.
    r = run({"train", "binary.csv", "--resume", "weighted.safetensors", "--epochs", "6",
             "--class-weight", "none"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(!r.out.contains("class-weighted"), qPrintable(r.out));
    r = run({"info", "weighted.safetensors"});
    QVERIFY2(r.code == 0 && !r.out.contains("class-weighted"), qPrintable(r.out));

    // A default run is unweighted, and says nothing about it.
    r = run({"train", "binary.csv", "--epochs", "1", "--out", "plain.safetensors", "--metrics-json",
             "plain.json"});
    QVERIFY2(r.code == 0 && !r.out.contains("class-weighted"), qPrintable(r.out + r.err));
    QCOMPARE(readJson(path("plain.json"))["class_weight"].toString(), QString("none"));
    QVERIFY(!readJson(path("plain.json")).contains("class_weights"));
}

void TestCliClassWeight::findsTheRareClass_data()
{
    QTest::addColumn<QString>("table");
    QTest::addColumn<QString>("rare");
    QTest::newRow("binary (bce)") << "binary"
                                  << "1";
    QTest::newRow("three classes (cross-entropy)") << "three"
                                                   << "rare";
}

void TestCliClassWeight::findsTheRareClass()
{
    // Defaults otherwise: what a learner types. Measured on a test file of other rows.
    QFETCH(QString, table);
    QFETCH(QString, rare);
    double recall[2] = {0, 0}, balanced[2] = {0, 0};
    for (int weighted = 0; weighted < 2; ++weighted) {
        const QString model = table + (weighted ? "-balanced" : "-plain") + ".safetensors";
        QStringList args{"train", table + ".csv", "--out", model, "--quiet"};
        if (weighted)
            args << "--class-weight"
                 << "balanced";
        RunResult r = run(args);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        r = run({"evaluate", model, table + "-test.csv", "--metrics-json", "eval.json"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const QJsonObject j = readJson(path("eval.json"));
        const QJsonObject perClass = j["per_class"].toObject();
        recall[weighted] = perClass[rare].toObject()["recall"].toDouble();
        for (const QString& c : perClass.keys())
            balanced[weighted] += perClass[c].toObject()["recall"].toDouble() / perClass.size();
    }
    const QString figures = QString("recall of %1: %2 unweighted, %3 balanced; balanced accuracy "
                                    "%4, %5")
                                .arg(rare)
                                .arg(recall[0])
                                .arg(recall[1])
                                .arg(balanced[0])
                                .arg(balanced[1]);
    qInfo("%s", qPrintable(figures));
    QVERIFY2(recall[1] > recall[0] + 0.3, qPrintable(figures));
    QVERIFY2(balanced[1] > balanced[0] + 0.05, qPrintable(figures));
}

QTEST_GUILESS_MAIN(TestCliClassWeight)
#include "TestCliClassWeight.moc"
