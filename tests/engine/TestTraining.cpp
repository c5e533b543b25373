// End-to-end training: problems with known answers, determinism, the non-finite guard,
// cancel/pause from another thread, early stopping, targets and budgets, the learning-rate
// schedules, gradient clipping and the layer-spec language's error messages.
#include "Backend.h"
#include "Errors.h"
#include "LayerSpec.h"
#include "Network.h"
#include "Optimizer.h"
#include "Random.h"
#include "TestUtil.h"
#include "Trainer.h"

#include <QFile>
#include <QRegularExpression>
#include <QTest>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <numbers>
#include <thread>

using namespace il;
using testutil::toDevice;
using testutil::toHost;

namespace {

// Data in backend memory plus the TrainingData view of it.
struct Dataset {
    Buffer x, y, vx, vy;
    int64_t rows = 0, in = 0, out = 0, valRows = 0;

    TrainingData view() const
    {
        TrainingData d;
        d.trainX = x.view(rows, in);
        d.trainY = y.view(rows, out);
        if (valRows > 0) {
            d.valX = vx.view(valRows, in);
            d.valY = vy.view(valRows, out);
        }
        return d;
    }
};

Dataset makeDataset(Backend& b, const std::vector<float>& x, const std::vector<float>& y,
                    int64_t in, int64_t out)
{
    Dataset d;
    d.in = in;
    d.out = out;
    d.rows = static_cast<int64_t>(x.size()) / in;
    d.x = toDevice(b, x);
    d.y = toDevice(b, y);
    return d;
}

void setValidation(Backend& b, Dataset& d, const std::vector<float>& x, const std::vector<float>& y)
{
    d.valRows = static_cast<int64_t>(x.size()) / d.in;
    d.vx = toDevice(b, x);
    d.vy = toDevice(b, y);
}

// y = 3 x1 - 2 x2 + 0.5 + noise, x uniform in [-1, 1]^2.
void regressionData(uint64_t seed, int64_t rows, double noise, std::vector<float>& x,
                    std::vector<float>& y)
{
    Rng rng(seed);
    x.resize(static_cast<size_t>(rows * 2));
    y.resize(static_cast<size_t>(rows));
    for (int64_t i = 0; i < rows; ++i) {
        const double x1 = rng.uniform(-1, 1), x2 = rng.uniform(-1, 1);
        x[static_cast<size_t>(2 * i)] = static_cast<float>(x1);
        x[static_cast<size_t>(2 * i + 1)] = static_cast<float>(x2);
        y[static_cast<size_t>(i)] =
            static_cast<float>(3 * x1 - 2 * x2 + 0.5 + noise * rng.normal());
    }
}

Dataset regression(Backend& b, uint64_t seed, int64_t rows, double noise = 1e-3)
{
    std::vector<float> x, y;
    regressionData(seed, rows, noise, x, y);
    return makeDataset(b, x, y, 2, 1);
}

TrainerConfig constantConfig(const char* optimizer, float lr, LossKind loss = LossKind::MSE)
{
    TrainerConfig c;
    c.loss = loss;
    c.optimizer = OptimizerConfig::named(optimizer);
    c.schedule.kind = ScheduleKind::Constant;
    c.schedule.lrMax = lr;
    return c;
}

// A progress report after every step.
RunPolicy everyStep()
{
    RunPolicy p;
    p.progressInterval = 0;
    return p;
}

// A network, its optimizer and state, trained once.
struct Run {
    std::unique_ptr<Network> net;
    std::unique_ptr<Optimizer> opt;
    TrainingState state;
    TrainResult result;

    Run(Backend& b, int64_t in, const std::string& spec, int64_t out, uint64_t initSeed,
        const TrainerConfig& cfg)
    {
        net = std::make_unique<Network>(b, in, spec, out);
        net->initialize(initSeed);
        opt = std::make_unique<Optimizer>(b, cfg.optimizer, net->parameterRanges());
    }
    TrainResult train(const TrainerConfig& cfg, const Dataset& d)
    {
        Trainer t(*net, *opt, cfg, state, everyStep());
        result = t.run(d.view());
        return result;
    }
    std::vector<float> weights() const { return toHost(net->backend(), net->parameters()); }
    std::vector<float> tensor(const std::string& name) const
    {
        for (const auto& t : net->namedTensors())
            if (t.name == name) return toHost(net->backend(), t.tensor);
        return {};
    }
};

QByteArray describe(const TrainResult& r)
{
    return (QString::fromStdString(stopReasonName(r.reason)) + ": " +
            QString::fromStdString(r.message))
        .toUtf8();
}

bool historiesIdentical(const std::vector<HistoryPoint>& a, const std::vector<HistoryPoint>& b)
{
    if (a.size() != b.size()) return false;
    const auto same = [](double x, double y) {
        return std::bit_cast<uint64_t>(x) == std::bit_cast<uint64_t>(y);
    };
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i].step != b[i].step || !same(a[i].trainLoss, b[i].trainLoss) ||
            !same(a[i].valLoss, b[i].valLoss) || !same(a[i].lr, b[i].lr))
            return false;
    return true;
}

} // namespace

class TestTraining : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();

    void xorReachesFullAccuracy();
    void linearRegressionRecoversCoefficients();
    void sameSeedIsBitIdentical();
    void differentSeedDiffers();
    void resumeMatchesUninterrupted();

    void nonFiniteGradientNamesStepAndLayer();
    void nonFiniteLearningRateKeepsLastGoodWeights();
    void nonFiniteTargetStops();

    void cancelFromAnotherThread();

    void earlyStoppingRestoresBest();
    void earlyStoppingAfterResume();
    void earlyStoppingRestoresRunningStatistics();
    void targetLossStopsEarly();
    void stepBudget();
    void epochBudget();
    void timeBudget();
    void badDataShapesThrow();

    void learningRateSchedules_data();
    void learningRateSchedules();
    void warmup();
    void gradientClippingLimitsUpdate();

    void layerSpecErrors_data();
    void layerSpecErrors();
    void layerSpecValid();
    void predictMatchesForward();
    void mergeFeedsPerPositionDense();
    void batchNormRunningStatistics();
    void dropoutWhileTrainingOnly();
    void zeroInitialisedLastLayer();
    void namesRoundTrip();
    void optimizerRegistry();
    void registriesAreInTheGuide();

private:
    Backend& b() { return *m_backend; }
    std::unique_ptr<Backend> m_backend;
};

