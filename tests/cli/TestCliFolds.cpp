// Cross-validation in ironlearn-cli train: a small regression table is cross-validated by
// default, and its default stack (the ensemble preset) keeps the folds' networks averaged and
// blended with least squares (docs/cross-validation.md); --folds K with another stack trains it
// again on every row (one line per fold, the decision and the folds' metric in the report,
// "cross_validation" in --metrics-json, the folds saved with the model); --folds 0 a validation
// split; options that cannot go together are refused before any work.
#include "CliRunner.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using clitest::readBytes;

class TestCliFolds : public CliTestCase {
    Q_OBJECT

private:
private slots:
    void initTestCase();
    void foldsAskedFor();
    void offAndAskedFor();
    void averagedByDefault();
    void refusals();
    void resumeRunsNoFolds();
};

void TestCliFolds::initTestCase()
{
    QVERIFY(m_dir.isValid());
    // 120 rows of a curved target (a network beats the straight line) and two classes.
    QFile f(path("curve.csv"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("a,b,y\n");
    for (int i = 0; i < 120; ++i) {
        const double a = -2 + 4.0 * i / 120, b = std::fmod(i * 0.37, 2.0) - 1;
        f.write(QByteArray::number(a, 'g', 9) + "," + QByteArray::number(b, 'g', 9) + "," +
                QByteArray::number(std::sin(2 * a) * 3 + b * b * 2, 'g', 9) + "\n");
    }
}

void TestCliFolds::foldsAskedFor()
{
    // The wide stack: the folds judge it, then it is trained again on every row.
    const RunResult r = run({"train", "curve.csv", "--epochs", "400", "--folds", "5", "--preset",
                             "wide", "--out", "cv.safetensors", "--metrics-json", "cv.json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains("5-fold cross-validation (each row held out once)"), qPrintable(r.err));
    for (int k = 1; k <= 5; ++k)
        QVERIFY2(r.err.contains(QString("fold %1 of 5: ").arg(k)), qPrintable(r.err));
    QVERIFY2(r.out.contains("5-fold cross-validation on 120 rows"), qPrintable(r.out));
    QVERIFY2(r.out.contains("cross-validated RMSE"), qPrintable(r.out));
    QVERIFY2(r.out.contains("cross-validation took"), qPrintable(r.out));
    // No note that nothing watches the run: the folds did.
    QVERIFY2(!r.err.contains("no validation rows"), qPrintable(r.err));
    const QJsonObject j = json("cv.json");
    const QJsonObject cv = j["cross_validation"].toObject();
    QCOMPARE(cv["folds"].toInt(), 5);
    QCOMPARE(cv["rows"].toInt(), 120);
    QVERIFY(cv["complete"].toBool());
    QCOMPARE(cv["fold_steps"].toArray().size(), 5);
    QCOMPARE(cv["kept"].toString(), QString("network"));
    QVERIFY(cv["refit_steps"].toInt() >= 1);
    QCOMPARE(j["steps"].toInt(), cv["refit_steps"].toInt()); // trained again for that many
    QVERIFY(cv["seconds"].toDouble() > 0);
    QVERIFY(std::isfinite(cv["difference_se"].toDouble()));
    // The model says how it was chosen.
    const RunResult info = run({"info", "cv.safetensors"});
    QVERIFY2(info.code == 0, qPrintable(info.err));
}

void TestCliFolds::offAndAskedFor()
{
    // Off: a validation split, and the wide stack.
    RunResult r = run({"train", "curve.csv", "--epochs", "200", "--folds", "0", "--out",
                       "off.safetensors", "--metrics-json", "off.json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains("24 held out for validation"), qPrintable(r.err));
    QVERIFY(!r.err.contains("fold 1"));
    QVERIFY(!json("off.json").contains("cross_validation"));
    QVERIFY2(r.err.contains("network: dense:32,tanh,dense:32,tanh,dense:1,skip"),
             qPrintable(r.err));

    r = run({"train", "curve.csv", "--epochs", "200", "--folds", "3", "--out", "k3.safetensors",
             "--metrics-json", "k3.json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains("fold 3 of 3: ") && !r.err.contains("fold 4"), qPrintable(r.err));
    QCOMPARE(json("k3.json")["cross_validation"].toObject()["folds"].toInt(), 3);

    r = run({"train", "curve.csv", "--epochs", "200", "--val-split", "0.25", "--out",
             "split.safetensors"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains("30 held out for validation") && !r.err.contains("fold 1"),
             qPrintable(r.err));
}

// No option: 5 folds (120 regression rows), the ensemble preset's stack and settings, and the
// folds' networks averaged as one network blended with least squares: nothing is trained again.
void TestCliFolds::averagedByDefault()
{
    RunResult r =
        run({"train", "curve.csv", "--out", "avg.safetensors", "--metrics-json", "avg.json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains("network: dense:100:xavier,relu,dense:1 (") &&
                 r.err.contains("adam, lr 0.001"),
             qPrintable(r.err));
    QVERIFY2(r.err.contains("fold 5 of 5: "), qPrintable(r.err));
    QVERIFY2(r.out.contains("kept the 5 folds' networks averaged as one network, "
                            "dense:500:xavier,relu,dense:1,skip"),
             qPrintable(r.out));
    QVERIFY2(r.out.contains("averaged, blended "), qPrintable(r.out));
    QVERIFY2(!r.out.contains("trained 0 steps"), qPrintable(r.out));
    const QJsonObject j = json("avg.json");
    const QJsonObject cv = j["cross_validation"].toObject();
    QVERIFY(cv["averaged"].toBool());
    QCOMPARE(cv["averaged_layers"].toString(), QString("dense:500:xavier,relu,dense:1,skip"));
    const double share = cv["share"].toDouble(), blend = cv["blend_loss"].toDouble();
    QVERIFY2(share > 0.5 && share <= 1, qPrintable(QString::number(share))); // a curved target
    QVERIFY(blend <= cv["network_loss"].toDouble() && blend <= cv["simpler_loss"].toDouble());
    // Nothing trained on every row: the model stands at the folds' length.
    QCOMPARE(j["steps"].toInt(), cv["refit_steps"].toInt());
    // The model is that network: info names it, evaluate scores it, a resume trains it on.
    r = run({"info", "avg.safetensors"});
    QVERIFY2(r.code == 0 && r.out.contains("dense:500:xavier") && r.out.contains(" skip "),
             qPrintable(r.out));
    r = run({"evaluate", "avg.safetensors", "curve.csv", "--metrics-json", "avg-eval.json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(json("avg-eval.json")["mse"].toDouble() < 0.5); // of a target of spread ~3
    r = run({"train", "curve.csv", "--resume", "avg.safetensors", "--epochs", "3000", "--steps",
             "20", "--out", "avg-more.safetensors"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(!r.err.contains("fold 1"), qPrintable(r.err));

    // Asked for with another stack; a stack or data that cannot be averaged is refused.
    r = run({"train", "curve.csv", "--folds", "3", "--average-folds", "--layers",
             "dense:8,tanh,dense", "--out", "avg3.safetensors"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("dense:24,tanh,dense:1,skip"), qPrintable(r.out));
}

void TestCliFolds::refusals()
{
    for (const QStringList& args :
         {QStringList{"--folds", "3", "--val-split", "0.2"}, QStringList{"--folds", "1"},
          QStringList{"--folds", "5", "--split", "80/20/0"}, QStringList{"--folds", "x"}}) {
        const RunResult r =
            run(QStringList{"train", "curve.csv", "--out", "refused.safetensors"} + args);
        QVERIFY2(r.code == 2, qPrintable(args.join(' ') + ": " + r.err));
        QVERIFY2(r.err.contains("--folds"), qPrintable(r.err));
        QVERIFY(!QFile::exists(path("refused.safetensors")));
    }
    {
        const RunResult off = run({"train", "curve.csv", "--average-folds", "--folds", "0", "--out",
                                   "refused.safetensors"});
        QVERIFY2(off.code == 2 && off.err.contains("give --folds K too"), qPrintable(off.err));
        QVERIFY(!QFile::exists(path("refused.safetensors")));
        const RunResult r =
            run({"train", "curve.csv", "--folds", "3", "--average-folds", "--layers",
                 "dense:8,layernorm,tanh,dense", "--out", "refused.safetensors"});
        QVERIFY2(r.code != 0 && r.err.contains("cannot be averaged") &&
                     !r.err.contains("fold 1 of 3"),
                 qPrintable(r.err));
        QVERIFY(!QFile::exists(path("refused.safetensors")));
        const RunResult c = run({"train", IRONLEARN_SAMPLES "/iris.csv", "--folds", "3",
                                 "--average-folds", "--out", "refused.safetensors"});
        QVERIFY2(c.code != 0 && c.err.contains("regression table"), qPrintable(c.err));
        QVERIFY(!QFile::exists(path("refused.safetensors")));
    }
    // A picture or a names list has no folds: said, not silently ignored (--folds 0, off, passes:
    // the CLI test runner gives it to every train).
    for (const char* data :
         {IRONLEARN_SAMPLES "/camera.png", IRONLEARN_SAMPLES "/names-ssa2018.txt"}) {
        const RunResult r =
            run({"train", data, "--folds", "3", "--steps", "1", "--out", "refused.safetensors"});
        QVERIFY2(r.code == 2, qPrintable(QString(data) + ": " + r.err));
        QVERIFY2(r.err.contains("--folds applies to tables, not to"), qPrintable(r.err));
        QVERIFY(!QFile::exists(path("refused.safetensors")));
    }
}

void TestCliFolds::resumeRunsNoFolds()
{
    QVERIFY(QFile::exists(path("cv.safetensors")));
    const RunResult r = run({"train", "curve.csv", "--resume", "cv.safetensors", "--epochs", "500",
                             "--out", "more.safetensors"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(!r.err.contains("fold 1"), qPrintable(r.err)); // the folds chose already
}

QTEST_GUILESS_MAIN(TestCliFolds)
#include "TestCliFolds.moc"
