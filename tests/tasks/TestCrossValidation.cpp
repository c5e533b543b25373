// k-fold cross-validation of small tables (CrossValidation.h): when it is on, how the rows are
// dealt into folds (each row held out once, classes spread evenly), what the folds decide (a
// linear target keeps the linear model, a curved one the network) and the refit's length, and
// the refusals of options that cannot go together.
#include "CrossValidation.h"
#include "TabularTask.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <map>

using namespace il;
using namespace il::tasks;

namespace {

// y from two features: a straight plane plus a little noise, or a curved surface.
QByteArray surface(int rows, bool curved)
{
    QByteArray csv = "a,b,y\n";
    uint32_t state = 12345;
    auto noise = [&state] { // a small LCG: the same rows on every machine
        state = state * 1664525u + 1013904223u;
        return (static_cast<double>(state >> 8) / 16777216.0 - 0.5) * 0.2;
    };
    for (int i = 0; i < rows; ++i) {
        const double a = -2 + 4.0 * i / rows, b = std::fmod(i * 0.37, 2.0) - 1;
        const double y = curved ? std::sin(2 * a) * 3 + b * b * 2 : 2 * a - b;
        csv += QByteArray::number(a, 'g', 9) + "," + QByteArray::number(b, 'g', 9) + "," +
               QByteArray::number(y + noise(), 'g', 9) + "\n";
    }
    return csv;
}

// rows of "x,label" with a rare third class (1 row in 10).
QByteArray unevenClasses(int rows)
{
    QByteArray csv = "x,label\n";
    for (int i = 0; i < rows; ++i)
        csv += QByteArray::number(i) + "," + (i % 10 == 0 ? "rare" : i % 2 ? "odd" : "even") + "\n";
    return csv;
}

TaskOptions fiveFolds()
{
    TaskOptions o;
    o.folds = 5;
    return o;
}

std::unique_ptr<Task> open(const QByteArray& csv, const TaskOptions& options = fiveFolds(),
                           QString* error = nullptr)
{
    QString e;
    auto task = openTask("t.csv", csv, options, error ? error : &e);
    if (!task && !error) qWarning("%s", qPrintable(e));
    return task;
}

} // namespace

class TestCrossValidation : public QObject {
    Q_OBJECT

private slots:
    void onForSmallTablesOnly();
    void refusals();
    void everyRowHeldOutOnce();
    void classesSpreadOverFolds();
    void savedWithTheModel();
    void linearTargetKeepsLinearModel();
    void curvedTargetKeepsNetwork();
    void stopBetweenFolds();
    void averagedFoldsBlendWithLeastSquares();
    void averagingRefusals();
};

void TestCrossValidation::onForSmallTablesOnly()
{
    // Automatic (what openTask gets by default): 5 folds for a regression table under
    // kCrossValidateBelowRows rows, whose default stack then averages them; a validation split
    // for classes and for larger tables.
    auto automatic = open(surface(150, false), TaskOptions{});
    QCOMPARE(automatic->folds(), 5);
    QCOMPARE(automatic->data().valRows, int64_t(0));
    QVERIFY(automatic->averagesFolds());
    QCOMPARE(automatic->defaultPreset(), QString("ensemble"));
    QVERIFY(automatic->averagesFoldsOf("ensemble"));
    QVERIFY(!automatic->averagesFoldsOf("wide"));
    auto classes = open(unevenClasses(150), TaskOptions{});
    QCOMPARE(classes->folds(), 0);
    QCOMPARE(classes->data().valRows, int64_t(30));
    QVERIFY(!classes->averagesFolds());
    QCOMPARE(classes->defaultPreset(), QString("wide"));
    auto large = open(surface(kCrossValidateBelowRows, false), TaskOptions{});
    QCOMPARE(large->folds(), 0);
    QCOMPARE(large->defaultPreset(), QString("wide"));
    QCOMPARE(open(surface(kCrossValidateBelowRows - 1, false), TaskOptions{})->folds(), 5);

    auto small = open(surface(150, false)); // 5 folds asked for
    QVERIFY(small);
    QCOMPARE(small->folds(), 5);
    QCOMPARE(small->data().valRows, int64_t(0)); // every row trains; the folds hold rows out
    QCOMPARE(small->data().trainRows, int64_t(150));
    QVERIFY(small->description().contains("5-fold cross-validation"));

    TaskOptions split; // a validation split asked for: no folds
    split.valSplit = 0.3;
    auto withSplit = open(surface(150, false), split);
    QCOMPARE(withSplit->folds(), 0);
    QCOMPARE(withSplit->data().valRows, int64_t(45));

    TaskOptions off;
    off.folds = 0;
    QCOMPARE(open(surface(150, false), off)->folds(), 0);
    QCOMPARE(open(surface(150, false), off)->defaultPreset(), QString("wide"));

    TaskOptions three;
    three.folds = 3;
    auto k3 = open(surface(6000, false), three); // asked for: whatever the size
    QCOMPARE(k3->folds(), 3);
    QCOMPARE(k3->data().valRows, int64_t(0));
}

