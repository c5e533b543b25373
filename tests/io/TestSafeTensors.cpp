// The safetensors reader and writer: round trips, an independent check of the bytes we write,
// every refusal of a malformed file, and atomic saving.
#include "AtomicFile.h"
#include "SafeTensors.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace il::io;

namespace {

QByteArray le64(quint64 n)
{
    QByteArray b(8, '\0');
    for (int i = 0; i < 8; ++i, n >>= 8)
        b[i] = static_cast<char>(n & 0xff);
    return b;
}

QByteArray rawFile(const QByteArray& header, const QByteArray& data = {})
{
    return le64(static_cast<quint64>(header.size())) + header + data;
}

QByteArray zeros(int bytes)
{
    return QByteArray(bytes, '\0');
}

bool writeBytes(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

QByteArray readBytes(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool sameBits(const std::vector<float>& a, const std::vector<float>& b)
{
    // (memcmp may not be given the null data() of an empty vector, even for 0 bytes: UBSan)
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * 4) == 0);
}

SafeTensorsFile sampleFile()
{
    SafeTensorsFile f;
    f.tensors.push_back({"layers.0.weight", {2, 3}, {1, 2, 3, 4, 5, 6}});
    f.tensors.push_back(
        {"layers.0.bias",
         {3},
         {-0.f, std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}});
    f.tensors.push_back({"scalar", {}, {42.5f}});
    f.tensors.push_back({"empty", {0, 4}, {}});
    f.tensors.push_back({"cube", {2, 1, 2}, {0.1f, 0.2f, 0.3f, 1e-30f}});
    f.metadata = {{"format", "ironlearn"}, {"note", "quotes \" and \\ and\nnewline, ünïcode"}};
    return f;
}

// Restores the failure hook even if a check fails.
struct FailAfter {
    explicit FailAfter(qint64 n)
    {
        detail::injectedFailureForTesting = {detail::FailStep::Write, ENOSPC, n};
    }
    ~FailAfter() { detail::injectedFailureForTesting = {}; }
};

} // namespace

class TestSafeTensors : public QObject {
    Q_OBJECT

private slots:
    void roundTrip_data();
    void roundTrip();
    void independentReader();
    void alignment_data();
    void alignment();
    void headerOnly();
    void foreignLayoutIsAccepted();
    void refusals_data();
    void refusals();
    void truncationNeverCrashes();
    void corruptionNeverCrashes();
    void writerRefusals_data();
    void writerRefusals();
    void failedSaveKeepsPreviousFile_data();
    void failedSaveKeepsPreviousFile();
    void readOnlyDirectoryKeepsPreviousFile();
    void missingFileAndDirectory();
};

void TestSafeTensors::roundTrip_data()
{
    QTest::addColumn<int>("which");
    QTest::newRow("no tensors, no metadata") << 0;
    QTest::newRow("metadata only") << 1;
    QTest::newRow("mixed ranks, special floats") << 2;
    QTest::newRow("a large tensor") << 3;
}

void TestSafeTensors::roundTrip()
{
    QFETCH(int, which);
    SafeTensorsFile in;
    if (which == 1) in.metadata = {{"a", "1"}, {"b", "{\"json\": [1, 2]}"}};
    if (which == 2) in = sampleFile();
    if (which == 3) {
        std::vector<float> big(300 * 257);
        for (size_t i = 0; i < big.size(); ++i)
            big[i] = std::sin(static_cast<float>(i));
        in.tensors.push_back({"big", {300, 257}, big});
    }
    QTemporaryDir dir;
    const QString path = dir.filePath("m.safetensors");
    const IoResult w = writeSafeTensors(path, in);
    QVERIFY2(w.ok, qPrintable(w.error));

    SafeTensorsFile out;
    const IoResult r = readSafeTensors(path, out);
    QVERIFY2(r.ok, qPrintable(r.error));
    QCOMPARE(out.metadata, in.metadata);
    QCOMPARE(out.tensors.size(), in.tensors.size());
    for (size_t i = 0; i < in.tensors.size(); ++i) {
        // Written in the order given, so read back in the same order.
        QCOMPARE(out.tensors[i].name, in.tensors[i].name);
        QCOMPARE(out.tensors[i].shape, in.tensors[i].shape);
        QVERIFY(sameBits(out.tensors[i].data, in.tensors[i].data));
    }

    // The in-memory pair agrees with the file pair byte for byte.
    QByteArray bytes;
    QVERIFY(encodeSafeTensors(in, bytes).ok);
    QCOMPARE(bytes, readBytes(path));
    SafeTensorsFile decoded;
    QVERIFY(decodeSafeTensors(bytes, "mem", decoded).ok);
    QCOMPARE(decoded.tensors.size(), in.tensors.size());
}

