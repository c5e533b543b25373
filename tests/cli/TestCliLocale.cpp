// ironlearn-cli under a comma-decimal locale (LC_ALL=de_DE.UTF-8), and what `train` accepts that
// every other command must then open. Qt sets the C library's
// locale from the environment: before NumberText.h, `train :sample/camera.png` exited 2
// ("growth per level ... is not a number"), every model with a fractional layer argument was
// refused by info/evaluate/render/export, and the CSV cell 1.5e-400 was read as 1.
#include "CliRunner.h"

#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <clocale>

namespace {

QProcessEnvironment germanEnvironment()
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("LC_ALL", "de_DE.UTF-8");
    env.insert("LANG", "de_DE.UTF-8");
    env.insert("IRONLEARN_DISABLE_CUDA", "1");
    return env;
}

QString describe(const RunResult& r)
{
    return QString("exit %1\nstdout: %2\nstderr: %3").arg(r.code).arg(r.out, r.err);
}

} // namespace

class TestCliLocale : public CliTestCase {
    Q_OBJECT

public:
    TestCliLocale()
    {
        m_env = germanEnvironment();
        m_timeoutMs = 120000;
    }

private slots:
    void initTestCase();
    void imageModelRoundTrip();
    void fractionalLayerArguments();
    void csvCellsBeyondDouble();
    void leastLearningRateReopens();
    void byteOrderMarkInsideNamesFile();
    void splitWithNan_data();
    void splitWithNan();
    void infoShowsCreatedByPrintable();
    void labelsWithEscapesAreShownEscaped();
    void exportWithEmptyOut();

private:
};

void TestCliLocale::initTestCase()
{
    QVERIFY(m_dir.isValid());
    if (!std::setlocale(LC_ALL, "de_DE.UTF-8")) {
        if (qEnvironmentVariableIsSet("IRONLEARN_REQUIRE_LOCALE"))
            QFAIL("the de_DE.UTF-8 locale is not installed (locale-gen de_DE.UTF-8)");
        QSKIP("the de_DE.UTF-8 locale is not installed (packaging/setup.sh generates it)");
    }
    std::setlocale(LC_ALL, "C");
    QVERIFY(clitest::writeBytes(path("xor.csv"), "a,b,y\n0,0,0\n0,1,1\n1,0,1\n1,1,0\n"));
}

void TestCliLocale::imageModelRoundTrip()
{
    // The default image stack (a hash grid with a fractional growth per level), then every
    // command that opens the model.
    RunResult r = run({"train", ":sample/camera.png", "--image-size", "32", "--steps", "5",
                       "--threads", "1", "--quiet", "--out", "camera.safetensors"});
    QVERIFY2(r.code == 0, qPrintable(describe(r)));
    r = run({"info", "camera.safetensors"});
    QVERIFY2(r.code == 0, qPrintable(describe(r)));
    // Numbers in the C form: "lr 0.01", never "lr 0,01".
    QVERIFY2(QRegularExpression(R"(lr \d+(\.\d+)?(e[-+]\d+)?,)").match(r.out).hasMatch(),
             qPrintable(r.out));
    QVERIFY2(!QRegularExpression(R"(lr \d+,\d)").match(r.out).hasMatch(), qPrintable(r.out));
    r = run({"render", "camera.safetensors", "--size", "64x64", "--out", "camera64.png"});
    QVERIFY2(r.code == 0, qPrintable(describe(r)));
    r = run({"evaluate", "camera.safetensors", ":sample/camera.png"});
    QVERIFY2(r.code == 0, qPrintable(describe(r)));
    r = run({"train", ":sample/camera.png", "--resume", "camera.safetensors", "--steps", "3",
             "--threads", "1", "--quiet", "--out", "camera2.safetensors"});
    QVERIFY2(r.code == 0, qPrintable(describe(r)));
}

void TestCliLocale::fractionalLayerArguments()
{
    RunResult r = run({"train", "xor.csv", "--layers", "dense:8,leakyrelu:0.2,dense", "--epochs",
                       "3", "--quiet", "--out", "leaky.safetensors"});
    QVERIFY2(r.code == 0, qPrintable(describe(r)));
    r = run({"info", "leaky.safetensors"});
    QVERIFY2(r.code == 0 && r.out.contains("leakyrelu:0.2"), qPrintable(describe(r)));
    r = run({"evaluate", "leaky.safetensors", "xor.csv"});
    QVERIFY2(r.code == 0, qPrintable(describe(r)));
    r = run({"predict", "leaky.safetensors", "xor.csv", "--out", "leaky-predictions.csv"});
    QVERIFY2(r.code == 0, qPrintable(describe(r)));
    r = run({"export", "leaky.safetensors", "--to", "onnx", "--out", "leaky.onnx"});
    QVERIFY2(r.code == 0, qPrintable(describe(r)));
}

