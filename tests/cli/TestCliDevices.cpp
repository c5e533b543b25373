// `ironlearn-cli devices` and `--backend cuda` in every CUDA situation a user can be in: no
// module, no driver, a driver too old, no device, a module from another version, disabled, and
// available. A fake module (FakeCudaModule.cpp) and an empty libcuda.so.1 stand in for the real
// ones, so this runs where there is no GPU; the real module's probe is covered by
// testCudaParity on a machine that has one. Also: the CPU line names the SIMD target of the CPU
// kernels, which IRONLEARN_SIMD forces, and a bad IRONLEARN_SIMD is one clear error.
#include "CliRunner.h"

#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <dlfcn.h>
#include <sys/stat.h>

namespace {

struct Situation {
    bool driver = true; // put the fake libcuda.so.1 on the library path
    QString module = FAKE_CUDA_MODULE;
    QMap<QString, QString> vars;
};

QProcessEnvironment environment(const Situation& s)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove("IRONLEARN_DISABLE_CUDA");
    env.insert("IRONLEARN_CUDA_MODULE", s.module);
    QString path = env.value("LD_LIBRARY_PATH");
    if (s.driver) path = QString(FAKE_DRIVER_DIR) + (path.isEmpty() ? "" : ":" + path);
    env.insert("LD_LIBRARY_PATH", path);
    for (auto it = s.vars.begin(); it != s.vars.end(); ++it)
        env.insert(it.key(), it.value());
    return env;
}

// The text after "cuda  available|unavailable".
QString cudaLine(const RunResult& r, bool* available)
{
    const auto m = QRegularExpression(R"(^cuda\s+(available|unavailable)\s+(.*)$)",
                                      QRegularExpression::MultilineOption)
                       .match(r.out);
    if (!m.hasMatch()) return {};
    *available = m.captured(1) == "available";
    return m.captured(2);
}

// The SIMD target named on the CPU's details line ("..., AVX2 kernels, ..."), or "".
QString simdTarget(const RunResult& r)
{
    return QRegularExpression(R"(\b(AVX-512|AVX2|SSE4) kernels\b)").match(r.out).captured(1);
}

} // namespace

class TestCliDevices : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void reasons_data();
    void reasons();
    void availableButCannotStart();
    void simdTargetForced_data();
    void simdTargetForced();
    void simdTargetBad_data();
    void simdTargetBad();
    void installedTreeFindsItsModuleAndSamples();

private:
    QTemporaryDir m_dir;
};

