// The trainer's watch (TrainingWatch.h): the baseline loss of predicting the mean for each loss,
// a stall at that baseline reported once in one line, silence on a run that learns, the same
// bits with the watch on or off where it does not fire, divergence after a sustained rise only,
// and a recovery that puts the good weights back, lowers the rate and clears the optimizer.
#include "Network.h"
#include "Optimizer.h"
#include "Random.h"
#include "TestUtil.h"
#include "Trainer.h"
#include "TrainingWatch.h"

#include <QTest>

#include <cmath>
#include <memory>

using namespace il;
using testutil::toDevice;
using testutil::toHost;

namespace {

struct Problem {
    Buffer x, y;
    int64_t rows = 0;
    TrainingData view(int64_t in, int64_t out) const
    {
        return {x.view(rows, in), y.view(rows, out), {}, {}};
    }
};

// 256 rows. learnable: y = sin(3 x) from x in [-1, 1]. Otherwise the input is always 0 and y is
// a fair coin: no network can do better than predict the mean (the loss is y's variance).
Problem problem(Backend& b, bool learnable)
{
    Rng rng(7);
    std::vector<float> x(256), y(256);
    for (size_t i = 0; i < x.size(); ++i) {
        const double u = rng.uniform(-1, 1);
        x[i] = learnable ? static_cast<float>(u) : 0.f;
        y[i] =
            learnable ? static_cast<float>(std::sin(3 * u)) : (rng.uniform(0, 1) < 0.5 ? 1.f : 0.f);
    }
    Problem p;
    p.rows = 256;
    p.x = toDevice(b, x);
    p.y = toDevice(b, y);
    return p;
}

struct Outcome {
    TrainResult result;
    std::vector<std::string> progressNotices; // as the progress callback saw them
    std::vector<float> weights;
};

// 600 full-batch steps of Adam at 1e-2 (constant) on a small tanh network.
Outcome train(Backend& b, const Problem& p, const WatchSettings& watch)
{
    TrainerConfig cfg;
    cfg.optimizer = OptimizerConfig::named("adam");
    cfg.schedule.kind = ScheduleKind::Constant;
    cfg.schedule.lrMax = 1e-2f;
    cfg.steps = 600;
    Network net(b, 1, "dense:16,tanh,dense:16,tanh,dense", 1);
    net.initialize(3);
    Optimizer opt(b, cfg.optimizer, net.parameterRanges());
    TrainingState state;
    RunPolicy policy;
    policy.progressInterval = 0;
    policy.watch = watch;
    Trainer trainer(net, opt, cfg, state, policy);
    Outcome out;
    trainer.setProgressCallback([&out](const Progress& pr) {
        if (!pr.notice.empty()) out.progressNotices.push_back(pr.notice);
    });
    out.result = trainer.run(p.view(1, 1));
    out.weights = toHost(b, net.parameters());
    return out;
}

QString text(const std::string& s)
{
    return QString::fromStdString(s);
}

} // namespace

class TestTrainingWatch : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<Backend> m_backend = createCpuBackend(1);

private slots:
    void baselineLoss_data();
    void baselineLoss();
    void baselineReadsInChunks();
    void stallAtTheMeanIsReportedOnce();
    void learningRunIsQuietAndUntouched();
    void divergenceNeedsASustainedRise();
    void recoveryRestoresGoodWeights();
};

