// A table with one empty cell opens in the studio: the error bar offers to drop the row, ignore
// the column or fill it with the column mean, each with the rows it affects (numbers as the
// locale writes them); each choice opens the table as it says, shows in the Data tab, can be
// changed there, is saved in the model file and comes back when the model is reopened. A file
// that will not open asks nothing about the trained model and leaves it alone. No message the
// studio shows names a CLI flag.
#include "StudioTestCase.h"

#include "ModelFile.h"
#include "TabularTask.h"

#include <QAbstractButton>
#include <QFile>
#include <QLabel>
#include <QRegularExpression>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>

using namespace studiotest;
using namespace il::app;

class TestStudioMissing : public StudioWindowTestCase {
    Q_OBJECT

private slots:
    void initTestCase(); // more than the fixture's
    void errorBarOffersChoices();
    void eachChoiceOpens_data();
    void eachChoiceOpens();
    void choiceChangesInDataTab();
    void choiceSavedWithModel_data();
    void choiceSavedWithModel();
    void failedOpenKeepsModel();
    void noFlagInMessages();

private:
    const il::tasks::TabularTask* table() const
    {
        return dynamic_cast<const il::tasks::TabularTask*>(session()->task().get());
    }
    int64_t tableRows() const
    {
        const auto* t = table();
        return t ? t->data().trainRows + t->data().valRows : -1;
    }
    // The error bar's choice for policy, clicked; waits for the table to open.
    void choose(const QString& policy);
    // Visible texts (labels, buttons, tool tips, the status bar) naming a CLI flag.
    QStringList flagsShown() const;

    QTemporaryDir m_dir;
    QString m_csv; // 1,200 rows, x2 empty on line 9
};

namespace {
constexpr int kRows = 1200;
const QString kPolicyButtons[][2] = {{"drop", "missingDropButton"},
                                     {"ignore", "missingIgnoreButton"},
                                     {"mean", "missingMeanButton"}};
} // namespace

void TestStudioMissing::initTestCase()
{
    isolateSettings("testStudioMissing");
    QVERIFY(m_dir.isValid());
    m_csv = m_dir.filePath("gaps.csv");
    QFile f(m_csv);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("x1,x2,x3,y\n");
    for (int i = 0; i < kRows; ++i) {
        const double x1 = (i % 37) / 37.0, x2 = (i % 23) / 23.0, x3 = (i % 11) / 11.0;
        const QByteArray b = i == 7 ? QByteArray() : QByteArray::number(x2, 'f', 4);
        f.write(QByteArray::number(x1, 'f', 4) + "," + b + "," + QByteArray::number(x3, 'f', 4) +
                "," + QByteArray::number(x1 + 2 * x2 - x3, 'f', 4) + "\n");
    }
}

void TestStudioMissing::choose(const QString& policy)
{
    for (const auto& [p, name] : kPolicyButtons)
        if (p == policy) {
            auto* button = find<QPushButton>(name);
            QTRY_VERIFY(button->isVisible());
            QTest::mouseClick(button, Qt::LeftButton);
        }
    QTRY_VERIFY(session()->task());
    QCOMPARE(session()->taskOptions().missing, policy);
}

void TestStudioMissing::errorBarOffersChoices()
{
    // German numbers: 1.200 rows.
    QLocale::setDefault(QLocale(QLocale::German, QLocale::Germany));
    QVERIFY(!m_window->openFile(m_csv));
    QVERIFY(!session()->task());
    QTRY_VERIFY(find<QWidget>("errorFrame")->isVisible());
    const QString error = find<QLabel>("errorLabel")->text();
    QVERIFY2(error.contains("gaps.csv:9") && error.contains("missing value"), qPrintable(error));
    QVERIFY2(!error.contains("--"), qPrintable(error));
    QVERIFY(find<QWidget>("missingChoiceWidget")->isVisible());
    const QString drop = find<QPushButton>("missingDropButton")->text();
    const QString ignore = find<QPushButton>("missingIgnoreButton")->text();
    const QString mean = find<QPushButton>("missingMeanButton")->text();
    QLocale::setDefault(QLocale::system());
    QCOMPARE(drop, QString("Drop rows with missing values: drops 1 of 1.200 rows"));
    QCOMPARE(ignore, QString("Ignore this column \u201cx2\u201d: keeps all 1.200 rows"));
    QCOMPARE(mean, QString("Fill with the column mean (train rows only): fills 1 row"));
}