void TestTraining::initTestCase()
{
    m_backend = createCpuBackend();
}

// ---- problems with known answers ---------------------------------------------------------------

void TestTraining::xorReachesFullAccuracy()
{
    const std::vector<float> x = {0, 0, 0, 1, 1, 0, 1, 1};
    const std::vector<float> y = {0, 1, 1, 0};
    Dataset d = makeDataset(b(), x, y, 2, 1);
    TrainerConfig cfg = constantConfig("adam", 0.05f, LossKind::BinaryCrossEntropy);
    cfg.steps = 1000;
    cfg.seed = 1;
    Run run(b(), 2, "dense:8,tanh,dense:1", 1, 1, cfg);
    const TrainResult r = run.train(cfg, d);
    QVERIFY2(r.reason == StopReason::Finished, describe(r));
    QCOMPARE(r.steps, qint64(1000));
    Buffer out = testutil::filledBuffer(b(), 4, 0.f);
    run.net->predict(d.x.view(4, 2), out.view(4, 1));
    const auto logits = toHost(b(), out.view(4, 1));
    for (int i = 0; i < 4; ++i)
        QVERIFY2((logits[i] > 0) == (y[i] > 0.5f),
                 qPrintable(QStringLiteral("row %1: logit %2").arg(i).arg(logits[i])));
    Buffer scratch;
    const double loss = Trainer::evaluateLoss(*run.net, LossKind::BinaryCrossEntropy,
                                              d.x.view(4, 2), d.y.view(4, 1), scratch);
    QVERIFY2(loss < 0.05, qPrintable(QString::number(loss)));
}

void TestTraining::linearRegressionRecoversCoefficients()
{
    Dataset d = regression(b(), 7, 256);
    TrainerConfig cfg = constantConfig("sgd", 0.3f);
    cfg.steps = 600;
    Run run(b(), 2, "dense:1", 1, 3, cfg);
    const TrainResult r = run.train(cfg, d);
    QVERIFY2(r.reason == StopReason::Finished, describe(r));
    const auto w = run.tensor("layers.0.weight");
    const auto bias = run.tensor("layers.0.bias");
    QCOMPARE(w.size(), size_t(2));
    QCOMPARE(bias.size(), size_t(1));
    QVERIFY2(std::fabs(w[0] - 3.f) < 1e-2f && std::fabs(w[1] + 2.f) < 1e-2f &&
                 std::fabs(bias[0] - 0.5f) < 1e-2f,
             qPrintable(QStringLiteral("w = (%1, %2), b = %3").arg(w[0]).arg(w[1]).arg(bias[0])));
    QVERIFY(r.trainLoss < 1e-4);
}

// ---- determinism
// ---------------------------------------------------------------------------------

namespace {
struct SeededRun {
    std::vector<float> weights;
    std::vector<HistoryPoint> history;
};

SeededRun seededRun(Backend& b, uint64_t initSeed, uint64_t shuffleSeed)
{
    std::vector<float> x, y, vx, vy;
    regressionData(11, 64, 0.1, x, y);
    regressionData(12, 32, 0.1, vx, vy);
    Dataset d = makeDataset(b, x, y, 2, 1);
    setValidation(b, d, vx, vy);
    TrainerConfig cfg = constantConfig("adam", 0.01f);
    cfg.schedule.kind = ScheduleKind::Cosine;
    cfg.epochs = 5;
    cfg.batchSize = 8; // shuffled mini-batches
    cfg.seed = shuffleSeed;
    Run run(b, 2, "dense:16,tanh,dense:1", 1, initSeed, cfg);
    run.train(cfg, d);
    return {run.weights(), run.state.history.rows()};
}
} // namespace

void TestTraining::sameSeedIsBitIdentical()
{
    const SeededRun a = seededRun(b(), 5, 5);
    const SeededRun c = seededRun(b(), 5, 5);
    QCOMPARE(a.history.size(), size_t(5)); // one point per epoch
    QVERIFY(historiesIdentical(a.history, c.history));
    QVERIFY(testutil::bitIdentical(a.weights, c.weights));
    QVERIFY(testutil::allFinite(a.weights));
}

void TestTraining::differentSeedDiffers()
{
    const SeededRun a = seededRun(b(), 5, 5);
    const SeededRun initOnly = seededRun(b(), 6, 5);
    const SeededRun shuffleOnly = seededRun(b(), 5, 6);
    QVERIFY(!testutil::bitIdentical(a.weights, initOnly.weights));
    QVERIFY(!testutil::bitIdentical(a.weights, shuffleOnly.weights));
    QVERIFY(!historiesIdentical(a.history, shuffleOnly.history));
}

void TestTraining::resumeMatchesUninterrupted()
{
    // 64 rows in batches of 8: stopping after 10 steps stops in the middle of epoch 2.
    Dataset d = regression(b(), 21, 64, 0.1);
    TrainerConfig cfg = constantConfig("adam", 0.01f);
    cfg.batchSize = 8;
    cfg.steps = 20;
    Run straight(b(), 2, "dense:8,tanh,dense:1", 1, 4, cfg);
    straight.train(cfg, d);

    Run resumed(b(), 2, "dense:8,tanh,dense:1", 1, 4, cfg);
    TrainerConfig first = cfg;
    first.steps = 10;
    QCOMPARE(resumed.train(first, d).steps, qint64(10));
    QCOMPARE(resumed.state.step, qint64(10));
    QCOMPARE(resumed.state.stepInEpoch, qint64(2));
    const TrainResult r = resumed.train(cfg, d); // the budget counts the steps already done
    QCOMPARE(r.steps, qint64(10));
    QCOMPARE(resumed.state.step, qint64(20));
    QVERIFY(testutil::bitIdentical(straight.weights(), resumed.weights()));
}

// ---- the non-finite guard
// -------------------------------------------------------------------------

void TestTraining::nonFiniteGradientNamesStepAndLayer()
{
    // Inputs of 1e10: the loss (~1e20) is finite, but the weight gradient (~1e20) squares
    // to infinity in f32, so the guard trips on layers.0.weight at the first step.
    Rng rng(1);
    std::vector<float> x(16), y(8, 0.f);
    for (auto& v : x)
        v = static_cast<float>(1e10 * rng.uniform(0.5, 1.0));
    Dataset d = makeDataset(b(), x, y, 2, 1);
    TrainerConfig cfg = constantConfig("sgd", 0.01f);
    cfg.steps = 10;
    Run run(b(), 2, "dense:1", 1, 1, cfg);
    const auto before = run.weights();
    const TrainResult r = run.train(cfg, d);
    QVERIFY2(r.reason == StopReason::NonFinite, describe(r));
    const QString msg = QString::fromStdString(r.message);
    QVERIFY2(msg.contains(
                 QRegularExpression("step\\D{0,3}1\\b", QRegularExpression::CaseInsensitiveOption)),
             qPrintable(msg));
    QVERIFY2(msg.contains("layers.0.weight") || msg.contains("dense:1"), qPrintable(msg));
    QVERIFY(testutil::bitIdentical(run.weights(), before));
    QCOMPARE(run.state.step, qint64(0));
}

