// The setup tabs as a learner first meets them, driven through the real MainWindow offscreen:
// the Learning rate row is there for the first table of a fresh window (opened from the Samples
// menu, or as the window opens a file at start) and its value reaches the run; Start waits while
// the layer text does not parse, by every way to start, and says why; an output width in the
// layer text is explained next to the text when it is written back without it.
#include "ModelState.h"
#include "NamesTask.h"
#include "StudioTestCase.h"
#include "TrainingWorker.h"

#include <QDoubleSpinBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QStatusBar>
#include <QTabWidget>
#include <QTemporaryDir>

using namespace il;
using namespace il::app;
using namespace studiotest;

class TestStudioSetup : public StudioWindowTestCase {
    Q_OBJECT

private slots:

    void learningRateRowForTheFirstTable_data();
    void learningRateRowForTheFirstTable();
    void learningRateRowAfterAnImage();
    void startWaitsWhileTheLayerTextCannotBeRead();
    void typedTextIsTakenByStart();
    void outputWidthInTheTextIsExplained();
    void presetCarriesItsRecipe();

private:
    // The Model tab's preset, chosen from its list as the learner chooses it.
    void choosePreset(const QString& name)
    {
        QTest::keyClick(m_window, Qt::Key_2, Qt::ControlModifier);
        auto* presets = find<QComboBox>("presetComboBox");
        const int i = presets->findData(name);
        QVERIFY(i >= 0);
        presets->setCurrentIndex(i);
        emit presets->activated(i);
    }
    // Ctrl+3, as the learner goes to the Training tab; waits for the tab's layout.
    void showTrainingTab();
    // The Learning rate row as the learner sees it: its label and its field, at their height.
    void checkLearningRateRow();
    // Ctrl+2 and the layer text typed into its field as the learner types it (Enter: pressed).
    void typeLayerText(const QString& text, bool enter)
    {
        QTest::keyClick(m_window, Qt::Key_2, Qt::ControlModifier);
        auto* edit = find<QLineEdit>("specLineEdit");
        edit->setFocus();
        edit->selectAll();
        QTest::keyClicks(edit, text);
        if (enter) QTest::keyClick(edit, Qt::Key_Return);
    }
    // The names' context the session opens its data with (the setting's default when not set).
    int contextSetting() const
    {
        return il::tasks::namesTaskType().setting(session()->taskOptions(),
                                                  il::tasks::kContextSetting);
    }
    QTemporaryDir m_dir;
};

void TestStudioSetup::showTrainingTab()
{
    QTest::keyClick(m_window, Qt::Key_3, Qt::ControlModifier);
    auto* tabs = find<QTabWidget>("setupTabWidget");
    QCOMPARE(tabs->currentWidget(), find<QWidget>("trainingPanel"));
    QApplication::processEvents(); // the tab lays out its form when it is shown
}

void TestStudioSetup::checkLearningRateRow()
{
    auto* panel = find<QWidget>("trainingPanel");
    auto* label = find<QLabel>("learningRateLabel");
    auto* rate = find<QDoubleSpinBox>("learningRateSpinBox");
    QVERIFY(label->isVisibleTo(panel));
    QVERIFY(rate->isVisibleTo(panel));
    QVERIFY(rate->isEnabled());
    // Shown at the height its text needs, between the Optimizer and Schedule rows (a row the
    // form squeezes to nothing is "visible" to Qt, and gone to the learner).
    QTRY_VERIFY2(rate->height() >= rate->minimumSizeHint().height(),
                 qPrintable(QString("the field is %1 px high").arg(rate->height())));
    QVERIFY(label->height() >= label->minimumSizeHint().height());
    const QRect optimizer = find<QWidget>("optimizerComboBox")->geometry();
    const QRect schedule = find<QWidget>("scheduleComboBox")->geometry();
    QVERIFY(rate->geometry().top() >= optimizer.bottom());
    QVERIFY(rate->geometry().bottom() <= schedule.top());
    QVERIFY(!rate->visibleRegion().isEmpty());
}

