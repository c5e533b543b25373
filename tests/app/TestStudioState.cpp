// State that tells the truth: the real MainWindow, offscreen, driven by object names.
// Live preview: an older step (a click on the loss chart, the timeline) or a render unchecks Live
// only while it is shown; checking Live shows the newest snapshot, and a new run (Start,
// Continue) follows training again. A reopened model: the run bar shows its trained steps of its
// budget, Continue on a spent budget trains on (the budget grows), the loss chart reads back
// the curve the first window drew (no single epoch mean that drops to the next run's losses),
// and the Data, Model and Training panels show what it was trained with; the same when its data
// is opened after it (a model opened without its data).
#include "ImageOutputPage.h"
#include "ImageRequests.h"
#include "LossHistory.h"
#include "Session.h"
#include "StudioTestCase.h"
#include "TrainingHistory.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

using namespace il::app;
using namespace studiotest;

namespace {

// A small SIREN on the camera at 64 px: each step is cheap.
using studiotest::kSmallImageSpec;

} // namespace

class TestStudioState : public StudioTestCase {
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void cleanup();

    void liveFollowsANewRunAfterARender();
    void anOlderStepIsShownUntilLiveIsChecked();
    void reopenedModelShowsWhatItTrainedWith();
    void reopenedModelContinuesItsCurve();
    void dataAttachedLaterShowsTheModelsState();
    void anOlderFilesRowsAreDrawnAtTheirMiddle();

private:
    // Opens a model in a new window, as the studio started with the file does.
    void reopen(const QString& path);
    QString stepLabel() const { return find<QLabel>("timelineStepLabel")->text(); }
    bool live() const { return find<QCheckBox>("livePreviewCheckBox")->isChecked(); }

    QTemporaryDir m_dir;
};

void TestStudioState::initTestCase()
{
    isolateSettings("testStudioState");
    QVERIFY(m_dir.isValid());
}

void TestStudioState::init()
{
    newWindow();
}

void TestStudioState::cleanup()
{
    closeWindow();
}

void TestStudioState::reopen(const QString& path)
{
    closeWindow();
    newWindow();
    QSignalSpy opened(session(), &Session::modelOpened);
    m_window->openFile(path);
    QTRY_COMPARE(opened.count(), 1);
    QVERIFY(session()->task());                  // its data (the bundled sample) was found
    QTRY_VERIFY(!session()->timeline().empty()); // the first look at what it learned
}

// Item 2: a render unchecks Live; a Continue after it follows the new run again (the picture
// was frozen at the render, or at "step 0" after a new model, for every later run).
void TestStudioState::liveFollowsANewRunAfterARender()
{
    openSmallImage();
    train(30);
    QVERIFY(live());
    QCOMPARE(stepLabel(), QString("step 30"));

    QSignalSpy rendered(&ImageRequests::of(*session()), &ImageRequests::renderReady);
    find<QComboBox>("resolutionComboBox")->setCurrentIndex(0); // 200 px
    find<QPushButton>("renderButton")->click();
    QTRY_COMPARE(rendered.count(), 1);
    QVERIFY(!live());
    QCOMPARE(stepLabel(), QString("200×200, step 30"));
    QCOMPARE(m_window->findChild<ImageOutputPage*>()->reconstruction().size(), QSize(200, 200));

    train(60); // Continue
    QVERIFY(live());
    QTRY_COMPARE(stepLabel(), QString("step 60"));
    QCOMPARE(m_window->findChild<ImageOutputPage*>()->reconstruction().size(), QSize(64, 64));
    QCOMPARE(session()->timeline().back().step, int64_t(60));

    // The same after a look at an older step and a new model (the preset's stack).
    m_window->findChild<ImageOutputPage*>()->showStep(0);
    QVERIFY(!live());
    auto* spec = find<QLineEdit>("specLineEdit");
    spec->setText("dense:16,sine:30,dense");
    emit spec->returnPressed();
    QTimer::singleShot(0, m_window, [] { // Save / Discard / Cancel: the old model goes
        if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget()))
            box->button(QMessageBox::Discard)->click();
    });
    train(40);
    QVERIFY(live());
    QTRY_COMPARE(stepLabel(), QString("step 40"));
}

// Item 2: a click on the loss chart (showStep) or the timeline shows an older snapshot and says
// so; checking Live shows the newest at once.
void TestStudioState::anOlderStepIsShownUntilLiveIsChecked()
{
    openSmallImage();
    train(30);
    const auto& snapshots = session()->timeline();
    QVERIFY(snapshots.size() >= 2);
    QCOMPARE(snapshots.front().step, int64_t(0));

    auto* page = m_window->findChild<ImageOutputPage*>();
    page->showStep(0);
    QVERIFY(!live());
    QCOMPARE(stepLabel(), QString("step 0 of 30"));
    QCOMPARE(page->reconstruction(), snapshots.front().image);

    find<QCheckBox>("livePreviewCheckBox")->click();
    QVERIFY(live());
    QCOMPARE(stepLabel(), QString("step 30"));
    QCOMPARE(page->reconstruction(), snapshots.back().image);

    // Dragging the timeline is looking back too.
    auto* timeline = find<QSlider>("timelineSlider");
    emit timeline->sliderPressed();
    QVERIFY(!live());
}

