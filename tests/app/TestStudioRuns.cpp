// Runs you can compare: the real MainWindow, offscreen, driven by object names. Every
// Start of a new model begins a run and a Continue adds to it; the Runs tab lists each run with
// the settings it trained with and its result; earlier runs of the same data stay on the loss
// chart as ghosts, each one ticked on or off, all of them behind "Show earlier runs", and none on
// another task's chart; Compare puts two runs side by side with the setting that differs
// highlighted, both runs' results, both curves and both outputs.
#include "BackendRegistry.h"
#include "ChartsPanel.h"
#include "Errors.h"
#include "RunCompareDialog.h"
#include "RunList.h"
#include "RunListPanel.h"
#include "ScriptedRuns.h"
#include "StudioTestCase.h"

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QItemSelectionModel>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>

using namespace il::app;
using namespace studiotest;

namespace {

// A small SIREN on the camera at 64 px: each step is cheap.
using studiotest::kSmallImageSpec;

} // namespace

class TestStudioRuns : public StudioTestCase {
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void cleanup();

    void aContinueAddsToTheRun();
    void eachNewModelBeginsARun();
    void earlierRunsAreGhostsYouCanToggle();
    void compareShowsWhatDiffersAndBothResults();
    void imageRunsKeepTheirPicture();
    void namesRunsKeepSampleNames();
    void dataKeyFollowsTheKindsSettings();
    void aStartThatTrainsNothingLeavesNoRun();
    void scriptedRunsTrainEachEntryAndCompare();
    void scriptedRunsRefuseBadSettings();

private:
    RunList* runs() const
    {
        return qobject_cast<RunList*>(find<QTableView>("runsTableView")->model());
    }
    ChartsPanel* charts() const { return find<ChartsPanel>("chartsPanel"); }
    void setRate(double lr);
    // Reset weights (its question answered Discard): the next Start trains a new model.
    void resetWeights();
    // Two iris runs of 60 steps, at learning rates 0.01 and 0.03.
    void trainTwoIrisRuns();
    void selectRows(std::initializer_list<int> rows);
    RunCompareDialog* compare(int a, int b);
};

void TestStudioRuns::initTestCase()
{
    isolateSettings("testStudioRuns");
}

void TestStudioRuns::init()
{
    newWindow();
}

void TestStudioRuns::cleanup()
{
    closeWindow();
}

void TestStudioRuns::setRate(double lr)
{
    find<QDoubleSpinBox>("learningRateSpinBox")->setValue(lr);
    QCOMPARE(session()->config().schedule.lrMax, static_cast<float>(lr));
}

void TestStudioRuns::resetWeights()
{
    Dialogs::setNextAnswer(QMessageBox::Discard);
    find<QPushButton>("resetButton")->click();
    QCOMPARE(session()->trainedSteps(), 0);
}

void TestStudioRuns::trainTwoIrisRuns()
{
    openSample("iris");
    setRate(0.01);
    train(60, true);
    resetWeights();
    setRate(0.03);
    train(60, true);
    QCOMPARE(runs()->count(), 2);
}

void TestStudioRuns::selectRows(std::initializer_list<int> rows)
{
    auto* view = find<QTableView>("runsTableView");
    view->clearSelection();
    for (int row : rows)
        view->selectionModel()->select(view->model()->index(row, 0),
                                       QItemSelectionModel::Select | QItemSelectionModel::Rows);
}

RunCompareDialog* TestStudioRuns::compare(int a, int b)
{
    selectRows({a, b});
    auto* button = find<QPushButton>("compareButton");
    if (!button->isEnabled()) return nullptr;
    button->click();
    return find<RunListPanel>("runListPanel")->compareDialog();
}