void TestCrossValidation::refusals()
{
    QString error;
    TaskOptions both;
    both.folds = 5;
    both.valSplit = 0.2;
    QVERIFY(!open(surface(100, false), both, &error));
    QVERIFY2(error.contains("--val-split") && error.contains("--folds"), qPrintable(error));

    TaskOptions one;
    one.folds = 1;
    QVERIFY(!open(surface(100, false), one, &error));
    QVERIFY2(error.contains("2 to"), qPrintable(error));

    TaskOptions many = fiveFolds();
    QVERIFY(!open(surface(9, false), many, &error)); // 9 rows: fewer than 2 per fold
    QVERIFY2(error.contains("too few for 5 folds"), qPrintable(error));

    // The studio's words: no CLI flag.
    both.reader = MessageReader::Studio;
    QVERIFY(!open(surface(100, false), both, &error));
    QVERIFY2(!error.contains("--"), qPrintable(error));
}

void TestCrossValidation::everyRowHeldOutOnce()
{
    auto task = open(surface(103, false));
    QVERIFY(task);
    const int k = task->folds();
    QVERIFY(!task->foldTask(-1) && !task->foldTask(k));
    // Feature a is distinct on every row: it names the row.
    std::map<float, int> heldOut;
    int64_t total = 0;
    for (int f = 0; f < k; ++f) {
        auto fold = task->foldTask(f);
        QVERIFY(fold);
        QCOMPARE(fold->folds(), 0);
        const TaskData& d = fold->data();
        QCOMPARE(d.trainRows + d.valRows, int64_t(103));
        QVERIFY(d.valRows == 20 || d.valRows == 21);
        for (int64_t r = 0; r < d.valRows; ++r)
            ++heldOut[d.valX[static_cast<size_t>(r * d.inputWidth)]];
        total += d.valRows;
        // The fold's training rows are the others: none of its held-out rows among them.
        for (int64_t r = 0; r < d.trainRows; ++r)
            for (int64_t v = 0; v < d.valRows; ++v)
                QVERIFY(d.trainX[static_cast<size_t>(r * d.inputWidth)] !=
                        d.valX[static_cast<size_t>(v * d.inputWidth)]);
    }
    QCOMPARE(total, int64_t(103));
    QCOMPARE(heldOut.size(), size_t(103));
    for (const auto& [a, times] : heldOut)
        QCOMPARE(times, 1);
    // The same folds every time (the split seed).
    QCOMPARE(task->foldTask(2)->data().valX, open(surface(103, false))->foldTask(2)->data().valX);
}

void TestCrossValidation::classesSpreadOverFolds()
{
    auto task = open(unevenClasses(200)); // 80 even, 100 odd, 20 rare: a fifth of each per fold
    QVERIFY(task);
    QCOMPARE(task->folds(), 5);
    for (int f = 0; f < 5; ++f) {
        const auto fold = task->foldTask(f);
        const TaskData& d = fold->data();
        std::map<float, int> count;
        for (float y : d.valY)
            ++count[y];
        QCOMPARE(count.size(), size_t(3));
        QCOMPARE(count[0.f], 16); // classes by label: even, odd, rare
        QCOMPARE(count[1.f], 20);
        QCOMPARE(count[2.f], 4);
    }
}