void TestCliDevices::initTestCase()
{
    QVERIFY(m_dir.isValid());
    // A FIFO as the module: opening it would block for ever; it must be refused unopened.
    QVERIFY(::mkfifo(QFile::encodeName(m_dir.filePath("fifo")).constData(), 0600) == 0);
    QFile f(m_dir.filePath("xor.csv"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("a,b,y\n0,0,0\n0,1,1\n1,0,1\n1,1,0\n");
}

void TestCliDevices::reasons_data()
{
    QTest::addColumn<bool>("driver");
    QTest::addColumn<QString>("module");
    QTest::addColumn<QString>("status");
    QTest::addColumn<QString>("message");
    QTest::addColumn<QString>("extra"); // NAME=VALUE
    QTest::addColumn<QString>("expected");

    QTest::newRow("no module") << true << "/nonexistent/libironlearn-cuda.so"
                               << ""
                               << ""
                               << ""
                               << "IRONLEARN_CUDA_MODULE names /nonexistent/libironlearn-cuda.so, "
                                  "which does not exist";
    QTest::newRow("module is a directory")
        << true << m_dir.path() << ""
        << ""
        << ""
        << "which is a directory; name the module file in it (libironlearn-cuda.so)";
    QTest::newRow("module is a FIFO") << true << m_dir.filePath("fifo") << ""
                                      << ""
                                      << ""
                                      << "which is not a regular file (a pipe, socket or device)";
    // Entry points that are variables: refused, not called (a segmentation fault before).
    QTest::newRow("entry points are data")
        << true << FAKE_DATA_SYMBOLS_MODULE << ""
        << ""
        << ""
        << "is not an Iron Learn CUDA module (entry points missing)";
    QTest::newRow("no driver") << false << FAKE_CUDA_MODULE << ""
                               << ""
                               << ""
                               << "no NVIDIA driver is installed (libcuda.so.1 was not found)";
    QTest::newRow("driver too old")
        << true << FAKE_CUDA_MODULE << "2"
        << "the NVIDIA driver supports CUDA 12.4; this build needs 13.0 or newer"
        << ""
        << "the NVIDIA driver supports CUDA 12.4; this build needs 13.0 or newer";
    QTest::newRow("no device") << true << FAKE_CUDA_MODULE << "3"
                               << "no CUDA device found"
                               << ""
                               << "no CUDA device found";
    QTest::newRow("other version")
        << true << FAKE_CUDA_MODULE << ""
        << ""
        << "FAKE_CUDA_ABI=999"
        << "was built for another version of Iron Learn (backend ABI 999";
    QTest::newRow("disabled") << true << FAKE_CUDA_MODULE << ""
                              << ""
                              << "IRONLEARN_DISABLE_CUDA=1"
                              << "disabled by the environment";
}

void TestCliDevices::reasons()
{
    QFETCH(bool, driver);
    QFETCH(QString, module);
    QFETCH(QString, status);
    QFETCH(QString, message);
    QFETCH(QString, extra);
    QFETCH(QString, expected);
    if (!driver) {
        // A real driver on this machine would be found first.
        if (void* h = dlopen("libcuda.so.1", RTLD_LAZY)) {
            dlclose(h);
            QSKIP("this machine has an NVIDIA driver");
        }
    }
    Situation s;
    s.driver = driver;
    s.module = module;
    if (!status.isEmpty()) s.vars["FAKE_CUDA_STATUS"] = status;
    if (!message.isEmpty()) s.vars["FAKE_CUDA_MESSAGE"] = message;
    if (!extra.isEmpty()) s.vars[extra.section('=', 0, 0)] = extra.section('=', 1);
    const QProcessEnvironment env = environment(s);

    const RunResult d = runCli(m_dir.path(), {"devices"}, 60000, env);
    QCOMPARE(d.code, 0);
    QVERIFY2(d.out.contains(
                 QRegularExpression(R"(^cpu\s+available)", QRegularExpression::MultilineOption)),
             qPrintable(d.out));
    bool available = true;
    const QString why = cudaLine(d, &available);
    QVERIFY2(!available && why.contains(expected), qPrintable(d.out));

    // Training asks for CUDA: the same reason, one line, exit 1, no model written; the CPU
    // still trains in the same environment.
    const QString out = m_dir.filePath("m.safetensors");
    const RunResult t =
        runCli(m_dir.path(), {"train", "xor.csv", "--backend", "cuda", "--out", out}, 60000, env);
    QCOMPARE(t.code, 1);
    QVERIFY2(t.err.trimmed().count('\n') == 0 && t.err.contains(expected) &&
                 t.err.contains("--backend cpu"),
             qPrintable(t.err));
    QVERIFY(!QFile::exists(out));
    // devices --require cuda: exit 1 with the reason (what the device check's preflight asks).
    const RunResult required = runCli(m_dir.path(), {"devices", "--require", "cuda"}, 60000, env);
    QCOMPARE(required.code, 1);
    QVERIFY2(required.err.trimmed().count('\n') == 0 &&
                 required.err.contains("CUDA is required but unavailable") &&
                 required.err.contains(expected),
             qPrintable(required.err));
    const RunResult cpu = runCli(
        m_dir.path(), {"train", "xor.csv", "--epochs", "2", "--out", out, "--quiet"}, 60000, env);
    QVERIFY2(cpu.code == 0, qPrintable(cpu.err));
    QVERIFY(QFile::remove(out));
}

void TestCliDevices::availableButCannotStart()
{
    const QProcessEnvironment env = environment(Situation());
    const RunResult d = runCli(m_dir.path(), {"devices", "--verbose"}, 60000, env);
    bool available = false;
    QCOMPARE(cudaLine(d, &available), QString("Fake GPU, 1.0 GiB, compute 9.0"));
    QVERIFY(available);
    QVERIFY2(d.out.contains(FAKE_CUDA_MODULE), qPrintable(d.out)); // the search path
    QCOMPARE(runCli(m_dir.path(), {"devices", "--require", "cuda"}, 60000, env).code, 0);
    QCOMPARE(runCli(m_dir.path(), {"devices", "--require", "tpu"}, 60000, env).code, 2);

    const QString out = m_dir.filePath("m.safetensors");
    const RunResult t =
        runCli(m_dir.path(), {"train", "xor.csv", "--backend", "cuda", "--out", out}, 60000, env);
    QCOMPARE(t.code, 1);
    QVERIFY2(t.err.contains("could not start CUDA: the fake device cannot train"),
             qPrintable(t.err));
    QVERIFY(!QFile::exists(out));
}

void TestCliDevices::simdTargetForced_data()
{
    QTest::addColumn<QString>("key");
    QTest::addColumn<QString>("name");
    const std::pair<const char*, const char*> targets[] = {
        {"avx512", "AVX-512"}, {"avx2", "AVX2"}, {"sse4", "SSE4"}, {"ssse3", "SSSE3"}};
    for (const auto& [key, name] : targets)
        QTest::newRow(key) << QString(key) << QString(name);
}

void TestCliDevices::simdTargetForced()
{
    QFETCH(QString, key);
    QFETCH(QString, name);
    // By default, the best target the CPU runs; a target above it cannot be forced here.
    const RunResult best = runCli(m_dir.path(), {"devices"}, 60000, environment(Situation()));
    QCOMPARE(best.code, 0);
    const QStringList ranked = {"AVX-512", "AVX2", "SSE4"};
    const QString bestName = simdTarget(best);
    QVERIFY2(ranked.contains(bestName), qPrintable(best.out));
    if (ranked.indexOf(name) < ranked.indexOf(bestName))
        QSKIP(qPrintable("this CPU's best SIMD target is " + bestName));

    Situation s;
    s.vars["IRONLEARN_SIMD"] = key;
    const RunResult d = runCli(m_dir.path(), {"devices"}, 60000, environment(s));
    QVERIFY2(d.code == 0, qPrintable(d.err));
    QVERIFY2(simdTarget(d) == name, qPrintable(d.out));
}

void TestCliDevices::simdTargetBad_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::newRow("devices") << QStringList{"devices"};
    QTest::newRow("train")
        << QString("train xor.csv --epochs 2 --out bad-simd.safetensors").split(' ');
}

void TestCliDevices::simdTargetBad()
{
    QFETCH(QStringList, args);
    // An unknown key: exit 1 (not a crash, not an abort), one line on stderr naming the
    // variable, the key and the choices; nothing trained.
    Situation s;
    s.vars["IRONLEARN_SIMD"] = "bogus";
    const RunResult r = runCli(m_dir.path(), args, 60000, environment(s));
    QVERIFY2(r.code == 1, qPrintable(QString("exit %1: %2").arg(r.code).arg(r.err)));
    QVERIFY2(r.err.trimmed().count('\n') == 0 && r.err.startsWith("error: ") &&
                 r.err.contains("IRONLEARN_SIMD=bogus") && r.err.contains("unknown SIMD target"),
             qPrintable(r.err));
    QVERIFY2(!r.out.contains("cpu"), qPrintable(r.out));
    // The variable is the program's setting, not the data file's: no "xor.csv: " before it.
    QVERIFY2(!r.err.contains("xor.csv"), qPrintable(r.err));
    QVERIFY(!QFile::exists(m_dir.filePath("bad-simd.safetensors")));
}

// The layout the Debian packages install (packaging/CMakeLists.txt), under another root as
// `dpkg --root` makes it: PREFIX/bin/ironlearn-cli finds PREFIX/IRONLEARN_INSTALL_MODULEDIR's
// module and PREFIX/share/ironlearn/samples with no variable set, and says which it uses.
void TestCliDevices::installedTreeFindsItsModuleAndSamples()
{
    const QString prefix = m_dir.filePath("root/usr");
    const QString moduleDir = prefix + "/" IRONLEARN_INSTALL_MODULEDIR;
    const QString samplesDir = prefix + "/share/ironlearn/samples";
    QVERIFY(QDir().mkpath(prefix + "/bin") && QDir().mkpath(moduleDir) &&
            QDir().mkpath(samplesDir));
    const QString cli = prefix + "/bin/ironlearn-cli";
    QVERIFY(QFile::copy(IRONLEARN_CLI, cli));
    QVERIFY(QFile::copy(FAKE_CUDA_MODULE, moduleDir + "/libironlearn-cuda.so"));
    QVERIFY(QFile::copy(m_dir.filePath("xor.csv"), samplesDir + "/installed-xor.csv"));

    QProcessEnvironment env = environment(Situation{});
    env.remove("IRONLEARN_CUDA_MODULE");
    env.remove("IRONLEARN_SAMPLES_DIR");
    auto run = [&](const QStringList& args) {
        QProcess p;
        p.setWorkingDirectory(m_dir.path());
        p.setProcessEnvironment(env);
        p.start(cli, args);
        RunResult r;
        if (!p.waitForFinished(60000)) return r;
        r.out = QString::fromUtf8(p.readAllStandardOutput());
        r.err = QString::fromUtf8(p.readAllStandardError());
        r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
        return r;
    };

    const RunResult devices = run({"devices", "--verbose"});
    QCOMPARE(devices.code, 0);
    QVERIFY2(devices.out.contains(moduleDir + "/libironlearn-cuda.so (found)"),
             qPrintable(devices.out));
    bool available = false;
    QVERIFY2(!cudaLine(devices, &available).isEmpty() && available, qPrintable(devices.out));

    const RunResult samples = run({"samples"});
    QCOMPARE(samples.code, 0);
    QCOMPARE(samples.out.trimmed(), QString(":sample/installed-xor.csv"));
    QVERIFY2(samples.err.contains("Samples in " + samplesDir), qPrintable(samples.err));

    const RunResult train = run({"train", ":sample/installed-xor.csv", "--epochs", "5", "--quiet",
                                 "--out", "i.safetensors"});
    QVERIFY2(train.code == 0, qPrintable(train.err));
    const RunResult unknown = run({"train", ":sample/xor.csv", "--quiet"});
    QCOMPARE(unknown.code, 1);
    QVERIFY2(clitest::isOneLine(unknown.err) &&
                 unknown.err.contains("no bundled sample \"xor.csv\"") &&
                 unknown.err.contains(samplesDir),
             qPrintable(unknown.err));
}

QTEST_GUILESS_MAIN(TestCliDevices)
#include "TestCliDevices.moc"
