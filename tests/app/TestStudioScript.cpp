// The studio's scripted mode from the command line: the real ironlearn-studio executable, run
// offscreen with QProcess and settings of its own. --runs trains a new model for each entry and
// saves a picture of the comparison; settings it cannot read are refused before anything trains.
#include "ModelFile.h"

#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

class TestStudioScript : public QObject {
    Q_OBJECT

private slots:
    void runsTrainsEachEntryAndPicturesTheComparison();
    void badRunsAreRefusedWithStatus2();
    void aModelWithoutItsDataSaysWhyNothingTrained();
    void trainStepsTrainsExactlyThatMany();
    void helpVersionAndTabsNeedNoDisplay();

private:
    struct Result {
        int status = -1;
        QString err;
    };
    Result studio(const QStringList& args);
    QTemporaryDir m_dir;
};

TestStudioScript::Result TestStudioScript::studio(const QStringList& args)
{
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("QT_QPA_PLATFORM", "offscreen");
    env.insert("XDG_CONFIG_HOME", m_dir.filePath("config")); // not the user's settings
    p.setProcessEnvironment(env);
    p.start(IRONLEARN_STUDIO, args);
    if (!p.waitForFinished(300000)) {
        p.kill();
        p.waitForFinished();
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
            QString::fromUtf8(p.readAllStandardError())};
}

void TestStudioScript::runsTrainsEachEntryAndPicturesTheComparison()
{
    const QString png = m_dir.filePath("compare.png");
    const Result r =
        studio({":sample/iris.csv", "--train-steps", "40", "--size", "1024x700", "--runs",
                R"([{"schedule":{"lr_max":0.01}},{"schedule":{"lr_max":0.03}}])", "--screenshot",
                png, "--quit"});
    QVERIFY2(r.status == 0, qPrintable(r.err));
    QVERIFY2(
        r.err.contains(QRegularExpression("run 1: \\d+ steps, lr_max 0.01, (validation|training)")),
        qPrintable(r.err));
    QVERIFY2(
        r.err.contains(QRegularExpression("run 2: \\d+ steps, lr_max 0.03, (validation|training)")),
        qPrintable(r.err));
    QVERIFY2(!r.err.contains("run 3:"), qPrintable(r.err));
    // The comparison's picture, at the size asked for (not the main window's).
    const QImage image(png);
    QVERIFY(!image.isNull());
    QCOMPARE(image.size() / image.devicePixelRatio(), QSize(1024, 700));
}

void TestStudioScript::badRunsAreRefusedWithStatus2()
{
    const QString png = m_dir.filePath("never.png");
    const std::pair<QStringList, QString> cases[] = {
        {{":sample/iris.csv", "--train-steps", "40", "--runs", R"([{"schedule":{"lr_max":0.01})"},
         "--runs: not JSON"},
        {{":sample/iris.csv", "--train-steps", "40", "--runs", R"([{"schedule":{"lr_mxa":0.01}}])"},
         "--runs: run 1: unknown setting schedule.lr_mxa"},
        {{":sample/iris.csv", "--runs", R"([{"seed":2}])"}, "--runs: needs FILE and --train-steps"},
    };
    for (const auto& [args, message] : cases) {
        const Result r = studio(args + QStringList{"--screenshot", png, "--quit"});
        QCOMPARE(r.status, 2);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        // Nothing trained: no run's report.
        QVERIFY2(!r.err.contains(QRegularExpression("run \\d+: \\d+ steps")), qPrintable(r.err));
        QVERIFY(!QFile::exists(png));
    }
}

// A model trained by the CLI, opened without its data: Start refuses (open the data first), and
// the scripted run used to wait for a run that never came, until killed.
void TestStudioScript::aModelWithoutItsDataSaysWhyNothingTrained()
{
    const QString model = m_dir.filePath("iris-adamw.safetensors");
    QVERIFY(QFile::copy(IRONLEARN_FIXTURES "/legacy/iris-adamw.safetensors", model));
    const QString png = m_dir.filePath("without-data.png");
    QElapsedTimer clock;
    clock.start();
    const Result r = studio({model, "--train-steps", "20", "--screenshot", png, "--quit"});
    QVERIFY2(r.status == 0, qPrintable(r.err));
    QVERIFY2(clock.elapsed() < 60000, qPrintable(QString::number(clock.elapsed())));
    QVERIFY2(r.err.contains("--train-steps: nothing trained: Open the data this model was "
                            "trained on"),
             qPrintable(r.err));
    QVERIFY(!QImage(png).isNull()); // the picture of what is open, all the same
}

// --train-steps N trains N steps exactly (a reopened model N more), not N and the steps that
// went by before the next progress report reached the window.
void TestStudioScript::trainStepsTrainsExactlyThatMany()
{
    const auto stepsOf = [](const QString& path) {
        il::io::ModelInfo info;
        QString error;
        return il::io::readModelInfo(path, info, &error) ? info.state.step : int64_t(-1);
    };
    const QString model = m_dir.filePath("names-25.safetensors");
    Result r =
        studio({":sample/names-ssa2018.txt", "--train-steps", "25", "--save", model, "--quit"});
    QVERIFY2(r.status == 0, qPrintable(r.err));
    QCOMPARE(stepsOf(model), int64_t(25));
    const QString more = m_dir.filePath("names-40.safetensors");
    r = studio({model, "--train-steps", "15", "--save", more, "--quit"});
    QVERIFY2(r.status == 0, qPrintable(r.err));
    QCOMPARE(stepsOf(more), int64_t(40));
}

// --help, --version and --list-tabs answer in a terminal with no display server (over ssh, on a
// build machine): the window system is not started for them (it aborts where there is none).
// Opening a file there says why it cannot, and exits 1.
void TestStudioScript::helpVersionAndTabsNeedNoDisplay()
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char* name : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"})
        env.remove(name);
    env.insert("XDG_CONFIG_HOME", m_dir.filePath("config"));
    const auto run = [&env](const QString& option) {
        QProcess p;
        p.setProcessEnvironment(env);
        p.start(IRONLEARN_STUDIO, {option});
        p.waitForFinished(60000);
        const bool ok = p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
        return ok ? QString::fromUtf8(p.readAllStandardOutput()) : QString();
    };
    QVERIFY(run("--help").contains("--train-steps"));
    QVERIFY(run("--version").startsWith("Iron Learn Studio "));
    QCOMPARE(run("--list-tabs").split('\n', Qt::SkipEmptyParts).first(), QString("data"));

    // Anything else says there is no display and what to do, rather than abort in Qt.
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(IRONLEARN_STUDIO, {":sample/iris.csv"});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    QCOMPARE(p.exitCode(), 1);
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(err.contains("no display") && err.contains("QT_QPA_PLATFORM=offscreen"),
             qPrintable(err));
}

QTEST_GUILESS_MAIN(TestStudioScript)
#include "TestStudioScript.moc"
