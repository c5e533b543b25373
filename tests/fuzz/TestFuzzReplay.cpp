// Replays a fuzz target's committed corpus (tests/fuzz/corpus/<target>/: the seeds, and every
// input a fuzz run found a problem with) through the target, so the normal and asan builds
// check them on every test run. A broken check aborts the test with the file's name printed
// before it.
#include "FuzzSupport.h"

#include <QDir>
#include <QFile>
#include <QTest>

class TestFuzzReplay : public QObject {
    Q_OBJECT

private slots:
    void replay_data()
    {
        QTest::addColumn<QString>("file");
        const QDir dir(QStringLiteral(IRONLEARN_FUZZ_CORPUS));
        const QStringList files = dir.entryList(QDir::Files, QDir::Name);
        QVERIFY2(files.size() >= 3, qPrintable("too few inputs in " + dir.path()));
        for (const QString& name : files)
            QTest::newRow(qPrintable(name)) << dir.filePath(name);
    }

    void replay()
    {
        QFETCH(QString, file);
        QFile f(file);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray bytes = f.readAll();
        std::fprintf(stderr, "replaying %s\n", qPrintable(file));
        LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.constData()),
                               static_cast<size_t>(bytes.size()));
    }
};

QTEST_GUILESS_MAIN(TestFuzzReplay)
#include "TestFuzzReplay.moc"
