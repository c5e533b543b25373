// Where the samples come from (src/io/Samples.h): IRONLEARN_SAMPLES_DIR replaces the search;
// ":sample/NAME" and the ":/samples/NAME" that earlier versions stored in recent files both open
// the file there; SOURCES.md and paths out of the directory are not samples; and an empty or
// missing directory is explained, not an empty list. (The installed layout, PREFIX/bin next to
// PREFIX/share/ironlearn/samples, is checked by testCliDevices with a copied program.)
#include "Samples.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace il::io;

class TestSamples : public QObject {
    Q_OBJECT

private slots:
    void init() { qunsetenv("IRONLEARN_SAMPLES_DIR"); }
    void cleanup() { qunsetenv("IRONLEARN_SAMPLES_DIR"); }
    void environmentDirectory();
    void emptyDirectoryIsExplained();
};

void TestSamples::environmentDirectory()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    for (const char* name : {"b.csv", "a.png", "c.csv", "c.txt", "SOURCES.md"}) {
        QFile f(dir.filePath(name));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("x\n");
    }
    qputenv("IRONLEARN_SAMPLES_DIR", dir.path().toUtf8());
    QCOMPARE(samplesDirectory(), dir.path());
    QCOMPARE(sampleFiles(), QStringList({"a.png", "b.csv", "c.csv", "c.txt"}));
    QCOMPARE(samplePath("b.csv"), dir.filePath("b.csv"));
    QVERIFY(samplePath("SOURCES.md").isEmpty());
    QVERIFY(samplePath("../b.csv").isEmpty());
    QVERIFY(samplePath("missing.csv").isEmpty());
    // Without the suffix when one sample alone has the name; never a guess between two.
    QCOMPARE(samplePath("b"), dir.filePath("b.csv"));
    QCOMPARE(resolveSampleReference(":sample/a"), dir.filePath("a.png"));
    QVERIFY(samplePath("c").isEmpty());
    QVERIFY(samplePath("SOURCES").isEmpty());
    QCOMPARE(resolveSampleReference(":sample/b.csv"), dir.filePath("b.csv"));
    QCOMPARE(resolveSampleReference(":/samples/b.csv"), dir.filePath("b.csv"));
    QVERIFY(resolveSampleReference(":sample/missing.csv").isEmpty());
    QCOMPARE(resolveSampleReference("/data/own.csv"), QString("/data/own.csv"));
    QVERIFY(isSamplePath(dir.filePath("b.csv")));
    QVERIFY(!isSamplePath("/data/own.csv"));
    QVERIFY(samplesDirectoryProblem().isEmpty());
}

void TestSamples::emptyDirectoryIsExplained()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    qputenv("IRONLEARN_SAMPLES_DIR", dir.path().toUtf8());
    QVERIFY(samplesDirectory().isEmpty());
    QVERIFY(sampleFiles().isEmpty());
    QVERIFY(resolveSampleReference(":sample/iris.csv").isEmpty());
    const QString why = samplesDirectoryProblem();
    QVERIFY2(why.contains("IRONLEARN_SAMPLES_DIR") && why.contains(dir.path()), qPrintable(why));
}

QTEST_GUILESS_MAIN(TestSamples)
#include "TestSamples.moc"