void TestStudioSetup::learningRateRowForTheFirstTable_data()
{
    QTest::addColumn<bool>("fromTheCommandLine");
    QTest::newRow("Samples menu") << false;
    QTest::newRow("file at start") << true;
}

// The first data of a fresh window is a table: the row is there, and the rate typed into it
// is the rate the run trains with.
void TestStudioSetup::learningRateRowForTheFirstTable()
{
    QFETCH(bool, fromTheCommandLine);
    if (fromTheCommandLine) {
        // As main() does with a FILE argument: a window shown, then the file opened.
        const QString csv = m_dir.filePath("table.csv");
        QFile::remove(csv);
        QVERIFY(QFile::copy(":/samples/iris.csv", csv));
        QVERIFY(m_window->openFile(csv));
        QVERIFY(session()->task());
    } else {
        openSample("iris");
    }
    showTrainingTab();
    checkLearningRateRow();

    auto* rate = find<QDoubleSpinBox>("learningRateSpinBox");
    rate->setFocus();
    rate->selectAll();
    QTest::keyClicks(rate, QLocale().toString(0.0123, 'f', 4));
    QTest::keyClick(rate, Qt::Key_Tab);
    QCOMPARE(rate->value(), 0.0123);
    QCOMPARE(session()->config().schedule.lrMax, 0.0123f);
    train(5);
    QCOMPARE(workerConfig().schedule.lrMax, 0.0123f);
}

// The path that used to work stays working: an image first, then a table.
void TestStudioSetup::learningRateRowAfterAnImage()
{
    openSample("camera");
    showTrainingTab();
    checkLearningRateRow();
    QVERIFY(find<QWidget>("gridLrSpinBox")->isVisibleTo(find<QWidget>("trainingPanel")));
    openSample("iris");
    showTrainingTab();
    checkLearningRateRow();
    QVERIFY(!find<QWidget>("gridLrSpinBox")->isVisibleTo(find<QWidget>("trainingPanel")));
}

// Layer text that cannot be read keeps Start waiting, by the button, F5 and the Train menu, with
// the reason (naming the item) where Start is and under the text; fixed text lets it go at once.
void TestStudioSetup::startWaitsWhileTheLayerTextCannotBeRead()
{
    openSample("iris");
    const QString valid = session()->spec();
    auto* start = find<QPushButton>("startButton");
    auto* action = find<QAction>("actionStart");
    auto* error = find<QLabel>("stackErrorLabel");
    QVERIFY(start->isEnabled());

    typeLayerText("dense:64,wobble,dense", true);
    QVERIFY(error->isVisibleTo(find<QWidget>("modelPanel")));
    QVERIFY2(error->text().contains("wobble"), qPrintable(error->text()));
    QCOMPARE(session()->spec(), valid); // the stack keeps its last valid layers
    QVERIFY(!start->isEnabled());
    QVERIFY(!action->isEnabled());
    QVERIFY2(start->toolTip().contains("wobble"), qPrintable(start->toolTip()));
    QVERIFY(action->statusTip().contains("wobble"));
    QVERIFY2(find<QLabel>("rateLabel")->text().contains("layer text"),
             qPrintable(find<QLabel>("rateLabel")->text()));

    QSignalSpy runs(session(), &Session::runStateChanged);
    QTest::mouseClick(start, Qt::LeftButton);
    QTest::keyClick(m_window, Qt::Key_F5);
    QTest::keyClick(find<QLineEdit>("specLineEdit"), Qt::Key_F5);
    action->trigger(); // the Train menu's item (disabled: nothing happens)
    QApplication::processEvents();
    QCOMPARE(runs.count(), 0);
    QCOMPARE(session()->trainedSteps(), int64_t(0));

    // Still wrong while typing: the reason follows the text; right: Start is back at once.
    typeLayerText("dense:64,wobble:2,dense", false);
    QVERIFY(!start->isEnabled());
    typeLayerText("dense:16,relu,dense", false);
    QVERIFY(start->isEnabled());
    QVERIFY(action->isEnabled());
    QVERIFY(!start->toolTip().contains("wobble"));
    QVERIFY(error->isHidden());
    QCOMPARE(find<QLabel>("rateLabel")->text(), QString("Ready"));
    train(5); // takes the typed text (not yet entered) as the stack
    QCOMPARE(session()->spec(), QString("dense:16,relu,dense"));
}

