// Overfitting made visible in ironlearn-cli: a tiny noisy regression trained long with a big
// network says, in one line while it trains, that the validation loss is rising while the
// training loss falls (also with --quiet); the final summary repeats it; --metrics-json has
// it under "overfitting" (null when nothing was seen); with early stopping the best weights'
// step is named; with --val-split 0 a long run gets one note that nothing can see it.
#include "CliRunner.h"
#include "NoisyTable.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using clitest::readBytes;

class TestCliOverfit : public CliTestCase {
    Q_OBJECT

private:
    // The big network, full batch, on noisy.csv with 30 % of the rows for validation.
    QStringList memorise(const QStringList& more) const
    {
        return QStringList{
                   "train",       "noisy.csv", "--target", "y",
                   "--val-split", "0.3",       "--layers", "dense:128,relu,dense:128,relu,dense:1",
                   "--batch",     "0",         "--epochs", "1500",
                   "--seed",      "1"} +
               more;
    }
    QJsonObject json(const QString& name) const
    {
        return QJsonDocument::fromJson(readBytes(path(name))).object();
    }

private slots:
    void initTestCase();
    void saidWhileTrainingWithEarlyStoppingOff();
    void saidBeforeEarlyStopping();
    void quietStillSaysIt();
    void nullWhenNotSeen();
    void noValidationRowsNote();
};

void TestCliOverfit::initTestCase()
{
    QVERIFY(m_dir.isValid());
    // 60 rows of y = a + b / 2 + noise: 42 training rows a network of 17,000 parameters learns
    // by heart.
    QFile f(path("noisy.csv"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(testdata::noisyLinearTable(60));
}

void TestCliOverfit::saidWhileTrainingWithEarlyStoppingOff()
{
    const RunResult r = run(memorise({"--patience", "0", "--metrics-json", "off.json"}));
    QVERIFY2(r.code == 0, qPrintable(r.err));
    // One line on stderr, among the progress lines (pipe mode).
    static const QRegularExpression line(
        "^note: step (\\d+): validation loss rising since step (\\d+) \\(best [0-9.]+, now "
        "[0-9.]+\\) while the training loss falls: the network is memorising the training "
        "rows; training goes on \\(early stopping is off\\)$",
        QRegularExpression::MultilineOption);
    const QRegularExpressionMatch m = line.match(r.err);
    QVERIFY2(m.hasMatch(), qPrintable(r.err));
    QCOMPARE(r.err.count("memorising"), 1);
    const qint64 noticed = m.captured(1).toLongLong(), since = m.captured(2).toLongLong();
    QVERIFY(since < noticed);
    // The run went on to its budget, and the summary says it again.
    QVERIFY2(r.out.contains(QString("finished 1500 steps (1500 epochs); the validation loss has "
                                    "risen since step %1 while the training loss fell "
                                    "(overfitting): these are the weights of the last step, "
                                    "early stopping would have kept those of step %1")
                                .arg(since)),
             qPrintable(r.out));
    const QJsonObject o = json("off.json")["overfitting"].toObject();
    QCOMPARE(o["since_step"].toInteger(), since);
    QCOMPARE(o["noticed_step"].toInteger(), noticed);
    QVERIFY(o["val_loss"].toDouble() > o["best_val_loss"].toDouble() * 1.05);
}

void TestCliOverfit::saidBeforeEarlyStopping()
{
    const RunResult r = run(memorise({"--patience", "20", "--metrics-json", "es.json"}));
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const qsizetype note = r.err.indexOf("the network is memorising the training rows; early "
                                         "stopping ends the run");
    QVERIFY2(note >= 0, qPrintable(r.err));
    const QJsonObject j = json("es.json");
    QCOMPARE(j["stop_reason"].toString(), QString("early stopping"));
    const qint64 since = j["overfitting"].toObject()["since_step"].toInteger();
    QVERIFY2(r.out.contains(QString("; the best weights, of step %1, were restored").arg(since)),
             qPrintable(r.out));
}

void TestCliOverfit::quietStillSaysIt()
{
    // --quiet drops the progress, not the warnings.
    const RunResult r = run(memorise({"--patience", "0", "--quiet"}));
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.err.startsWith("note: step ") && r.err.contains("memorising"), qPrintable(r.err));
}

void TestCliOverfit::nullWhenNotSeen()
{
    // A small network for a few epochs: the validation loss never turns.
    const RunResult r = run({"train", "noisy.csv", "--target", "y", "--val-split", "0.3",
                             "--epochs", "30", "--metrics-json", "short.json", "--quiet"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(!r.err.contains("memorising"));
    const QJsonObject j = json("short.json");
    QVERIFY(j.contains("overfitting"));
    QVERIFY(j["overfitting"].isNull());
}

void TestCliOverfit::noValidationRowsNote()
{
    const QString note = "note: no validation rows, so nothing can tell whether 2000 epochs over "
                         "60 rows overfit; a validation split (0.2, say) would show it, and early "
                         "stopping would keep the best weights\n";
    const RunResult longRun = run({"train", "noisy.csv", "--target", "y", "--val-split", "0",
                                   "--epochs", "2000", "--metrics-json", "none.json"});
    QVERIFY2(longRun.code == 0, qPrintable(longRun.err));
    QCOMPARE(longRun.err.count(note), 1);
    QVERIFY(json("none.json")["overfitting"].isNull());
    // Not for a short run, nor with validation rows.
    const RunResult shortRun =
        run({"train", "noisy.csv", "--target", "y", "--val-split", "0", "--epochs", "150"});
    QVERIFY2(shortRun.code == 0, qPrintable(shortRun.err));
    QVERIFY2(!shortRun.err.contains("no validation rows"), qPrintable(shortRun.err));
    const RunResult withVal =
        run({"train", "noisy.csv", "--target", "y", "--val-split", "0.2", "--epochs", "300"});
    QVERIFY2(withVal.code == 0, qPrintable(withVal.err));
    QVERIFY(!withVal.err.contains("no validation rows"));
    // Nor for a table too small to hold rows out (xor: 4 rows, 3000 full-batch epochs).
    const RunResult tiny = run({"train", ":sample/xor.csv", "--out", "xor.safetensors"});
    QVERIFY2(tiny.code == 0, qPrintable(tiny.err));
    QVERIFY2(!tiny.err.contains("no validation rows"), qPrintable(tiny.err));
}

QTEST_GUILESS_MAIN(TestCliOverfit)
#include "TestCliOverfit.moc"