void TestCliLocale::csvCellsBeyondDouble()
{
    // Below the smallest double is zero; beyond the largest is an error naming its place.
    QVERIFY(clitest::writeBytes(path("tiny.csv"),
                                "x,y\n1.5e-400,0\n1,1\n2,2\n3,3\n4,4\n5,5\n6,6\n7,7\n"));
    RunResult r = run({"train", "tiny.csv", "--layers", "dense", "--epochs", "2", "--quiet",
                       "--out", "tiny.safetensors"});
    QVERIFY2(r.code == 0, qPrintable(describe(r)));
    QVERIFY(clitest::writeBytes(path("one-row.csv"), "x\n1.5e-400\n0\n"));
    r = run({"predict", "tiny.safetensors", "one-row.csv", "--out", "one-row-predictions.csv"});
    QVERIFY2(r.code == 0, qPrintable(describe(r)));
    const QList<QByteArray> rows = clitest::readBytes(path("one-row-predictions.csv")).split('\n');
    QVERIFY2(rows.size() >= 3, rows.join('|').constData());
    // The two rows (1.5e-400, read as 0, and 0) predict the same.
    QCOMPARE(rows[1].split(',').last(), rows[2].split(',').last());

    QVERIFY(clitest::writeBytes(path("huge.csv"), "x,y\n1,1\n-1.5e999,2\n3,3\n4,4\n5,5\n"));
    r = run({"train", "huge.csv", "--epochs", "2", "--quiet", "--out", "huge.safetensors"});
    QVERIFY2(r.code == 1 && r.err.contains("huge.csv:3") && r.err.contains("float range"),
             qPrintable(describe(r)));
    QVERIFY(!QFile::exists(path("huge.safetensors")));
}

void TestCliLocale::leastLearningRateReopens()
{
    // Whatever train accepts, every command opens: 1e-12 is the least --lr (a float below it).
    RunResult r = run({"train", "xor.csv", "--lr", "1e-12", "--epochs", "2", "--quiet", "--out",
                       "slow.safetensors"});
    QVERIFY2(r.code == 0, qPrintable(describe(r)));
    r = run({"info", "slow.safetensors"});
    QVERIFY2(r.code == 0 && r.out.contains("lr 1e-12"), qPrintable(describe(r)));
    r = run({"train", "xor.csv", "--resume", "slow.safetensors", "--epochs", "2", "--quiet",
             "--out", "slow2.safetensors"});
    QVERIFY2(r.code == 0, qPrintable(describe(r)));
}

void TestCliLocale::byteOrderMarkInsideNamesFile()
{
    // U+FEFF at the start of a later line (files joined with cat, each with its byte-order
    // mark): not part of the name. It trained before into a vocabulary holding U+FEFF, which
    // every other command refused ("vocabulary entry 19 is not one character").
    QByteArray names = "anna\nbob\n\xEF\xBB\xBF"
                       "carl\ndora\nemil\nfrida\ngus\nhanna\nida\njon\nkai\nlena\nmia\nnoah\n";
    QVERIFY(clitest::writeBytes(path("bom-names.txt"), names));
    RunResult r =
        run({"train", "bom-names.txt", "--epochs", "2", "--quiet", "--out", "bom.safetensors"});
    QVERIFY2(r.code == 0, qPrintable(describe(r)));
    for (const QStringList& args :
         {QStringList{"info", "bom.safetensors"},
          QStringList{"evaluate", "bom.safetensors", "bom-names.txt"},
          QStringList{"generate", "bom.safetensors", "--count", "20", "--seed", "1"}}) {
        r = run(args);
        QVERIFY2(r.code == 0, qPrintable(args.join(' ') + "\n" + describe(r)));
        QVERIFY2(!r.out.contains(QChar(0xFEFF)), qPrintable(r.out));
    }
    // Inside a name it is an invisible character no name holds: refused where it is.
    QVERIFY(clitest::writeBytes(path("bom-inside.txt"), "anna\nbob\nca\xEF\xBB\xBFrl\ndora\n"));
    r = run({"train", "bom-inside.txt", "--epochs", "2", "--quiet", "--out", "bom2.safetensors"});
    QVERIFY2(r.code == 1 && r.err.contains("bom-inside.txt:3") && r.err.contains("U+FEFF") &&
                 r.err.contains("character 3"),
             qPrintable(describe(r)));
    QVERIFY(!QFile::exists(path("bom2.safetensors")));
}

void TestCliLocale::splitWithNan_data()
{
    QTest::addColumn<QString>("split");
    QTest::newRow("50/nan/nan") << "50/nan/nan";
    QTest::newRow("nan/50/50") << "nan/50/50";
    QTest::newRow("inf/0/0") << "inf/0/0";
    QTest::newRow("0/50/50") << "0/50/50";
    QTest::newRow("120/-10/-10") << "120/-10/-10";
}

