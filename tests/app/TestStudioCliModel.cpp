// A model trained by the CLI, taken into the studio: the model file records its data file (path,
// size, SHA-256), and the studio opens that data with the model when the file is unchanged,
// also from beside the model when both moved; an edited file is named in the status bar and the
// model opens without it. A model the studio saves records its data the same way.
#include "StudioTestCase.h"

#include "DataFileRecord.h"
#include "ModelFile.h"
#include "Samples.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QStatusBar>
#include <QTemporaryDir>

using namespace studiotest;

class TestStudioCliModel : public StudioWindowTestCase {
    Q_OBJECT

private slots:

    void cliModelOpensWithItsData();
    void editedDataIsNamedAndLeftOut();
    void movedFolderFindsTheDataBesideTheModel();
    void studioSaveRecordsTheData();

private:
    // Copies the iris sample into DIR and trains it there with the CLI; returns the model path.
    QString cliTrained(const QString& dir);
    // Opens MODEL through the session and waits until the studio adopted it.
    void openModel(const QString& model);
    QTemporaryDir m_dir;
};

QString TestStudioCliModel::cliTrained(const QString& dir)
{
    QDir().mkpath(dir);
    const QString csv = dir + "/flowers.csv";
    QFile::remove(csv);
    if (!QFile::copy(il::io::samplePath("iris.csv"), csv)) return {};
    QProcess cli;
    cli.setWorkingDirectory(dir);
    cli.start(IRONLEARN_CLI, {"train", "flowers.csv", "--steps", "20", "--quiet"});
    if (!cli.waitForFinished(120000) || cli.exitCode() != 0) {
        qWarning("%s", cli.readAllStandardError().constData());
        return {};
    }
    return dir + "/flowers.safetensors";
}

void TestStudioCliModel::openModel(const QString& model)
{
    QSignalSpy opened(session(), &il::app::Session::modelOpened);
    QVERIFY(session()->openModel(model));
    QTRY_COMPARE(opened.count(), 1);
}

void TestStudioCliModel::cliModelOpensWithItsData()
{
    const QString model = cliTrained(m_dir.filePath("first"));
    QVERIFY(!model.isEmpty());
    openModel(model);
    QVERIFY2(session()->task(), qPrintable(m_window->statusBar()->currentMessage()));
    QCOMPARE(QFileInfo(session()->dataPath()).canonicalFilePath(),
             QFileInfo(m_dir.filePath("first/flowers.csv")).canonicalFilePath());
    QCOMPARE(session()->trainedSteps(), 20);
}

void TestStudioCliModel::editedDataIsNamedAndLeftOut()
{
    const QString model = cliTrained(m_dir.filePath("edited"));
    QVERIFY(!model.isEmpty());
    // One value changed, same length: the size matches, the hash does not.
    QFile f(m_dir.filePath("edited/flowers.csv"));
    QVERIFY(f.open(QIODevice::ReadWrite));
    QByteArray bytes = f.readAll();
    const qsizetype at = bytes.indexOf("5.1");
    QVERIFY(at > 0);
    bytes[at] = '6';
    f.seek(0);
    f.write(bytes);
    f.close();
    openModel(model);
    QVERIFY(!session()->task());
    const QString shown = m_window->statusBar()->currentMessage();
    QVERIFY2(shown.contains("flowers.csv has changed since the model was trained"),
             qPrintable(shown));
}

void TestStudioCliModel::movedFolderFindsTheDataBesideTheModel()
{
    const QString model = cliTrained(m_dir.filePath("before"));
    QVERIFY(!model.isEmpty());
    QVERIFY(QDir().rename(m_dir.filePath("before"), m_dir.filePath("after")));
    openModel(m_dir.filePath("after/flowers.safetensors"));
    QVERIFY2(session()->task(), qPrintable(m_window->statusBar()->currentMessage()));
    QCOMPARE(QFileInfo(session()->dataPath()).canonicalFilePath(),
             QFileInfo(m_dir.filePath("after/flowers.csv")).canonicalFilePath());
}

void TestStudioCliModel::studioSaveRecordsTheData()
{
    openSample("iris");
    train(10);
    const QString path = m_dir.filePath("studio.safetensors");
    saveAs(path);
    auto backend = il::createCpuBackend(1);
    QString error;
    auto model = il::io::openModel(path, *backend, &error);
    QVERIFY2(model, qPrintable(error));
    const auto record = il::io::DataFileRecord::fromTask(model->info.task);
    QVERIFY(record);
    QFile data(il::io::samplePath("iris.csv"));
    QVERIFY(data.open(QIODevice::ReadOnly));
    QVERIFY(record->matches(data.readAll()));
}

QTEST_MAIN(TestStudioCliModel)
#include "TestStudioCliModel.moc"
