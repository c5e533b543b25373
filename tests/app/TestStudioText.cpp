// Text that tells the truth: the real MainWindow, offscreen, driven by object names. A message
// leaves the moment its cause goes ("Fix the layer stack first", "Could not open the data",
// "The stack differs from the trained model"); counts read "1 feature", not "1 features"; the
// preset box names the preset the stack is; Ctrl+1/2/3 switch the setup tabs and Reset weights
// is in the Train menu. The window and the helpers are StudioTestCase.h's.
#include "StudioTestCase.h"

#include <QDropEvent>
#include <QFile>
#include <QFrame>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMimeData>
#include <QStatusBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QToolButton>
#include <QUrl>

using namespace il::app;
using studiotest::kTrainingWait;

class TestStudioText : public studiotest::StudioWindowTestCase {
    Q_OBJECT

private slots:
    void initTestCase(); // more than the fixture's

    void stackFailureLeavesOnceTheStackIsValid();
    void stackDiffersNoteLeavesOnceTheEditedStackIsTrained();
    void dataErrorLeavesWhenAModelOpens();
    void countsOfOneAreSingular();
    void presetBoxNamesThePresetTheStackIs();
    void ctrlNumberSwitchesTheSetupTabs();
    void resetWeightsIsInTheTrainMenu();
    void droppingDataWhileTrainingIsRefusedInPassing();

private:
    void setSpec(const QString& spec);

    QTemporaryDir m_dir;
};

void TestStudioText::initTestCase()
{
    isolateSettings("testStudioText");
    QVERIFY(m_dir.isValid());
}

void TestStudioText::setSpec(const QString& spec)
{
    auto* edit = find<QLineEdit>("specLineEdit");
    edit->setText(spec);
    emit edit->returnPressed();
    QCOMPARE(session()->spec(), spec);
}

// Item 7: Start with a stack that cannot be built says "Fix the layer stack first" in the status
// bar and "Stopped" in the run bar; a valid stack takes both away.
void TestStudioText::stackFailureLeavesOnceTheStackIsValid()
{
    openSample("xor");
    setSpec("dense:20000,tanh,dense:20000,tanh,dense"); // 400 million parameters
    QVERIFY(!find<QLabel>("stackErrorLabel")->isHidden());
    QSignalSpy finished(session(), &Session::trainingFinished);
    find<QPushButton>("startButton")->click(); // refused at once
    QCOMPARE(finished.count(), 1);
    QVERIFY(finished.first().first().value<TrainingOutcome>().failed);
    auto* rate = find<QLabel>("rateLabel");
    QVERIFY2(m_window->statusBar()->currentMessage().startsWith("Fix the layer stack first"),
             qPrintable(m_window->statusBar()->currentMessage()));
    QVERIFY2(rate->text().contains("Stopped"), qPrintable(rate->text()));

    setSpec("dense:20000,tanh,dense:10000,tanh,dense"); // still too big: the message stays
    QVERIFY(m_window->statusBar()->currentMessage().startsWith("Fix the layer stack first"));
    setSpec("dense:8,tanh,dense");
    QVERIFY(find<QLabel>("stackErrorLabel")->isHidden());
    QCOMPARE(m_window->statusBar()->currentMessage(), QString());
    QCOMPARE(rate->text(), QString("Ready"));
}

// Item 7: "The stack differs from the trained model" while it does: gone when the stack is back
// to the trained one, and gone once a new model was trained on the edited stack.
void TestStudioText::stackDiffersNoteLeavesOnceTheEditedStackIsTrained()
{
    openSample("xor");
    const QString trained = session()->spec();
    train(20);
    saveAs(m_dir.filePath("xor-note.safetensors")); // nothing unsaved: Start asks nothing
    auto* note = find<QLabel>("noteLabel");
    QVERIFY(note->isHidden());
    setSpec("dense:6,tanh,dense");
    QVERIFY(!note->isHidden());
    QVERIFY(note->text().contains("differs from the trained model"));
    setSpec(trained);
    QVERIFY(note->isHidden());
    setSpec("dense:6,tanh,dense");
    QVERIFY(!note->isHidden());

    train(20); // a new model on the edited stack
    QCOMPARE(session()->trainedSteps(), int64_t(20));
    QVERIFY2(note->isHidden(), qPrintable(note->text()));
}