void TestStudioMissing::eachChoiceOpens_data()
{
    QTest::addColumn<QString>("policy");
    QTest::addColumn<int>("rows");
    QTest::addColumn<QStringList>("features");
    QTest::newRow("drop") << "drop" << kRows - 1 << QStringList{"x1", "x2", "x3"};
    QTest::newRow("ignore") << "ignore" << kRows << QStringList{"x1", "x3"};
    QTest::newRow("mean") << "mean" << kRows << QStringList{"x1", "x2", "x3"};
}

void TestStudioMissing::eachChoiceOpens()
{
    QFETCH(QString, policy);
    QFETCH(int, rows);
    QFETCH(QStringList, features);
    QVERIFY(!m_window->openFile(m_csv));
    choose(policy);
    QCOMPARE(tableRows(), int64_t(rows));
    QCOMPARE(table()->schema().features, features);
    QCOMPARE(table()->schema().missing, policy);
    QCOMPARE(session()->inputWidth(), int64_t(features.size()));
    QVERIFY(!find<QWidget>("errorFrame")->isVisible());
    // The Data tab shows the choice, with its counts.
    auto* combo = find<QComboBox>("missingComboBox");
    QVERIFY(combo->isVisible());
    QCOMPARE(combo->currentData().toString(), policy);
    QCOMPARE(combo->count(), 3);
    QVERIFY2(combo->itemText(0).contains(QLocale().toString(kRows)),
             qPrintable(combo->itemText(0)));
    // The ignored column shows as ignored among the roles.
    auto* x2Role = find<QComboBox>("roleComboBox1");
    QCOMPARE(x2Role->currentText(), policy == "ignore" ? QString("ignore") : QString("feature"));
}

void TestStudioMissing::choiceChangesInDataTab()
{
    QVERIFY(!m_window->openFile(m_csv));
    choose("drop");
    QCOMPARE(tableRows(), int64_t(kRows - 1));
    auto* combo = find<QComboBox>("missingComboBox");
    QVERIFY(combo->isEnabled());
    // Down arrow: ignore the column; again: fill with the mean.
    combo->setFocus();
    QTest::keyClick(combo, Qt::Key_Down);
    QTRY_COMPARE(session()->taskOptions().missing, QString("ignore"));
    QCOMPARE(table()->schema().features, (QStringList{"x1", "x3"}));
    QCOMPARE(tableRows(), int64_t(kRows));
    QTest::keyClick(combo, Qt::Key_Down);
    QTRY_COMPARE(session()->taskOptions().missing, QString("mean"));
    QCOMPARE(table()->schema().features, (QStringList{"x1", "x2", "x3"}));
    QCOMPARE(tableRows(), int64_t(kRows));
    QCOMPARE(combo->currentData().toString(), QString("mean"));
    // Once trained on, the choice waits for Reset weights like the roles.
    train(5);
    QVERIFY(!combo->isEnabled());
}

void TestStudioMissing::choiceSavedWithModel_data()
{
    QTest::addColumn<QString>("policy");
    QTest::newRow("ignore") << "ignore";
    QTest::newRow("mean") << "mean";
}

void TestStudioMissing::choiceSavedWithModel()
{
    QFETCH(QString, policy);
    QVERIFY(!m_window->openFile(m_csv));
    choose(policy);
    const std::vector<float> fill = table()->schema().missingFill;
    QCOMPARE(fill.empty(), policy != "mean");
    train(10);
    const QString model = m_dir.filePath("gaps-" + policy + ".safetensors");
    saveAs(model);
    il::io::ModelInfo info;
    QString error;
    QVERIFY2(il::io::readModelInfo(model, info, &error), qPrintable(error));
    QCOMPARE(info.task.value("missing").toString(), policy);

    closeWindow();
    newWindow();
    QSignalSpy opened(session(), &Session::modelOpened);
    QVERIFY(m_window->openFile(model));
    QTRY_COMPARE(opened.count(), 1);
    QVERIFY(session()->task()); // with its data
    QCOMPARE(session()->taskOptions().missing, policy);
    QCOMPARE(table()->schema().missingFill, fill);
    QCOMPARE(tableRows(), int64_t(kRows));
    auto* combo = find<QComboBox>("missingComboBox");
    find<QTabWidget>("setupTabWidget")->setCurrentWidget(find<QWidget>("datasetPanel"));
    QTRY_VERIFY(combo->isVisible());
    QCOMPARE(combo->currentData().toString(), policy);
    QVERIFY(!combo->isEnabled()); // trained on: Reset weights first
}

