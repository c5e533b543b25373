// The run driver (RunDriver.h) that the CLI, the studio's worker and the image race share: what
// it does before the trainer (class weights of the training rows, the folds of a fresh model),
// the hooks it calls and in which order, and the runs it refuses or stops.
#include "RunDriver.h"

#include "Backend.h"
#include "TabularTask.h"

#include <QTest>

#include <cmath>

using namespace il;
using namespace il::tasks;

namespace {

// rows of "x,label" with a rare third class (1 row in 10); x decides the class.
QByteArray unevenClasses(int rows)
{
    QByteArray csv = "x,label\n";
    for (int i = 0; i < rows; ++i)
        csv += QByteArray::number(i % 20) + "," +
               (i % 10 == 0 ? "rare"
                : i % 2     ? "odd"
                            : "even") +
               "\n";
    return csv;
}

// y = 2a - b over a small grid: a regression table.
QByteArray plane(int rows)
{
    QByteArray csv = "a,b,y\n";
    for (int i = 0; i < rows; ++i) {
        const double a = i % 17 * 0.1, b = i % 7 * 0.2;
        csv += QByteArray::number(a) + "," + QByteArray::number(b) + "," +
               QByteArray::number(2 * a - b) + "\n";
    }
    return csv;
}

// A validation split, not the folds a small regression table gets by default.
TaskOptions validationSplit()
{
    TaskOptions o;
    o.folds = 0;
    return o;
}

// A fresh model of the table with the task's defaults and a small stack (""; the default
// preset's, which starts from the linear model), on one CPU thread.
std::unique_ptr<Model> fresh(const QByteArray& csv, TaskOptions options = {},
                             const std::string& spec = "dense:8,tanh,dense")
{
    QString error;
    std::shared_ptr<Task> task = openTask("t.csv", csv, options, &error);
    if (!task) qFatal("%s", qPrintable(error));
    auto model = std::make_unique<Model>();
    model->backend = createCpuBackend(1);
    model->task = task;
    task->applyDefaults(model->config);
    model->config.epochs = 0;
    model->config.steps = 40;
    model->config.evalEvery = 10;
    model->build(spec.empty() ? task->presetSpec(task->presets().value(0)).toStdString() : spec);
    return model;
}

} // namespace

class TestRunDriver : public QObject {
    Q_OBJECT

private slots:
    void classWeightsFromTheTrainingRows();
    void weightsThatDoNotFitRefuseTheRun();
    void hooksInOrder();
    void foldsFirstThenTheRefit();
    void foldsStoppedLeaveTheStart();
    void settleOnlyWhenAsked();
    void averagedFoldsBecomeTheModel();
};

void TestRunDriver::classWeightsFromTheTrainingRows()
{
    auto model = fresh(unevenClasses(200));
    model->config.classWeighting = ClassWeighting::Balanced;
    const RunOutcome run = runModel(*model, RunSetup{});
    QVERIFY2(run.ran(), run.failure.c_str());
    QCOMPARE(model->config.classWeights.size(), size_t(3));
    // The rare class (a tenth of the rows) weighs most.
    const auto& w = model->config.classWeights;
    const float rare = *std::max_element(w.begin(), w.end());
    QVERIFY(rare > 2.f);
    QVERIFY(model->uploaded);
    QCOMPARE(model->state.step, int64_t(40));
}

void TestRunDriver::weightsThatDoNotFitRefuseTheRun()
{
    auto model = fresh(plane(100)); // no classes to weigh
    model->config.classWeighting = ClassWeighting::Balanced;
    const RunOutcome run = runModel(*model, RunSetup{});
    QVERIFY(!run.ran());
    QVERIFY(!run.failure.empty());
    QVERIFY(!run.backendFailure);
    QCOMPARE(model->state.step, int64_t(0)); // nothing trained
}

void TestRunDriver::hooksInOrder()
{
    auto model = fresh(plane(100), validationSplit());
    RunSetup setup;
    setup.policy.progressInterval = 0; // a report after every step
    RunHooks hooks;
    int reports = 0, evaluations = 0, activeCalls = 0;
    Trainer* active = nullptr;
    bool progressWhileActive = true, evaluationWhileActive = true;
    hooks.active = [&](Trainer* t) {
        ++activeCalls;
        active = t;
    };
    hooks.progress = [&](const Progress&, Trainer& t) {
        ++reports;
        progressWhileActive = progressWhileActive && active == &t;
    };
    hooks.evaluation = [&](Network& n) {
        ++evaluations;
        evaluationWhileActive = evaluationWhileActive && active && &n == model->network.get();
    };
    const RunOutcome run = runModel(*model, setup, hooks);
    QVERIFY2(run.ran(), run.failure.c_str());
    QCOMPARE(activeCalls, 2); // the trainer, then null
    QVERIFY(!active);
    QVERIFY(reports >= 40);
    QVERIFY(progressWhileActive);
    QVERIFY(evaluations >= 4); // every 10 steps
    QVERIFY(evaluationWhileActive);
    QVERIFY(!run.cv);
}