// A Continue trains the same model on: the run grows and says what changed for it.
void TestStudioRuns::aContinueAddsToTheRun()
{
    openSample("iris");
    QCOMPARE(runs()->count(), 0);
    train(30);
    QCOMPARE(runs()->count(), 1);
    QCOMPARE(runs()->run(0).lastStep, 30);
    QVERIFY(!runs()->run(0).running);
    setRate(0.02);
    QCOMPARE(find<QPushButton>("startButton")->text().remove('&'), QString("Continue"));
    train(50);
    QCOMPARE(runs()->count(), 1);
    const Run& run = runs()->run(0);
    QCOMPARE(run.firstStep, 0);
    QCOMPARE(run.lastStep, 50);
    QCOMPARE(run.changes.size(), 1);
    QVERIFY2(run.changes[0].contains("Learning rate") && run.changes[0].contains("0.02"),
             qPrintable(run.changes[0]));
    // The whole curve, not its first part only.
    QCOMPARE(run.train.size(), static_cast<qsizetype>(session()->history().trainCount()));
    QCOMPARE(run.train.last(), session()->history().trainSmoothed(RunList::kCurvePoints).last());
    // The Runs tab is the fourth, Ctrl+4 shows it, also from the welcome page (Help > Welcome).
    QCOMPARE(find<QAction>("actionShowRuns")->shortcut(), QKeySequence("Ctrl+4"));
    find<QAction>("actionWelcome")->trigger();
    auto* central = find<QStackedWidget>("centralStackedWidget");
    QVERIFY(central->currentWidget()->objectName() != "studioPage");
    find<QAction>("actionShowRuns")->trigger();
    QCOMPARE(central->currentWidget()->objectName(), QString("studioPage"));
    QCOMPARE(find<QTabWidget>("setupTabWidget")->currentWidget(),
             static_cast<QWidget*>(find<RunListPanel>("runListPanel")));
}

// Reset weights, then Start: a second run, each with the learning rate it trained with.
void TestStudioRuns::eachNewModelBeginsARun()
{
    trainTwoIrisRuns();
    if (QTest::currentTestFailed()) return;
    QCOMPARE(runs()->run(0).config.schedule.lrMax, 0.01f);
    QCOMPARE(runs()->run(1).config.schedule.lrMax, 0.03f);
    QCOMPARE(runs()->currentRow(), 1);
    for (int row : {0, 1}) {
        const Run& run = runs()->run(row);
        QCOMPARE(run.number, row + 1);
        QCOMPARE(run.lastStep, 60);
        QVERIFY(run.changes.isEmpty());
        QVERIFY(run.metrics.contains("accuracy"));
        const QString settings =
            runs()->data(runs()->index(row, RunList::SettingsColumn), Qt::DisplayRole).toString();
        QVERIFY2(settings.contains(row == 0 ? "lr 0.01" : "lr 0.03"), qPrintable(settings));
        const QString result =
            runs()->data(runs()->index(row, RunList::ResultColumn), Qt::DisplayRole).toString();
        QVERIFY2(result.startsWith("Accuracy "), qPrintable(result));
    }
    // The first run's curve is its own, not the second one's.
    QVERIFY(runs()->run(0).train != runs()->run(1).train);
}

// The first run stays on the loss chart behind the second, as long as it is ticked and "Show
// earlier runs" is on, and only on its own data's chart.
void TestStudioRuns::earlierRunsAreGhostsYouCanToggle()
{
    trainTwoIrisRuns();
    if (QTest::currentTestFailed()) return;
    QCOMPARE(charts()->ghostSeriesNames(), QStringList({"Run 1 training", "Run 1 validation"}));

    runs()->setData(runs()->index(0, RunList::NumberColumn), Qt::Unchecked, Qt::CheckStateRole);
    QVERIFY(charts()->ghostSeriesNames().isEmpty());
    runs()->setData(runs()->index(0, RunList::NumberColumn), Qt::Checked, Qt::CheckStateRole);
    QCOMPARE(charts()->ghostSeriesNames().size(), 2);

    auto* earlier = find<QCheckBox>("showEarlierRunsCheckBox");
    earlier->setChecked(false);
    QVERIFY(charts()->ghostSeriesNames().isEmpty());
    earlier->setChecked(true);
    QCOMPARE(charts()->ghostSeriesNames().size(), 2);

    // Reset weights: the second run is an earlier run too.
    resetWeights();
    QCOMPARE(charts()->ghostSeriesNames().size(), 4);

    // Another data set: no iris curves on its chart; back on iris, they return.
    openSample("wine"); // nothing unsaved since Reset weights: no question
    QVERIFY(charts()->ghostSeriesNames().isEmpty());
    QCOMPARE(runs()->count(), 2); // the list keeps them
    openSample("iris");
    QCOMPARE(charts()->ghostSeriesNames().size(), 4);
}