void TestTrainingWatch::baselineLoss_data()
{
    QTest::addColumn<int>("loss");
    QTest::addColumn<float>("smoothing");
    QTest::addColumn<int>("cols");
    QTest::addColumn<int>("classes");
    QTest::addColumn<QList<float>>("y");
    QTest::addColumn<double>("expected");
    QTest::addColumn<QList<float>>("weights"); // class weights; empty: unweighted
    const auto h = [](double p) { return p > 0 ? -p * std::log(p) : 0.0; };
    // Two columns: variance 0.25 and 0 (a constant far from 0, no cancellation): mean 0.125.
    QTest::newRow("mse") << int(LossKind::MSE) << 0.f << 2 << 0
                         << QList<float>{0, 1000, 1, 1000, 0, 1000, 1, 1000} << 0.125
                         << QList<float>{};
    // A column with mean 0.25: the binary entropy of 0.25.
    QTest::newRow("bce") << int(LossKind::BinaryCrossEntropy) << 0.f << 1 << 0
                         << QList<float>{1, 0, 0, 0} << h(0.25) + h(0.75) << QList<float>{};
    // Class frequencies 1/2, 1/4, 1/4; with smoothing 0.3 the best constant is 0.7 f + 0.1.
    QTest::newRow("ce") << int(LossKind::CrossEntropy) << 0.f << 1 << 3 << QList<float>{0, 0, 1, 2}
                        << h(0.5) + 2 * h(0.25) << QList<float>{};
    QTest::newRow("ce smoothed") << int(LossKind::CrossEntropy) << 0.3f << 1 << 3
                                 << QList<float>{0, 0, 1, 2} << h(0.45) + 2 * h(0.275)
                                 << QList<float>{};
    // MAE's best constant is the median: not computed.
    QTest::newRow("mae") << int(LossKind::MAE) << 0.f << 1 << 0 << QList<float>{0, 1} << double(NAN)
                         << QList<float>{};
    // Class-weighted: the best constant is the weighted mean, its loss W / n times the entropy
    // (W: the sum of the rows' weights). Balanced weights make every class weigh n / k: the
    // best constant is uniform, its loss log k (log 2 for BCE).
    const auto balanced = [](std::vector<int64_t> counts) {
        const auto w = il::balancedClassWeights(counts);
        return QList<float>(w.begin(), w.end());
    };
    QTest::newRow("bce balanced") << int(LossKind::BinaryCrossEntropy) << 0.f << 1 << 0
                                  << QList<float>{1, 0, 0, 0} << std::log(2.0) << balanced({3, 1});
    QTest::newRow("bce weighted") << int(LossKind::BinaryCrossEntropy) << 0.f << 1 << 0
                                  << QList<float>{1, 0, 0, 0} << 1.5 * std::log(2.0)
                                  << QList<float>{1, 3};
    QTest::newRow("ce balanced") << int(LossKind::CrossEntropy) << 0.f << 1 << 3
                                 << QList<float>{0, 0, 1, 2} << std::log(3.0)
                                 << balanced({2, 1, 1});
    QTest::newRow("ce weighted smoothed")
        << int(LossKind::CrossEntropy) << 0.3f << 1 << 3 << QList<float>{0, 0, 1, 2}
        << 2 * h(0.45) + h(0.1) << QList<float>{1, 2, 0};
}

void TestTrainingWatch::baselineLoss()
{
    QFETCH(int, loss);
    QFETCH(float, smoothing);
    QFETCH(int, cols);
    QFETCH(int, classes);
    QFETCH(QList<float>, y);
    QFETCH(double, expected);
    QFETCH(QList<float>, weights);
    const Buffer buf = toDevice(*m_backend, std::vector<float>(y.begin(), y.end()));
    const std::vector<float> w(weights.begin(), weights.end());
    const double got = il::baselineLoss(*m_backend, static_cast<LossKind>(loss), smoothing,
                                        buf.view(y.size() / cols, cols), classes, w);
    // Weights are floats (balanced ones rounded): a looser bound for them.
    const double tolerance = w.empty() ? 1e-9 : 1e-6;
    if (std::isnan(expected))
        QVERIFY(std::isnan(got));
    else
        QVERIFY2(std::abs(got - expected) < tolerance, qPrintable(QString::number(got, 'g', 12)));
}

void TestTrainingWatch::baselineReadsInChunks()
{
    // More rows than one chunk (65536): 0, 1, 0, 1... has variance 0.25 exactly.
    std::vector<float> y(150001);
    for (size_t i = 0; i < y.size(); ++i)
        y[i] = static_cast<float>(i % 2);
    const Buffer buf = toDevice(*m_backend, y);
    const double n = static_cast<double>(y.size()), mean = 75000 / n;
    const double got =
        il::baselineLoss(*m_backend, LossKind::MSE, 0, buf.view(static_cast<int64_t>(n), 1), 0);
    QVERIFY(std::abs(got - (mean - mean * mean)) < 1e-12);
}