void TestTraining::nonFiniteLearningRateKeepsLastGoodWeights()
{
    // SGD at lr 1e30: step 1 is finite but throws the weights to ~1e30; step 2 overflows.
    Dataset d = regression(b(), 3, 32);
    TrainerConfig cfg = constantConfig("sgd", 1e30f);
    cfg.steps = 50;
    Run run(b(), 2, "dense:8,tanh,dense:1", 1, 2, cfg);
    // The weights after each step, as first reported (a report after the stop does not count).
    std::map<int64_t, std::vector<float>> snapshots{{0, run.weights()}};
    Trainer trainer(*run.net, *run.opt, cfg, run.state, everyStep());
    trainer.setProgressCallback(
        [&](const Progress& p) { snapshots.emplace(p.step, run.weights()); });
    const TrainResult r = trainer.run(d.view());
    QVERIFY2(r.reason == StopReason::NonFinite, describe(r));
    QVERIFY2(r.steps < 50, describe(r));
    QVERIFY2(QString::fromStdString(r.message).contains("step", Qt::CaseInsensitive), describe(r));
    const auto w = run.weights();
    QVERIFY2(testutil::allFinite(w), "non-finite weights left behind");
    // The last good weights: the latest all-finite snapshot.
    const std::vector<float>* lastGood = nullptr;
    for (const auto& [step, weights] : snapshots)
        if (testutil::allFinite(weights)) lastGood = &weights;
    QVERIFY(lastGood);
    QVERIFY2(testutil::bitIdentical(w, *lastGood), "weights differ from the last good ones");
    QVERIFY2(!testutil::bitIdentical(w, snapshots.at(0)), "the good first step was undone");
}

void TestTraining::nonFiniteTargetStops()
{
    std::vector<float> x, y;
    regressionData(5, 16, 0.0, x, y);
    y[7] = 1e30f; // (pred - 1e30)^2 overflows
    Dataset d = makeDataset(b(), x, y, 2, 1);
    TrainerConfig cfg = constantConfig("adam", 0.01f);
    cfg.steps = 10;
    Run run(b(), 2, "dense:4,tanh,dense:1", 1, 2, cfg);
    const auto before = run.weights();
    const TrainResult r = run.train(cfg, d);
    QVERIFY2(r.reason == StopReason::NonFinite, describe(r));
    QVERIFY2(QString::fromStdString(r.message).contains(QRegularExpression("step\\D{0,3}1\\b")),
             describe(r));
    QVERIFY(testutil::bitIdentical(run.weights(), before));
    QVERIFY(r.steps <= 1);
}

// ---- controls from another thread --------------------------------------------------------------

namespace {
// Blocks the trainer inside its progress callback at `blockAt` until the test releases it, so
// a control set from the test thread lands at a known step.
struct Gate {
    std::mutex mutex;
    std::condition_variable cv;
    bool reached = false, released = false;
    std::atomic<int64_t> lastStep{0};
    int64_t blockAt = 5;
    int64_t blockedStep = -1;

    void onProgress(const Progress& p)
    {
        lastStep = p.step;
        std::unique_lock lock(mutex);
        if (reached || p.step < blockAt) return;
        reached = true;
        blockedStep = p.step;
        cv.notify_all();
        cv.wait(lock, [&] { return released; });
    }
    bool waitReached()
    {
        std::unique_lock lock(mutex);
        return cv.wait_for(lock, std::chrono::seconds(30), [&] { return reached; });
    }
    void release()
    {
        std::lock_guard lock(mutex);
        released = true;
        cv.notify_all();
    }
};

} // namespace

void TestTraining::cancelFromAnotherThread()
{
    Dataset d = regression(b(), 1, 64);
    TrainerConfig cfg = constantConfig("adam", 0.01f);
    cfg.steps = 100000000;
    cfg.maxSeconds = 60; // a safety net only
    Run run(b(), 2, "dense:16,tanh,dense:1", 1, 1, cfg);
    Trainer trainer(*run.net, *run.opt, cfg, run.state, everyStep());
    Gate gate;
    trainer.setProgressCallback([&](const Progress& p) { gate.onProgress(p); });
    TrainResult r;
    std::thread worker([&] { r = trainer.run(d.view()); });
    const bool reached = gate.waitReached();
    trainer.requestCancel();
    gate.release();
    worker.join();
    QVERIFY(reached);
    QVERIFY2(r.reason == StopReason::Cancelled, describe(r));
    // Cancelled during step `blockedStep`'s report: at most one more step may run.
    QVERIFY2(r.steps <= gate.blockedStep + 1,
             qPrintable(QStringLiteral("cancel at step %1, stopped after %2 steps")
                            .arg(gate.blockedStep)
                            .arg(r.steps)));
    QVERIFY(testutil::allFinite(run.weights()));
}

// ---- stopping rules and budgets
// --------------------------------------------------------------------

namespace {
// Train towards y = x while validating against y = 0.3 x, starting from w = -1: the
// validation loss falls until w passes 0.3 (after ~30 steps), then rises.
Dataset overfittingData(Backend& b)
{
    Rng rng(8);
    std::vector<float> x(64), y(64), vy(64);
    for (size_t i = 0; i < x.size(); ++i) {
        x[i] = static_cast<float>(rng.uniform(-1, 1));
        y[i] = x[i];
        vy[i] = 0.3f * x[i];
    }
    Dataset d = makeDataset(b, x, y, 1, 1);
    setValidation(b, d, x, vy);
    return d;
}

void startAtMinusOne(Run& run)
{
    const std::vector<float> start = {-1.f, 0.f}; // weight, bias
    run.net->backend().upload(run.net->parameters().data, start.data(), 2 * sizeof(float));
}
} // namespace