// Parses our output with nothing but QJsonDocument and memcpy: the library's reader must not
// be the only judge of what its writer produces.
void TestSafeTensors::independentReader()
{
    const SafeTensorsFile in = sampleFile();
    QTemporaryDir dir;
    const QString path = dir.filePath("m.safetensors");
    QVERIFY(writeSafeTensors(path, in).ok);
    const QByteArray bytes = readBytes(path);
    QVERIFY(bytes.size() >= 8);

    quint64 n = 0;
    for (int i = 7; i >= 0; --i)
        n = (n << 8) | static_cast<unsigned char>(bytes[i]);
    QVERIFY(8 + n <= static_cast<quint64>(bytes.size()));
    QCOMPARE((8 + n) % 8, quint64(0)); // data buffer 8-byte aligned
    const QByteArray header = bytes.mid(8, static_cast<qsizetype>(n));
    QVERIFY(header.startsWith('{'));
    const QJsonDocument doc = QJsonDocument::fromJson(header);
    QVERIFY(doc.isObject());
    const QJsonObject root = doc.object();
    const QByteArray data = bytes.mid(static_cast<qsizetype>(8 + n));

    const QJsonObject meta = root.value("__metadata__").toObject();
    QCOMPARE(meta.size(), in.metadata.size());
    for (auto it = in.metadata.begin(); it != in.metadata.end(); ++it)
        QCOMPARE(meta.value(it.key()).toString(), it.value());

    QCOMPARE(root.size(), static_cast<qsizetype>(in.tensors.size()) + 1);
    qint64 expectedBegin = 0;
    for (const StoredTensor& t : in.tensors) {
        const QJsonObject e = root.value(QString::fromStdString(t.name)).toObject();
        QCOMPARE(e.value("dtype").toString(), QString("F32"));
        QJsonArray shape;
        for (int64_t d : t.shape)
            shape.append(qint64(d));
        QCOMPARE(e.value("shape").toArray(), shape);
        const QJsonArray off = e.value("data_offsets").toArray();
        QCOMPARE(off.size(), 2);
        const qint64 begin = off[0].toInteger(), end = off[1].toInteger();
        QCOMPARE(begin, expectedBegin); // contiguous, in order
        QCOMPARE(end - begin, qint64(t.data.size() * 4));
        std::vector<float> values(t.data.size());
        if (!values.empty()) std::memcpy(values.data(), data.constData() + begin, values.size() * 4);
        QVERIFY(sameBits(values, t.data));
        expectedBegin = end;
    }
    QCOMPARE(expectedBegin, qint64(data.size()));
}

void TestSafeTensors::alignment_data()
{
    QTest::addColumn<int>("nameLength");
    for (int i = 1; i <= 17; ++i)
        QTest::addRow("name of %d chars", i) << i;
}

