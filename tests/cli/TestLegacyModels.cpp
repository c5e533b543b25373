// Model files written before the engine was reorganised (tests/fixtures/legacy, made by the
// ironlearn-cli of commit b6742bf) must still open, describe themselves, and continue training
// bit for bit: every tensor of the continued model (weights and optimizer state) has the
// recorded SHA-256 (continued-sha256.json), on every SIMD target of the CPU kernels.
//
// The digests were first the old program's own continuation. When the CPU kernels moved to
// Highway their rounding changed on purpose (no fused multiply-adds, one summation
// order on every target), and the digests were re-recorded with record-digests.py, which
// refuses to record unless the SSE4, AVX2 and AVX-512 continuations agree. The files themselves
// are untouched. OpenBLAS picks its sgemm kernel per CPU (AVX2 and AVX-512 kernels round
// differently), so the continuation runs with OPENBLAS_CORETYPE=Haswell, its AVX2 kernel.
#include "CliRunner.h"

#include "CpuKernels.h"
#include "SafeTensors.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

namespace {

const QString kLegacy = QStringLiteral(IRONLEARN_FIXTURES "/legacy");

struct LegacyCase {
    const char* name;   // fixture file stem, key in continued-sha256.json
    const char* data;   // the data it was trained on
    QStringList budget; // the continuation's budget, as the old program was given it
};

// The test's environment with IRONLEARN_SIMD set to target.
QProcessEnvironment environment(const QString& target)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("IRONLEARN_SIMD"), target);
    return env;
}

QJsonObject expectedDigests(const QString& name)
{
    QFile f(kLegacy + "/continued-sha256.json");
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll()).object().value(name).toObject();
}

// SHA-256 of each tensor's little-endian f32 bytes, by tensor name.
QJsonObject tensorDigests(const QString& path, QString* error)
{
    il::io::SafeTensorsFile file;
    const il::io::IoResult r = il::io::readSafeTensors(path, file);
    if (!r.ok) {
        *error = r.error;
        return {};
    }
    QJsonObject out;
    for (const auto& t : file.tensors) {
        const QByteArray bytes(reinterpret_cast<const char*>(t.data.data()),
                               static_cast<qsizetype>(t.data.size() * sizeof(float)));
        out.insert(QString::fromStdString(t.name),
                   QString::fromLatin1(
                       QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex()));
    }
    return out;
}

} // namespace

class TestLegacyModels : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { qputenv("OPENBLAS_CORETYPE", "Haswell"); }
    void continuesBitForBit_data();
    void continuesBitForBit();
    void opensAndDescribes_data();
    void opensAndDescribes();
};

namespace {

void addColumns()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("data");
    QTest::addColumn<QStringList>("budget");
    QTest::addColumn<QString>("target"); // IRONLEARN_SIMD for the CLI ("" = best)
}

void addCases(const QString& target)
{
    const QString suffix = target.isEmpty() ? QString() : " on " + target;
    QTest::newRow(qPrintable("tabular adamw" + suffix))
        << "iris-adamw"
        << ":sample/iris.csv" << QStringList{"--epochs", "60"} << target;
    QTest::newRow(qPrintable("names adam" + suffix))
        << "names-adam"
        << ":sample/names-ssa2018.txt" << QStringList{"--steps", "80"} << target;
    QTest::newRow(qPrintable("image momentum" + suffix))
        << "camera-momentum"
        << ":sample/camera.png" << QStringList{"--steps", "60"} << target;
}

} // namespace

void TestLegacyModels::continuesBitForBit_data()
{
    addColumns();
    for (const il::simd::Target& t : il::simd::availableTargets())
        addCases(QString::fromStdString(t.key));
}

void TestLegacyModels::opensAndDescribes_data()
{
    addColumns();
    addCases(QString());
}

void TestLegacyModels::continuesBitForBit()
{
    QFETCH(QString, name);
    QFETCH(QString, data);
    QFETCH(QStringList, budget);
    QFETCH(QString, target);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString model = dir.filePath(name + ".safetensors");
    QVERIFY(QFile::copy(kLegacy + "/" + name + ".safetensors", model));
    const QString out = dir.filePath("continued.safetensors");
    const RunResult r = runCli(dir.path(),
                               QStringList{"train", data, "--resume", model} + budget +
                                   QStringList{"--threads", "1", "--quiet", "--out", out},
                               60000, environment(target));
    QVERIFY2(r.code == 0, qPrintable(r.err + r.out));

    const QJsonObject expected = expectedDigests(name);
    QVERIFY(!expected.isEmpty());
    QString error;
    const QJsonObject actual = tensorDigests(out, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(actual.keys(), expected.keys());
    for (const QString& tensor : expected.keys())
        QVERIFY2(actual.value(tensor) == expected.value(tensor),
                 qPrintable(tensor + " differs from the recorded continuation"));
}

void TestLegacyModels::opensAndDescribes()
{
    QFETCH(QString, name);
    QFETCH(QString, data);
    const QString model = kLegacy + "/" + name + ".safetensors";
    const RunResult info = runCli(QDir::tempPath(), {"info", model});
    QVERIFY2(info.code == 0, qPrintable(info.err));
    QVERIFY(!info.out.isEmpty());
    const RunResult eval = runCli(QDir::tempPath(), {"evaluate", model, data});
    QVERIFY2(eval.code == 0, qPrintable(eval.err + eval.out));
}

QTEST_GUILESS_MAIN(TestLegacyModels)
#include "TestLegacyModels.moc"
