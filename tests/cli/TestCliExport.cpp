// `ironlearn-cli export --to pytorch` against the CLI itself: export_check.py trains one small
// model of each kind (tables: regression, classes with a text column, binary, empty number
// cells filled with the training mean or their columns left out; images: SIREN,
// Fourier features, hash grid; names: MLP, wavenet with merges and batchnorm, layernorm with
// GELU and dropout), exports it, and compares the exported PyTorch module's predictions with
// predict / evaluate within 1e-5 relative; then train_more.py continues three of them for 10 steps
// from the CLI's loss, downwards. Skips, saying why, where Debian's python3-torch is missing.
// train_more_check.py and render_memory_check.py check train_more.py's reading, schedule and
// --ddp, and model.py's memory at 8192x8192.
// Also here: the export's refusals and errors, one line each, nothing written.
#include "CliRunner.h"

#include "LayerRegistry.h"
#include "Optimizer.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

class TestCliExport : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }
    void pytorchMatchesTheCli();
    void trainMoreMatchesTheCli();
    void modelRenderMemoryIsBounded();
    void badExportsSayWhy();

private:
    QTemporaryDir m_dir;
};

void TestCliExport::pytorchMatchesTheCli()
{
    // Debian's interpreter first: python3-torch installs there (a PATH python3 may be another).
    QString python = QFileInfo::exists("/usr/bin/python3")
                         ? QString("/usr/bin/python3")
                         : QStandardPaths::findExecutable("python3");
    if (python.isEmpty()) QSKIP("no python3 to run the exported module");
    // The layer types' registry examples (LayerType::example), which the script runs too.
    QJsonArray examples;
    for (const il::LayerType& t : il::layerTypes())
        if (!t.example.layers.empty())
            examples.append(QJsonObject{{"name", QString::fromStdString(t.name)},
                                        {"layers", QString::fromStdString(t.example.layers)},
                                        {"data", QString::fromStdString(t.example.data)}});
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(python, {IRONLEARN_SOURCE_DIR "/tests/cli/export_check.py", IRONLEARN_CLI,
                     m_dir.filePath("export"), IRONLEARN_SOURCE_DIR "/resources/samples",
                     QString::fromUtf8(QJsonDocument(examples).toJson(QJsonDocument::Compact))});
    QVERIFY(p.waitForFinished(600000));
    const QString out = QString::fromUtf8(p.readAll());
    qInfo("%s", qPrintable(out.trimmed()));
    if (p.exitCode() == 77) QSKIP(qPrintable(out.trimmed()));
    QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0, qPrintable(out));
    QVERIFY(out.contains("all export checks passed"));
}

// Runs tests/cli/SCRIPT CLI WORKDIR SAMPLES with Debian's python3; skips on its exit code 77.
static void runPythonCheck(const char* script, const QString& workDir, const char* passed)
{
    const QString python = QFileInfo::exists("/usr/bin/python3")
                               ? QString("/usr/bin/python3")
                               : QStandardPaths::findExecutable("python3");
    if (python.isEmpty()) QSKIP("no python3 to run the exported module");
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    // Every optimizer of the registry, for train_more_check.py's check of each in torch.optim.
    QStringList optimizers;
    for (const il::OptimizerType& t : il::optimizerTypes())
        optimizers << QString::fromLatin1(t.name);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("IRONLEARN_OPTIMIZERS", optimizers.join(','));
    p.setProcessEnvironment(env);
    p.start(python, {QString(IRONLEARN_SOURCE_DIR "/tests/cli/") + script, IRONLEARN_CLI, workDir,
                     IRONLEARN_SOURCE_DIR "/resources/samples"});
    QVERIFY(p.waitForFinished(300000));
    const QString out = QString::fromUtf8(p.readAll());
    qInfo("%s", qPrintable(out.trimmed()));
    if (p.exitCode() == 77) QSKIP(qPrintable(out.trimmed()));
    QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0, qPrintable(out));
    QVERIFY(out.contains(passed));
}

// train_more.py against the CLI: the schedule past a finished cosine (as --resume --steps), the
// picture it trains toward (the CLI's target.png, pixel for pixel), semicolon/decimal-comma
// tables and missing: drop / fail, every optimizer of the registry continued in torch.optim as
// --resume continues it, and --ddp under torchrun on 2 processes (train_more_check.py).
void TestCliExport::trainMoreMatchesTheCli()
{
    runPythonCheck("train_more_check.py", m_dir.filePath("train-more"),
                   "all train_more checks passed");
}

// model.render(net, 8192, 8192) within the output plus a fixed working set of peak resident
// memory (render_memory_check.py).
void TestCliExport::modelRenderMemoryIsBounded()
{
    // model.py's memory in PyTorch: nothing of ours runs sanitized in it, and the 8192x8192
    // render costs the asan suite a minute for nothing.
    if (IRONLEARN_SANITIZED) QSKIP("PyTorch's memory: measured by the release suite");
    runPythonCheck("render_memory_check.py", m_dir.filePath("render-memory"),
                   "all render memory checks passed");
}

void TestCliExport::badExportsSayWhy()
{
    const QString model = m_dir.filePath("xor.safetensors");
    QVERIFY(runCli(m_dir.path(),
                   {"train", ":sample/xor.csv", "--epochs", "5", "--quiet", "--out", model})
                .code == 0);
    struct Case {
        QStringList args;
        int code;
        QString says;
    };
    QVERIFY(clitest::writeBytes(m_dir.filePath("a-file"), "x"));
    QVERIFY(clitest::writeBytes(m_dir.filePath("broken.safetensors"), "not a model"));
    const Case cases[] = {
        {{"export", model}, 2, "--to FORMAT is required"},
        {{"export", model, "--to", "tflite"}, 2, "unknown format \"tflite\""},
        {{"export", model, "--to", "pytorch", "--out", m_dir.filePath("a-file")},
         1,
         "a-file: is a file"},
        {{"export", m_dir.filePath("broken.safetensors"), "--to", "pytorch", "--out",
          m_dir.filePath("broken-out")},
         1,
         "broken.safetensors"},
    };
    for (const Case& c : cases) {
        const RunResult r = runCli(m_dir.path(), c.args);
        QVERIFY2(r.code == c.code && clitest::isOneLine(r.err) && r.err.contains(c.says),
                 qPrintable(c.args.join(' ') + " -> " + QString::number(r.code) + ": " + r.err));
    }
    QVERIFY(!QFileInfo::exists(m_dir.filePath("broken-out/model.py")));
    // The default directory: MODEL's name + -pytorch, beside it.
    const RunResult ok = runCli(m_dir.path(), {"export", model, "--to", "pytorch"});
    QVERIFY2(ok.code == 0, qPrintable(ok.err));
    for (const char* f : {"model.py", "model.safetensors", "train_more.py"})
        QVERIFY(QFileInfo::exists(m_dir.filePath(QString("xor-pytorch/") + f)));
    QCOMPARE(clitest::readBytes(m_dir.filePath("xor-pytorch/model.safetensors")),
             clitest::readBytes(model));
}

QTEST_GUILESS_MAIN(TestCliExport)
#include "TestCliExport.moc"