// Compare: the learning rate is the one setting highlighted, both accuracies are there, both
// curves are on the chart.
void TestStudioRuns::compareShowsWhatDiffersAndBothResults()
{
    trainTwoIrisRuns();
    if (QTest::currentTestFailed()) return;
    selectRows({0});
    QVERIFY(!find<QPushButton>("compareButton")->isEnabled());
    RunCompareDialog* dialog = compare(0, 1);
    QVERIFY(dialog);
    QVERIFY(QTest::qWaitForWindowExposed(dialog));
    QVERIFY2(dialog->differingSettings() == QStringList{"Learning rate"},
             qPrintable(dialog->differingSettings().join(", ")));
    auto* difference = dialog->findChild<QLabel*>("differenceLabel");
    QVERIFY2(difference->text().contains("Learning rate"), qPrintable(difference->text()));

    const auto [a, b] = dialog->result("Accuracy");
    QVERIFY2(a.endsWith(" %") && b.endsWith(" %"), qPrintable(a + " / " + b));
    const auto [stepsA, stepsB] = dialog->result("Steps");
    QCOMPARE(stepsA, QString("60"));
    QCOMPARE(stepsB, QString("60"));

    QStringList series;
    for (QAbstractSeries* s : dialog->findChild<QChartView*>("compareChartView")->chart()->series())
        series << s->name();
    QCOMPARE(series, QStringList({"Run 1 training", "Run 1 validation", "Run 2 training",
                                  "Run 2 validation"}));

    // Only differences: the shared settings leave the table.
    auto* table = dialog->findChild<QTableWidget*>("settingsTableWidget");
    dialog->findChild<QCheckBox*>("onlyDifferencesCheckBox")->setChecked(true);
    int shown = 0;
    for (int r = 0; r < table->rowCount(); ++r)
        shown += table->isRowHidden(r) ? 0 : 1;
    QCOMPARE(shown, 1);
    dialog->close();
}

// An image run keeps its reconstruction; the comparison shows both side by side.
void TestStudioRuns::imageRunsKeepTheirPicture()
{
    openSmallImage();
    train(20, true);
    resetWeights();
    find<QSpinBox>("seedSpinBox")->setValue(7);
    train(20, true);
    QCOMPARE(runs()->count(), 2);
    for (int row : {0, 1}) {
        const Run& run = runs()->run(row);
        QCOMPARE(run.picture.size(), QSize(64, 64)); // the run's last reconstruction
        QVERIFY(run.metrics.contains("psnr_db"));
    }
    QVERIFY(runs()->run(0).picture != runs()->run(1).picture);
    RunCompareDialog* dialog = compare(0, 1);
    QVERIFY(dialog);
    QVERIFY2(dialog->differingSettings() == QStringList{"Seed"},
             qPrintable(dialog->differingSettings().join(", ")));
    for (const char* name : {"outputALabel", "outputBLabel"})
        QVERIFY(!dialog->findChild<QLabel*>(name)->pixmap().isNull());
    QVERIFY(dialog->result("PSNR").first.endsWith(" dB"));
    dialog->close();
}

// A names run keeps a few of the names it made.
void TestStudioRuns::namesRunsKeepSampleNames()
{
    openSample("names-ssa2018");
    train(30, true);
    QCOMPARE(runs()->count(), 1);
    QTRY_VERIFY(!runs()->run(0).names.isEmpty());
    QVERIFY(runs()->run(0).metrics.contains("innovation_rate"));
    const QString result =
        runs()->data(runs()->index(0, RunList::ResultColumn), Qt::DisplayRole).toString();
    QVERIFY2(result.contains("% new"), qPrintable(result));
}

// Earlier runs are ghosts of the same data: a setting that changes what the data is (the names'
// context, a picture's gray version) makes other data; one that changes only how much of it
// trains (a picture's training size, KindSetting::amountOnly) does not.
void TestStudioRuns::dataKeyFollowsTheKindsSettings()
{
    auto* tabs = find<QTabWidget>("setupTabWidget");
    openSample("names-ssa2018");
    tabs->setCurrentWidget(find<QWidget>("datasetPanel"));
    const QString context3 = runs()->currentDataKey();
    QVERIFY2(context3.contains("context=3"), qPrintable(context3));
    auto* context = find<QSpinBox>("contextSpinBox");
    context->setValue(5);
    emit context->editingFinished();
    QTRY_VERIFY(runs()->currentDataKey() != context3);
    QVERIFY(runs()->currentDataKey().contains("context=5"));

    openSample("astronaut");
    tabs->setCurrentWidget(find<QWidget>("datasetPanel"));
    const QString colour = runs()->currentDataKey();
    setTrainingSize(128);
    QCOMPARE(runs()->currentDataKey(), colour);
    find<QCheckBox>("grayscaleCheckBox")->click();
    QTRY_VERIFY(runs()->currentDataKey() != colour);
}