// Item 7: "Could not open the data" leaves when a model opens, here one whose data is gone (the
// model opens alone, so no data opens to clear the message).
void TestStudioText::dataErrorLeavesWhenAModelOpens()
{
    const QString csv = m_dir.filePath("xor-copy.csv");
    QVERIFY(QFile::copy(":/samples/xor.csv", csv));
    QFile::setPermissions(csv, QFile::ReadOwner | QFile::WriteOwner);
    QVERIFY(m_window->openFile(csv));
    train(10);
    const QString model = m_dir.filePath("xor-alone.safetensors");
    saveAs(model);
    QVERIFY(QFile::remove(csv));

    const QString bad = m_dir.filePath("broken.csv");
    {
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("a,b\n1,2,3\nx\n");
    }
    QVERIFY(!m_window->openFile(bad));
    auto* frame = find<QFrame>("errorFrame");
    QVERIFY(!frame->isHidden());
    QVERIFY(find<QLabel>("errorLabel")->text().contains("Could not open the data"));

    QSignalSpy opened(session(), &Session::modelOpened);
    QVERIFY(m_window->openFile(model));
    QTRY_COMPARE(opened.count(), 1);
    QVERIFY(!session()->task()); // opened without its data
    QVERIFY(frame->isHidden());
}

// Item 9: a table with one feature and one target reads "1 feature", "1 input → 1 output" and
// a plan of "1 step".
void TestStudioText::countsOfOneAreSingular()
{
    const QString csv = m_dir.filePath("line.csv");
    {
        QFile f(csv);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("x,y\n");
        for (int i = 0; i < 40; ++i)
            f.write(QByteArray::number(i) + "," + QByteArray::number(2 * i + 1) + "\n");
    }
    QVERIFY(m_window->openFile(csv));
    const QString summary = find<QLabel>("summaryLabel")->text();
    QVERIFY2(summary.contains("1 feature") && !summary.contains("1 features"), qPrintable(summary));
    const QString total = find<QLabel>("totalLabel")->text();
    QVERIFY2(total.contains("1 input → 1 output") && !total.contains("outputs"), qPrintable(total));
    find<QComboBox>("budgetUnitComboBox")->setCurrentIndex(1);
    find<QSpinBox>("budgetSpinBox")->setValue(1);
    const QString plan = find<QLabel>("planLabel")->text();
    QVERIFY2(plan.contains("<b>1 step</b>"), qPrintable(plan));
}

// Item 9: the preset box shows the preset the stack is, and "Choose a preset…" for any other.
void TestStudioText::presetBoxNamesThePresetTheStackIs()
{
    openSample("iris");
    auto* box = find<QComboBox>("presetComboBox");
    QVERIFY(box->count() >= 2);
    QCOMPARE(box->currentIndex(), 0); // a table opens with its first preset
    QVERIFY2(box->currentText().startsWith(box->itemData(0).toString()),
             qPrintable(box->currentText()));

    const QString second = box->itemData(1).toString();
    setSpec(session()->task()->presetSpec(second));
    QCOMPARE(box->currentIndex(), 1);
    setSpec("dense:5,relu,dense");
    QCOMPARE(box->currentIndex(), -1);
    QCOMPARE(box->currentText(), QString());
    find<QToolButton>("undoButton")->click(); // back to the second preset
    QCOMPARE(box->currentIndex(), 1);
}