void TestTrainingWatch::stallAtTheMeanIsReportedOnce()
{
    const Problem p = problem(*m_backend, false);
    const Outcome watched = train(*m_backend, p, WatchSettings{});
    // Reported once, in one line, when it happens (grace 100 + 200 steps at the baseline), to
    // the progress callback and in the result; the run goes on to its budget.
    QCOMPARE(watched.result.notices.size(), size_t(1));
    QCOMPARE(watched.progressNotices, watched.result.notices);
    const QString line = text(watched.result.notices[0]);
    QVERIFY2(line.startsWith("step 300: the loss has stayed at the data's variance 0.2") &&
                 line.endsWith(" for 200 steps: the network predicts the mean; a learning rate "
                               "lower than 0.01 may help"),
             qPrintable(line));
    QVERIFY(!line.contains('\n'));
    QCOMPARE(watched.result.reason, StopReason::Finished);
    QCOMPARE(watched.result.steps, int64_t(600));
    QVERIFY2(text(watched.result.message).contains("; the loss stalled at the data's variance"),
             watched.result.message.c_str());
    // Reporting changes nothing: the same weights as a run without the watch.
    WatchSettings off;
    off.enabled = false;
    const Outcome unwatched = train(*m_backend, p, off);
    QVERIFY(unwatched.result.notices.empty());
    QCOMPARE(watched.weights, unwatched.weights);
    QCOMPARE(watched.result.recoveries, 0);
    QCOMPARE(watched.result.schedule.lrMax, 1e-2f);
}

void TestTrainingWatch::learningRunIsQuietAndUntouched()
{
    const Problem p = problem(*m_backend, true);
    WatchSettings recovering;
    recovering.recoveries = 3;
    recovering.stallBand = 0.15;
    const Outcome watched = train(*m_backend, p, recovering);
    for (const std::string& notice : watched.result.notices)
        QFAIL(notice.c_str());
    QCOMPARE(watched.result.recoveries, 0);
    QVERIFY(watched.result.trainLoss < 0.01);
    // The copies of good weights it kept changed nothing: the same bits as without a watch.
    WatchSettings off;
    off.enabled = false;
    QCOMPARE(watched.weights, train(*m_backend, p, off).weights);
}

void TestTrainingWatch::divergenceNeedsASustainedRise()
{
    Network net(*m_backend, 1, "dense", 1);
    Optimizer opt(*m_backend, OptimizerConfig(), net.parameterRanges());
    WatchSettings s; // windows of 25, grace 100, above 4x the best for 100 steps
    TrainingWatch watch(s, net, opt, LossKind::MSE, 1.0, 0);
    int64_t step = 0;
    auto window = [&](double mean) {
        watch.add(mean * 25, 25);
        step += 25;
        return watch.closeWindow(step);
    };
    using V = TrainingWatch::Verdict;
    for (double mean : {0.5, 0.2, 0.1, 0.05}) // learning: best 0.05 at step 100
        QCOMPARE(window(mean), V::None);
    // A spike of 75 steps above 4x the best, then back: nothing.
    for (double mean : {0.5, 0.4, 0.3})
        QCOMPARE(window(mean), V::None);
    QCOMPARE(window(0.06), V::None);
    // 100 steps above 4x the best: diverging, at the window that completes them.
    for (double mean : {0.5, 0.4, 0.3})
        QCOMPARE(window(mean), V::None);
    QCOMPARE(window(0.25), V::Diverging);
    ScheduleConfig schedule;
    schedule.lrMax = 0.01f;
    const QString line = text(watch.respond(V::Diverging, step, schedule));
    QCOMPARE(line, "step 300: the loss has stayed above 4x its best 0.05 for 100 steps: training "
                   "is diverging; a learning rate lower than 0.01 may help");
    QCOMPARE(schedule.lrMax, 0.01f); // no recovery: only said, and only once
    QCOMPARE(window(0.5), V::None);

    // Near a perfect fit, 100 times a tiny best is not a divergence while it stays below
    // sqrt(best x baseline) = 0.001: a fit that good has not gone wrong.
    TrainingWatch fine(s, net, opt, LossKind::MSE, 1.0, 0);
    step = 0;
    auto fineWindow = [&](double mean) {
        fine.add(mean * 25, 25);
        step += 25;
        return fine.closeWindow(step);
    };
    for (double mean : {0.1, 1e-3, 1e-5, 1e-6})
        QCOMPARE(fineWindow(mean), V::None);
    for (int i = 0; i < 12; ++i)
        QCOMPARE(fineWindow(9e-4), V::None);
    for (int i = 0; i < 3; ++i)
        QCOMPARE(fineWindow(2e-3), V::None);
    QCOMPARE(fineWindow(2e-3), V::Diverging);
}