void TestStudioMissing::failedOpenKeepsModel()
{
    openSample("iris");
    train(10);
    QVERIFY(session()->hasUnsavedTraining());
    const int64_t steps = session()->trainedSteps();
    const int asked = il::app::Dialogs::questionCount();
    // A table that will not open (text in a number column), a missing file, a broken model.
    const QString bad = m_dir.filePath("bad.csv");
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("a,b\n1,2\nthree,4\n5,6\n");
    f.close();
    const QString broken = m_dir.filePath("broken.safetensors");
    QFile g(broken);
    QVERIFY(g.open(QIODevice::WriteOnly));
    g.write("not a model");
    g.close();
    for (const QString& path : {bad, m_dir.filePath("absent.csv"), broken}) {
        QVERIFY(!m_window->openFile(path));
        QCOMPARE(il::app::Dialogs::questionCount(), asked);
        QTRY_VERIFY(find<QWidget>("errorFrame")->isVisible());
        QVERIFY(session()->hasUnsavedTraining());
        QCOMPARE(session()->trainedSteps(), steps);
        QVERIFY(session()->dataPath().endsWith("iris.csv"));
    }
    // The table with an empty cell fails too, without asking; a choice on its bar opens it, and
    // only then asks (answered: discard).
    QVERIFY(!m_window->openFile(m_csv));
    QCOMPARE(il::app::Dialogs::questionCount(), asked);
    QCOMPARE(session()->trainedSteps(), steps);
    il::app::Dialogs::setNextAnswer(QMessageBox::Discard);
    choose("drop");
    QCOMPARE(il::app::Dialogs::questionCount(), asked + 1);
    QCOMPARE(session()->trainedSteps(), int64_t(0));
    QCOMPARE(tableRows(), int64_t(kRows - 1));
}

QStringList TestStudioMissing::flagsShown() const
{
    static const QRegularExpression flag(R"((^|[\s"'(`])--[a-z][a-z-]+)");
    QStringList found;
    auto scan = [&](const QString& text, const QObject* where) {
        if (text.contains(flag)) found << where->objectName() + ": " + text;
    };
    QList<QWidget*> widgets = m_window->findChildren<QWidget*>();
    for (QWidget* w : widgets) {
        scan(w->toolTip(), w);
        scan(w->statusTip(), w);
        if (auto* label = qobject_cast<QLabel*>(w)) scan(label->text(), w);
        if (auto* button = qobject_cast<QAbstractButton*>(w)) scan(button->text(), w);
        if (auto* combo = qobject_cast<QComboBox*>(w))
            for (int i = 0; i < combo->count(); ++i)
                scan(combo->itemText(i), w);
    }
    for (QAction* a : m_window->findChildren<QAction*>()) {
        scan(a->text(), a);
        scan(a->toolTip(), a);
        scan(a->statusTip(), a);
    }
    scan(m_window->statusBar()->currentMessage(), m_window->statusBar());
    return found;
}

void TestStudioMissing::noFlagInMessages()
{
    // Every widget of the window (shown or not: every tab and page), through data that brings
    // notes and errors: the failing table, a picture downscaled for training, each choice.
    QVERIFY2(flagsShown().isEmpty(), qPrintable(flagsShown().join('\n')));
    QVERIFY(!m_window->openFile(m_csv));
    QVERIFY2(flagsShown().isEmpty(), qPrintable(flagsShown().join('\n')));
    choose("mean");
    QVERIFY2(flagsShown().isEmpty(), qPrintable(flagsShown().join('\n')));
    openSample("camera");
    const QString summary = find<QLabel>("summaryLabel")->text();
    QVERIFY2(summary.contains("downscaled") && summary.contains("training size"),
             qPrintable(summary));
    QVERIFY2(flagsShown().isEmpty(), qPrintable(flagsShown().join('\n')));
    // A class that is rare in the training rows: the note names the studio's control.
    const QString rare = m_dir.filePath("rare.csv");
    QFile f(rare);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("x,label\n");
    for (int i = 0; i < 100; ++i)
        f.write(QByteArray::number(i) + (i % 14 == 0 ? ",spam\n" : ",ham\n"));
    f.close();
    QVERIFY(m_window->openFile(rare));
    QVERIFY2(find<QLabel>("summaryLabel")->text().contains("Balance the classes"),
             qPrintable(find<QLabel>("summaryLabel")->text()));
    QVERIFY2(flagsShown().isEmpty(), qPrintable(flagsShown().join('\n')));
}

QTEST_MAIN(TestStudioMissing)
#include "TestStudioMissing.moc"