// Keyboard: Ctrl+1/2/3 show the Data, Model and Training tabs, listed in the View menu.
void TestStudioText::ctrlNumberSwitchesTheSetupTabs()
{
    m_window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(m_window));
    auto* tabs = find<QTabWidget>("setupTabWidget");
    const QList<QAction*> view = find<QMenu>("viewMenu")->actions();
    const QStringList pages{"datasetPanel", "modelPanel", "trainingPanel"};
    for (int key : {3, 1, 2, 3, 1}) {
        QTest::keyClick(m_window, Qt::Key(Qt::Key_0 + key), Qt::ControlModifier);
        QCOMPARE(tabs->currentWidget()->objectName(), pages[key - 1]);
        QAction* action = view.value(key - 1);
        QVERIFY(action);
        QCOMPARE(action->shortcut(), QKeySequence(QString("Ctrl+%1").arg(key)));
        QVERIFY2(action->text().contains(tabs->tabText(key - 1).mid(4)),
                 qPrintable(action->text()));
    }
}

// Keyboard: Reset weights is in the Train menu, enabled with the run bar's button, and resets.
void TestStudioText::resetWeightsIsInTheTrainMenu()
{
    auto* reset = find<QAction>("actionResetWeights");
    QVERIFY(find<QMenu>("trainMenu")->actions().contains(reset));
    openSample("xor");
    train(10);
    saveAs(m_dir.filePath("xor-reset.safetensors"));
    QVERIFY(reset->isEnabled());
    find<QPushButton>("startButton")->click(); // while training, neither resets
    QVERIFY(!reset->isEnabled() && !find<QPushButton>("resetButton")->isEnabled());
    session()->stop();
    QTRY_VERIFY_WITH_TIMEOUT(session()->runState() == Session::RunState::Idle, kTrainingWait);
    saveAs(m_dir.filePath("xor-reset.safetensors"));
    QVERIFY(reset->isEnabled());
    QSignalSpy cleared(session(), &Session::historyReset);
    reset->trigger();
    QCOMPARE(cleared.count(), 1);
    QCOMPARE(session()->trainedSteps(), int64_t(0));
}

// A file dropped on the window while training is refused in the status bar, without a question
// and without the "Could not open the data" bar, which used to stay up after training ended.
void TestStudioText::droppingDataWhileTrainingIsRefusedInPassing()
{
    openSample("iris");
    find<QComboBox>("budgetUnitComboBox")->setCurrentIndex(1);
    find<QSpinBox>("budgetSpinBox")->setValue(1000000);
    find<QSpinBox>("patienceSpinBox")->setValue(0); // no early stop: still training at the drop
    QSignalSpy progressed(session(), &Session::progressed);
    find<QPushButton>("startButton")->click();
    QTRY_VERIFY_WITH_TIMEOUT(progressed.count() > 0, kTrainingWait);
    QCOMPARE(session()->runState(), Session::RunState::Training);
    const QString other = m_dir.filePath("xor.csv");
    QVERIFY(QFile::copy(IRONLEARN_SAMPLES "/xor.csv", other));
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(other)});
    QDragEnterEvent enter(QPoint(200, 200), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(m_window, &enter);
    QVERIFY(enter.isAccepted());
    bool asked = false; // a question would hold the drop in its own event loop: answer Cancel
    QTimer::singleShot(0, m_window, [&asked] {
        if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget())) {
            asked = true;
            box->button(QMessageBox::Cancel)->click();
        }
    });
    QDropEvent drop(QPointF(200, 200), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(m_window, &drop);
    QVERIFY(drop.isAccepted());
    QVERIFY(!asked);
    QCOMPARE(find<QStatusBar>("statusBar")->currentMessage(),
             QString("Stop training before opening other data."));
    QVERIFY(!find<QFrame>("errorFrame")->isVisible());
    QVERIFY(session()->dataPath().endsWith("iris.csv"));
    session()->stop();
    QTRY_COMPARE(session()->runState(), Session::RunState::Idle);
    QVERIFY(!find<QFrame>("errorFrame")->isVisible());
}

QTEST_MAIN(TestStudioText)
#include "TestStudioText.moc"