void TestCrossValidation::savedWithTheModel()
{
    auto task = open(surface(150, false));
    const QJsonObject saved = task->toJson();
    QCOMPARE(saved["folds"].toInt(), 5);
    QCOMPARE(saved["val_split"].toDouble(), 0.0);
    TabularSchema s;
    QString error;
    QVERIFY2(TabularSchema::fromJson(saved, s, &error), qPrintable(error));
    QCOMPARE(s.folds, 5);
    QJsonObject broken = saved;
    broken["folds"] = 1;
    QVERIFY(!TabularSchema::fromJson(broken, s, &error));
    QVERIFY2(error.contains("folds"), qPrintable(error));
    // Opened again for the model (a resume): every row trains, as before; no folds run again.
    auto reopened =
        openTaskForModel("t.csv", surface(150, false), saved, false, TaskOptions{}, &error);
    QVERIFY2(reopened, qPrintable(error));
    QCOMPARE(reopened->data().trainRows, int64_t(150));
    QCOMPARE(reopened->data().valRows, int64_t(0));
}

namespace {

CrossValidation run(Task& task, Backend& b, int64_t steps = 600)
{
    TrainerConfig cfg;
    task.applyDefaults(cfg);
    cfg.epochs = steps; // full batches: an epoch is a step
    cfg.patience = static_cast<int>(steps / 10);
    RunPolicy policy;
    policy.progressInterval = 1e9;
    return crossValidate(task, b, "dense:32,tanh,dense:32,tanh,dense,skip", cfg, policy);
}

} // namespace

void TestCrossValidation::linearTargetKeepsLinearModel()
{
    auto b = createCpuBackend(1);
    auto task = open(surface(200, false));
    const CrossValidation cv = run(*task, *b);
    QVERIFY2(cv.complete(), qPrintable(cv.failure));
    QCOMPARE(cv.runs.size(), size_t(5));
    QCOMPARE(cv.rows, int64_t(200)); // every row scored once
    QVERIFY(cv.judged);
    QCOMPARE(cv.simplerName, QString("least squares"));
    QVERIFY2(!cv.keepNetwork, qPrintable(cv.note));
    QVERIFY(cv.note.contains("least squares fitted on every row is kept"));
    const Settled s = settledByCrossValidation(cv);
    QVERIFY(s.replaced && s.folds == 5 && s.refitSteps == cv.refitSteps && s.rows == 200);
}

void TestCrossValidation::curvedTargetKeepsNetwork()
{
    auto b = createCpuBackend(1);
    auto task = open(surface(200, true));
    const CrossValidation cv = run(*task, *b);
    QVERIFY2(cv.complete(), qPrintable(cv.failure));
    QVERIFY2(cv.keepNetwork, qPrintable(cv.note));
    QVERIFY(cv.judged);
    QVERIFY(cv.difference < -cv.margin * cv.differenceError);
    // The refit's length: where the folds' mean validation loss is lowest, over the steps
    // every fold evaluated.
    std::map<int64_t, std::pair<double, int>> curve;
    for (const FoldRun& r : cv.runs) {
        QVERIFY(r.keptStep >= 1 && r.keptStep <= r.steps);
        QVERIFY(!r.history.empty());
        QVERIFY(std::isfinite(r.networkLoss) && std::isfinite(r.simplerLoss));
        QCOMPARE(r.trainRows + r.heldOutRows, int64_t(200));
        for (const HistoryPoint& h : r.history)
            if (std::isfinite(h.valLoss) && h.count == 1) {
                curve[h.step].first += h.valLoss;
                ++curve[h.step].second;
            }
    }
    int64_t lowestStep = 0;
    double lowest = INFINITY;
    for (const auto& [step, sn] : curve)
        if (sn.second == 5 && sn.first < lowest) {
            lowest = sn.first;
            lowestStep = step;
        }
    QVERIFY(lowestStep > 0);
    QCOMPARE(cv.refitSteps, lowestStep);
    const TrainerConfig refit = refitConfig(TrainerConfig{}, cv);
    QCOMPARE(refit.stopAfter, cv.refitSteps);
    QCOMPARE(refit.patience, 0);
    QVERIFY(std::isfinite(cv.metric) && std::isfinite(cv.metricError));
    QVERIFY(cv.note.contains("so the network is kept"));
}

