// The Training panel's "Balance the classes" box, driven through the real MainWindow
// offscreen: shown for classification tables only, its choice in the session's configuration,
// the class weights of the training rows in the run, the loss title saying the losses are
// class-weighted, and the setting saved with the model and shown again when it is reopened.
#include "ConceptHelp.h"
#include "HelpDialogs.h"
#include "ModelState.h"
#include "Session.h"
#include "StudioTestCase.h"
#include "TrainingWorker.h"

#include <QCheckBox>
#include <QHelpEvent>
#include <QLabel>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QToolTip>

using namespace il;
using namespace il::app;
using namespace studiotest;

class TestStudioClassWeight : public StudioWindowTestCase {
    Q_OBJECT

private slots:

    void shownForClassificationTablesOnly();
    void helpOnTheControl();
    void reachesTheRunAndIsSavedWithTheModel();

private:
    QCheckBox* box() const { return find<QCheckBox>("balancedClassesCheckBox"); }
    // The form row is hidden with its label: the box's own hidden flag says which.
    bool shown() const { return !box()->isHidden(); }
    // What the worker's model holds, read on the worker thread.
    QTemporaryDir m_dir;
};

void TestStudioClassWeight::shownForClassificationTablesOnly()
{
    openSample("iris"); // three classes
    QVERIFY(shown());
    QVERIFY(box()->isEnabled());
    QVERIFY(!box()->isChecked()); // unweighted by default
    QVERIFY(box()->toolTip().contains("n / (k · n_c)"));
    // The studio's own words: no CLI flag in a studio tooltip.
    QVERIFY(!box()->toolTip().contains("--class-weight"));
    openSample("diabetes"); // a regression table: nothing to weigh
    QVERIFY(!shown());
    openSample("camera"); // an image
    QVERIFY(!shown());
    openSample("breast_cancer"); // two classes
    QVERIFY(shown());
}

void TestStudioClassWeight::helpOnTheControl()
{
    // As its neighbours: the tooltip ends with the F1 line, and F1 opens the concept page.
    openSample("breast_cancer");
    QTest::keyClick(m_window, Qt::Key_3, Qt::ControlModifier); // the Training tab
    QHelpEvent event(QEvent::ToolTip, QPoint(2, 2), box()->mapToGlobal(QPoint(2, 2)));
    QApplication::sendEvent(box(), &event);
    QVERIFY2(QToolTip::text().contains("F1: more on Class weights for rare classes"),
             qPrintable(QToolTip::text()));
    QToolTip::hideText();
    m_window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(m_window));
    box()->setFocus();
    QTRY_VERIFY(box()->hasFocus());
    QTest::keyClick(box(), Qt::Key_F1);
    auto* dialog = m_window->findChild<ConceptsDialog*>("conceptsDialog");
    QVERIFY(dialog && dialog->isVisible());
    QCOMPARE(dialog->currentConcept(), QString("class-weights"));
    QVERIFY(dialog->findChild<QTextBrowser*>()->toPlainText().contains("balanced accuracy"));
    dialog->close();
}

void TestStudioClassWeight::reachesTheRunAndIsSavedWithTheModel()
{
    openSample("breast_cancer");
    auto* title = find<QLabel>("lossTitleLabel");
    QVERIFY(!title->text().contains("class-weighted"));
    box()->click();
    QCOMPARE(session()->config().classWeighting, ClassWeighting::Balanced);
    QVERIFY2(title->text().contains("class-weighted"), qPrintable(title->text()));
    QVERIFY(title->toolTip().contains("Both losses are class-weighted (balanced)"));

    train(20);
    // The run trained with the weights of the training rows: about 0.8 for the common class
    // (benign, 63%) and 1.3 for the other.
    const TrainerConfig ran = workerConfig();
    QCOMPARE(ran.classWeighting, ClassWeighting::Balanced);
    QCOMPARE(ran.classWeights.size(), size_t(2));
    QVERIFY2(ran.classWeights[0] != ran.classWeights[1] &&
                 std::fabs(ran.classWeights[0] + ran.classWeights[1] - 2.1) < 0.2,
             qPrintable(QString("%1, %2").arg(ran.classWeights[0]).arg(ran.classWeights[1])));

    QVERIFY(m_dir.isValid());
    const QString path = m_dir.filePath("weighted.safetensors");
    saveAs(path);

    // Reopened in a fresh window: the box is ticked again, and the next run is weighted.
    cleanup();
    init();
    QSignalSpy opened(session(), &Session::modelOpened);
    QVERIFY(m_window->openFile(path));
    QTRY_COMPARE(opened.count(), 1);
    QVERIFY(session()->task()); // the bundled sample came back with the model
    QCOMPARE(session()->config().classWeighting, ClassWeighting::Balanced);
    QVERIFY(shown());
    QVERIFY(box()->isChecked());

    // Unticked, the next run is unweighted.
    box()->click();
    QCOMPARE(session()->config().classWeighting, ClassWeighting::None);
    QVERIFY(!find<QLabel>("lossTitleLabel")->text().contains("class-weighted"));
    train(25);
    QVERIFY(workerConfig().classWeights.empty());
}

QTEST_MAIN(TestStudioClassWeight)
#include "TestStudioClassWeight.moc"
