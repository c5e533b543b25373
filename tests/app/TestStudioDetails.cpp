// The studio's smaller details (issue 13, item 9), driven through the real MainWindow offscreen:
// Revert to best weights after a run that went wrong, ...
#include "Session.h"
#include "StudioTestCase.h"

#include <QAction>
#include <QDoubleSpinBox>
#include <QJsonObject>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>
#include <QTest>

using namespace il::app;
using namespace studiotest;

class TestStudioDetails : public StudioTestCase {
    Q_OBJECT

private slots:
    void initTestCase() { isolateSettings("testStudioDetails"); }
    void init() { newWindow(); }
    void cleanup() { closeWindow(); }

    void revertsToTheBestWeightsAfterADivergence();

private:
    // Trains and returns the evaluation that follows the run.
    Evaluation trainAndEvaluate(int steps);
};

Evaluation TestStudioDetails::trainAndEvaluate(int steps)
{
    QSignalSpy evaluated(session(), &Session::evaluated);
    train(steps);
    if (evaluated.isEmpty()) evaluated.wait(kTrainingWait);
    return evaluated.isEmpty() ? Evaluation{} : evaluated.last().first().value<Evaluation>();
}

// Item 9, "no way back to a good snapshot": a run at a learning rate far too high wrecks the
// weights of a good run; the run bar offers Revert, which goes back to the best validation loss
// (the weights, the step, the curve), marks the model unsaved, and Continue trains on from there.
void TestStudioDetails::revertsToTheBestWeightsAfterADivergence()
{
    openSample("iris");
    find<QSpinBox>("patienceSpinBox")->setValue(0); // no early stopping: it would go back itself
    auto* lr = find<QDoubleSpinBox>("learningRateSpinBox");
    lr->setValue(0.01);
    auto* revert = find<QPushButton>("revertButton");
    auto* action = find<QAction>("actionRevertToBest");

    const Evaluation good = trainAndEvaluate(40);
    QVERIFY(!good.values.isEmpty());
    QCOMPARE(session()->best().step, int64_t(40)); // the last evaluation of a falling curve
    QVERIFY(session()->best().validation);
    QVERIFY(revert->isHidden()); // nothing better to go back to
    QVERIFY(!action->isEnabled());

    lr->setValue(10);
    train(80);
    const BestWeightsInfo best = session()->best();
    QCOMPARE(best.step, int64_t(40));
    QVERIFY(best.worseThanKept());
    QVERIFY(!revert->isHidden());
    QVERIFY(action->isEnabled());
    QVERIFY(revert->toolTip().contains("step 40"));

    QSignalSpy evaluated(session(), &Session::evaluated);
    revert->click();
    QTRY_COMPARE(session()->trainedSteps(), int64_t(40));
    QTRY_VERIFY(!evaluated.isEmpty());
    // The same weights as at step 40: the same predictions, to the last digit.
    QCOMPARE(evaluated.last().first().value<Evaluation>().values, good.values);
    QVERIFY(m_window->statusBar()->currentMessage().contains("step 40"));
    QVERIFY(session()->isModified());
    QVERIFY(session()->history().lastStep() <= 40);
    QVERIFY(revert->isHidden());
    QVERIFY(!action->isEnabled());

    // Continue goes on from step 40.
    lr->setValue(0.01);
    train(50);
    QCOMPARE(session()->trainedSteps(), int64_t(50));
}

QTEST_MAIN(TestStudioDetails)
#include "TestStudioDetails.moc"
