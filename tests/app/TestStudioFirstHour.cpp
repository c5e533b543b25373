// A learner's first hour, scripted end to end on the real window from a fresh start with no
// settings: each guided start, a table with a missing value, a Greek names list and a colour
// photo; the learning rate changed, two runs compared, a model saved, reopened and continued.
// Along the way every status-bar message is recorded, and every visible text is read at each
// stop: none may name a CLI flag, and no run's text may outlive the data it was about.
#include "StudioTestCase.h"

#include "RunCompareDialog.h"
#include "RunListPanel.h"
#include "Samples.h"
#include "StudioHelp.h"

#include <QAbstractButton>
#include <QCommandLinkButton>
#include <QDoubleSpinBox>
#include <QFile>
#include <QLabel>
#include <QListWidget>
#include <QRegularExpression>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>

using namespace studiotest;
using namespace il::app;

class TestStudioFirstHour : public StudioTestCase {
    Q_OBJECT

private slots:
    void initTestCase() { isolateSettings("testStudioFirstHour"); }
    void cleanupTestCase() { closeWindow(); }
    // On a failure: what the learner was told, in order.
    void cleanup()
    {
        if (QTest::currentTestFailed())
            qWarning("status messages: %s", qPrintable(m_messages.join("\n  ")));
    }
    void firstHour();

private:
    // Every visible text of the window and its open dialogs (labels, buttons, tool tips, the
    // status bar) that names a CLI flag ("--missing", "--image-size 256").
    QStringList flagsShown() const;
    // The texts checked at each stop of the hour; what they find is reported at the end, so
    // that one finding does not cut the hour short (a failed check ends QTRY waits at once).
    void checkNoFlags(const char* where);
    // A status message about a run (its end, its verdict) must not stay over new data.
    void checkNoStaleRunText(const char* where);
    QStringList m_problems;
    void setRate(double lr);
    QString writeFile(const QString& name, const QByteArray& bytes);

    QTemporaryDir m_dir;
    QStringList m_messages; // every status-bar message, in order
};

namespace {
const QRegularExpression kFlag(R"((^|[\s"'(`])--[a-z][a-z-]+)");
}

QStringList TestStudioFirstHour::flagsShown() const
{
    QStringList found;
    // A flag named as the CLI's equivalent of a control ("the CLI's --threads") is a pointer
    // for later, not a dead end: only a flag offered as the way out is a finding.
    auto scan = [&](const QString& text, const QObject* where) {
        QString rest = text;
        rest.remove(QRegularExpression(R"(the CLI's --[a-z][a-z-]+)"));
        if (rest.contains(kFlag)) found << where->objectName() + ": " + text;
    };
    for (QWidget* top : QApplication::topLevelWidgets()) {
        if (!top->isVisible()) continue;
        QList<QWidget*> widgets = top->findChildren<QWidget*>();
        widgets << top;
        for (QWidget* w : widgets) {
            if (!w->isVisible()) continue;
            scan(w->toolTip(), w);
            scan(w->statusTip(), w);
            if (auto* label = qobject_cast<QLabel*>(w)) scan(label->text(), w);
            if (auto* button = qobject_cast<QAbstractButton*>(w)) scan(button->text(), w);
        }
        for (QAction* a : top->findChildren<QAction*>()) {
            scan(a->toolTip(), a);
            scan(a->statusTip(), a);
        }
    }
    for (const QString& m : m_messages)
        scan(m, m_window->statusBar());
    return found;
}

void TestStudioFirstHour::checkNoFlags(const char* where)
{
    for (const QString& flag : flagsShown())
        m_problems << QString(where) + ": " + flag;
}

void TestStudioFirstHour::checkNoStaleRunText(const char* where)
{
    const QString shown = m_window->statusBar()->currentMessage();
    static const QRegularExpression run(
        R"(Finished|Stopped|Cancelled|beats|is kept|does not beat|memoris)");
    if (shown.contains(run)) m_problems << QString(where) + ": stale status text: " + shown;
}

void TestStudioFirstHour::setRate(double lr)
{
    find<QTabWidget>("setupTabWidget")->setCurrentIndex(2);
    auto* rate = find<QDoubleSpinBox>("learningRateSpinBox");
    QVERIFY(rate->isVisible());
    rate->setValue(lr);
    QCOMPARE(session()->config().schedule.lrMax, static_cast<float>(lr));
}

QString TestStudioFirstHour::writeFile(const QString& name, const QByteArray& bytes)
{
    const QString path = m_dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size()) return {};
    return path;
}