void TestSafeTensors::alignment()
{
    QFETCH(int, nameLength);
    SafeTensorsFile f;
    f.tensors.push_back({std::string(static_cast<size_t>(nameLength), 'w'), {1}, {1.f}});
    QByteArray bytes;
    QVERIFY(encodeSafeTensors(f, bytes).ok);
    quint64 n = 0;
    std::memcpy(&n, bytes.constData(), 8);
    QCOMPARE((8 + n) % 8, quint64(0));
    // Padding is spaces after the closing brace, which JSON allows.
    const QByteArray header = bytes.mid(8, static_cast<qsizetype>(n));
    QCOMPARE(header.trimmed().back(), '}');
    QVERIFY(header.size() - header.trimmed().size() < 8);
}

void TestSafeTensors::headerOnly()
{
    QTemporaryDir dir;
    const QString path = dir.filePath("m.safetensors");
    QVERIFY(writeSafeTensors(path, sampleFile()).ok);
    SafeTensorsFile out;
    QVERIFY(readSafeTensorsHeader(path, out).ok);
    QCOMPARE(out.tensors.size(), sampleFile().tensors.size());
    QVERIFY(out.find("cube"));
    QCOMPARE(out.find("cube")->shape, (std::vector<int64_t>{2, 1, 2}));
    QVERIFY(out.find("cube")->data.empty());
    QCOMPARE(out.metadata.value("format"), QString("ironlearn"));
}

// Other writers order data differently from their header and do not pad; both are valid.
void TestSafeTensors::foreignLayoutIsAccepted()
{
    const QByteArray header = R"({"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]},)"
                              R"("a":{"shape":[1],"data_offsets":[0,4],"dtype":"F32"}})";
    float values[2] = {1.5f, -2.f};
    const QByteArray bytes =
        rawFile(header, QByteArray(reinterpret_cast<const char*>(values), sizeof values));
    SafeTensorsFile out;
    const IoResult r = decodeSafeTensors(bytes, "foreign", out);
    QVERIFY2(r.ok, qPrintable(r.error));
    QCOMPARE(out.tensors.size(), size_t(2));
    QCOMPARE(out.tensors[0].name, std::string("a")); // data-buffer order
    QCOMPARE(out.find("a")->data[0], 1.5f);
    QCOMPARE(out.find("b")->data[0], -2.f);
}