void TestTraining::earlyStoppingRestoresBest()
{
    // Early stopping must bring back the weights of the best evaluation.
    Dataset d = overfittingData(b());
    TrainerConfig cfg = constantConfig("sgd", 0.05f);
    cfg.steps = 1000;
    cfg.patience = 5;
    cfg.restoreBest = true;
    Run run(b(), 1, "dense:1", 1, 1, cfg);
    startAtMinusOne(run);

    double bestVal = INFINITY;
    std::vector<float> bestWeights;
    int evaluations = 0;
    Trainer trainer(*run.net, *run.opt, cfg, run.state, everyStep());
    trainer.setProgressCallback([&](const Progress& p) {
        if (!p.evaluated) return;
        ++evaluations;
        if (p.valLoss < bestVal) {
            bestVal = p.valLoss;
            bestWeights = run.weights();
        }
    });
    const TrainResult r = trainer.run(d.view());
    QVERIFY2(r.reason == StopReason::EarlyStopping, describe(r));
    QVERIFY2(r.steps > 10 && r.steps < 200, describe(r));
    QVERIFY(evaluations > 10);
    const auto w = run.weights();
    QVERIFY2(testutil::bitIdentical(w, bestWeights),
             qPrintable(QStringLiteral("weight %1, best %2").arg(w[0]).arg(bestWeights[0])));
    QVERIFY(std::fabs(w[0] - 0.3f) < 0.05f);
    Buffer scratch;
    const double val =
        Trainer::evaluateLoss(*run.net, LossKind::MSE, d.vx.view(64, 1), d.vy.view(64, 1), scratch);
    QVERIFY(std::fabs(val - bestVal) <= 1e-6 * bestVal + 1e-9);
}

// The best weights early stopping goes back to include what batch norm keeps (its running
// statistics move at every training step): evaluated again, they give the best validation loss.
void TestTraining::earlyStoppingRestoresRunningStatistics()
{
    Dataset d = overfittingData(b());
    TrainerConfig cfg = constantConfig("adam", 0.05f);
    cfg.steps = 2000;
    cfg.batchSize = 16; // each batch moves the running statistics differently
    cfg.patience = 5;
    cfg.restoreBest = true;
    Run run(b(), 1, "dense:8,batchnorm,tanh,dense:1", 1, 3, cfg);
    const TrainResult r = run.train(cfg, d);
    QVERIFY2(r.reason == StopReason::EarlyStopping, describe(r));
    Buffer scratch;
    const double val =
        Trainer::evaluateLoss(*run.net, LossKind::MSE, d.vx.view(64, 1), d.vy.view(64, 1), scratch);
    QVERIFY2(std::fabs(val - r.valLoss) <= 1e-6 * r.valLoss + 1e-9,
             qPrintable(QStringLiteral("evaluated %1, best %2").arg(val).arg(r.valLoss)));
}

void TestTraining::earlyStoppingAfterResume()
{
    // Session 1 passes the best point without stopping (patience large); session 2 resumes
    // from the saved state with a small patience and stops at its first evaluation. The weights
    // left behind must be real weights of this run: the best ones, or the current ones if the
    // best were not kept, never the contents of a buffer that was never written.
    Dataset d = overfittingData(b());
    TrainerConfig cfg = constantConfig("sgd", 0.05f);
    cfg.steps = 45;
    cfg.patience = 1000;
    cfg.restoreBest = true;
    Run run(b(), 1, "dense:1", 1, 1, cfg);
    startAtMinusOne(run);
    double bestVal = INFINITY;
    std::vector<float> best;
    const auto track = [&](const Progress& p) {
        if (p.evaluated && p.valLoss < bestVal) {
            bestVal = p.valLoss;
            best = run.weights();
        }
    };
    {
        Trainer t(*run.net, *run.opt, cfg, run.state, everyStep());
        t.setProgressCallback(track);
        const TrainResult r = t.run(d.view());
        QVERIFY2(r.reason == StopReason::Finished, describe(r));
    }
    QVERIFY(run.state.evalsWithoutImprovement > 5);
    QCOMPARE(run.state.bestValLoss, bestVal);

    cfg.steps = 1000;
    cfg.patience = 5;
    Trainer t(*run.net, *run.opt, cfg, run.state, everyStep());
    t.setProgressCallback(track);
    const auto current = run.weights();
    const TrainResult r = t.run(d.view());
    QVERIFY2(r.reason == StopReason::EarlyStopping, describe(r));
    QCOMPARE(r.steps, qint64(1));
    const auto w = run.weights();
    QVERIFY2(testutil::allFinite(w), "non-finite weights after early stopping");
    // Acceptable: the best weights, or the current ones (at most one small SGD step away).
    const bool isBest = testutil::bitIdentical(w, best);
    const bool isCurrent =
        std::fabs(w[0] - current[0]) < 0.05f && std::fabs(w[1] - current[1]) < 0.05f;
    QVERIFY2(isBest || isCurrent,
             qPrintable(QStringLiteral("weights (%1, %2): neither the best (%3, %4) nor the "
                                       "current (%5, %6)")
                            .arg(w[0])
                            .arg(w[1])
                            .arg(best[0])
                            .arg(best[1])
                            .arg(current[0])
                            .arg(current[1])));
}

void TestTraining::targetLossStopsEarly()
{
    Dataset d = regression(b(), 9, 128);
    std::vector<float> vx, vy;
    regressionData(10, 64, 1e-3, vx, vy);
    setValidation(b(), d, vx, vy);
    TrainerConfig cfg = constantConfig("sgd", 0.1f);
    cfg.steps = 5000;
    cfg.targetLoss = 1e-2;
    Run run(b(), 2, "dense:1", 1, 1, cfg);
    const TrainResult r = run.train(cfg, d);
    QVERIFY2(r.reason == StopReason::TargetReached, describe(r));
    QVERIFY2(r.steps < 1000, describe(r));
    QVERIFY(r.valLoss <= 1e-2);
    Buffer scratch;
    QVERIFY(Trainer::evaluateLoss(*run.net, LossKind::MSE, d.vx.view(64, 2), d.vy.view(64, 1),
                                  scratch) <= 1e-2);
    // A loss one step earlier was still above the target (it did not stop late).
    QVERIFY(run.state.history.size() >= 2);
    QVERIFY(run.state.history[run.state.history.size() - 2].valLoss > 1e-2);
}

