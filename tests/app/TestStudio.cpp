// The studio end to end: the real MainWindow, offscreen, driven by object names. Dialogs are
// answered through Dialogs::setNextAnswer / setNextFileName; waits use QTRY_*. A GPU that fails
// is simulated with FaultyBackend (a CPU backend that claims device memory and fails in gemm),
// supplied through Session::setBackendProvider.
#include "EventLoopProbe.h"
#include "ForwardingBackend.h"
#include "StudioTestCase.h"

#include "BackendRegistry.h"
#include "ChartsPanel.h"
#include "Dialogs.h"
#include "HostCopy.h"
#include "ImageOutputPage.h"
#include "ImageView.h"
#include "LayerStack.h"
#include "LayerStackModel.h"
#include "LossHistory.h"
#include "MainWindow.h"
#include "ModelExporter.h"
#include "Network.h"
#include "ProbabilityBars.h"
#include "Session.h"
#include "StudioKind.h"
#include "TaskType.h"
#include "ThreadGuard.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QElapsedTimer>
#include <QFrame>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QStackedWidget>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QToolButton>

#include <functional>
#include <mutex>
#include <numeric>
#include <thread>

using namespace il::app;

namespace {

// Generous waits: on a loaded 2-core machine (CI runs two tests at once) a 300-step run that
// takes 4 s alone has taken 38 s. A passing test never waits this long; the waits only keep a
// slow machine from failing a correct studio.
using studiotest::kTrainingWait; // ms, a whole training run
constexpr int kWorkWait = 60000; // ms, the first steps, a render, a generation

// Engine work the guard saw on the GUI thread (this test's main thread), since the last take.
std::mutex g_violationsMutex;
QStringList g_violations;

QStringList takeViolations()
{
    const std::lock_guard lock(g_violationsMutex);
    return std::exchange(g_violations, {});
}

} // namespace

class TestStudio : public studiotest::StudioTestCase {
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void cleanup();

    void chartsDecimateLongRuns();
    void gridRateShownForAHashGrid();
    void layerSpecRoundTrips_data();
    void layerSpecRoundTrips();
    void everyTaskKindHasItsPages();
    void opensEachKindOfSample();
    void editsTheStackWithUndo();
    void offersEveryRegisteredLayerType();
    void trainsAndChartsArrive();
    void pausesResumesStopsAndStaysResponsive();
    void savesReopensAndContinues();
    void rendersAtTwoResolutionsAndExports();
    void generatesNames();
    void showsLoaderErrorsInline();
    void closingWhileTrainingSaves();
    void exportsTheModel();
    void deviceChoiceSaysWhyCudaIsUnavailable();
    void deviceFailureKeepsWeightsAndContinuesOnCpu();
    void gpuThatWillNotStartFallsBackToCpu();
    void rendersAfterTheGpuFailed();
    void guardCatchesEngineWorkOnTheGuiThread();
    void sessionKeepsTheEngineOffTheGuiThread();
    void studioKeepsTheEngineOffTheGuiThread();

private:
    // Sets the run's budget (in steps) through the Training panel.
    void setSteps(int steps);
    void trainToEnd();
    // Opens a model file through the window and waits until the worker has read it.
    void openModel(const QString& path);
    // Runs f(model) on the training worker and waits for it.
    void onWorker(const std::function<void(ModelState&)>& f);
    // A simulated NVIDIA GPU: cudaStatus says available; "cuda" makes a FaultyBackend that
    // fails after failAfter matrix products (or, failAfter == -2, cannot be created at all).
    static BackendProvider fakeGpu(int failAfter, int* created, bool* tf32 = nullptr);
    void installFakeGpu(int failAfter, int* created, bool* tf32 = nullptr);
    // The device-failure warning, when it is showing.
    static QMessageBox* deviceFailureBox();

    QTemporaryDir m_dir;
};

void TestStudio::initTestCase()
{
    isolateSettings("testStudio");
    QVERIFY(m_dir.isValid());
    // As the studio's main() does, and armed although this is a release build: engine work on
    // this (the GUI) thread is recorded instead of aborting, and the tests below check it.
    il::setEngineThreadGuardEnabled(true);
    il::forbidEngineWorkOnThisThread();
    il::setEngineThreadViolationHandler([](const std::string& what) {
        const std::lock_guard lock(g_violationsMutex);
        g_violations << QString::fromStdString(what);
    });
}

void TestStudio::init()
{
    QSettings().remove("training"); // each test starts with the default device (the CPU)
    newWindow();
}

void TestStudio::cleanup()
{
    session()->stop();
    Dialogs::setNextAnswer(QMessageBox::Discard);
    QVERIFY(m_window->close());
    Dialogs::setNextAnswer(QMessageBox::NoButton);
    delete m_window;
    m_window = nullptr;
}

void TestStudio::setSteps(int steps)
{
    find<QComboBox>("budgetUnitComboBox")->setCurrentIndex(1);
    find<QSpinBox>("budgetSpinBox")->setValue(steps);
    QCOMPARE(session()->config().steps, steps);
}

void TestStudio::trainToEnd()
{
    QSignalSpy finished(session(), &Session::trainingFinished);
    find<QPushButton>("startButton")->click();
    QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, kTrainingWait);
    const auto outcome = finished.first().first().value<TrainingOutcome>();
    QVERIFY2(!outcome.failed, qPrintable(outcome.message));
}