// Text typed but not entered is taken by Start: F5 from the text field trains what it says, and
// text that cannot be read stops F5 there, with the reason shown on the Model tab.
void TestStudioSetup::typedTextIsTakenByStart()
{
    openSample("iris");
    typeLayerText("dense:12,tanh,dense", false);
    QSignalSpy finished(session(), &Session::trainingFinished);
    find<QComboBox>("budgetUnitComboBox")->setCurrentIndex(1);
    find<QSpinBox>("budgetSpinBox")->setValue(5);
    auto* edit = find<QLineEdit>("specLineEdit");
    edit->setFocus();
    QTest::keyClick(edit, Qt::Key_F5);
    QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, kTrainingWait);
    QCOMPARE(session()->spec(), QString("dense:12,tanh,dense"));

    typeLayerText("dense:12,tanh,,dense", false);
    QSignalSpy runs(session(), &Session::runStateChanged);
    QTest::keyClick(edit, Qt::Key_F5);
    QApplication::processEvents();
    QCOMPARE(runs.count(), 0);
    QVERIFY(!find<QPushButton>("startButton")->isEnabled());
    // A pause in typing, and the reason shows under the table, as after Enter.
    auto* error = find<QLabel>("stackErrorLabel");
    QTRY_VERIFY(!error->isHidden());
    QVERIFY2(error->text().contains("layer 3"), qPrintable(error->text()));
    QCOMPARE(session()->spec(), QString("dense:12,tanh,dense"));
}

// An output width in the text is taken out (it comes from the data), and a note under the text
// says so, with the data's width and what its outputs are; it goes with the next edit.
void TestStudioSetup::outputWidthInTheTextIsExplained()
{
    openSample("iris"); // 3 classes of species
    auto* edit = find<QLineEdit>("specLineEdit");
    auto* note = find<QLabel>("outputWidthNoteLabel");
    auto* panel = find<QWidget>("modelPanel");
    QVERIFY(note->isHidden());

    typeLayerText("dense:64,relu,dense:7", true);
    QCOMPARE(edit->text(), QString("dense:64,relu,dense"));
    QCOMPARE(session()->spec(), QString("dense:64,relu,dense"));
    QVERIFY(note->isVisibleTo(panel));
    const QString text = note->text();
    for (const char* part : {"dense:7", "became dense", "comes from the data", "here 3",
                             "each class of species", "width of 7 would not fit"})
        QVERIFY2(text.contains(part), qPrintable(part + (" not in: " + text)));
    QVERIFY(note->geometry().top() >= edit->geometry().bottom()); // next to the text, under it

    typeLayerText("dense:64,relu,dense", false); // an edit: the note spoke of the text before it
    QVERIFY(note->isHidden());

    // The data's own width, written out: the same rewrite, said without "would not fit"; the
    // layers are unchanged, and the text is written back all the same.
    typeLayerText("dense:64,relu,dense:3", true);
    QCOMPARE(edit->text(), QString("dense:64,relu,dense"));
    QVERIFY(note->isVisibleTo(panel));
    QVERIFY2(note->text().contains("dense:3 is written dense"), qPrintable(note->text()));
    QVERIFY(!note->text().contains("would not fit"));

    // Other data: the note goes with the text it spoke of; a two-class table says what its
    // single output is.
    openSample("breast_cancer");
    QVERIFY(note->isHidden());
    typeLayerText("dense:8,relu,dense:2", true);
    QVERIFY(note->isVisibleTo(panel));
    QVERIFY2(note->text().contains("here 1, the probability that"), qPrintable(note->text()));
    openSample("camera");
    typeLayerText(kSmallImageSpec + ":3", true);
    QVERIFY2(note->text().contains("here 1, the gray level of a pixel"),
             qPrintable(note->text())); // the camera is a gray picture
}