void TestTrainingWatch::recoveryRestoresGoodWeights()
{
    Backend& b = *m_backend;
    Network net(b, 2, "dense:4,tanh,dense", 1);
    net.initialize(1);
    Optimizer opt(b, OptimizerConfig(), net.parameterRanges());
    const Tensor params = net.parameters();
    const auto fill = [&](float v) { b.fill(params, v); };
    WatchSettings s;
    s.recoveries = 2;
    s.stallBand = 0.15;
    fill(1.f); // the weights at the start: the first good ones
    TrainingWatch watch(s, net, opt, LossKind::MSE, 1.0, 0);
    int64_t step = 0;
    auto window = [&](double mean) {
        watch.add(mean * 25, 25);
        step += 25;
        return watch.closeWindow(step);
    };
    using V = TrainingWatch::Verdict;
    fill(2.f);
    QCOMPARE(window(0.95), V::None); // near the baseline: not good weights
    fill(3.f);
    QCOMPARE(window(0.5), V::None); // clearly below: the weights of step 50 are the good ones
    fill(4.f);
    V v = V::None;
    while (v == V::None && step < 1000)
        v = window(1.02);
    QCOMPARE(v, V::Stalled);
    QCOMPARE(step, int64_t(300)); // the stall counted from step 100, when the grace ended

    // Adam's moments, not zero, so the recovery has something to clear.
    for (const auto& [name, t] : opt.state())
        b.fill(t, 0.5f);
    ScheduleConfig schedule;
    schedule.lrMax = 0.02f;
    schedule.lrMin = 0.002f;
    const QString line = text(watch.respond(v, step, schedule));
    QCOMPARE(line, "step 300: the loss has stayed at the data's variance 1 for 200 steps: the "
                   "network predicts the mean; recovering (1 of 2) from the weights of step 50 at "
                   "learning rate 0.005");
    QCOMPARE(toHost(b, params), std::vector<float>(static_cast<size_t>(params.size()), 3.f));
    for (const auto& [name, t] : opt.state())
        QCOMPARE(toHost(b, t), std::vector<float>(static_cast<size_t>(t.size()), 0.f));
    QCOMPARE(schedule.lrMax, 0.005f);
    QCOMPARE(schedule.lrMin, 0.0005f);
    QCOMPARE(watch.recoveriesDone(), 1);

    // A new grace period, then the second and last recovery; a third stall is only said.
    for (int i = 0; i < 2; ++i) {
        fill(5.f);
        const int64_t from = step;
        v = V::None;
        while (v == V::None && step < 2000)
            v = window(1.0);
        QCOMPARE(step - from, int64_t(300));
        const QString next = text(watch.respond(v, step, schedule));
        if (i == 0) {
            QVERIFY2(next.contains("recovering (2 of 2)"), qPrintable(next));
            QCOMPARE(toHost(b, params)[0], 3.f);
        } else {
            QVERIFY2(next.endsWith("; no recovery left (2 done)"), qPrintable(next));
            QCOMPARE(toHost(b, params)[0], 5.f);
        }
    }
    QCOMPARE(schedule.lrMax, 0.00125f);
    QVERIFY2(text(watch.summary(schedule)) ==
                 "recovered 2 times from a stall or divergence; the learning rate is now 0.00125",
             watch.summary(schedule).c_str());
}

QTEST_GUILESS_MAIN(TestTrainingWatch)
#include "TestTrainingWatch.moc"