void TestTraining::stepBudget()
{
    Dataset d = regression(b(), 1, 100);
    TrainerConfig cfg = constantConfig("adam", 0.01f);
    cfg.batchSize = 32;
    cfg.steps = 37;
    cfg.epochs = 1000; // the first budget reached wins
    Run run(b(), 2, "dense:4,tanh,dense:1", 1, 1, cfg);
    const TrainResult r = run.train(cfg, d);
    QVERIFY2(r.reason == StopReason::Finished, describe(r));
    QCOMPARE(r.steps, qint64(37));
    QCOMPARE(run.state.step, qint64(37));
    // Already at the budget: nothing more to do.
    QCOMPARE(run.train(cfg, d).steps, qint64(0));
    QCOMPARE(run.state.step, qint64(37));
}

void TestTraining::epochBudget()
{
    QCOMPARE(Trainer::stepsPerEpoch(96, 32), qint64(3));
    QCOMPARE(Trainer::stepsPerEpoch(96, 0), qint64(1));
    QCOMPARE(Trainer::stepsPerEpoch(96, 500), qint64(1));
    QCOMPARE(Trainer::stepsPerEpoch(1, 1), qint64(1));
    const int64_t spe = Trainer::stepsPerEpoch(100, 32); // with a short last batch
    QVERIFY(spe == 3 || spe == 4);

    Dataset d = regression(b(), 1, 100);
    TrainerConfig cfg = constantConfig("adam", 0.01f);
    cfg.batchSize = 32;
    cfg.epochs = 5;
    Run run(b(), 2, "dense:4,tanh,dense:1", 1, 1, cfg);
    const TrainResult r = run.train(cfg, d);
    QVERIFY2(r.reason == StopReason::Finished, describe(r));
    QCOMPARE(r.steps, 5 * spe);
    QCOMPARE(run.state.epoch, qint64(5));
    QCOMPARE(run.state.stepInEpoch, qint64(0));
    QCOMPARE(run.state.history.size(), size_t(5));
}

void TestTraining::timeBudget()
{
    Dataset d = regression(b(), 1, 512);
    TrainerConfig cfg = constantConfig("adam", 0.001f);
    cfg.maxSeconds = 0.4;
    Run run(b(), 2, "dense:64,tanh,dense:64,tanh,dense:1", 1, 1, cfg);
    const auto start = std::chrono::steady_clock::now();
    const TrainResult r = run.train(cfg, d);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    QVERIFY2(r.reason == StopReason::TimeBudget, describe(r));
    QVERIFY(r.steps > 0);
    QVERIFY2(r.seconds >= 0.4 && r.seconds < 1.5, qPrintable(QString::number(r.seconds)));
    QVERIFY2(wall < 3.0, qPrintable(QString::number(wall)));
}

void TestTraining::badDataShapesThrow()
{
    Dataset d = regression(b(), 1, 16);
    TrainerConfig cfg = constantConfig("adam", 0.01f);
    cfg.steps = 3;
    Run wide(b(), 3, "dense:1", 1, 1, cfg); // expects 3 input columns, the data has 2
    QVERIFY_THROWS_EXCEPTION(EngineError, wide.train(cfg, d));
    Run twoOut(b(), 2, "dense:2", 2, 1, cfg); // 2 outputs, 1 target column
    QVERIFY_THROWS_EXCEPTION(EngineError, twoOut.train(cfg, d));
}

// ---- schedules and clipping
// ----------------------------------------------------------------------

void TestTraining::learningRateSchedules_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<qint64>("step");
    QTest::addColumn<qint64>("total");
    QTest::addColumn<double>("expected");
    // lrMax 0.1, lrMin 0.01, step decay: gamma 0.5 every 100 steps.
    const int c = int(ScheduleKind::Constant), s = int(ScheduleKind::StepDecay),
              cos = int(ScheduleKind::Cosine);
    QTest::newRow("constant t=0") << c << qint64(0) << qint64(1000) << 0.1;
    QTest::newRow("constant t=999") << c << qint64(999) << qint64(1000) << 0.1;
    QTest::newRow("step t=0") << s << qint64(0) << qint64(1000) << 0.1;
    QTest::newRow("step t=99") << s << qint64(99) << qint64(1000) << 0.1;
    QTest::newRow("step t=100") << s << qint64(100) << qint64(1000) << 0.05;
    QTest::newRow("step t=250") << s << qint64(250) << qint64(1000) << 0.025;
    QTest::newRow("cosine t=0") << cos << qint64(0) << qint64(1000) << 0.1;
    QTest::newRow("cosine t=T/4") << cos << qint64(250) << qint64(1000) << 0.0868198051533946;
    QTest::newRow("cosine t=T/2") << cos << qint64(500) << qint64(1000) << 0.055;
    QTest::newRow("cosine t=T") << cos << qint64(1000) << qint64(1000) << 0.01;
}

void TestTraining::learningRateSchedules()
{
    QFETCH(int, kind);
    QFETCH(qint64, step);
    QFETCH(qint64, total);
    QFETCH(double, expected);
    ScheduleConfig s;
    s.kind = static_cast<ScheduleKind>(kind);
    s.lrMax = 0.1f;
    s.lrMin = 0.01f;
    s.gamma = 0.5f;
    s.stepEvery = 100;
    s.warmupSteps = 0;
    const double lr = learningRate(s, step, total);
    QVERIFY2(std::fabs(lr - expected) < 1e-7,
             qPrintable(QStringLiteral("lr %1, expected %2").arg(lr, 0, 'g', 10).arg(expected)));
}

void TestTraining::warmup()
{
    for (ScheduleKind kind : {ScheduleKind::Constant, ScheduleKind::Cosine}) {
        ScheduleConfig s;
        s.kind = kind;
        s.lrMax = 0.1f;
        s.lrMin = 0.f;
        s.warmupSteps = 10;
        const int64_t total = 100000; // cosine barely moves during the warm-up
        // Step 0 runs at lr_max / warmupSteps, never at 0.
        QVERIFY(std::fabs(learningRate(s, 0, total) - 0.01) < 1e-6);
        double prev = 0;
        for (int64_t t = 0; t < 10; ++t) {
            const double lr = learningRate(s, t, total);
            QVERIFY(lr > prev && lr <= double(s.lrMax));
            prev = lr;
        }
        // After the warm-up: the schedule itself.
        ScheduleConfig plain = s;
        plain.warmupSteps = 0;
        for (int64_t t : {10, 11, 500})
            QVERIFY(std::fabs(learningRate(s, t, total) - learningRate(plain, t, total)) < 1e-9);
        QVERIFY(std::fabs(learningRate(s, 10, total) - 0.1) < 1e-6);
    }
}