void TestSafeTensors::refusals_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QStringList>("expected"); // fragments the message must contain

    auto entry = [](const char* name, const char* dtype, const char* shape, const char* offsets) {
        return QByteArray("\"") + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape +
               ",\"data_offsets\":" + offsets + "}";
    };
    auto one = [&](const char* dtype, const char* shape, const char* offsets, int dataBytes) {
        return rawFile("{" + entry("w", dtype, shape, offsets) + "}", zeros(dataBytes));
    };

    QTest::newRow("empty file") << QByteArray() << QStringList{"0 bytes", "shorter than"};
    QTest::newRow("7 bytes") << zeros(7) << QStringList{"7 bytes", "shorter than"};
    QTest::newRow("header past the end")
        << (le64(100) + "{}") << QStringList{"header length 100", "past the end"};
    QTest::newRow("header over 100 MB")
        << (le64(200'000'000) + "{}") << QStringList{"200000000", "100 MB"};
    QTest::newRow("header length 2^64-1")
        << (le64(~quint64(0)) + "{}") << QStringList{"18446744073709551615", "100 MB"};
    QTest::newRow("invalid JSON") << rawFile("{\"w\": ") << QStringList{"not valid JSON"};
    QTest::newRow("JSON array") << rawFile("[1, 2]") << QStringList{"not a JSON object"};
    QTest::newRow("entry not an object")
        << rawFile("{\"w\": 5}") << QStringList{"tensor \"w\"", "not a JSON object"};
    QTest::newRow("empty tensor name")
        << rawFile("{" + entry("", "F32", "[0]", "[0,0]") + "}") << QStringList{"empty name"};
    QTest::newRow("missing dtype")
        << rawFile(R"({"w":{"shape":[1],"data_offsets":[0,4]}})", zeros(4))
        << QStringList{"tensor \"w\"", "dtype"};
    QTest::newRow("unknown dtype Q7")
        << one("Q7", "[1]", "[0,4]", 4) << QStringList{"tensor \"w\"", "unknown dtype", "Q7"};
    for (const char* dtype : {"F16", "BF16", "F64", "I64", "U8", "BOOL"})
        QTest::addRow("unsupported dtype %s", dtype)
            << one(dtype, "[1]", "[0,4]", 4)
            << QStringList{"tensor \"w\"", QString("dtype %1 is not supported").arg(dtype), "F32"};
    QTest::newRow("shape missing")
        << rawFile(R"({"w":{"dtype":"F32","data_offsets":[0,4]}})", zeros(4))
        << QStringList{"tensor \"w\"", "shape"};
    QTest::newRow("negative dimension")
        << one("F32", "[-1,2]", "[0,8]", 8) << QStringList{"tensor \"w\"", "shape", "negative"};
    QTest::newRow("fractional dimension")
        << one("F32", "[1.5]", "[0,4]", 4) << QStringList{"tensor \"w\"", "not an integer"};
    QTest::newRow("string dimension")
        << one("F32", "[\"2\"]", "[0,8]", 8) << QStringList{"tensor \"w\"", "not a number"};
    QTest::newRow("shape overflows")
        << one("F32", "[4503599627370496,4503599627370496]", "[0,4]", 4)
        << QStringList{"tensor \"w\"", "too many elements"};
    QTest::newRow("shape/size mismatch")
        << one("F32", "[3]", "[0,8]", 8) << QStringList{"tensor \"w\"", "needs 12 bytes", "span 8"};
    QTest::newRow("offsets past the buffer")
        << one("F32", "[4]", "[0,16]", 8) << QStringList{"tensor \"w\"", "out of range", "8 bytes"};
    QTest::newRow("offsets reversed")
        << one("F32", "[1]", "[8,4]", 8) << QStringList{"tensor \"w\"", "out of range"};
    QTest::newRow("offset negative")
        << one("F32", "[1]", "[-4,0]", 4) << QStringList{"tensor \"w\"", "begin", "negative"};
    QTest::newRow("offsets not a pair")
        << one("F32", "[1]", "[0]", 4) << QStringList{"tensor \"w\"", "data_offsets"};
    QTest::newRow("offsets huge") << one("F32", "[1]", "[0,1e300]", 4)
                                  << QStringList{"tensor \"w\"", "data_offsets end"};
    QTest::newRow("overlap") << rawFile("{" + entry("a", "F32", "[2]", "[0,8]") + "," +
                                            entry("b", "F32", "[2]", "[4,12]") + "}",
                                        zeros(12))
                             << QStringList{"\"a\"", "\"b\"", "overlap"};
    QTest::newRow("gap") << rawFile("{" + entry("a", "F32", "[1]", "[0,4]") + "," +
                                        entry("b", "F32", "[1]", "[8,12]") + "}",
                                    zeros(12))
                         << QStringList{"bytes 4 to 8", "no tensor", "\"b\""};
    QTest::newRow("trailing bytes")
        << one("F32", "[1]", "[0,4]", 8) << QStringList{"4 bytes after the last tensor"};
    QTest::newRow("data but no tensors")
        << rawFile("{}", zeros(4)) << QStringList{"4 bytes after the last tensor"};
    QTest::newRow("metadata not an object")
        << rawFile(R"({"__metadata__": 5})") << QStringList{"__metadata__", "not a JSON object"};
    QTest::newRow("metadata value a number")
        << rawFile(R"({"__metadata__": {"ok": "yes", "epochs": 3}})")
        << QStringList{"__metadata__", "\"epochs\"", "not a string"};
    QTest::newRow("metadata value an object")
        << rawFile(R"({"__metadata__": {"task": {"kind": "x"}}})")
        << QStringList{"\"task\"", "not a string"};
    QTest::newRow("hostile tensor name")
        << rawFile("{" + entry("line\\nbreak", "F64", "[1]", "[0,8]") + "}", zeros(8))
        << QStringList{"\"line\\x0abreak\"", "F64"};
}