void TestCliLocale::splitWithNan()
{
    QFETCH(QString, split);
    const RunResult r = run({"train", "xor.csv", "--split", split, "--epochs", "1", "--quiet",
                             "--out", "split.safetensors"});
    QVERIFY2(r.code == 2, qPrintable(describe(r)));
    // The message is about the flag given, not --val-split or --test-split.
    QVERIFY2(r.err.contains("--split") && !r.err.contains("--val-split") &&
                 r.err.contains("three percentages"),
             qPrintable(r.err));
    QVERIFY(!QFile::exists(path("split.safetensors")));
}

void TestCliLocale::infoShowsCreatedByPrintable()
{
    RunResult r =
        run({"train", "xor.csv", "--epochs", "1", "--quiet", "--out", "plain.safetensors"});
    QVERIFY2(r.code == 0, qPrintable(describe(r)));
    // Rewrite "created_by" in the JSON header with escape sequences (JSON-escaped, as a writer
    // would put them); tensor offsets count from the end of the header, so its length may change.
    const QByteArray bytes = clitest::readBytes(path("plain.safetensors"));
    QVERIFY(bytes.size() > 8);
    quint64 n = 0;
    for (int i = 7; i >= 0; --i)
        n = (n << 8) | static_cast<uchar>(bytes[i]);
    QByteArray header = bytes.mid(8, static_cast<qsizetype>(n));
    const QRegularExpression key(R"re("created_by":"[^"]*")re");
    const auto m = key.match(QString::fromUtf8(header));
    QVERIFY2(m.hasMatch(), header.left(300).constData());
    header.replace(m.captured(0).toUtf8(), R"("created_by":"[2J]0;pwned ironlearn")");
    QByteArray out(8, '\0');
    for (int i = 0; i < 8; ++i)
        out[i] = static_cast<char>((quint64(header.size()) >> (8 * i)) & 0xff);
    out += header + bytes.mid(8 + static_cast<qsizetype>(n));
    QVERIFY(clitest::writeBytes(path("evil.safetensors"), out));
    r = run({"info", "evil.safetensors"});
    if (r.code == 0) {
        QVERIFY2(!r.out.contains(QChar(0x1b)) && !r.out.contains(QChar(0x07)), qPrintable(r.out));
        QVERIFY2(r.out.contains("\\x1b"), qPrintable(r.out));
    } else {
        QVERIFY2(!r.err.contains(QChar(0x1b)), qPrintable(r.err));
    }
}

// A CSV's labels and header with escape sequences: train's and evaluate's summaries (the
// per-class table, the confusion matrix, the baselines line) show them escaped.
void TestCliLocale::labelsWithEscapesAreShownEscaped()
{
    QByteArray csv = "a,b,\x1b[31mlabel\n";
    for (int i = 0; i < 3; ++i)
        csv += "0,0,\x1b[2Jx\n0,1,y\n1,0,y\n1,1,\x1b[2Jx\n";
    QVERIFY(clitest::writeBytes(path("escapes.csv"), csv));
    RunResult r = run({"train", "escapes.csv", "--epochs", "2", "--out", "escapes.safetensors"});
    QVERIFY2(r.code == 0, qPrintable(describe(r)));
    QVERIFY2(!r.out.contains(QChar(0x1b)) && !r.err.contains(QChar(0x1b)), qPrintable(describe(r)));
    QVERIFY2(r.out.contains("\\x1b[2Jx"), qPrintable(r.out));
    r = run({"evaluate", "escapes.safetensors", "escapes.csv"});
    QVERIFY2(r.code == 0, qPrintable(describe(r)));
    QVERIFY2(!r.out.contains(QChar(0x1b)) && !r.err.contains(QChar(0x1b)), qPrintable(describe(r)));
}

// --out "" is a usage error naming the option (before: a Qt warning, then ": cannot create the
// directory"), and nothing is created.
void TestCliLocale::exportWithEmptyOut()
{
    RunResult r = run({"train", "xor.csv", "--epochs", "1", "--quiet", "--out", "e.safetensors"});
    QVERIFY2(r.code == 0, qPrintable(describe(r)));
    for (const char* to : {"pytorch", "onnx"}) {
        r = run({"export", "e.safetensors", "--to", to, "--out", ""});
        QVERIFY2(r.code == 2 && clitest::isOneLine(r.err) && r.err.contains("--out") &&
                     !r.err.contains("QDir"),
                 qPrintable(describe(r)));
    }
}

QTEST_GUILESS_MAIN(TestCliLocale)
#include "TestCliLocale.moc"