void TestTraining::gradientClippingLimitsUpdate()
{
    // Targets of 100: the raw gradient norm is ~200, far above the clip norm of 0.5, so one
    // SGD step moves the weights by exactly lr * 0.5.
    std::vector<float> x, y;
    regressionData(2, 16, 0, x, y);
    for (auto& v : y)
        v = 100.f;
    Dataset d = makeDataset(b(), x, y, 2, 1);
    for (float clip : {0.5f, 0.f}) {
        TrainerConfig cfg = constantConfig("sgd", 0.1f);
        cfg.steps = 1;
        cfg.clipNorm = clip;
        Run run(b(), 2, "dense:1", 1, 1, cfg);
        const auto before = run.weights();
        const TrainResult r = run.train(cfg, d);
        QVERIFY2(r.reason == StopReason::Finished, describe(r));
        const auto after = run.weights();
        double norm = 0;
        for (size_t i = 0; i < after.size(); ++i)
            norm += double(after[i] - before[i]) * (after[i] - before[i]);
        norm = std::sqrt(norm);
        if (clip > 0)
            QVERIFY2(std::fabs(norm - 0.05) < 1e-4, qPrintable(QString::number(norm)));
        else
            QVERIFY2(norm > 10, qPrintable(QString::number(norm)));
    }
}

// ---- the layer-spec language
// ---------------------------------------------------------------------

void TestTraining::layerSpecErrors_data()
{
    QTest::addColumn<QString>("spec");
    QTest::addColumn<qint64>("outputWidth");
    QTest::addColumn<QStringList>("mentions"); // the message must contain each
    QTest::newRow("bad units") << "dense:8,dense:abc" << qint64(0) << QStringList{"dense:abc", "2"};
    QTest::newRow("unknown") << "dense:8,foo,dense:1" << qint64(1) << QStringList{"foo", "2"};
    QTest::newRow("zero units") << "dense:0" << qint64(0) << QStringList{"dense:0"};
    QTest::newRow("negative w0") << "dense:4,sine:-3,dense:1" << qint64(1)
                                 << QStringList{"sine:-3"};
    QTest::newRow("embedding not first")
        << "dense:8,embedding:27:10,dense:1" << qint64(1) << QStringList{"embedding"};
    QTest::newRow("last dense width")
        << "dense:8,tanh,dense:3" << qint64(1) << QStringList{"dense:3"};
    QTest::newRow("bare dense without width")
        << "dense:8,tanh,dense" << qint64(0) << QStringList{"dense"};
    QTest::newRow("empty item") << "dense:8,,dense:1" << qint64(1) << QStringList{"2"};
    QTest::newRow("bad init") << "dense:8:foo,dense:1" << qint64(1) << QStringList{"foo"};
    QTest::newRow("bad fourier") << "fourier:abc,dense:1" << qint64(1)
                                 << QStringList{"fourier:abc"};
    QTest::newRow("embedding without vocab")
        << "embedding:10,dense:1" << qint64(1) << QStringList{"embedding"};
    QTest::newRow("extra field") << "tanh:3,dense:1" << qint64(1) << QStringList{"tanh:3"};
    QTest::newRow("empty") << "" << qint64(1) << QStringList{};
    QTest::newRow("merge without positions") << "dense:8,merge:2,dense:1" << qint64(1)
                                             << QStringList{"merge:2", "not made of positions"};
    QTest::newRow("merge that does not divide")
        << "embedding:5:4,merge:2,dense:1" << qint64(1) << QStringList{"merge:2", "3 positions"};
    QTest::newRow("positions left at the output")
        << "embedding:5:2,merge:1,dense:1" << qint64(1) << QStringList{"3 positions", "merge"};
    QTest::newRow("batchnorm momentum")
        << "dense:4,batchnorm:2,dense:1" << qint64(1) << QStringList{"batchnorm:2", "momentum"};
}

void TestTraining::layerSpecErrors()
{
    QFETCH(QString, spec);
    QFETCH(qint64, outputWidth);
    QFETCH(QStringList, mentions);
    QString message;
    try {
        // Through Network, so a check made when the layers are stacked counts too.
        Network net(b(), 3, spec.toStdString(), outputWidth);
        QFAIL(qPrintable("accepted: " + spec));
    } catch (const EngineError& e) {
        message = QString::fromUtf8(e.what());
    }
    QVERIFY(!message.isEmpty());
    for (const QString& m : mentions)
        QVERIFY2(message.contains(m), qPrintable(message + "  (should mention " + m + ")"));
}

void TestTraining::layerSpecValid()
{
    auto layers = parseLayerSpec(" dense : 16 , tanh,dense:1 ", 1);
    QCOMPARE(layers.size(), size_t(3));
    QCOMPARE(QString::fromStdString(layers[0]->spec()), QStringLiteral("dense:16"));
    QCOMPARE(QString::fromStdString(layers[1]->kind()), QStringLiteral("tanh"));
    QCOMPARE(layers[0]->outputWidth(5), qint64(16));

    layers = parseLayerSpec("dense:32,sine,dense:32,sine:5,dense", 4);
    QCOMPARE(layers.size(), size_t(5));
    QCOMPARE(layers[1]->activation(), Activation::Sine);
    QCOMPARE(layers[1]->activationParam(), 30.f);
    QCOMPARE(layers[3]->activationParam(), 5.f);
    QCOMPARE(layers[4]->outputWidth(32), qint64(4)); // bare final dense = the output width

    layers = parseLayerSpec("leakyrelu,leakyrelu:0.2,relu,sigmoid,dense:2");
    QCOMPARE(layers[0]->activation(), Activation::LeakyReLU);
    QCOMPARE(layers[0]->activationParam(), 0.01f);
    QCOMPARE(layers[1]->activationParam(), 0.2f);
    QCOMPARE(layers[2]->activation(), Activation::ReLU);
    QCOMPARE(layers[3]->activation(), Activation::Sigmoid);

    layers = parseLayerSpec("fourier:256:10,dense:1");
    QCOMPARE(QString::fromStdString(layers[0]->kind()), QStringLiteral("fourier"));
    QCOMPARE(layers[0]->outputWidth(2), qint64(512));

    layers = parseLayerSpec("embedding:10,dense:8,tanh,dense", 27, 27); // vocab from the data
    QCOMPARE(QString::fromStdString(layers[0]->kind()), QStringLiteral("embedding"));
    QCOMPARE(layers[0]->outputWidth(3), qint64(30));
    QCOMPARE(layers[0]->parameters(3).at(0).shape, (Shape{27, 10}));

    // Round trip: a network's spec parses back to the same spec.
    Network net(b(), 2, "dense:16,tanh,dense:8,relu,dense", 3);
    QCOMPARE(QString::fromStdString(Network(b(), 2, net.spec(), 3).spec()),
             QString::fromStdString(net.spec()));
    QVERIFY(!layerSpecHelp().empty());
}