void TestSafeTensors::refusals()
{
    QFETCH(QByteArray, bytes);
    QFETCH(QStringList, expected);
    QTemporaryDir dir;
    const QString path = dir.filePath("broken.safetensors");
    QVERIFY(writeBytes(path, bytes));

    SafeTensorsFile out;
    out.tensors.push_back({"stale", {1}, {1.f}});
    const IoResult r = readSafeTensors(path, out);
    QVERIFY(!r.ok);
    QVERIFY2(r.error.startsWith(path + ": "), qPrintable(r.error));
    QVERIFY2(!r.error.contains('\n'), qPrintable(r.error));
    for (const QString& fragment : expected)
        QVERIFY2(r.error.contains(fragment),
                 qPrintable(QString("'%1' not in: %2").arg(fragment, r.error)));
    QVERIFY(out.tensors.empty() && out.metadata.isEmpty());

    // The header-only and in-memory readers refuse the same way.
    SafeTensorsFile header;
    const IoResult h = readSafeTensorsHeader(path, header);
    QVERIFY(!h.ok);
    QCOMPARE(h.error, r.error);
    const IoResult d = decodeSafeTensors(bytes, path, out);
    QCOMPARE(d.error, r.error);
}

// Every prefix of a valid file is invalid, and must be refused, not crash.
void TestSafeTensors::truncationNeverCrashes()
{
    QByteArray bytes;
    QVERIFY(encodeSafeTensors(sampleFile(), bytes).ok);
    for (qsizetype len = 0; len < bytes.size(); ++len) {
        SafeTensorsFile out;
        const IoResult r = decodeSafeTensors(bytes.left(len), "cut", out);
        QVERIFY2(!r.ok, qPrintable(QString("prefix of %1 bytes accepted").arg(len)));
        QVERIFY(r.error.startsWith("cut: ") && !r.error.contains('\n'));
    }
}

// Random byte flips anywhere: each result is either a clean read or a one-line refusal.
void TestSafeTensors::corruptionNeverCrashes()
{
    QByteArray good;
    QVERIFY(encodeSafeTensors(sampleFile(), good).ok);
    std::mt19937 rng(7);
    int refused = 0;
    for (int trial = 0; trial < 3000; ++trial) {
        QByteArray bytes = good;
        const int flips = 1 + static_cast<int>(rng() % 3);
        for (int i = 0; i < flips; ++i)
            bytes[static_cast<qsizetype>(rng() % static_cast<unsigned>(bytes.size()))] =
                static_cast<char>(rng() & 0xff);
        SafeTensorsFile out;
        const IoResult r = decodeSafeTensors(bytes, "fuzz", out);
        if (!r.ok) {
            ++refused;
            QVERIFY(r.error.startsWith("fuzz: ") && !r.error.contains('\n'));
        }
    }
    QVERIFY(refused > 0);
}

void TestSafeTensors::writerRefusals_data()
{
    QTest::addColumn<int>("which");
    QTest::addColumn<QString>("expected");
    QTest::newRow("data does not match shape") << 0 << "tensor \"w\" has shape [2, 2] but 3 values";
    QTest::newRow("duplicate name") << 1 << "two tensors are named \"w\"";
    QTest::newRow("reserved name") << 2 << "__metadata__";
    QTest::newRow("empty name") << 3 << "empty name";
    QTest::newRow("negative dimension") << 4 << "negative dimension";
}

void TestSafeTensors::writerRefusals()
{
    QFETCH(int, which);
    QFETCH(QString, expected);
    SafeTensorsFile f;
    if (which == 0) f.tensors.push_back({"w", {2, 2}, {1, 2, 3}});
    if (which == 1) f.tensors = {{"w", {1}, {1}}, {"w", {1}, {2}}};
    if (which == 2) f.tensors.push_back({"__metadata__", {1}, {1}});
    if (which == 3) f.tensors.push_back({"", {1}, {1}});
    if (which == 4) f.tensors.push_back({"w", {-1, -1}, {1}});

    QTemporaryDir dir;
    const QString path = dir.filePath("m.safetensors");
    QVERIFY(writeBytes(path, "previous contents"));
    const IoResult r = writeSafeTensors(path, f);
    QVERIFY(!r.ok);
    QVERIFY2(r.error.startsWith(path) && r.error.contains(expected), qPrintable(r.error));
    QCOMPARE(readBytes(path), QByteArray("previous contents"));
    QByteArray bytes;
    QVERIFY(!encodeSafeTensors(f, bytes).ok);
}