void TestRunDriver::foldsFirstThenTheRefit()
{
    TaskOptions options;
    options.folds = 4;
    auto model = fresh(plane(120), options);
    int foldsDone = 0;
    RunHooks hooks;
    hooks.folds.foldDone = [&](int, const CrossValidation&) { ++foldsDone; };
    const RunOutcome run = runModel(*model, RunSetup{}, hooks);
    QVERIFY2(run.ran(), run.failure.c_str());
    QCOMPARE(foldsDone, 4);
    QVERIFY(run.cv && run.cv->complete());
    QCOMPARE(run.settled.folds, 4);
    // The run on every row is the refit: the folds' length, no early stopping.
    QCOMPARE(model->config.stopAfter, run.cv->refitSteps);
    QCOMPARE(model->state.step, run.cv->refitSteps);

    // A model that has trained is continued, not cross-validated again.
    model->config.steps = model->state.step + 10;
    model->config.stopAfter = 0;
    const RunOutcome again = runModel(*model, RunSetup{});
    QVERIFY2(again.ran(), again.failure.c_str());
    QVERIFY(!again.cv);
}

void TestRunDriver::foldsStoppedLeaveTheStart()
{
    TaskOptions options;
    options.folds = 4;
    auto model = fresh(plane(120), options);
    RunHooks hooks;
    int done = 0;
    hooks.folds.foldDone = [&](int, const CrossValidation&) { ++done; };
    hooks.folds.stopRequested = [&] { return done >= 1; };
    const RunOutcome run = runModel(*model, RunSetup{}, hooks);
    QVERIFY(run.foldsStopped);
    QVERIFY(!run.ran());
    QVERIFY(run.failure.empty());
    QCOMPARE(run.result.reason, StopReason::Cancelled);
    QVERIFY2(QString::fromStdString(run.result.message).contains("1 of 4 folds"),
             run.result.message.c_str());
    QCOMPARE(model->state.step, int64_t(0)); // the model is its untrained start
}

void TestRunDriver::settleOnlyWhenAsked()
{
    // The default stack starts from the linear model: the settle compares the two and says so.
    auto settled = fresh(plane(200), validationSplit(), "");
    const RunOutcome run = runModel(*settled, RunSetup{});
    QVERIFY2(run.ran(), run.failure.c_str());
    QVERIFY(!run.settled.note.isEmpty());

    auto unsettled = fresh(plane(200), validationSplit(), "");
    RunSetup setup;
    setup.settle = false;
    const RunOutcome bare = runModel(*unsettled, setup);
    QVERIFY(bare.ran());
    QVERIFY(bare.settled.note.isEmpty());
    QVERIFY(!bare.settled.replaced);
}

// FoldModel::Averaged: the folds' networks averaged and blended are the model; no run on every
// row follows, and the model stands at the folds' length so a later run continues it.
void TestRunDriver::averagedFoldsBecomeTheModel()
{
    TaskOptions folds;
    folds.folds = 4;
    auto model = fresh(plane(120), folds, "dense:6,relu,dense");
    BestWeights best;
    best.info.step = 7; // a stale copy: cleared
    RunSetup setup;
    setup.foldModel = FoldModel::Averaged;
    setup.keepBest = &best;
    int steps = 0;
    RunHooks hooks;
    hooks.progress = [&steps](const Progress&, Trainer&) { ++steps; };
    const RunOutcome run = runModel(*model, setup, hooks);
    QVERIFY2(run.ran(), run.failure.c_str());
    QVERIFY(run.cv && run.cv->averaged);
    QCOMPARE(steps, 0); // no trainer ran
    QCOMPARE(run.result.steps, int64_t(0));
    QCOMPARE(run.result.reason, StopReason::Finished);
    QCOMPARE(run.result.valLoss, run.cv->blendLoss);
    QCOMPARE(QString::fromStdString(model->network->spec()), QString("dense:24,relu,dense:1,skip"));
    QCOMPARE(model->state.step, run.cv->refitSteps);
    QVERIFY(model->state.step > 0);
    QCOMPARE(model->config.steps, run.cv->refitSteps); // the budget: spent
    QCOMPARE(model->config.epochs, int64_t(0));
    QVERIFY(!best.info.kept());
    QVERIFY(model->optimizer);
    // A second run trains the averaged network on (no folds again).
    model->config.steps = model->state.step + 5;
    const RunOutcome more = runModel(*model, RunSetup{});
    QVERIFY2(more.ran(), more.failure.c_str());
    QVERIFY(!more.cv);
    QCOMPARE(more.result.steps, int64_t(5));
}

QTEST_MAIN(TestRunDriver)
#include "TestRunDriver.moc"