void TestTraining::zeroInitialisedLastLayer()
{
    // dense::zero: the last layer starts at 0, so the network predicts 0 everywhere at first,
    // while the hidden layers keep their random start; the spec keeps the choice.
    Network net(b(), 2, "fourier:16:10,dense:8,relu,dense::zero", 1);
    QCOMPARE(QString::fromStdString(net.spec()),
             QStringLiteral("fourier:16:10,dense:8,relu,dense:1:zero"));
    net.initialize(3);
    const std::vector<float> p = toHost(b(), net.parameters());
    const size_t hidden = 8 * 32 + 8, last = 8 + 1;
    QCOMPARE(p.size(), hidden + last);
    QVERIFY(std::any_of(p.begin(), p.begin() + 8 * 32, [](float v) { return v != 0.f; }));
    QVERIFY(std::all_of(p.end() - last, p.end(), [](float v) { return v == 0.f; }));
    Rng rng(5);
    Buffer x = toDevice(b(), testutil::randomVector(rng, 2 * 9, -1, 1));
    const std::vector<float> y = toHost(b(), net.forward(x.view(9, 2)));
    QVERIFY(std::all_of(y.begin(), y.end(), [](float v) { return v == 0.f; }));
}

void TestTraining::predictMatchesForward()
{
    // Inference in chunks gives the rows a single forward gives.
    Network net(b(), 3, "dense:8,tanh,dense:2", 2);
    net.initialize(4);
    Rng rng(4);
    const auto hx = testutil::randomVector(rng, 3 * 37, -1, 1);
    Buffer x = toDevice(b(), hx);
    const auto whole = toHost(b(), net.forward(x.view(37, 3)));
    Buffer out = testutil::filledBuffer(b(), 2 * 37, NAN);
    net.predict(x.view(37, 3), out.view(37, 2), 5);
    IL_COMPARE_CLOSE(toHost(b(), out.view(37, 2)), whole, 1e-6, 1e-6);
}

// After merge:2 a dense layer reads each pair of consecutive characters with the same weights
// (makemore's FlattenConsecutive + Linear); the next merge:2 pairs the pairs.
void TestTraining::mergeFeedsPerPositionDense()
{
    Network net(b(), 4, "embedding:5:2,merge:2,dense:3,merge:2,dense:2", 2, 5);
    net.initialize(9);
    QCOMPARE(net.outputWidth(), int64_t(2));
    const auto& layers = net.layers();
    QCOMPARE(layers[2]->params()[0].shape, (Shape{3, 4})); // a pair of 2-number characters
    QCOMPARE(layers[4]->params()[0].shape, (Shape{2, 6})); // a pair of 3-number pairs
    const std::vector<float> ids = {1, 4, 0, 3, 2, 2, 4, 1};
    Buffer x = toDevice(b(), ids);
    const auto y = toHost(b(), net.forward(x.view(2, 4)));
    const auto table = toHost(b(), layers[0]->params()[0]);
    const auto w1 = toHost(b(), layers[2]->params()[0]), b1 = toHost(b(), layers[2]->params()[1]);
    const auto w2 = toHost(b(), layers[4]->params()[0]), b2 = toHost(b(), layers[4]->params()[1]);
    for (int r = 0; r < 2; ++r) {
        std::vector<double> hidden; // two pairs of three
        for (int pair = 0; pair < 2; ++pair)
            for (int u = 0; u < 3; ++u) {
                double s = b1[u];
                for (int k = 0; k < 4; ++k) { // the pair's two characters, two numbers each
                    const int id = static_cast<int>(ids[r * 4 + pair * 2 + k / 2]);
                    s += double(w1[u * 4 + k]) * table[id * 2 + k % 2];
                }
                hidden.push_back(s);
            }
        for (int o = 0; o < 2; ++o) {
            double s = b2[o];
            for (int k = 0; k < 6; ++k)
                s += double(w2[o * 6 + k]) * hidden[k];
            QVERIFY2(
                std::fabs(y[r * 2 + o] - s) < 1e-5,
                qPrintable(
                    QString("row %1 output %2: %3 vs %4").arg(r).arg(o).arg(y[r * 2 + o]).arg(s)));
        }
    }
}

// Batch norm keeps running statistics: training forwards move them by the momentum toward the
// batch's mean and unbiased variance; inference (predict, evaluation) uses them and changes
// nothing.
void TestTraining::batchNormRunningStatistics()
{
    Network net(b(), 2, "batchnorm:0.5,dense:1", 1);
    net.initialize(1);
    const auto& bn = net.layers()[0];
    QCOMPARE(bn->params().size(), size_t(4)); // weight, bias, running_mean, running_var
    const std::vector<float> hx = {1, 10, 3, 20, 5, 30, 7, 40}; // 4 rows, 2 columns
    Buffer x = toDevice(b(), hx);
    net.forward(x.view(4, 2)); // batch means 4 and 25, unbiased variances 20/3 and 500/3
    auto mean = toHost(b(), bn->params()[2]), var = toHost(b(), bn->params()[3]);
    QVERIFY(std::fabs(mean[0] - 2.f) < 1e-5 && std::fabs(mean[1] - 12.5f) < 1e-4);
    QVERIFY(std::fabs(var[0] - (0.5f + 10.f / 3)) < 1e-4 &&
            std::fabs(var[1] - (0.5f + 250.f / 3)) < 1e-3);
    const auto training = toHost(b(), net.forward(x.view(4, 2)));
    mean = toHost(b(), bn->params()[2]);
    QVERIFY(std::fabs(mean[0] - 3.f) < 1e-5); // 0.5 * 2 + 0.5 * 4
    const auto before = toHost(b(), net.parameters());
    const auto fixedBefore = toHost(b(), bn->params()[3]);
    Buffer out = testutil::filledBuffer(b(), 4, NAN);
    net.predict(x.view(4, 2), out.view(4, 1));
    QVERIFY(testutil::bitIdentical(toHost(b(), bn->params()[3]), fixedBefore));
    QVERIFY(testutil::bitIdentical(toHost(b(), net.parameters()), before));
    const auto inference = toHost(b(), out.view(4, 1));
    IL_COMPARE_CLOSE(inference, toHost(b(), net.forward(x.view(4, 2), false)), 0, 0);
    QVERIFY2(std::fabs(inference[0] - training[0]) > 1e-3,
             "inference used the batch's statistics, not the running ones");
}

