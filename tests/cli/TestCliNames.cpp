// ironlearn-cli on names, end to end: train, generate, evaluate and broken files, with the real
// executable run by QProcess in a temporary directory.
#include "CliRunner.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

namespace {

using clitest::readBytes;
using clitest::writeBytes;

} // namespace

class TestCliNames : public CliTestCase {
    Q_OBJECT

public:
    TestCliNames() { m_oneThread = true; }

private slots:
    void initTestCase();
    void trainWritesMetrics();
    void generateLines();
    void generateIsSeeded();
    void generateJson();
    void generateUsageErrors_data();
    void generateUsageErrors();
    void generateNeedsNamesModel();
    void generateWithPrefix();
    void prefixErrors();
    void temperatureSweep();
    void topKOverALargeVocabulary();
    void publishedSplitProtocol();
    void evaluateNames();
    void sampleWithDefaults();
    void brokenFiles_data();
    void brokenFiles();
    void presetCarriesItsRecipe();
};

// --top-k over a 10,000-symbol vocabulary: the selection is linear per character (it was
// O(V * K): 10^8 steps a character for --top-k 9999; 60 names of 8 characters take 0.3 s now,
// 20 of them took 5 s before, and a sweep hours).
void TestCliNames::topKOverALargeVocabulary()
{
    // 2,000 names of five distinct CJK characters each: 10,000 symbols, each used once.
    QString text;
    for (int i = 0; i < 2000; ++i) {
        for (int j = 0; j < 5; ++j)
            text += QChar(static_cast<char16_t>(0x4E00 + i * 5 + j));
        text += '\n';
    }
    QVERIFY(writeBytes(path("wide.txt"), text.toUtf8()));
    RunResult r = run({"train", "wide.txt", "--steps", "2", "--quiet", "--out", "wide.safetensors",
                       "--layers", "embedding:4,dense:8,relu,dense"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QElapsedTimer timer;
    timer.start();
    r = run({"generate", "wide.safetensors", "--count", "60", "--top-k", "9999", "--max-length",
             "8", "--seed", "2", "--json"});
    const qint64 ms = timer.elapsed();
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QCOMPARE(QJsonDocument::fromJson(r.out.toUtf8()).object()["names"].toArray().size(), 60);
    QVERIFY2(ms < (IRONLEARN_SANITIZED ? 15000 : 5000), qPrintable(QString("%1 ms").arg(ms)));
}

// --preset wavenet trains with its recipe (adamw, lr 0.001, batch 32, ...), says so, and an
// option given changes only itself.
void TestCliNames::presetCarriesItsRecipe()
{
    RunResult r = run({"train", "names.txt", "--preset", "wavenet", "--context", "8", "--steps",
                       "2", "--out", "wavenet.safetensors"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains("preset wavenet: --optimizer adamw --lr 0.001 --batch 32 --epochs 25 "
                            "--weight-decay 0.05 --label-smoothing 0"),
             qPrintable(r.err));
    QVERIFY2(r.err.contains("adamw, lr 0.001 "), qPrintable(r.err));
    r = run({"train", "names.txt", "--preset", "wavenet", "--context", "8", "--steps", "2", "--lr",
             "0.01", "--out", "wavenet2.safetensors"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.err.contains("adamw, lr 0.01 "), qPrintable(r.err));
    // The default preset has none: the task's defaults.
    r = run({"train", "names.txt", "--steps", "2", "--out", "plain.safetensors"});
    QVERIFY2(r.code == 0 && !r.err.contains("preset "), qPrintable(r.err));
    r = run({"train", "--help"});
    QVERIFY2(r.out.contains("; trains with --optimizer adamw"), qPrintable(r.out));
}

void TestCliNames::initTestCase()
{
    QVERIFY(m_dir.isValid());
    // 400 real names, so a short run already learns something.
    const QList<QByteArray> lines = readBytes(IRONLEARN_SAMPLES "/names-ssa2018.txt").split('\n');
    QVERIFY(lines.size() > 400);
    QVERIFY(writeBytes(path("names.txt"), lines.mid(0, 400).join('\n') + '\n'));
    const RunResult r = run({"train", "names.txt", "--steps", "300", "--quiet", "--out",
                             "names.safetensors", "--metrics-json", "m.json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(QFile::exists(path("names.safetensors")));
}

void TestCliNames::trainWritesMetrics()
{
    const QJsonObject m = QJsonDocument::fromJson(readBytes(path("m.json"))).object();
    QCOMPARE(m["task"].toString(), QString("names"));
    for (const char* key : {"val_cross_entropy", "ngram_val_cross_entropy", "innovation_rate"})
        QVERIFY2(m[key].isDouble(), key);
    QCOMPARE(m["metrics_on"].toString(), QString("validation"));
    QVERIFY(m["val_cross_entropy"].toDouble() < 3.3); // uniform over 27 symbols: ln 27 = 3.30
    // The innovation rate at every evaluation, in step order: what memorising looks like.
    const QJsonArray history = m["innovation_rate_history"].toArray();
    QVERIFY2(history.size() >= 2, qPrintable(QString::number(history.size())));
    qint64 last = -1;
    for (const auto& point : history) {
        const QJsonObject o = point.toObject();
        QVERIFY(o["step"].toInteger() > last);
        last = o["step"].toInteger();
        const double rate = o["innovation_rate"].toDouble(-1);
        QVERIFY(rate >= 0 && rate <= 1);
    }
    QVERIFY(last <= m["steps"].toInteger());
}

void TestCliNames::generateLines()
{
    const RunResult r = run({"generate", "names.safetensors", "--count", "12", "--seed", "3"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QStringList lines = r.out.trimmed().split('\n');
    QCOMPARE(lines.size(), 13);
    int fresh = 0;
    for (int i = 0; i < 12; ++i) {
        QVERIFY2(lines[i].startsWith("NEW ") || lines[i].startsWith("SEEN "), qPrintable(lines[i]));
        QVERIFY(lines[i].mid(5).trimmed().size() > 0);
        fresh += lines[i].startsWith("NEW") ? 1 : 0;
    }
    QVERIFY2(lines[12].startsWith("innovation rate: ") &&
                 lines[12].contains(QString("(%1 of 12 names").arg(fresh)),
             qPrintable(lines[12]));
}

void TestCliNames::generateIsSeeded()
{
    const QStringList args{
        "generate", "names.safetensors", "--count", "8", "--temperature", "1.2", "--top-k",
        "5",        "--max-length",      "12"};
    const RunResult a = run(args + QStringList{"--seed", "9"});
    const RunResult b = run(args + QStringList{"--seed", "9"});
    const RunResult c = run(args + QStringList{"--seed", "10"});
    QCOMPARE(a.code, 0);
    QCOMPARE(a.out, b.out);
    QVERIFY(a.out != c.out);
}

void TestCliNames::generateJson()
{
    const RunResult r =
        run({"generate", "names.safetensors", "--count", "20", "--seed", "4", "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QJsonParseError e;
    const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8(), &e).object();
    QCOMPARE(e.error, QJsonParseError::NoError);
    const QJsonArray names = j["names"].toArray();
    QCOMPARE(names.size(), 20);
    int fresh = 0;
    for (const auto& n : names) {
        QVERIFY(!n.toObject()["name"].toString().isEmpty());
        fresh += n.toObject()["new"].toBool() ? 1 : 0;
    }
    QCOMPARE(j["new_count"].toInt(), fresh);
    QCOMPARE(j["innovation_rate"].toDouble(), fresh / 20.0);
    QCOMPARE(j["temperature"].toDouble(), 1.0);
}

void TestCliNames::generateUsageErrors_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::newRow("temperature 5") << QStringList{"--temperature", "5"};
    QTest::newRow("temperature 0") << QStringList{"--temperature", "0"};
    QTest::newRow("temperature text") << QStringList{"--temperature", "warm"};
    QTest::newRow("count 0") << QStringList{"--count", "0"};
    QTest::newRow("top-k -1") << QStringList{"--top-k", "-1"};
    QTest::newRow("unknown option") << QStringList{"--colour"};
    QTest::newRow("sweep not three numbers") << QStringList{"--sweep", "0.2:2"};
    QTest::newRow("sweep downwards") << QStringList{"--sweep", "2:1:0.1"};
    QTest::newRow("sweep step 0") << QStringList{"--sweep", "0.5:1:0"};
    QTest::newRow("sweep past 3") << QStringList{"--sweep", "1:4:1"};
    QTest::newRow("sweep and temperature")
        << QStringList{"--sweep", "0.5:1:0.5", "--temperature", "1"};
}

void TestCliNames::generateUsageErrors()
{
    QFETCH(QStringList, args);
    const RunResult r = run(QStringList{"generate", "names.safetensors"} + args);
    QCOMPARE(r.code, 2);
    QVERIFY(r.out.isEmpty());
    QVERIFY2(r.err.trimmed().count('\n') == 0, qPrintable(r.err));
}

void TestCliNames::generateNeedsNamesModel()
{
    QVERIFY(run({"train", ":sample/xor.csv", "--steps", "5", "--quiet", "--out", "xor.safetensors"})
                .code == 0);
    const RunResult r = run({"generate", "xor.safetensors"});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.startsWith("error: xor.safetensors: a tabular model"), qPrintable(r.err));
    QCOMPARE(run({"generate", "missing.safetensors"}).code, 1);
}

// Every name starts with the prefix (lowered, as the model is), the rest drawn by the model;
// the same seed gives the same names.
void TestCliNames::generateWithPrefix()
{
    const QStringList args{"generate", "names.safetensors", "--count", "30", "--prefix", "Ma",
                           "--json"};
    const RunResult r = run(args);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(j["prefix"].toString(), QString("Ma"));
    const QJsonArray names = j["names"].toArray();
    QCOMPARE(names.size(), 30);
    QSet<QString> distinct;
    for (const auto& n : names) {
        const QString name = n.toObject()["name"].toString();
        QVERIFY2(name.startsWith("ma"), qPrintable(name));
        distinct.insert(name);
    }
    QVERIFY2(distinct.size() > 10, "the model draws what follows the prefix");
    QCOMPARE(run(args).out, r.out);
    // The drawn characters are likely ones: better than uniform over the 27 symbols.
    QVERIFY(j["mean_log_likelihood"].toDouble() > -std::log(27.0));
}

void TestCliNames::prefixErrors()
{
    RunResult r = run({"generate", "names.safetensors", "--prefix", "a7"});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains("the prefix \"a7\"") && r.err.contains("'7' (U+0037)"),
             qPrintable(r.err));
    r = run({"generate", "names.safetensors", "--prefix", "anna", "--max-length", "4"});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains("names are cut at 4"), qPrintable(r.err));
    QVERIFY(r.out.isEmpty());
}

// Hotter sampling strays from the training names and from what the model finds likely: the
// innovation rate rises and the mean log-likelihood of the draws falls from 0.2 to 2.0.
void TestCliNames::temperatureSweep()
{
    const RunResult r = run(
        {"generate", "names.safetensors", "--sweep", "0.2:2.0:0.6", "--count", "200", "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QJsonArray rows = QJsonDocument::fromJson(r.out.toUtf8()).object()["sweep"].toArray();
    QCOMPARE(rows.size(), 4); // 0.2, 0.8, 1.4, 2.0
    QCOMPARE(rows[3].toObject()["temperature"].toDouble(), 2.0);
    for (int i = 1; i < rows.size(); ++i) {
        const QJsonObject a = rows[i - 1].toObject(), b = rows[i].toObject();
        QVERIFY(b["mean_log_likelihood"].toDouble() < a["mean_log_likelihood"].toDouble());
    }
    QVERIFY(rows[3].toObject()["innovation_rate"].toDouble() >
            rows[0].toObject()["innovation_rate"].toDouble() + 0.2);
    const RunResult text = run({"generate", "names.safetensors", "--sweep", "0.5:1:0.5"});
    QVERIFY2(text.code == 0, qPrintable(text.err));
    QVERIFY2(text.out.startsWith("temperature") && text.out.contains("\n0.50 ") &&
                 text.out.contains("\n1.00 ") && text.out.contains("500 names at each"),
             qPrintable(text.out));
}

// --split 80/10/10 --split-seed S: names held out for testing are measured apart, never
// trained on; a resumed model keeps them; another seed draws others.
void TestCliNames::publishedSplitProtocol()
{
    const auto metrics = [this](const QString& file) {
        return QJsonDocument::fromJson(readBytes(path(file))).object();
    };
    RunResult r =
        run({"train", "names.txt", "--split", "80/10/10", "--split-seed", "5", "--steps", "100",
             "--quiet", "--out", "split.safetensors", "--metrics-json", "split.json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("test cross-entropy: ") && r.out.contains("held out for testing"),
             qPrintable(r.out));
    QVERIFY2(r.out.contains("innovation rate during training (200 names at T = 1): step "),
             qPrintable(r.out));
    const QJsonObject a = metrics("split.json");
    const int distinct = a["test_names"].toInt();
    QVERIFY2(distinct >= 35 && distinct <= 40, qPrintable(QString::number(distinct)));
    QVERIFY(a["test_cross_entropy"].toDouble() < 3.3);
    QVERIFY(a["ngram_test_cross_entropy"].isDouble());

    r = run({"train", "names.txt", "--resume", "split.safetensors", "--steps", "20", "--quiet",
             "--out", "split2.safetensors", "--metrics-json", "split2.json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QJsonObject b = metrics("split2.json");
    QCOMPARE(b["test_names"].toInt(), distinct);
    QCOMPARE(b["ngram_test_cross_entropy"].toDouble(), a["ngram_test_cross_entropy"].toDouble());

    // Its data settings too: a context or case other than the model's is refused, not ignored;
    // the model's own passes.
    r = run(
        {"train", "names.txt", "--resume", "split.safetensors", "--context", "5", "--steps", "21"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("--context: split.safetensors was trained with a context of 3, and "
                            "--resume continues it so (leave --context out)"),
             qPrintable(r.err));
    r = run(
        {"train", "names.txt", "--resume", "split.safetensors", "--keep-case", "--steps", "21"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("--keep-case: split.safetensors was trained without --keep-case"),
             qPrintable(r.err));
    r = run({"train", "names.txt", "--resume", "split.safetensors", "--context", "3", "--steps",
             "21", "--quiet", "--out", "split4.safetensors"});
    QVERIFY2(r.code == 0, qPrintable(r.err));

    r = run({"train", "names.txt", "--split", "80/10/10", "--split-seed", "6", "--steps", "1",
             "--quiet", "--out", "split3.safetensors", "--metrics-json", "split3.json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(metrics("split3.json")["ngram_test_cross_entropy"].toDouble() !=
            a["ngram_test_cross_entropy"].toDouble());

    for (const QStringList& bad : {QStringList{"--split", "80/10"},
                                   {"--split", "80/20/10"},
                                   {"--split", "80/10/10", "--val-split", "0.1"}}) {
        r = run(QStringList{"train", "names.txt", "--steps", "1"} + bad);
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("--split"), qPrintable(r.err));
    }
}

void TestCliNames::evaluateNames()
{
    QVERIFY(writeBytes(path("other.txt"), "emma\nnoah\nliam\n"));
    const RunResult r =
        run({"evaluate", "names.safetensors", "other.txt", "--metrics-json", "e.json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("other.txt cross-entropy: ") && r.out.contains("counting 4-grams"),
             qPrintable(r.out));
    const QJsonObject m = QJsonDocument::fromJson(readBytes(path("e.json"))).object();
    QVERIFY(m["ngram_val_cross_entropy"].isDouble());
    QCOMPARE(m["metrics_on"].toString(), QString("other.txt"));
    // A character the model never saw: one line naming the file and line.
    QVERIFY(writeBytes(path("new.txt"), "emma\nzoë\n"));
    const RunResult bad = run({"evaluate", "names.safetensors", "new.txt"});
    QCOMPARE(bad.code, 1);
    QVERIFY2(bad.err.startsWith("error: new.txt:2: 'ë' (U+00EB) is not in the model's vocabulary"),
             qPrintable(bad.err));
}

void TestCliNames::sampleWithDefaults()
{
    const RunResult r = run({"train", ":sample/names-ssa2018.txt", "--steps", "50", "--context",
                             "2", "--quiet", "--out", "ssa.safetensors"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("counting 3-grams"), qPrintable(r.out));
    QVERIFY(r.out.contains("innovation rate"));
}

void TestCliNames::brokenFiles_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("error");
    QTest::newRow("invalid UTF-8") << QByteArray("emma\nzo\xEB\n") << QStringList() << 1
                                   << "error: broken.txt:2: invalid UTF-8";
    QTest::newRow("empty") << QByteArray() << QStringList() << 1
                           << "error: broken.txt: the file is empty";
    QTest::newRow("blank lines") << QByteArray("\n\n \n") << QStringList() << 1
                                 << "error: broken.txt: no names";
    QTest::newRow("long line") << QByteArray(100000, 'x') << QStringList() << 1
                               << "error: broken.txt:1: a line of 100000 characters";
    QTest::newRow("context 17") << QByteArray("emma\n") << QStringList{"--context", "17"} << 2
                                << "ironlearn-cli train: --context must be between 1 and 16";
}

void TestCliNames::brokenFiles()
{
    QFETCH(QByteArray, bytes);
    QFETCH(QStringList, options);
    QFETCH(int, code);
    QFETCH(QString, error);
    QVERIFY(writeBytes(path("broken.txt"), bytes));
    QFile::remove(path("broken.safetensors"));
    const RunResult r = run(QStringList{"train", "broken.txt", "--quiet"} + options);
    QCOMPARE(r.code, code);
    QVERIFY2(r.err.startsWith(error), qPrintable(r.err));
    QVERIFY2(r.err.trimmed().count('\n') == 0, qPrintable(r.err));
    QVERIFY(!QFile::exists(path("broken.safetensors"))); // nothing written on failure
}

QTEST_GUILESS_MAIN(TestCliNames)
#include "TestCliNames.moc"
