// The bounded loss history (TrainingHistory.h): every evaluation kept up to the limit, then
// buckets merged in pairs; a long synthetic history stays under the limit and keeps the curve
// (each bucket's mean, min and max are those of the evaluations it covers, the first and last
// steps survive); means weight by count and skip NaN; a real run with a small limit stays
// bounded while recording every evaluation; RunPolicy::historyEvery adds loss-only rows
// between evaluations, each the mean of the steps since the previous row.
#include "Network.h"
#include "Optimizer.h"
#include "TestUtil.h"
#include "Trainer.h"
#include "TrainingHistory.h"

#include <QTest>

#include <algorithm>
#include <cmath>

using namespace il;

namespace {

// A noisy decreasing curve with one spike and one dip, at evaluation i (step i).
double curve(int64_t i)
{
    if (i == 123'457) return 50.0;
    if (i == 654'321) return 1e-4;
    return 1.0 / (1.0 + static_cast<double>(i) / 1000.0) + 0.01 * static_cast<double>(i % 7);
}

HistoryPoint evaluation(int64_t i)
{
    HistoryPoint p;
    p.step = i;
    p.epoch = static_cast<double>(i);
    p.trainLoss = curve(i);
    p.valLoss = 2 * curve(i);
    p.lr = 1e-3;
    return p;
}

} // namespace

class TestTrainingHistory : public QObject {
    Q_OBJECT

private slots:
    void keepsEveryEvaluationUpToTheLimit();
    void longHistoryStaysBoundedAndKeepsItsShape();
    void mergeWeightsByCountAndSkipsNaN();
    void wideRowsFromAFileJoinAsTheyAre();
    void aLongRunStaysBounded();
    void lossRowsBetweenEvaluations();
};

void TestTrainingHistory::keepsEveryEvaluationUpToTheLimit()
{
    TrainingHistory h(100);
    for (int64_t i = 1; i <= 100; ++i)
        h.add(evaluation(i));
    QCOMPARE(h.size(), size_t(100));
    QCOMPARE(h.bucketWidth(), int64_t(1));
    for (size_t i = 0; i < h.size(); ++i) {
        QCOMPARE(h[i].step, int64_t(i + 1));
        QCOMPARE(h[i].count, int64_t(1));
        QCOMPARE(h[i].trainLoss, curve(int64_t(i + 1)));
        QCOMPARE(h[i].trainMin, h[i].trainLoss);
        QCOMPARE(h[i].trainMax, h[i].trainLoss);
    }
    h.add(evaluation(101)); // the first merge
    QCOMPARE(h.size(), size_t(51));
    QCOMPARE(h.bucketWidth(), int64_t(2));
    QCOMPARE(h.back().count, int64_t(1)); // the newest waits for its partner
    QCOMPARE(h.evaluations(), int64_t(101));
}

void TestTrainingHistory::longHistoryStaysBoundedAndKeepsItsShape()
{
    const int64_t n = 1'000'000;
    TrainingHistory h(1000);
    for (int64_t i = 1; i <= n; ++i)
        h.add(evaluation(i));
    QVERIFY(h.size() <= 1000 && h.size() > 250);
    QCOMPARE(h.evaluations(), n);
    QCOMPARE(h[0].firstStep, int64_t(1));
    QCOMPARE(h.back().step, n);
    double lo = INFINITY, hi = -INFINITY;
    for (size_t r = 0; r < h.size(); ++r) {
        const HistoryPoint& row = h[r];
        // Rows are contiguous and as wide as the widest, but the last.
        if (r > 0) QCOMPARE(row.firstStep, h[r - 1].step + 1);
        QCOMPARE(row.count, row.step - row.firstStep + 1);
        if (r + 1 < h.size()) QCOMPARE(row.count, h.bucketWidth());
        // The bucket's statistics are those of the evaluations it covers.
        double sum = 0, mn = INFINITY, mx = -INFINITY;
        for (int64_t i = row.firstStep; i <= row.step; ++i) {
            sum += curve(i);
            mn = std::min(mn, curve(i));
            mx = std::max(mx, curve(i));
        }
        const double mean = sum / static_cast<double>(row.count);
        QVERIFY(std::fabs(row.trainLoss - mean) < 1e-9);
        QVERIFY(std::fabs(row.valLoss - 2 * mean) < 1e-9);
        QCOMPARE(row.trainMin, mn);
        QCOMPARE(row.trainMax, mx);
        QCOMPARE(row.valMax, 2 * mx);
        lo = std::min(lo, row.trainMin);
        hi = std::max(hi, row.trainMax);
    }
    QCOMPARE(hi, 50.0);  // the spike survives
    QCOMPARE(lo, 1e-4);  // and the dip
    QVERIFY(h[0].trainMax >= curve(1) && h.back().trainMin <= curve(n)); // first and last values
    QVERIFY(h[0].trainLoss > 10 * h.back().trainLoss); // the curve still falls
}

void TestTrainingHistory::mergeWeightsByCountAndSkipsNaN()
{
    HistoryPoint a;
    a.step = 30;
    a.firstStep = 10;
    a.count = 3;
    a.trainLoss = 1.0;
    a.trainMin = 0.5;
    a.trainMax = 2.0;
    HistoryPoint b;
    b.step = 40;
    b.trainLoss = 5.0;
    b.valLoss = 7.0;
    const HistoryPoint m = TrainingHistory::merged(a, b);
    QCOMPARE(m.count, int64_t(4));
    QCOMPARE(m.firstStep, int64_t(10));
    QCOMPARE(m.step, int64_t(40));
    QCOMPARE(m.trainLoss, 2.0); // (3 * 1 + 5) / 4
    QCOMPARE(m.trainMin, 0.5);
    QCOMPARE(m.trainMax, 5.0);
    QCOMPARE(m.valLoss, 7.0); // a had no validation
    QCOMPARE(m.valMin, 7.0);
    QVERIFY(std::isnan(m.metric));
}

void TestTrainingHistory::wideRowsFromAFileJoinAsTheyAre()
{
    // Rows read back from a file of a long run: full buckets of 4, then a partial one.
    TrainingHistory h(100);
    for (int64_t r = 0; r < 10; ++r) {
        HistoryPoint row = evaluation(4 * r + 4);
        row.count = 4;
        row.firstStep = 4 * r + 1;
        row.trainMin = row.trainMax = row.trainLoss;
        h.add(row);
    }
    QCOMPARE(h.size(), size_t(10));
    QCOMPARE(h.bucketWidth(), int64_t(4));
    HistoryPoint partial = evaluation(42);
    partial.count = 2;
    partial.firstStep = 41;
    h.add(partial);
    h.add(evaluation(43)); // joins the partial bucket
    QCOMPARE(h.size(), size_t(11));
    QCOMPARE(h.back().count, int64_t(3));
    QCOMPARE(h.back().firstStep, int64_t(41));
    QCOMPARE(h.evaluations(), int64_t(43));
}

void TestTrainingHistory::aLongRunStaysBounded()
{
    // XOR, full batch: one evaluation per step, the run that grew the history without bound.
    auto cpu = createCpuBackend(1);
    Backend& b = *cpu;
    const Buffer x = testutil::toDevice(b, {0, 0, 0, 1, 1, 0, 1, 1});
    const Buffer y = testutil::toDevice(b, {0, 1, 1, 0});
    TrainerConfig cfg;
    cfg.optimizer = OptimizerConfig::named("adam");
    cfg.schedule.kind = ScheduleKind::Constant;
    cfg.schedule.lrMax = 1e-2f;
    cfg.steps = 3000;
    Network net(b, 2, "dense:8,tanh,dense", 1);
    net.initialize(1);
    Optimizer opt(b, cfg.optimizer, net.parameterRanges());
    TrainingState state;
    state.history = TrainingHistory(64); // the limit, small for the test
    Trainer trainer(net, opt, cfg, state);
    const TrainResult r = trainer.run({x.view(4, 2), y.view(4, 1), {}, {}});
    QVERIFY(r.reason == StopReason::Finished);
    QVERIFY(state.history.size() <= 64);
    QCOMPARE(state.history.evaluations(), int64_t(3000));
    QCOMPARE(state.history.back().step, int64_t(3000));
    QCOMPARE(state.history[0].firstStep, int64_t(1));
    QVERIFY(state.history[0].trainMax > state.history.back().trainMin);
}

void TestTrainingHistory::lossRowsBetweenEvaluations()
{
    // XOR in batches of 2 (2 steps an epoch), evaluated every 10 steps, a loss row every 3.
    auto cpu = createCpuBackend(1);
    Backend& b = *cpu;
    const Buffer x = testutil::toDevice(b, {0, 0, 0, 1, 1, 0, 1, 1});
    const Buffer y = testutil::toDevice(b, {0, 1, 1, 0});
    const Buffer vx = testutil::toDevice(b, {0, 1});
    const Buffer vy = testutil::toDevice(b, {1});
    TrainerConfig cfg;
    cfg.optimizer = OptimizerConfig::named("adam");
    cfg.schedule.kind = ScheduleKind::Constant;
    cfg.schedule.lrMax = 1e-2f;
    cfg.steps = 20;
    cfg.batchSize = 2;
    cfg.evalEvery = 10;
    Network net(b, 2, "dense:8,tanh,dense", 1);
    net.initialize(1);
    Optimizer opt(b, cfg.optimizer, net.parameterRanges());
    TrainingState state;
    RunPolicy policy;
    policy.historyEvery = 3;
    std::vector<double> losses; // each step's loss (a report after every step)
    policy.progressInterval = 0;
    Trainer trainer(net, opt, cfg, state, policy);
    trainer.setProgressCallback([&losses](const Progress& p) { losses.push_back(p.trainLoss); });
    const TrainResult r = trainer.run({x.view(4, 2), y.view(4, 1), vx.view(1, 2), vy.view(1, 1)});
    QVERIFY(r.reason == StopReason::Finished);
    QCOMPARE(losses.size(), size_t(20));
    // Rows at 3, 6, 9, 10 (evaluation), 13, 16, 19, 20 (evaluation, the last step).
    const std::vector<int64_t> steps{3, 6, 9, 10, 13, 16, 19, 20};
    QCOMPARE(state.history.size(), steps.size());
    int64_t previous = 0;
    for (size_t i = 0; i < steps.size(); ++i) {
        const HistoryPoint& h = state.history[i];
        QCOMPARE(h.step, steps[i]);
        const bool evaluation = h.step % 10 == 0;
        QCOMPARE(std::isnan(h.valLoss), !evaluation);
        double sum = 0;
        for (int64_t s = previous; s < h.step; ++s)
            sum += losses[static_cast<size_t>(s)];
        QVERIFY(std::abs(h.trainLoss - sum / static_cast<double>(h.step - previous)) <
                1e-9 * std::abs(h.trainLoss) + 1e-12);
        previous = h.step;
    }
}

QTEST_GUILESS_MAIN(TestTrainingHistory)
#include "TestTrainingHistory.moc"
