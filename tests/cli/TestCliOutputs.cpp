// What ironlearn-cli refuses to write, before doing any work: an output that is a special file
// (a device, a FIFO), one of the command's inputs, another output of the same command, or a
// file in a folder that does not exist. Each refusal is one line, exit 2, and changes nothing.
// (How each write fails and cleans up is TestAtomicFile's.)
#include "CliRunner.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

namespace {

using clitest::readBytes;
using clitest::isOneLine;

bool isFifo(const QString& path)
{
    struct stat st {};
    return ::stat(QFile::encodeName(path).constData(), &st) == 0 && S_ISFIFO(st.st_mode);
}

} // namespace

class TestCliOutputs : public CliTestCase {
    Q_OBJECT

private:

private slots:
    void initTestCase();
    void refusals_data();
    void refusals();
    void resumeMaySaveOverItsModel();
    void sigtermStopsAndSaves();
};

void TestCliOutputs::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QFile data(path("data.csv"));
    QVERIFY(data.open(QIODevice::WriteOnly));
    data.write("x,y\n0,0\n1,1\n0,0\n1,1\n0,0\n1,1\n0,0\n1,1\n");
    data.close();
    QCOMPARE(::mkfifo(QFile::encodeName(path("pipe")).constData(), 0600), 0);
    const RunResult r =
        run({"train", "data.csv", "--epochs", "2", "--out", "model.safetensors", "--quiet"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
}

void TestCliOutputs::refusals_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("says");
    QTest::newRow("train --out DATA")
        << QStringList{"train", "data.csv", "--out", "data.csv"}
        << "--out data.csv: is the input file data.csv; choose another name for the output";
    QTest::newRow("train --out DATA by another path")
        << QStringList{"train", "data.csv", "--out", "./sub/../data.csv"} << "is the input file";
    QTest::newRow("train --metrics-json = --out")
        << QStringList{"train", "data.csv", "--out", "m2.safetensors", "--metrics-json",
                       "m2.safetensors"}
        << "--out and --metrics-json name the same file, m2.safetensors; each output needs its "
           "own";
    QTest::newRow("train --metrics-json DATA")
        << QStringList{"train", "data.csv", "--out", "m3.safetensors", "--metrics-json",
                       "data.csv"}
        << "--metrics-json data.csv: is the input file";
    QTest::newRow("train --metrics-json of the resumed model")
        << QStringList{"train", "data.csv", "--resume", "model.safetensors", "--metrics-json",
                       "model.safetensors"}
        << "--metrics-json model.safetensors: is the input file model.safetensors";
    QTest::newRow("train --out FIFO")
        << QStringList{"train", "data.csv", "--out", "pipe"}
        << "--out pipe: is a FIFO (named pipe), not a regular file";
    QTest::newRow("train --out /dev/null")
        << QStringList{"train", "data.csv", "--out", "/dev/null"}
        << "--out /dev/null: is a device, not a regular file";
    QTest::newRow("train --out into a missing folder")
        << QStringList{"train", "data.csv", "--out", "no/such/m.safetensors"} << "does not exist";
    QTest::newRow("evaluate --metrics-json MODEL")
        << QStringList{"evaluate", "model.safetensors", "data.csv", "--metrics-json",
                       "model.safetensors"}
        << "--metrics-json model.safetensors: is the input file model.safetensors";
    QTest::newRow("predict --out DATA")
        << QStringList{"predict", "model.safetensors", "data.csv", "--out", "data.csv"}
        << "--out data.csv: is the input file";
    QTest::newRow("predict --out FIFO")
        << QStringList{"predict", "model.safetensors", "data.csv", "--out", "pipe"}
        << "is a FIFO";
}

void TestCliOutputs::refusals()
{
    QFETCH(QStringList, args);
    QFETCH(QString, says);
    QDir(m_dir.path()).mkpath("sub");
    const QByteArray data = readBytes(path("data.csv"));
    const QByteArray model = readBytes(path("model.safetensors"));
    const RunResult r = run(args);
    QCOMPARE(r.code, 2);
    QVERIFY2(isOneLine(r.err), qPrintable(r.err));
    QVERIFY2(r.err.contains(says), qPrintable(r.err));
    QVERIFY2(!r.err.contains("step"), qPrintable(r.err)); // refused before training
    QCOMPARE(readBytes(path("data.csv")), data);
    QCOMPARE(readBytes(path("model.safetensors")), model);
    QVERIFY(isFifo(path("pipe")));
    QVERIFY(!QFile::exists(path("m2.safetensors")) && !QFile::exists(path("m3.safetensors")));
    const QStringList hidden = QDir(m_dir.path()).entryList({".*"}, QDir::Files | QDir::Hidden);
    QVERIFY2(hidden.isEmpty(), qPrintable(hidden.join(' '))); // no temporary file left
}

void TestCliOutputs::resumeMaySaveOverItsModel()
{
    // Continuing a model and saving over it is the point of --resume, not a clash.
    const RunResult r =
        run({"train", "data.csv", "--resume", "model.safetensors", "--epochs", "4", "--quiet"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const RunResult info = run({"info", "model.safetensors"});
    QVERIFY2(info.out.contains("4 epochs"), qPrintable(info.out));
}

void TestCliOutputs::sigtermStopsAndSaves()
{
    // SIGTERM, as `timeout` and a closing desktop session send it, saves like Ctrl+C: the run
    // stops after its step and the model is written (it used to end the process unsaved).
    QProcess p;
    p.setWorkingDirectory(m_dir.path());
    p.start(IRONLEARN_CLI, {"train", "data.csv", "--epochs", "100000000", "--out",
                            "term.safetensors", "--threads", "1"});
    QVERIFY(p.waitForStarted(10000));
    QString err;
    QTRY_VERIFY_WITH_TIMEOUT((err += QString::fromUtf8(p.readAllStandardError())).contains("step"),
                             30000);
    p.terminate(); // SIGTERM
    QVERIFY(p.waitForFinished(30000));
    err += QString::fromUtf8(p.readAllStandardError());
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    QVERIFY2(p.exitCode() == 0, qPrintable(err));
    QVERIFY2(QString::fromUtf8(p.readAllStandardOutput()).contains("saved model"), qPrintable(err));
    const RunResult info = run({"info", "term.safetensors"});
    QVERIFY2(info.code == 0, qPrintable(info.err));
    const QStringList hidden = QDir(m_dir.path()).entryList({".*"}, QDir::Files | QDir::Hidden);
    QVERIFY2(hidden.isEmpty(), qPrintable(hidden.join(' ')));
}

QTEST_GUILESS_MAIN(TestCliOutputs)
#include "TestCliOutputs.moc"