// The names wavenet comes with the settings its measured figure needs: choosing it sets them
// (and the context) on the Training and Data tabs, says so under the list, trains with them, and
// lets a setting be changed; another preset puts the data's defaults back.
void TestStudioSetup::presetCarriesItsRecipe()
{
    openSample("names-ssa2018");
    const TrainerConfig defaults = session()->config();
    QCOMPARE(contextSetting(), 3);
    QVERIFY(defaults.optimizer.name() != "adamw");
    auto* note = find<QLabel>("recipeNoteLabel");
    QVERIFY(note->isHidden());

    choosePreset("wavenet");
    QCOMPARE(contextSetting(), 8);
    QCOMPARE(find<QSpinBox>("contextSpinBox")->value(), 8);
    QVERIFY2(session()->spec().contains("merge:2"), qPrintable(session()->spec()));
    QVERIFY(note->isVisibleTo(find<QWidget>("modelPanel")));
    for (const char* part : {"adamw", "learning rate 0.001", "batch 32", "25 epochs",
                             "weight decay 0.05", "label smoothing 0", "context is now 8"})
        QVERIFY2(note->text().contains(part), qPrintable(part + (" not in: " + note->text())));

    showTrainingTab();
    QCOMPARE(find<QComboBox>("optimizerComboBox")->currentData().toString(), QString("adamw"));
    QCOMPARE(find<QDoubleSpinBox>("learningRateSpinBox")->value(), 0.001);
    QCOMPARE(find<QSpinBox>("batchSizeSpinBox")->value(), 32);
    QCOMPARE(find<QComboBox>("budgetUnitComboBox")->currentIndex(), 0); // epochs
    QCOMPARE(find<QSpinBox>("budgetSpinBox")->value(), 25);
    QCOMPARE(find<QDoubleSpinBox>("weightDecaySpinBox")->value(), 0.05);
    QCOMPARE(find<QDoubleSpinBox>("labelSmoothingSpinBox")->value(), 0.0);

    // A setting changed on the Training tab is the one that trains.
    auto* rate = find<QDoubleSpinBox>("learningRateSpinBox");
    rate->setValue(0.002);
    emit rate->editingFinished();
    QTRY_COMPARE(session()->config().schedule.lrMax, 0.002f);
    train(2);
    const TrainerConfig trained = workerConfig();
    QCOMPARE(trained.optimizer.name(), std::string("adamw"));
    QCOMPARE(trained.optimizer.value("weight_decay"), 0.05f);
    QCOMPARE(trained.batchSize, int64_t(32));
    QCOMPARE(trained.labelSmoothing, 0.f);
    QCOMPARE(trained.schedule.lrMax, 0.002f);

    // Another preset carries no recipe: the wavenet's settings go, and the note says so.
    choosePreset("mlp");
    QCOMPARE(session()->config().optimizer.name(), defaults.optimizer.name());
    QCOMPARE(session()->config().schedule.lrMax, defaults.schedule.lrMax);
    QCOMPARE(session()->config().batchSize, defaults.batchSize);
    QCOMPARE(session()->config().labelSmoothing, defaults.labelSmoothing);
    QCOMPARE(find<QSpinBox>("batchSizeSpinBox")->value(), int(defaults.batchSize));
    QVERIFY2(note->text().contains("no longer apply"), qPrintable(note->text()));

    // New data (the trained names model discarded when asked): no note from the data before.
    QTimer::singleShot(0, m_window, [] {
        if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget()))
            box->button(QMessageBox::Discard)->click();
    });
    openSample("iris");
    QVERIFY(note->isHidden());
}

QTEST_MAIN(TestStudioSetup)
#include "TestStudioSetup.moc"