// A GPU that cannot start: the run trained nothing and is not listed; the next Start (on the
// CPU) is run 1.
void TestStudioRuns::aStartThatTrainsNothingLeavesNoRun()
{
    BackendProvider provider;
    provider.cudaStatus = [] {
        il::BackendStatus s;
        s.name = "cuda";
        s.available = true;
        s.device = "Test GPU that never starts";
        return s;
    };
    provider.create = [](const std::string& name, const il::BackendOptions& options) {
        if (name == "cuda") throw il::BackendError("could not start CUDA: out of memory");
        return il::createBackend(name, options);
    };
    session()->setBackendProvider(provider);
    QTRY_VERIFY(session()->cudaProbed() && session()->cudaStatus().available);
    session()->setDevice("cuda", false, false);
    openSample("iris");
    QSignalSpy finished(session(), &Session::trainingFinished);
    find<QPushButton>("startButton")->click();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kTrainingWait);
    QVERIFY(finished.first().first().value<TrainingOutcome>().deviceUnavailable);
    QCOMPARE(runs()->count(), 0);
    QCOMPARE(runs()->currentRow(), -1);
    train(20); // on the CPU now
    QCOMPARE(runs()->count(), 1);
    QCOMPARE(runs()->run(0).number, 1);
    QCOMPARE(runs()->run(0).lastStep, 20);
}

QTEST_MAIN(TestStudioRuns)
#include "TestStudioRuns.moc"

// ironlearn-studio --runs: each entry's settings over the data's, a new model for each, N steps,
// then the last two compared (what --screenshot shows).
void TestStudioRuns::scriptedRunsTrainEachEntryAndCompare()
{
    openSample("iris");
    QList<QJsonObject> entries;
    QString error;
    QVERIFY2(parseRunOverrides(R"([{"schedule":{"lr_max":0.01}},{"schedule":{"lr_max":0.03}}])",
                               session()->config(), entries, &error),
             qPrintable(error));
    QCOMPARE(entries.size(), 2);
    ScriptedRuns script(*m_window, entries, 40);
    QSignalSpy finished(&script, &ScriptedRuns::finished);
    QSignalSpy failed(&script, &ScriptedRuns::failed);
    script.start();
    QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 2 * kTrainingWait);
    QCOMPARE(failed.count(), 0);
    QCOMPARE(runs()->count(), 2);
    const float rates[] = {0.01f, 0.03f};
    for (int row : {0, 1}) {
        const Run& run = runs()->run(row);
        QCOMPARE(run.config.schedule.lrMax, rates[row]);
        QCOMPARE(run.firstStep, 0); // a new model each
        QVERIFY2(run.lastStep > 0 && run.lastStep <= 40, qPrintable(QString::number(run.lastStep)));
        QVERIFY(run.metrics.contains("accuracy")); // its evaluation arrived before the next run
        QVERIFY(!run.running);
    }
    RunCompareDialog* dialog = script.comparison();
    QVERIFY(dialog);
    QCOMPARE(find<RunListPanel>("runListPanel")->compareDialog(), dialog);
    QCOMPARE(dialog->differingSettings(), QStringList{"Learning rate"});
    QCOMPARE(dialog->result("Accuracy").first.isEmpty(), false);
}

// Not JSON, not an array of objects, an unknown key at any depth, a wrong type: refused with a
// line that says what and which run, and the entries left as they were.
void TestStudioRuns::scriptedRunsRefuseBadSettings()
{
    const il::TrainerConfig base;
    const std::pair<const char*, const char*> bad[] = {
        {R"([{"schedule":{"lr_max":0.01})", "not JSON"},
        {R"({"schedule":{"lr_max":0.01}})", "JSON array"},
        {R"([])", "JSON array"},
        {R"([{"seed":1}, 3])", "run 2 is not a JSON object"},
        {R"([{"seed":1}, {"schedule":{"lr_mxa":0.03}}])", "run 2: unknown setting schedule.lr_mxa"},
        {R"([{"learning_rate":0.03}])", "run 1: unknown setting learning_rate"},
        {R"([{"schedule":{"lr_max":"fast"}}])", "lr_max"},
    };
    for (const auto& [json, expected] : bad) {
        QList<QJsonObject> entries{QJsonObject{{"seed", 7}}};
        QString error;
        QVERIFY2(!parseRunOverrides(json, base, entries, &error), json);
        QVERIFY2(error.contains(expected), qPrintable(error));
        QCOMPARE(entries.size(), 1);
    }
    // Another optimizer's settings are known once the entry chooses it.
    QList<QJsonObject> entries;
    QString error;
    QVERIFY2(parseRunOverrides(R"([{"optimizer":{"kind":"momentum","momentum":0.5}}])", base,
                               entries, &error),
             qPrintable(error));
}