void TestStudio::chartsDecimateLongRuns()
{
    LossHistory history;
    for (int64_t step = 1; step <= 100'000; ++step)
        history.addTrainLoss(step, 1.0 / static_cast<double>(step), 1e-3);
    history.addTrainLoss(100'001, NAN, 1e-3); // a non-finite value is never drawn
    QElapsedTimer clock;
    clock.start();
    const QList<QPointF> points = history.train(ChartsPanel::kMaxPoints, true);
    const QList<QPointF> smooth = history.trainSmoothed(ChartsPanel::kMaxPoints, true);
    QVERIFY(clock.elapsed() < 50);
    QVERIFY(points.size() <= ChartsPanel::kMaxPoints && points.size() > 1000);
    QCOMPARE(smooth.size(), points.size());
    QVERIFY(points.first().x() < 100 && points.last().x() > 99'000);
    for (const QPointF& p : points)
        QVERIFY(std::isfinite(p.y()) && p.y() > 0);
    QCOMPARE(history.trainCount(), size_t(100'000)); // every finite point, up to kMaxKept

    // Past its bound a history merges neighbours in pairs: bounded, the whole curve kept.
    LossHistory bounded(1000);
    for (int64_t step = 1; step <= 1'000'000; ++step)
        bounded.addTrainLoss(step, 1.0 / static_cast<double>(step), 1e-3);
    QVERIFY(bounded.trainCount() <= 1000 && bounded.trainCount() > 250);
    const QList<QPointF> all = bounded.train(ChartsPanel::kMaxPoints);
    QVERIFY(all.first().x() < 1000 && all.last().x() > 990'000);
    for (qsizetype i = 1; i < all.size(); ++i)
        QVERIFY(all[i].x() > all[i - 1].x() && all[i].y() < all[i - 1].y());
}

// The hash grid tables' own learning rate: shown for a stack with a hash grid (the image
// task's default), edited into the run's settings, hidden for a stack without one.
void TestStudio::gridRateShownForAHashGrid()
{
    openSample("camera");
    QVERIFY2(session()->spec().startsWith("hashgrid"), qPrintable(session()->spec()));
    auto* rate = find<QDoubleSpinBox>("gridLrSpinBox");
    QVERIFY(!rate->isHidden());
    QCOMPARE(static_cast<float>(rate->value()),
             session()->config().optimizer.group("grid_tables").lr);
    rate->setValue(0.005);
    QCOMPARE(session()->config().optimizer.group("grid_tables").lr, 0.005f);
    auto* spec = find<QLineEdit>("specLineEdit");
    spec->setText("dense:32,sine:30,dense");
    emit spec->returnPressed();
    QVERIFY(rate->isHidden());
    QVERIFY(find<QLabel>("gridLrLabel")->isHidden());
}

void TestStudio::layerSpecRoundTrips_data()
{
    QTest::addColumn<QString>("spec");
    QTest::addColumn<QString>("written");
    QTest::newRow("mlp") << "dense:32,tanh,dense:32,tanh,dense"
                         << "dense:32,tanh,dense:32,tanh,dense";
    QTest::newRow("siren") << "dense:256,sine:30,dense:256,sine:30,dense:256,sine:30,dense"
                           << "dense:256,sine:30,dense:256,sine:30,dense:256,sine:30,dense";
    QTest::newRow("fourier") << "fourier:256:10,dense:256,relu,dense"
                             << "fourier:256:10,dense:256,relu,dense";
    QTest::newRow("names") << "embedding:27:16,dense:256,tanh,dense"
                           << "embedding:27:16,dense:256,tanh,dense";
    QTest::newRow("aliases") << "linear:8:he, leaky:0.2, sin, dense:3"
                             << "dense:8:he,leakyrelu:0.2,sine:30,dense";
    QTest::newRow("classic") << "dense:128,tanh,dense,sigmoid"
                             << "dense:128,tanh,dense,sigmoid";
}

void TestStudio::layerSpecRoundTrips()
{
    QFETCH(QString, spec);
    QFETCH(QString, written);
    LayerRows rows;
    QString error;
    QVERIFY2(parseLayerRows(spec, rows, &error), qPrintable(error));
    normaliseLayerRows(rows);
    QCOMPARE(formatLayerRows(rows), written);
    LayerRows again;
    QVERIFY(parseLayerRows(written, again, &error));
    normaliseLayerRows(again);
    QCOMPARE(formatLayerRows(again), written);
}

void TestStudio::everyTaskKindHasItsPages()
{
    // One StudioKind per task type (src/app/kinds), each with a page on the Data and the Output
    // tab beside the empty one.
    const auto& types = il::tasks::taskTypes();
    const auto& kinds = il::app::studioKinds();
    QCOMPARE(kinds.size(), types.size());
    for (const il::tasks::TaskType* type : types) {
        const int kind = il::app::studioKindIndex(type);
        QVERIFY2(kind >= 0, qPrintable(type->name() + ": no StudioKind in src/app/kinds"));
        QCOMPARE(&kinds[size_t(kind)]->type(), type);
    }
    QCOMPARE(il::app::studioKindIndex(nullptr), -1);
    QCOMPARE(size_t(find<QStackedWidget>("pagesStackedWidget")->count()), 1 + kinds.size());
    QCOMPARE(size_t(find<QStackedWidget>("outputStackedWidget")->count()), 1 + kinds.size());
}

void TestStudio::opensEachKindOfSample()
{
    auto* pages = find<QStackedWidget>("pagesStackedWidget");

    openSample("iris");
    QCOMPARE(pages->currentWidget()->objectName(), QString("tablePage"));
    QVERIFY(find<QTableView>("previewTableView")->model()->rowCount() > 0);
    QCOMPARE(find<QTableWidget>("columnsTableWidget")->rowCount(), 5);
    QVERIFY(find<QLabel>("taskLabel")->text().contains("Classification"));
    QVERIFY(find<ChartsPanel>("chartsPanel")->plannedLearningRatePointCount() > 0); // before Start
    QCOMPARE(find<QStackedWidget>("outputStackedWidget")->currentWidget()->objectName(),
             QString("tableOutputPage"));
    QVERIFY(QSettings().value("recentFiles").toStringList().contains(":/samples/iris.csv"));

    // A role change reopens the table: ignoring a feature leaves 3 inputs.
    auto* role = find<QComboBox>("roleComboBox0");
    role->setCurrentIndex(2);
    QTRY_COMPARE(session()->inputWidth(), int64_t(3));

    openSample("camera");
    QCOMPARE(pages->currentWidget()->objectName(), QString("imagePage"));
    QVERIFY(find<QLabel>("imageInfoLabel")->text().contains("Trains at"));
    QCOMPARE(session()->inputWidth(), int64_t(2));

    openSample("names-ssa2018");
    QCOMPARE(pages->currentWidget()->objectName(), QString("namesPage"));
    QVERIFY(find<QListWidget>("namesListWidget")->count() > 100);
    QVERIFY(find<QLabel>("namesInfoLabel")->text().contains("vocabulary of 27"));
    QCOMPARE(find<QStackedWidget>("outputStackedWidget")->currentWidget()->objectName(),
             QString("namesOutputPage"));
}

void TestStudio::editsTheStackWithUndo()
{
    openSample("iris");
    // The mlp preset (the default adds a skip after the output layer).
    auto* presets = find<QComboBox>("presetComboBox");
    presets->setCurrentIndex(presets->findData("mlp"));
    emit presets->activated(presets->currentIndex());
    auto* view = find<QTableView>("layersTableView");
    auto* model = qobject_cast<LayerStackModel*>(view->model());
    QVERIFY(model);
    QCOMPARE(model->rowCount(), 5);
    QVERIFY(model->isValid());
    // 4 -> 32 -> 32 -> 3: (4*32+32) + (32*32+32) + (32*3+3)
    QCOMPARE(model->totalParameters(), int64_t(160 + 1056 + 99));

    view->setCurrentIndex(model->index(1, 0));
    find<QPushButton>("addButton")->click(); // a dense:32 after the tanh
    QCOMPARE(model->rowCount(), 6);
    QCOMPARE(session()->spec(), QString("dense:32,tanh,dense:32,dense:32,tanh,dense"));
    find<QPushButton>("removeButton")->click();
    QCOMPARE(model->rowCount(), 5);
    find<QToolButton>("undoButton")->click();
    QCOMPARE(model->rowCount(), 6);
    find<QToolButton>("undoButton")->click();
    QCOMPARE(session()->spec(), QString("dense:32,tanh,dense:32,tanh,dense"));
    find<QToolButton>("redoButton")->click();
    QCOMPARE(model->rowCount(), 6);

    // Editing a cell is one undo step; the output layer's size is not editable.
    QVERIFY(model->setData(model->index(0, LayerStackModel::SizeColumn), 8, Qt::EditRole));
    QVERIFY(session()->spec().startsWith("dense:8,"));
    QVERIFY(!(model->flags(model->index(5, LayerStackModel::SizeColumn)) & Qt::ItemIsEditable));

    // An invalid stack explains itself and Start refuses it.
    auto* spec = find<QLineEdit>("specLineEdit");
    spec->setText("dense:4,embedding:3,dense");
    emit spec->returnPressed();
    auto* error = find<QLabel>("stackErrorLabel");
    auto* panel = find<QWidget>("modelPanel");
    QVERIFY(error->isVisibleTo(panel));
    QVERIFY2(error->text().contains("embedding"), qPrintable(error->text()));
    QSignalSpy finished(session(), &Session::trainingFinished);
    find<QPushButton>("startButton")->click();
    QCOMPARE(finished.count(), 1);
    QVERIFY(finished.first().first().value<TrainingOutcome>().failed);
    QCOMPARE(session()->runState(), Session::RunState::Idle);
    find<QToolButton>("undoButton")->click();
    QVERIFY(!error->isVisibleTo(panel));
}

// The editor's types, defaults, labels and counts come from the engine's layer registry: every
// registered type is offered, can be added, and (where it may stand) gives a valid stack.
void TestStudio::offersEveryRegisteredLayerType()
{
    openSample("iris");
    auto* model = qobject_cast<LayerStackModel*>(find<QTableView>("layersTableView")->model());
    auto* combo = find<QComboBox>("newLayerComboBox");
    QCOMPARE(combo->count(), int(il::layerTypes().size()));
    for (const il::LayerType& type : il::layerTypes()) {
        const QString name = QString::fromStdString(type.name);
        QVERIFY2(combo->findText(name) >= 0, qPrintable(name));
        model->resetSpec("dense:32,tanh,dense");
        model->insertLayer(type.firstOnly.empty() ? 1 : 0, name);
        QCOMPARE(model->rowCount(), 4);
        QVERIFY2(model->spec().contains(name), qPrintable(model->spec()));
        QCOMPARE(model->data(model->index(type.firstOnly.empty() ? 1 : 0, 0), Qt::DisplayRole)
                     .toString(),
                 QString::fromStdString(type.label));
        if (type.name == "hashgrid") { // iris has 4 inputs, not an image's 2 coordinates
            QVERIFY2(!model->isValid() && model->errorString().contains("2-D positions"),
                     qPrintable(model->errorString()));
            // Its parameter count explains each grid: cells, and whether vertices share rows.
            const QString grids =
                model->data(model->index(0, LayerStackModel::ParamsColumn), Qt::ToolTipRole)
                    .toString();
            QVERIFY2(grids.contains("grid 1: 16 x 16 cells, 289 vertices, own rows") &&
                         grids.contains("grid 16: 512 x 512 cells") && grids.contains("hashed"),
                     qPrintable(grids));
        } else if (type.name == "merge") { // a table's row is not made of positions
            QVERIFY2(!model->isValid() && model->errorString().contains("not made of positions"),
                     qPrintable(model->errorString()));
        } else if (!type.example.data.empty() && type.example.data != "table") {
            // Made for other data (its registry example's): on a table it may refuse, naming it.
            QVERIFY2(model->isValid() || model->errorString().contains(name),
                     qPrintable(model->errorString()));
        } else if (type.name != "embedding") // iris has no vocabulary
            QVERIFY2(model->isValid(), qPrintable(name + ": " + model->errorString()));
    }
}

void TestStudio::trainsAndChartsArrive()
{
    openSample("iris");
    setSteps(300);
    auto* charts = find<ChartsPanel>("chartsPanel");
    QCOMPARE(charts->trainPointCount(), 0);
    find<QPushButton>("startButton")->click();
    QTRY_VERIFY_WITH_TIMEOUT(charts->trainPointCount() > 0, kWorkWait);
    QTRY_COMPARE_WITH_TIMEOUT(session()->runState(), Session::RunState::Idle, kWorkWait);
    QTRY_VERIFY(charts->validationPointCount() > 0);
    QVERIFY(charts->trainPointCount() <= ChartsPanel::kMaxPoints);
    QVERIFY(session()->trainedSteps() > 0);
    QVERIFY(session()->history().trainCount() >= static_cast<size_t>(charts->trainPointCount()));
    // The predictions table fills with ✓ / ✗ after the run.
    auto* predictions = find<QTableWidget>("predictionsTableWidget");
    QTRY_VERIFY(predictions->rowCount() > 0);
    QVERIFY(predictions->item(0, 3)->text() == QString::fromUtf8("\u2713") ||
            predictions->item(0, 3)->text() == QString::fromUtf8("\u2717"));
    QVERIFY(m_window->isWindowModified());
}

void TestStudio::pausesResumesStopsAndStaysResponsive()
{
    openSmallImage();
    setSteps(1'000'000);
    find<QPushButton>("startButton")->click();
    QTRY_VERIFY_WITH_TIMEOUT(session()->trainedSteps() > 5, kWorkWait);

    // Event-loop latency while training (EventLoopProbe.h). Engine work on this thread is the
    // guard's to catch (the tests at the end); this catches the window's own slow work.
    const qint64 limit = eventLoopGapLimit();
    const qint64 worst = worstEventLoopGap(1500);
    qInfo("worst event-loop gap while training: %lld ms", worst);
    QVERIFY2(worst < limit, qPrintable(QString("event loop blocked for %1 ms").arg(worst)));

    // Render between two steps while training.
    find<QComboBox>("resolutionComboBox")->setCurrentIndex(0);
    find<QPushButton>("renderButton")->click();
    auto* page = find<ImageOutputPage>("imageOutputPage");
    QTRY_COMPARE_WITH_TIMEOUT(page->reconstruction().size(), QSize(200, 200), kWorkWait);

    auto* pause = find<QPushButton>("pauseButton");
    pause->click();
    QTRY_COMPARE(session()->runState(), Session::RunState::Paused);
    QTest::qWait(100); // the step that was running when Pause was pressed reports
    const int64_t pausedAt = session()->trainedSteps();
    QTest::qWait(400);
    QCOMPARE(session()->trainedSteps(), pausedAt);
    QCOMPARE(pause->text(), QString("&Resume"));

    pause->click();
    QTRY_COMPARE(session()->runState(), Session::RunState::Training);
    QTRY_VERIFY_WITH_TIMEOUT(session()->trainedSteps() > pausedAt, kWorkWait);

    QElapsedTimer stopClock;
    stopClock.start();
    find<QPushButton>("stopButton")->click();
    QTRY_COMPARE_WITH_TIMEOUT(session()->runState(), Session::RunState::Idle, kWorkWait);
    QVERIFY(stopClock.elapsed() < 2000);
    QCOMPARE(find<QPushButton>("startButton")->text(), QString("&Continue"));
}

void TestStudio::savesReopensAndContinues()
{
    openSample("iris");
    setSteps(200);
    QSignalSpy evaluated(session(), &Session::evaluated);
    trainToEnd();
    QTRY_VERIFY(evaluated.count() >= 1);
    const QString before = evaluated.last().first().value<Evaluation>().summary;
    const int64_t steps = session()->trainedSteps();
    const QString spec = session()->spec();
    const size_t history = session()->history().validationCount();

    const QString path = m_dir.filePath("iris.safetensors");
    Dialogs::setNextFileName(path);
    QSignalSpy saved(session(), &Session::modelSaved);
    find<QAction>("actionSaveModelAs")->trigger();
    QTRY_COMPARE(saved.count(), 1);
    QVERIFY(QFile::exists(path));
    QVERIFY(!session()->isModified());

    // Reopen in a fresh window: same stack, steps, history and predictions.
    cleanup();
    init();
    QSignalSpy reevaluated(session(), &Session::evaluated);
    openModel(path);
    QCOMPARE(session()->trainedSteps(), steps);
    QCOMPARE(session()->spec(), spec);
    QCOMPARE(session()->history().validationCount(), history);
    QVERIFY(session()->task()); // the data came back with the model
    QTRY_VERIFY(reevaluated.count() >= 1);
    QCOMPARE(reevaluated.last().first().value<Evaluation>().summary, before);

    // Continue: raise the budget and train further from where it stopped.
    setSteps(static_cast<int>(steps) + 50);
    QCOMPARE(find<QPushButton>("startButton")->text(), QString("&Continue"));
    trainToEnd();
    QVERIFY(session()->trainedSteps() > steps);
}

void TestStudio::rendersAtTwoResolutionsAndExports()
{
    openSmallImage();
    setSteps(40);
    trainToEnd();
    auto* page = find<ImageOutputPage>("imageOutputPage");
    QTRY_VERIFY(!page->reconstruction().isNull()); // the final snapshot
    auto* slider = find<QSlider>("timelineSlider");
    QVERIFY(slider->maximum() >= 1); // the start and the end at least

    auto* resolution = find<QComboBox>("resolutionComboBox");
    auto* render = find<QPushButton>("renderButton");
    resolution->setCurrentIndex(0);
    render->click();
    QTRY_COMPARE(page->reconstruction().size(), QSize(200, 200));
    resolution->setCurrentIndex(1);
    render->click();
    QTRY_COMPARE(page->reconstruction().size(), QSize(512, 512));

    // The honest zoom: the original, upscaled bicubically to the render's size, beside it.
    auto* original = find<ImageView>("originalImageView");
    const QSize trained = original->image().size();
    QVERIFY(trained.width() < 512);
    find<QCheckBox>("bicubicCheckBox")->setChecked(true);
    QCOMPARE(original->image().size(), QSize(512, 512));
    QVERIFY(find<QLabel>("originalTitleLabel")->text().contains("bicubic 512×512"));
    find<QCheckBox>("bicubicCheckBox")->setChecked(false);
    QCOMPARE(original->image().size(), trained);

    const QString png = m_dir.filePath("camera-512.png");
    Dialogs::setNextFileName(png);
    find<QPushButton>("exportButton")->click();
    QCOMPARE(QImage(png).size(), QSize(512, 512));

    // A click on the loss chart moves the timeline to the nearest snapshot.
    slider->setValue(slider->maximum());
    page->showStep(0);
    QCOMPARE(slider->value(), 0);
}

void TestStudio::generatesNames()
{
    openSample("names-ssa2018");
    setSteps(300);
    trainToEnd();
    find<QSpinBox>("countSpinBox")->setValue(15);
    find<QPushButton>("generateButton")->click();
    auto* list = find<QListWidget>("generatedListWidget");
    QTRY_COMPARE_WITH_TIMEOUT(list->count(), 15, kWorkWait);
    QVERIFY(list->item(0)->text().startsWith("NEW") || list->item(0)->text().startsWith("SEEN"));
    QVERIFY(find<QLabel>("innovationLabel")->text().contains("%"));

    auto* bars = find<ProbabilityBars>("nextCharBars");
    find<QLineEdit>("prefixLineEdit")->setText("ma");
    QTRY_VERIFY(!bars->probabilities().empty());
    QTRY_COMPARE(bars->probabilities().size(), size_t(27));
    const std::vector<float> warm = bars->probabilities();
    const float sum = std::accumulate(warm.begin(), warm.end(), 0.f);
    QVERIFY(std::fabs(sum - 1.f) < 1e-3f);
    // A lower temperature sharpens the distribution: the top probability grows.
    find<QSlider>("temperatureSlider")->setValue(30);
    QTRY_VERIFY(*std::max_element(bars->probabilities().begin(), bars->probabilities().end()) >
                *std::max_element(warm.begin(), warm.end()));

    // The inspector's text starts the names: every one begins with it.
    auto* fromPrefix = find<QPushButton>("generatePrefixButton");
    QVERIFY(fromPrefix->isEnabled());
    fromPrefix->click();
    QTRY_VERIFY_WITH_TIMEOUT(list->count() == 15 && fromPrefix->isEnabled(), kWorkWait);
    for (int i = 0; i < list->count(); ++i)
        QVERIFY2(list->item(i)->text().mid(4).trimmed().startsWith("ma"),
                 qPrintable(list->item(i)->text()));
    QVERIFY(find<QLabel>("innovationLabel")->text().contains("starting with “ma”"));
    find<QLineEdit>("prefixLineEdit")->setText("m7");
    fromPrefix->click();
    QTRY_VERIFY_WITH_TIMEOUT(find<QLabel>("innovationLabel")->text().contains("'7' (U+0037)"),
                             kWorkWait);
    find<QLineEdit>("prefixLineEdit")->clear();
    QVERIFY(!fromPrefix->isEnabled());
}

void TestStudio::showsLoaderErrorsInline()
{
    openSample("iris");
    const QString bad = m_dir.filePath("ragged.csv");
    QFile file(bad);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("a,b,c\n1,2,3\n4,5\n6,7,8\n");
    file.close();
    QVERIFY(!m_window->openFile(bad));
    auto* frame = find<QFrame>("errorFrame");
    auto* panel = find<QWidget>("datasetPanel");
    QVERIFY(frame->isVisibleTo(panel));
    const QString text = find<QLabel>("errorLabel")->text();
    QVERIFY2(text.contains("ragged.csv") && text.contains("3"), qPrintable(text));
    QVERIFY(session()->dataPath().endsWith("iris.csv")); // the previous data stays

    // Over 4 GiB (sparse): refused before any of it is read, as the CLI refuses it.
    const QString huge = m_dir.filePath("huge.csv");
    QFile hugeFile(huge);
    QVERIFY(hugeFile.open(QIODevice::WriteOnly));
    hugeFile.write("x,y\n1,2\n");
    if (hugeFile.resize((qint64(4) << 30) + 1)) {
        hugeFile.close();
        QVERIFY(!m_window->openFile(huge));
        const QString said = find<QLabel>("errorLabel")->text();
        QVERIFY2(said.contains("huge.csv") && said.contains("larger than 4 GiB"), qPrintable(said));
        QVERIFY(session()->dataPath().endsWith("iris.csv"));
    }
    hugeFile.remove();

    const QString model = m_dir.filePath("cut.safetensors");
    QFile cut(model);
    QVERIFY(cut.open(QIODevice::WriteOnly));
    cut.write("\x10\x00\x00\x00\x00\x00\x00\x00{\"a\"", 12);
    cut.close();
    QSignalSpy failed(session(), &Session::modelFailed);
    m_window->openFile(model); // read on the worker; the error comes back
    QTRY_COMPARE(failed.count(), 1);
    QVERIFY(frame->isVisibleTo(panel));
    QVERIFY(find<QLabel>("errorLabel")->text().contains("cut.safetensors"));

    // Still usable: the good sample opens and the error goes away.
    openSample("xor");
    QVERIFY(!frame->isVisibleTo(panel));
}

void TestStudio::closingWhileTrainingSaves()
{
    openSmallImage();
    setSteps(1'000'000);
    find<QPushButton>("startButton")->click();
    QTRY_VERIFY_WITH_TIMEOUT(session()->trainedSteps() > 3, kWorkWait);
    const QString path = m_dir.filePath("closing.safetensors");
    const int asked = Dialogs::questionCount();
    Dialogs::setNextAnswer(QMessageBox::Save);
    Dialogs::setNextFileName(path);
    // The save runs on the worker; the window closes when it is written.
    QVERIFY(!m_window->close());
    QCOMPARE(Dialogs::questionCount(), asked + 1);
    QTRY_VERIFY(!m_window->isVisible());
    QCOMPARE(Dialogs::questionCount(), asked + 1);
    QVERIFY(QFile::exists(path));
    QTRY_VERIFY(!session()->worker()->isTraining());
    delete m_window;
    // The saved file opens again with the steps it had.
    init();
    openModel(path);
    QVERIFY(session()->trainedSteps() > 3);
}

void TestStudio::openModel(const QString& path)
{
    QSignalSpy opened(session(), &Session::modelOpened);
    QSignalSpy failed(session(), &Session::modelFailed);
    QVERIFY(m_window->openFile(path));
    QTRY_VERIFY(opened.count() + failed.count() > 0);
    QVERIFY2(failed.isEmpty(),
             failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
}

void TestStudio::onWorker(const std::function<void(ModelState&)>& f)
{
    session()->worker()->post([f](ModelState& m) { f(m); });
    session()->worker()->waitForIdle();
}

BackendProvider TestStudio::fakeGpu(int failAfter, int* created, bool* tf32)
{
    BackendProvider provider;
    provider.cudaStatus = [] {
        il::BackendStatus s;
        s.name = "cuda";
        s.available = true;
        s.device = "Faulty test GPU, 1 GiB";
        return s;
    };
    provider.create = [failAfter, created,
                       tf32](const std::string& name,
                             const il::BackendOptions& options) -> std::unique_ptr<il::Backend> {
        if (name != "cuda") return il::createBackend(name, options);
        if (tf32) *tf32 = options.tf32;
        if (failAfter == -2)
            throw il::BackendError(
                "could not start CUDA: out of memory (cudaErrorMemoryAllocation)");
        ++*created;
        return std::make_unique<testsupport::FaultyBackend>(il::createCpuBackend(1), failAfter);
    };
    return provider;
}

void TestStudio::installFakeGpu(int failAfter, int* created, bool* tf32)
{
    session()->setBackendProvider(fakeGpu(failAfter, created, tf32));
    auto* combo = find<QComboBox>("deviceComboBox");
    auto* model = qobject_cast<QStandardItemModel*>(combo->model());
    QVERIFY(model);
    QTRY_VERIFY(model->item(1) && model->item(1)->isEnabled());
    QVERIFY(combo->itemText(1).contains("Faulty test GPU"));
    QVERIFY(!find<QLabel>("deviceNoteLabel")->isVisibleTo(find<QWidget>("trainingPanel")));
}

QMessageBox* TestStudio::deviceFailureBox()
{
    for (QWidget* w : QApplication::topLevelWidgets())
        if (auto* box = qobject_cast<QMessageBox*>(w);
            box && box->objectName() == "deviceFailureBox" && box->isVisible())
            return box;
    return nullptr;
}

void TestStudio::deviceChoiceSaysWhyCudaIsUnavailable()
{
    auto* combo = find<QComboBox>("deviceComboBox");
    auto* note = find<QLabel>("deviceNoteLabel");
    auto* tf32 = find<QCheckBox>("tf32CheckBox");
    auto* panel = find<QWidget>("trainingPanel");
    QTRY_VERIFY(session()->cudaProbed());
    const il::BackendStatus cuda = il::cudaStatus();
    QCOMPARE(combo->count(), 2);
    QCOMPARE(combo->itemData(0).toString(), QString("cpu"));
    QCOMPARE(combo->itemData(1).toString(), QString("cuda"));
    QVERIFY2(combo->itemText(0).startsWith(QString::fromUtf8("CPU \u2014 ")),
             qPrintable(combo->itemText(0)));
    QVERIFY(combo->itemText(1).startsWith("NVIDIA GPU (CUDA)"));
    auto* model = qobject_cast<QStandardItemModel*>(combo->model());
    QVERIFY(model);
    QCOMPARE(model->item(1)->isEnabled(), cuda.available);
    if (cuda.available) {
        QVERIFY(!note->isVisibleTo(panel));
        QVERIFY(combo->itemText(1).contains(QString::fromStdString(cuda.device)));
    } else {
        // The reason, word for word, in the item's tooltip, the list's tooltip, the note under
        // the list and the status bar's device label.
        const QString reason = QString::fromStdString(cuda.reason);
        QVERIFY(!reason.isEmpty());
        QVERIFY(note->isVisibleTo(panel));
        QVERIFY2(note->text().contains("CUDA unavailable: " + reason), qPrintable(note->text()));
        const QString itemTip = combo->itemData(1, Qt::ToolTipRole).toString();
        QVERIFY2(itemTip.contains(reason), qPrintable(itemTip));
        QVERIFY(combo->toolTip().contains(reason));
        QVERIFY(find<QLabel>("deviceStatusLabel")->toolTip().contains(reason));
        // A disabled item cannot become the choice, even set from code.
        combo->setCurrentIndex(1);
        QCOMPARE(combo->currentData().toString(), QString("cpu"));
        QCOMPARE(session()->device().backend, QString("cpu"));
        QVERIFY(!tf32->isEnabled());
        QVERIFY(!tf32->isChecked());
    }
    QVERIFY(find<QLabel>("deviceStatusLabel")->text().contains("Device:"));

    // Training on the CPU works as before, and the model lives on the CPU.
    QCOMPARE(session()->device().backend, QString("cpu"));
    openSample("iris");
    setSteps(60);
    trainToEnd();
    QCOMPARE(session()->trainedSteps(), int64_t(60));
    QString where;
    onWorker([&](ModelState& m) { where = QString::fromStdString(m.backend->info().backend); });
    QCOMPARE(where, QString("cpu"));
}

void TestStudio::deviceFailureKeepsWeightsAndContinuesOnCpu()
{
    openSample("iris");
    find<QSpinBox>("patienceSpinBox")->setValue(0); // no early stop: the budget decides
    setSteps(20);
    trainToEnd(); // 20 steps on the CPU: the weights the GPU run starts from
    QCOMPARE(session()->trainedSteps(), int64_t(20));
    il::HostCopy onCpu;
    onWorker([&](ModelState& m) { onCpu = il::takeHostCopy(*m.network, *m.optimizer, m.state); });
    QCOMPARE(onCpu.state.step, int64_t(20));

    int created = 0;
    bool tf32Asked = false;
    installFakeGpu(200, &created, &tf32Asked); // about 20 steps of a small table network
    auto* combo = find<QComboBox>("deviceComboBox");
    auto* tf32 = find<QCheckBox>("tf32CheckBox");
    QVERIFY(!tf32->isEnabled());
    combo->setCurrentIndex(1);
    QCOMPARE(session()->device().backend, QString("cuda"));
    QVERIFY(tf32->isEnabled());
    QVERIFY(!tf32->isChecked()); // off by default
    tf32->setChecked(true);
    QVERIFY(session()->device().tf32);
    QCOMPARE(QSettings().value("training/device").toString(), QString("cuda"));
    QCOMPARE(QSettings().value("training/tf32").toBool(), true);
    QVERIFY(find<QLabel>("deviceStatusLabel")->text().contains("CUDA"));

    // The GPU fails mid-run: the run stops with a clear message and the weights of step 20.
    setSteps(300);
    QSignalSpy finished(session(), &Session::trainingFinished);
    find<QPushButton>("startButton")->click();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kTrainingWait);
    const auto outcome = finished.first().first().value<TrainingOutcome>();
    QCOMPARE(outcome.reason, il::StopReason::DeviceFailure);
    QVERIFY(outcome.failed);
    QVERIFY(outcome.movedToCpu);
    QVERIFY2(outcome.message.contains(testsupport::FaultyBackend::kError),
             qPrintable(outcome.message));
    QCOMPARE(outcome.step, int64_t(20));
    QVERIFY(tf32Asked);
    QVERIFY(outcome.message.contains("after step 20"));
    qInfo("device failure: %s", qPrintable(outcome.message));
    QCOMPARE(created, 1);

    QMessageBox* box = nullptr;
    QTRY_VERIFY((box = deviceFailureBox()) != nullptr);
    QVERIFY2(box->informativeText().contains(testsupport::FaultyBackend::kError),
             qPrintable(box->informativeText()));
    QVERIFY(m_window->statusBar()->currentMessage().contains(testsupport::FaultyBackend::kError));
    QVERIFY(find<QLabel>("rateLabel")->text().contains("GPU failed"));

    // The choice is the CPU now (for this session: the remembered choice stays the GPU).
    QCOMPARE(combo->currentData().toString(), QString("cpu"));
    QCOMPARE(session()->device().backend, QString("cpu"));
    QVERIFY(!tf32->isEnabled());
    QVERIFY(!tf32->isChecked());
    QCOMPARE(QSettings().value("training/device").toString(), QString("cuda"));
    QVERIFY(find<QLabel>("deviceStatusLabel")->text().contains("CPU"));

    // The model is on the CPU with exactly the weights and optimizer state of step 20.
    QCOMPARE(session()->trainedSteps(), int64_t(20));
    QVERIFY(session()->history().lastStep() <= 20);
    QString backend;
    bool sameWeights = false;
    int64_t step = -1;
    onWorker([&](ModelState& m) {
        backend = QString::fromStdString(m.backend->info().backend) +
                  (m.backend->memoryOnHost() ? "" : " (device memory)");
        const il::HostCopy now = il::takeHostCopy(*m.network, *m.optimizer, m.state);
        sameWeights = now.tensors == onCpu.tensors && now.optimizer == onCpu.optimizer;
        step = m.state.step;
    });
    QCOMPARE(backend, QString("cpu"));
    QCOMPARE(step, onCpu.state.step);
    QVERIFY(sameWeights);

    // The predictions still come (from the CPU model).
    QSignalSpy evaluated(session(), &Session::evaluated);
    session()->evaluate();
    QTRY_VERIFY(evaluated.count() >= 1);

    // Continue on CPU: training goes on from step 20 and finishes there.
    auto* button = box->findChild<QPushButton*>("continueOnCpuButton");
    QVERIFY(button);
    QCOMPARE(button->text(), QString("Continue on CPU"));
    QTest::mouseClick(button, Qt::LeftButton);
    QTRY_VERIFY(deviceFailureBox() == nullptr);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, kTrainingWait);
    const auto again = finished.last().first().value<TrainingOutcome>();
    QVERIFY2(!again.failed, qPrintable(again.message));
    QCOMPARE(again.reason, il::StopReason::Finished);
    QCOMPARE(session()->trainedSteps(), int64_t(300));
    QCOMPARE(created, 1); // the GPU was not tried again
    onWorker([&](ModelState& m) { backend = QString::fromStdString(m.backend->info().backend); });
    QCOMPARE(backend, QString("cpu"));
    QVERIFY(find<QLabel>("rateLabel")->text().contains("Finished"));

    // The next session remembers the GPU and TF32, and trains there when the GPU is present.
    Session next;
    QTRY_VERIFY(next.cudaProbed());
    QCOMPARE(next.device().backend, QString(il::cudaStatus().available ? "cuda" : "cpu"));
    next.setBackendProvider(fakeGpu(-1, &created));
    QTRY_COMPARE(next.device().backend, QString("cuda"));
    QVERIFY(next.device().tf32);
}

void TestStudio::gpuThatWillNotStartFallsBackToCpu()
{
    openSample("xor");
    int created = 0;
    installFakeGpu(-2, &created);
    auto* combo = find<QComboBox>("deviceComboBox");
    combo->setCurrentIndex(1);
    QCOMPARE(session()->device().backend, QString("cuda"));
    setSteps(50);
    QSignalSpy finished(session(), &Session::trainingFinished);
    find<QPushButton>("startButton")->click();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kTrainingWait);
    const auto outcome = finished.first().first().value<TrainingOutcome>();
    QVERIFY(outcome.deviceUnavailable);
    QVERIFY(outcome.message.contains("out of memory"));
    QCOMPARE(outcome.step, int64_t(0));

    QMessageBox* box = nullptr;
    QTRY_VERIFY((box = deviceFailureBox()) != nullptr);
    QVERIFY(box->informativeText().contains("out of memory"));
    QCOMPARE(combo->currentData().toString(), QString("cpu"));
    QCOMPARE(session()->runState(), Session::RunState::Idle);

    // Close, then Start: the run trains on the CPU.
    auto* close = box->findChild<QPushButton*>("closeButton");
    QVERIFY(close);
    QTest::mouseClick(close, Qt::LeftButton);
    QTRY_VERIFY(deviceFailureBox() == nullptr);
    QCOMPARE(finished.count(), 1);
    trainToEnd();
    QCOMPARE(session()->trainedSteps(), int64_t(50));
}

void TestStudio::rendersAfterTheGpuFailed()
{
    openSmallImage();
    int created = 0;
    installFakeGpu(150, &created);
    find<QComboBox>("deviceComboBox")->setCurrentIndex(1);
    setSteps(100'000);
    QSignalSpy finished(session(), &Session::trainingFinished);
    find<QPushButton>("startButton")->click();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kTrainingWait);
    const auto outcome = finished.first().first().value<TrainingOutcome>();
    QCOMPARE(outcome.reason, il::StopReason::DeviceFailure);
    QVERIFY(outcome.movedToCpu);
    QCOMPARE(outcome.step, int64_t(0)); // the trainer's copy from the start of the run
    QTRY_VERIFY(deviceFailureBox() != nullptr);
    // Snapshots after the kept step are gone; the final one shows the kept weights.
    QVERIFY(!session()->timeline().empty());
    for (const TimelineFrame& s : session()->timeline())
        QVERIFY(s.step <= outcome.step);

    // Rendering runs on the CPU model.
    auto* page = find<ImageOutputPage>("imageOutputPage");
    find<QComboBox>("resolutionComboBox")->setCurrentIndex(0);
    find<QPushButton>("renderButton")->click();
    QTRY_COMPARE_WITH_TIMEOUT(page->reconstruction().size(), QSize(200, 200), kWorkWait);
    deviceFailureBox()->findChild<QPushButton*>("closeButton")->click();
    QTRY_VERIFY(deviceFailureBox() == nullptr);
}

// File > Export Model: to PyTorch (a folder) from the saved file; to ONNX after more training,
// which asks to save first and exports what was saved. Both run off the GUI thread.
void TestStudio::exportsTheModel()
{
    openSample("iris");
    QVERIFY(!find<QMenu>("exportModelMenu")->isEnabled() || session()->hasModel());
    setSteps(100);
    trainToEnd();
    QVERIFY(find<QMenu>("exportModelMenu")->isEnabled());
    const QString model = m_dir.filePath("iris-export.safetensors");
    Dialogs::setNextFileName(model);
    QSignalSpy saved(session(), &Session::modelSaved);
    find<QAction>("actionSaveModelAs")->trigger();
    QTRY_COMPARE(saved.count(), 1);

    auto* exporter = m_window->findChild<ModelExporter*>();
    QVERIFY(exporter);
    QSignalSpy exported(exporter, &ModelExporter::exported);
    QSignalSpy failed(exporter, &ModelExporter::failed);
    const QString folder = m_dir.filePath("iris-pytorch");
    const int questions = Dialogs::questionCount();
    Dialogs::setNextFileName(folder);
    find<QAction>("actionExportPyTorch")->trigger();
    QTRY_COMPARE_WITH_TIMEOUT(exported.count(), 1, kWorkWait);
    QCOMPARE(Dialogs::questionCount(), questions); // saved already: nothing to ask
    for (const char* f : {"model.py", "train_more.py", "model.safetensors"})
        QVERIFY2(QFile::exists(folder + "/" + f), f);
    QFile copy(folder + "/model.safetensors"), original(model);
    QVERIFY(copy.open(QIODevice::ReadOnly) && original.open(QIODevice::ReadOnly));
    QCOMPARE(copy.readAll(), original.readAll());
    QVERIFY(m_window->statusBar()->currentMessage().contains("iris-pytorch"));

    // Train on: the export asks to save first, saves to the model's file, then exports.
    setSteps(150);
    trainToEnd();
    QVERIFY(session()->isModified());
    const QString onnx = m_dir.filePath("iris.onnx");
    Dialogs::setNextAnswer(QMessageBox::Save);
    Dialogs::setNextFileName(onnx);
    find<QAction>("actionExportOnnx")->trigger();
    QTRY_COMPARE_WITH_TIMEOUT(exported.count(), 2, kWorkWait);
    QCOMPARE(saved.count(), 2);
    QVERIFY(!session()->isModified());
    QVERIFY(QFileInfo(onnx).size() > 1000);
    QVERIFY2(exported.last().at(1).toString().contains("input  numbers"),
             qPrintable(exported.last().at(1).toString()));
    QCOMPARE(failed.count(), 0);

    // A folder of the default name exists: the dialog offers a new one (a file dialog would
    // open the existing folder instead of returning it).
    QVERIFY(QDir(m_dir.path()).mkpath("iris-export-pytorch"));
    Dialogs::setNextFileName(""); // cancel
    find<QAction>("actionExportPyTorch")->trigger();
    QCOMPARE(Dialogs::lastSaveStart(), m_dir.filePath("iris-export-pytorch-2"));
    QCOMPARE(exported.count(), 2);
}

QTEST_MAIN(TestStudio)
#include "TestStudio.moc"

void TestStudio::guardCatchesEngineWorkOnTheGuiThread()
{
    // The guard is live in this build: a backend and a network made here are reported, ones
    // made on another thread are not.
    takeViolations();
    auto backend = il::createCpuBackend(1);
    {
        il::Network net(*backend, 2, "dense:4,tanh,dense", 1);
    }
    const QString here = takeViolations().join("; ");
    QVERIFY2(here.contains("creating a CPU backend") && here.contains("building a network"),
             qPrintable(here));
    std::thread([] {
        auto elsewhere = il::createCpuBackend(1);
        il::Network net(*elsewhere, 2, "dense:4,tanh,dense", 1);
    }).join();
    QVERIFY(takeViolations().isEmpty());
}

void TestStudio::sessionKeepsTheEngineOffTheGuiThread()
{
    // The document without its panels: open data, change the stack, train, save, open the
    // saved model and use it. Nothing of it may run the engine on this thread.
    takeViolations();
    Session session;
    QSignalSpy finished(&session, &Session::trainingFinished);
    QSignalSpy saved(&session, &Session::modelSaved);
    QSignalSpy opened(&session, &Session::modelOpened);
    QSignalSpy evaluated(&session, &Session::evaluated);
    QVERIFY(session.openDataset(":/samples/iris.csv"));
    session.setSpec("dense:8,tanh,dense");
    il::TrainerConfig config = session.config();
    config.steps = 30;
    config.epochs = 0;
    session.setConfig(config);
    session.start();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kTrainingWait);
    QVERIFY(!finished.first().first().value<TrainingOutcome>().failed);
    const QString path = m_dir.filePath("guarded.safetensors");
    QVERIFY(session.saveModel(path));
    QTRY_COMPARE(saved.count(), 1);
    QVERIFY(session.openModel(path));
    QTRY_COMPARE(opened.count(), 1);
    QCOMPARE(session.trainedSteps(), int64_t(30));
    QTRY_VERIFY(evaluated.count() >= 2);
    session.resetWeights();
    session.start(); // a fresh network, built on the worker
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, kTrainingWait);
    QVERIFY(!finished.last().first().value<TrainingOutcome>().failed);
    const QStringList violations = takeViolations();
    QVERIFY2(violations.isEmpty(), qPrintable(violations.join("; ")));
}

void TestStudio::studioKeepsTheEngineOffTheGuiThread()
{
    // The whole window: open data, edit the stack, train, save, open the model again.
    takeViolations();
    openSample("iris");
    auto* view = find<QTableView>("layersTableView");
    view->setCurrentIndex(view->model()->index(1, 0));
    find<QPushButton>("addButton")->click();
    setSteps(40);
    trainToEnd();
    const QString path = m_dir.filePath("studio-guarded.safetensors");
    Dialogs::setNextFileName(path);
    QSignalSpy saved(session(), &Session::modelSaved);
    find<QAction>("actionSaveModelAs")->trigger();
    QTRY_COMPARE(saved.count(), 1);
    openModel(path);
    QCOMPARE(session()->trainedSteps(), int64_t(40));
    setSteps(60);
    trainToEnd(); // continues the opened model
    const QStringList violations = takeViolations();
    QVERIFY2(violations.isEmpty(), qPrintable(violations.join("; ")));
}