void TestStudioFirstHour::firstHour()
{
    QSettings().clear();
    newWindow();
    connect(m_window->statusBar(), &QStatusBar::messageChanged, this, [this](const QString& m) {
        if (!m.isEmpty()) m_messages << m;
    });
    QVERIFY(m_window->help()->showWelcomeOnFirstStart()); // as main() does
    QVERIFY(m_window->help()->isWelcomeShown());
    checkNoFlags("welcome");

    // ---- the table start: the rate changed, two runs compared ----------------------------------
    find<QCommandLinkButton>("tableStartButton")->click();
    QVERIFY(session()->task());
    checkNoFlags("iris opened");
    setRate(0.01);
    train(40, true);
    Dialogs::setNextAnswer(QMessageBox::Discard);
    find<QPushButton>("resetButton")->click();
    QCOMPARE(session()->trainedSteps(), 0);
    setRate(0.03);
    train(40, true);
    auto* runs = find<QTableView>("runsTableView");
    QCOMPARE(runs->model()->rowCount(), 2);
    runs->selectionModel()->select(runs->model()->index(0, 0),
                                   QItemSelectionModel::Select | QItemSelectionModel::Rows);
    runs->selectionModel()->select(runs->model()->index(1, 0),
                                   QItemSelectionModel::Select | QItemSelectionModel::Rows);
    find<QPushButton>("compareButton")->click();
    RunCompareDialog* compare = find<RunListPanel>("runListPanel")->compareDialog();
    QVERIFY(compare);
    QVERIFY(QTest::qWaitForWindowExposed(compare));
    QCOMPARE(compare->differingSettings(), QStringList{"Learning rate"});
    checkNoFlags("runs compared");
    compare->close();
    const QString model = m_dir.filePath("iris.safetensors");
    saveAs(model);
    const int64_t savedSteps = session()->trainedSteps();

    // ---- the image start, then the names start --------------------------------------------------
    m_window->help()->showWelcome();
    find<QCommandLinkButton>("imageStartButton")->click();
    QVERIFY(session()->task());
    checkNoStaleRunText("camera opened");
    checkNoFlags("camera opened");
    setTrainingSize(64);
    find<QLineEdit>("specLineEdit")->setText(kSmallImageSpec);
    emit find<QLineEdit>("specLineEdit")->returnPressed();
    train(20);
    checkNoFlags("camera trained");

    m_window->help()->showWelcome();
    Dialogs::setNextAnswer(QMessageBox::Discard);
    find<QCommandLinkButton>("namesStartButton")->click();
    QVERIFY(session()->task());
    checkNoStaleRunText("names opened");
    checkNoFlags("names opened");

    // ---- a Greek names list: trains and generates
    // ------------------------------------------------
    const QString greek = writeFile(
        "greek.txt", QString("Αλέξανδρος\nΑθηνά\nΔημήτρης\nΕλένη\nΓιώργος\nΜαρία\nΝίκος\nΣοφία\n"
                             "Κώστας\nΙωάννα\nΠαναγιώτης\nΧριστίνα\nΒασίλης\nΚατερίνα\n")
                         .toUtf8());
    QVERIFY(!greek.isEmpty());
    QVERIFY(m_window->openFile(greek));
    QTRY_COMPARE(session()->dataPath(), greek);
    checkNoStaleRunText("greek opened");
    train(30);
    find<QPushButton>("generateButton")->click();
    QTRY_VERIFY_WITH_TIMEOUT(find<QListWidget>("generatedListWidget")->count() > 0, kTrainingWait);
    checkNoFlags("greek trained");

    // ---- a colour photo -------------------------------------------------------------------------
    Dialogs::setNextAnswer(QMessageBox::Discard);
    QVERIFY(m_window->openFile(il::io::samplePath("astronaut.png")));
    QTRY_VERIFY(session()->dataPath().endsWith("astronaut.png"));
    checkNoStaleRunText("photo opened");
    checkNoFlags("photo opened");
    setTrainingSize(48);
    find<QLineEdit>("specLineEdit")->setText(kSmallImageSpec);
    emit find<QLineEdit>("specLineEdit")->returnPressed();
    train(10);

    // ---- a table with one empty cell: the bar offers the studio's choices
    // --------------------------
    QByteArray csv = "size,rooms,price\n";
    for (int i = 0; i < 60; ++i)
        csv += QByteArray::number(40 + i) + "," +
               (i == 5 ? QByteArray() : QByteArray::number(1 + i % 4)) + "," +
               QByteArray::number(100 + 3 * i + 10 * (i % 4)) + "\n";
    const QString gaps = writeFile("flats.csv", csv);
    Dialogs::setNextAnswer(QMessageBox::Discard);
    QVERIFY(!m_window->openFile(gaps)); // refused, with the choices
    QTRY_VERIFY(find<QWidget>("missingChoiceWidget")->isVisible());
    checkNoFlags("missing value");
    QTest::mouseClick(find<QPushButton>("missingMeanButton"), Qt::LeftButton);
    QTRY_COMPARE(session()->dataPath(), gaps);
    checkNoStaleRunText("flats opened");
    train(30, true);
    checkNoFlags("flats trained");

    // ---- the saved model, reopened and continued
    // -------------------------------------------------
    Dialogs::setNextAnswer(QMessageBox::Discard);
    QSignalSpy opened(session(), &Session::modelOpened);
    QVERIFY(m_window->openFile(model));
    QTRY_COMPARE(opened.count(), 1);
    QCOMPARE(session()->trainedSteps(), savedSteps);
    QVERIFY(session()->task()); // the sample came back with it
    checkNoStaleRunText("model reopened");
    train(20);
    QVERIFY(session()->trainedSteps() > savedSteps);
    checkNoFlags("the end");
    QVERIFY2(m_problems.isEmpty(), qPrintable("\n  " + m_problems.join("\n  ")));
}

QTEST_MAIN(TestStudioFirstHour)
#include "TestStudioFirstHour.moc"