void TestCrossValidation::stopBetweenFolds()
{
    auto b = createCpuBackend(1);
    auto task = open(surface(100, false));
    TrainerConfig cfg;
    task->applyDefaults(cfg);
    cfg.epochs = 50;
    int done = 0;
    FoldHooks hooks;
    hooks.foldDone = [&done](int, const CrossValidation&) { ++done; };
    hooks.stopRequested = [&done] { return done == 2; };
    const CrossValidation cv =
        crossValidate(*task, *b, "dense:8,tanh,dense,skip", cfg, RunPolicy{}, hooks);
    QVERIFY(cv.stopped);
    QVERIFY(!cv.complete());
    QCOMPARE(cv.runs.size(), size_t(2));
    QCOMPARE(settledByCrossValidation(cv).folds, 0); // decided nothing
}

namespace {

CrossValidation averaged(Task& task, Backend& b, const std::string& spec)
{
    TrainerConfig cfg;
    task.applyDefaults(cfg);
    cfg.epochs = 400;
    cfg.patience = 40;
    RunPolicy policy;
    policy.progressInterval = 1e9;
    return crossValidate(task, b, spec, cfg, policy, {}, FoldModel::Averaged);
}

} // namespace

// FoldModel::Averaged: the folds' networks averaged as one and blended with least squares by the
// share that fits their out-of-fold errors best, so the blend's out-of-fold loss is at most
// either's; a curved target leans on the networks, a straight one on least squares.
void TestCrossValidation::averagedFoldsBlendWithLeastSquares()
{
    auto b = createCpuBackend(1);
    double shares[2] = {};
    for (bool curved : {false, true}) {
        auto task = open(surface(200, curved));
        const CrossValidation cv = averaged(*task, *b, "dense:16,relu,dense");
        QVERIFY2(cv.complete(), qPrintable(cv.failure));
        QVERIFY(cv.averaged);
        QCOMPARE(QString::fromStdString(cv.averagedSpec), QString("dense:80,relu,dense:1,skip"));
        QVERIFY(cv.share >= 0 && cv.share <= 1);
        QVERIFY2(cv.blendLoss <= cv.networkLoss + 1e-12 && cv.blendLoss <= cv.simplerLoss + 1e-12,
                 qPrintable(cv.note));
        QVERIFY(std::isfinite(cv.blendError));
        QVERIFY2(cv.note.contains("averaged, blended"), qPrintable(cv.note));
        const Settled s = settledByCrossValidation(cv);
        QCOMPARE(s.valLoss, cv.blendLoss);
        // The network the run keeps is that blend: its tensors fit the averaged stack.
        auto net = averagedNetwork(cv, *task, *b);
        QCOMPARE(QString::fromStdString(net->spec()), QString::fromStdString(cv.averagedSpec));
        QVERIFY(std::isfinite(task->trainingMetric(*net)));
        shares[curved] = cv.share;
    }
    QVERIFY2(shares[1] > 0.8, qPrintable(QString::number(shares[1])));
    QVERIFY2(shares[0] < shares[1], qPrintable(QString("%1 %2").arg(shares[0]).arg(shares[1])));

    QCOMPARE(blendShare({1, 1}, {1, 1}), 1.0);   // the same: the networks
    QCOMPARE(blendShare({2, -2}, {0, 0}), 0.0);  // the simpler model exact: it alone
    QCOMPARE(blendShare({1, 1}, {-1, -1}), 0.5); // errors that cancel half and half
    QCOMPARE(blendShare({1, -1}, {3, -3}), 1.0); // beyond the networks: clamped
}

void TestCrossValidation::averagingRefusals()
{
    auto b = createCpuBackend(1);
    auto classes = open(unevenClasses(100));
    CrossValidation cv = averaged(*classes, *b, "dense:8,relu,dense");
    QVERIFY(!cv.complete());
    QVERIFY2(cv.failure.contains("regression"), qPrintable(cv.failure));
    QVERIFY(cv.runs.empty()); // refused before a fold trained
    auto table = open(surface(100, true));
    cv = averaged(*table, *b, "dense:8,layernorm,relu,dense");
    QVERIFY(!cv.complete());
    QVERIFY2(cv.failure.contains("cannot be averaged") && cv.failure.contains("layernorm"),
             qPrintable(cv.failure));
    QVERIFY(cv.runs.empty());
}

QTEST_GUILESS_MAIN(TestCrossValidation)
#include "TestCrossValidation.moc"