// Item 4: reopened (a new window, as the studio started with the file), the model shows the
// options and settings it trained with and its steps of its budget.
void TestStudioState::reopenedModelShowsWhatItTrainedWith()
{
    openSmallImage();
    find<QDoubleSpinBox>("learningRateSpinBox")->setValue(0.003);
    train(40);
    const QString path = m_dir.filePath("camera64.safetensors");
    saveAs(path);

    reopen(path);
    QCOMPARE(session()->trainedSteps(), int64_t(40));
    QCOMPARE(imageTrainingSize(), QSize(64, 64));
    QCOMPARE(find<QSpinBox>("trainingSizeSpinBox")->value(), 64);
    QCOMPARE(find<QLineEdit>("specLineEdit")->text(), kSmallImageSpec);
    QCOMPARE(find<QDoubleSpinBox>("learningRateSpinBox")->value(), 0.003);
    QCOMPARE(find<QComboBox>("budgetUnitComboBox")->currentIndex(), 1);
    QCOMPARE(find<QSpinBox>("budgetSpinBox")->value(), 40);

    auto* bar = find<QProgressBar>("progressBar");
    QCOMPARE(bar->value(), 40);
    QCOMPARE(bar->maximum(), 40);
    QCOMPARE(find<QLabel>("rateLabel")->text(), QString("Trained 40 steps"));
    auto* start = find<QPushButton>("startButton");
    QCOMPARE(start->text(), QString("&Continue"));
    QVERIFY(start->toolTip().contains("as many again"));

    // Continue on the spent budget trains for as many steps again.
    train(0);
    QCOMPARE(session()->trainedSteps(), int64_t(80));
    QCOMPARE(find<QSpinBox>("budgetSpinBox")->value(), 80);
    QCOMPARE(bar->value(), 80);
    QCOMPARE(bar->maximum(), 80);
}

// Item 4: the loss chart of a reopened model is the curve the first window drew (one point a
// step), so a Continue carries on from the loss it had, not from a mean over the whole run.
void TestStudioState::reopenedModelContinuesItsCurve()
{
    openSmallImage();
    train(40);
    const QList<QPointF> before = session()->history().train(1000);
    QCOMPARE(before.size(), 40);
    const QString path = m_dir.filePath("curve.safetensors");
    saveAs(path);

    reopen(path);
    const QList<QPointF> after = session()->history().train(1000);
    QCOMPARE(after.size(), before.size());
    for (qsizetype i = 0; i < after.size(); ++i) {
        QCOMPARE(after[i].x(), before[i].x());
        QVERIFY(qAbs(after[i].y() - before[i].y()) <= 1e-6 * before[i].y());
    }

    // Continuing: the first new losses sit next to the last saved ones (the run's loss at step
    // 40), not an order of magnitude below a mean over 40 steps.
    train(60);
    const QList<QPointF> more = session()->history().train(1000);
    QCOMPARE(more.size(), 60);
    QCOMPARE(more[40].x(), 41.0);
    QVERIFY2(more[40].y() < 3 * more[39].y() && more[40].y() > more[39].y() / 3,
             qPrintable(QString("%1 then %2").arg(more[39].y()).arg(more[40].y())));
}

// Item 4, the model opened without its data (moved away), then the data opened: the Data
// panel's training size is the model's and Continue is offered at 40 of 40 steps.
void TestStudioState::dataAttachedLaterShowsTheModelsState()
{
    const QString image = m_dir.filePath("camera-copy.png");
    QVERIFY(QFile::copy(":/samples/camera.png", image));
    QSignalSpy opened(session(), &Session::datasetOpened);
    m_window->openFile(image);
    QCOMPARE(opened.count(), 1);
    auto* size = find<QSpinBox>("trainingSizeSpinBox");
    size->setValue(64);
    emit size->editingFinished();
    QTRY_COMPARE(imageTrainingSize(), QSize(64, 64));
    train(40);
    const QString path = m_dir.filePath("camera-copy.safetensors");
    saveAs(path);
    const QString moved = m_dir.filePath("moved.png");
    QVERIFY(QFile::rename(image, moved));

    closeWindow();
    newWindow();
    QSignalSpy modelOpened(session(), &Session::modelOpened);
    m_window->openFile(path);
    QTRY_COMPARE(modelOpened.count(), 1);
    QVERIFY(!session()->task());
    QVERIFY(!find<QPushButton>("startButton")->isEnabled());

    m_window->openFile(moved); // attached to the model
    QVERIFY(session()->task());
    QCOMPARE(session()->trainedSteps(), int64_t(40));
    QCOMPARE(find<QSpinBox>("trainingSizeSpinBox")->value(), 64);
    auto* start = find<QPushButton>("startButton");
    QVERIFY(start->isEnabled());
    QCOMPARE(start->text(), QString("&Continue"));
    QCOMPARE(find<QProgressBar>("progressBar")->maximum(), 40);
}

// Item 4, files saved before the studio kept a row a step: the camera model had rows at
// steps 512 (an evaluation) and 752 (the end), each the mean loss since the row before. Drawn
// at their steps, the chart ended in a mean over 240 steps and Continue's first losses fell off
// a cliff below it; drawn at the middle of the steps they cover, the curve leads into them.
void TestStudioState::anOlderFilesRowsAreDrawnAtTheirMiddle()
{
    il::HistoryPoint evaluation, end;
    evaluation.step = 512;
    evaluation.trainLoss = 0.02;
    evaluation.metric = 30;
    end.step = 752;
    end.trainLoss = 0.004;
    end.metric = 35;
    LossHistory history;
    history.load({evaluation, end});
    const QList<QPointF> train = history.train(100);
    QCOMPARE(train.size(), 2);
    QCOMPARE(train[0], QPointF(256, 0.02));            // steps 1-512
    QCOMPARE(train[1], QPointF(632, 0.004));           // steps 513-752
    const QList<QPointF> metric = history.metric(100); // measured at its step
    QCOMPARE(metric.size(), 2);
    QCOMPARE(metric[1], QPointF(752, 35));
}

QTEST_MAIN(TestStudioState)
#include "TestStudioState.moc"