// Dropout zeroes about p of the numbers in a training forward (a new mask each time, the kept ones
// scaled by 1 / (1 - p)) and passes everything through at inference.
void TestTraining::dropoutWhileTrainingOnly()
{
    Network net(b(), 64, "dropout:0.25,dense:1", 1);
    net.initialize(2);
    Rng rng(5);
    const auto hx = testutil::randomVector(rng, 64 * 64, 0.5, 1.5); // never 0
    Buffer x = toDevice(b(), hx);
    const auto masked = [&] {
        net.forward(x.view(64, 64));
        return toHost(b(), net.layerOutput(0));
    };
    const auto first = masked(), second = masked();
    int zeros = 0;
    for (size_t i = 0; i < first.size(); ++i) {
        if (first[i] == 0.f)
            ++zeros;
        else
            QVERIFY(std::fabs(first[i] - hx[i] / 0.75f) < 1e-5f);
    }
    QVERIFY2(zeros > 4096 * 0.21 && zeros < 4096 * 0.29, qPrintable(QString::number(zeros)));
    QVERIFY2(first != second, "two training forwards drew the same mask");
    net.forward(x.view(64, 64), false);
    QVERIFY(testutil::bitIdentical(toHost(b(), net.layerOutput(0)), hx));
}

void TestTraining::namesRoundTrip()
{
    for (const OptimizerType& t : optimizerTypes()) {
        QCOMPARE(findOptimizer(t.name), &t);
        for (const std::string& alias : t.aliases)
            QCOMPARE(findOptimizer(alias), &t);
    }
    QCOMPARE(findOptimizer("sgd-momentum"), findOptimizer("momentum"));
    for (auto k : {ScheduleKind::Constant, ScheduleKind::StepDecay, ScheduleKind::Cosine}) {
        ScheduleKind back =
            k == ScheduleKind::Cosine ? ScheduleKind::Constant : ScheduleKind::Cosine;
        QVERIFY(parseSchedule(scheduleName(k), back));
        QCOMPARE(back, k);
    }
    for (auto k :
         {LossKind::MSE, LossKind::MAE, LossKind::BinaryCrossEntropy, LossKind::CrossEntropy}) {
        LossKind back = k == LossKind::MSE ? LossKind::MAE : LossKind::MSE;
        QVERIFY(parseLoss(lossName(k), back));
        QCOMPARE(back, k);
    }
    QVERIFY(!findOptimizer("adamax"));
    LossKind l;
    QVERIFY(!parseLoss("hinge", l));
}

void TestTraining::optimizerRegistry()
{
    for (const OptimizerType& t : optimizerTypes()) {
        const OptimizerConfig c(t);
        QCOMPARE(c.name(), std::string(t.name));
        for (const OptimizerSetting& s : t.settings) {
            QVERIFY2(s.min <= s.defaultValue && s.defaultValue <= s.max, s.key);
            QCOMPARE(c.value(s.key), s.defaultValue);
        }
        Optimizer opt(b(), c, 10);
        const auto state = opt.state();
        QCOMPARE(state.size(), t.state.size());
        for (size_t i = 0; i < state.size(); ++i)
            QCOMPARE(state[i].first, "optimizer." + std::string(t.state[i]));
    }
    // Equality covers every setting.
    OptimizerConfig a = OptimizerConfig::named("adam"), other = a;
    QVERIFY(a == other);
    other.set("eps", 1e-6f);
    QVERIFY(a != other);
    QVERIFY(OptimizerConfig::named("adam") != OptimizerConfig::named("adamw"));
    QVERIFY_THROWS_EXCEPTION(EngineError, a.set("momentum", 0.5f));
    QVERIFY_THROWS_EXCEPTION(EngineError, a.set("beta1", 1.5f));
    QVERIFY_THROWS_EXCEPTION(EngineError, OptimizerConfig::named("adamax"));
    // Switching keeps chosen values and takes the new defaults for values left at the old ones.
    const OptimizerType& adamw = *findOptimizer("adamw");
    QCOMPARE(a.switchedTo(adamw).value("weight_decay"), 0.01f);
    a.set("weight_decay", 0.05f);
    QCOMPARE(a.switchedTo(*findOptimizer("sgd")).value("weight_decay"), 0.05f);
    // Adam's L2 penalty and AdamW's decoupled decay are different quantities: neither carries
    // over to the other (the tables' AdamW decay 1 would be a heavy L2 penalty for Adam).
    QCOMPARE(a.switchedTo(adamw).value("weight_decay"), 0.01f);
    OptimizerConfig w(adamw);
    w.set("weight_decay", 1.f);
    QCOMPARE(w.switchedTo(*findOptimizer("adam")).value("weight_decay"), 0.f);
    QCOMPARE(w.switchedTo(*findOptimizer("sgd")).value("weight_decay"), 0.f);
    w.set("beta1", 0.8f); // a setting of the same meaning still carries over
    QCOMPARE(w.switchedTo(*findOptimizer("adam")).value("beta1"), 0.8f);
}

QTEST_GUILESS_MAIN(TestTraining)
// The guide's page on the layer language (docs/guide/layer-language.md) names every layer type
// and every optimizer of the registries, so a new one is documented where users look.
void TestTraining::registriesAreInTheGuide()
{
    QFile file(IRONLEARN_FIXTURES "/../../docs/guide/layer-language.md");
    QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(file.fileName()));
    const QString guide = QString::fromUtf8(file.readAll());
    const auto named = [&](const std::string& name) {
        return QRegularExpression("`" + QRegularExpression::escape(QString::fromStdString(name)) +
                                  "[`:\\[]")
            .match(guide)
            .hasMatch();
    };
    for (const LayerType& t : layerTypes())
        QVERIFY2(named(t.name), qPrintable("the guide has no `" + QString::fromStdString(t.name) +
                                           "`: add its row to the layer-language table"));
    for (const OptimizerType& t : optimizerTypes())
        QVERIFY2(named(t.name), qPrintable("the guide has no `" + QString::fromStdString(t.name) +
                                           "`: add it to the list of optimizers"));
}

#include "TestTraining.moc"