void TestSafeTensors::failedSaveKeepsPreviousFile_data()
{
    QTest::addColumn<qint64>("failAfter");
    QTest::newRow("before the first byte") << qint64(0);
    QTest::newRow("inside the length") << qint64(5);
    QTest::newRow("inside the header") << qint64(30);
    QTest::newRow("inside the data") << qint64(2000);
}

void TestSafeTensors::failedSaveKeepsPreviousFile()
{
    QFETCH(qint64, failAfter);
    QTemporaryDir dir;
    const QString path = dir.filePath("m.safetensors");
    QVERIFY(writeSafeTensors(path, sampleFile()).ok);
    const QByteArray before = readBytes(path);

    SafeTensorsFile bigger;
    bigger.tensors.push_back({"w", {1000}, std::vector<float>(1000, 3.f)});
    {
        FailAfter hook(failAfter);
        const IoResult r = writeSafeTensors(path, bigger);
        QVERIFY(!r.ok);
        QVERIFY2(r.error.startsWith(path + ": cannot save"), qPrintable(r.error));
    }
    QCOMPARE(readBytes(path), before);
    // No temporary file left next to it.
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{"m.safetensors"});

    // And the next save, without the failure, replaces it.
    QVERIFY(writeSafeTensors(path, bigger).ok);
    SafeTensorsFile out;
    QVERIFY(readSafeTensors(path, out).ok);
    QCOMPARE(out.tensors.size(), size_t(1));
}

void TestSafeTensors::readOnlyDirectoryKeepsPreviousFile()
{
    QTemporaryDir dir;
    const QString path = dir.filePath("m.safetensors");
    QVERIFY(writeSafeTensors(path, sampleFile()).ok);
    const QByteArray before = readBytes(path);
    QFile::setPermissions(dir.path(), QFile::ReadOwner | QFile::ExeOwner);
    const bool writable = QFile(dir.filePath("probe")).open(QIODevice::WriteOnly);
    if (writable) {
        QFile::remove(dir.filePath("probe"));
        QFile::setPermissions(dir.path(), QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        QSKIP("directory permissions do not apply (running as root); see "
              "failedSaveKeepsPreviousFile");
    }
    SafeTensorsFile other;
    other.tensors.push_back({"x", {1}, {1.f}});
    const IoResult r = writeSafeTensors(path, other);
    QFile::setPermissions(dir.path(), QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    QVERIFY(!r.ok);
    QVERIFY2(r.error.startsWith(path + ": cannot save"), qPrintable(r.error));
    QCOMPARE(readBytes(path), before);
}

void TestSafeTensors::missingFileAndDirectory()
{
    QTemporaryDir dir;
    SafeTensorsFile out;
    const QString missing = dir.filePath("nope.safetensors");
    const IoResult r = readSafeTensors(missing, out);
    QVERIFY(!r.ok);
    QVERIFY2(r.error.startsWith(missing + ": cannot open"), qPrintable(r.error));

    const QString inMissingDir = dir.filePath("no/such/dir/m.safetensors");
    const IoResult w = writeSafeTensors(inMissingDir, sampleFile());
    QVERIFY(!w.ok);
    QVERIFY2(w.error.startsWith(inMissingDir + ": cannot save"), qPrintable(w.error));
    QVERIFY(!QFile::exists(inMissingDir));
}

QTEST_GUILESS_MAIN(TestSafeTensors)
#include "TestSafeTensors.moc"
