// What the trainer does for device backends, checked with test doubles over the CPU backend
// (tests/support/ForwardingBackend.h), so it runs on every machine:
// - recorded steps (CUDA graphs) replay to exactly the weights of a run that issued every op,
//   including a short last batch and a validation pass that moves the activation buffers;
// - a device that fails mid-run stops training with DeviceFailure, the counters rewound to the
//   last host copy, and that copy rebuilt on the CPU continues to the same weights as
//   a run that never failed.
#include "ForwardingBackend.h"
#include "HostCopy.h"
#include "Network.h"
#include "Optimizer.h"
#include "Random.h"
#include "TestUtil.h"
#include "Trainer.h"

#include <QRegularExpression>
#include <QTest>

#include <memory>

using namespace il;
using testsupport::FaultyBackend;
using testsupport::RecordingBackend;

namespace {

const std::string kSpec = "dense:8,tanh,dense:8,tanh,dense:1";

struct Data {
    Buffer x, y, vx, vy;
    int64_t rows = 0, valRows = 0;
    TrainingData view() const
    {
        TrainingData d;
        d.trainX = x.view(rows, 2);
        d.trainY = y.view(rows, 1);
        if (valRows > 0) {
            d.valX = vx.view(valRows, 2);
            d.valY = vy.view(valRows, 1);
        }
        return d;
    }
};

void makeRows(uint64_t seed, int64_t rows, std::vector<float>& x, std::vector<float>& y)
{
    Rng rng(seed);
    for (int64_t i = 0; i < rows; ++i) {
        const double a = rng.uniform(-1, 1), b = rng.uniform(-1, 1);
        x.push_back(static_cast<float>(a));
        x.push_back(static_cast<float>(b));
        y.push_back(static_cast<float>(std::sin(3 * a) * b + 0.1 * rng.normal()));
    }
}

Data makeData(Backend& b, int64_t rows, int64_t valRows)
{
    std::vector<float> x, y, vx, vy;
    makeRows(3, rows, x, y);
    makeRows(4, valRows, vx, vy);
    Data d;
    d.rows = rows;
    d.valRows = valRows;
    d.x = testutil::toDevice(b, x);
    d.y = testutil::toDevice(b, y);
    d.vx = testutil::toDevice(b, vx);
    d.vy = testutil::toDevice(b, vy);
    return d;
}

TrainerConfig config()
{
    TrainerConfig c;
    c.loss = LossKind::MSE;
    c.optimizer = OptimizerConfig::named("adam");
    c.schedule.kind = ScheduleKind::Cosine;
    c.schedule.lrMax = 0.02f;
    c.clipNorm = 1.f;
    c.batchSize = 24; // 64 rows: batches of 24, 24 and a short one of 16
    c.epochs = 6;
    return c;
}

// Progress reports at epoch ends only.
RunPolicy quiet()
{
    RunPolicy p;
    p.progressInterval = 1e9;
    return p;
}

struct Model {
    std::unique_ptr<Network> net;
    std::unique_ptr<Optimizer> opt;
    TrainingState state;

    Model(Backend& b, const TrainerConfig& cfg)
        : net(std::make_unique<Network>(b, 2, kSpec, 1)),
          opt(std::make_unique<Optimizer>(b, cfg.optimizer, net->parameterRanges()))
    {
        net->initialize(7);
    }
    TrainResult train(const TrainerConfig& cfg, const Data& d, const RunPolicy& policy = quiet())
    {
        Trainer t(*net, *opt, cfg, state, policy);
        return t.run(d.view());
    }
    std::vector<float> weights() const
    {
        return testutil::toHost(net->backend(), net->parameters());
    }
};

} // namespace

class TestDeviceRecovery : public QObject {
    Q_OBJECT

private slots:
    void recordedStepsMatchDirectRun();
    void recordingIsOffWhenAsked();
    void readsBackEveryKSteps();
    void deviceFailureKeepsLastGoodWeights();
    void hostCopyRestoresIntoSameArchitectureOnly();
};

void TestDeviceRecovery::recordedStepsMatchDirectRun()
{
    auto cpu = createCpuBackend(1);
    const Data cpuData = makeData(*cpu, 64, 100);
    Model direct(*cpu, config());
    direct.train(config(), cpuData);

    RecordingBackend rec(createCpuBackend(1));
    const Data recData = makeData(rec, 64, 100);
    Model replayed(rec, config());
    const TrainResult r = replayed.train(config(), recData);
    QCOMPARE(r.reason, StopReason::Finished);

    // Full and short batches were recorded, and recorded again after validation (100 rows)
    // made the activation buffers grow; almost every step was a replay.
    QVERIFY2(rec.recorded >= 3, qPrintable(QString::number(rec.recorded)));
    QVERIFY2(rec.replays >= 6 * 3 - 4, qPrintable(QString::number(rec.replays)));
    QVERIFY(rec.discards >= 2);
    QVERIFY(testutil::bitIdentical(direct.weights(), replayed.weights()));
    QCOMPARE(replayed.state.history.size(), direct.state.history.size());
    for (size_t i = 0; i < direct.state.history.size(); ++i) {
        QCOMPARE(replayed.state.history[i].trainLoss, direct.state.history[i].trainLoss);
        QCOMPARE(replayed.state.history[i].valLoss, direct.state.history[i].valLoss);
    }
}

void TestDeviceRecovery::recordingIsOffWhenAsked()
{
    RecordingBackend rec(createCpuBackend(1));
    const Data d = makeData(rec, 64, 0);
    TrainerConfig cfg = config();
    RunPolicy policy = quiet();
    policy.recordSteps = false;
    Model m(rec, cfg);
    m.train(cfg, d, policy);
    QCOMPARE(rec.recorded, 0);
    QCOMPARE(rec.replays, 0);
}

// On a device every read of the loss waits for the GPU. Without a progress callback the trainer
// reads every readEvery steps (and at epoch ends), never more; on a device at most every 25.
void TestDeviceRecovery::readsBackEveryKSteps()
{
    struct CountingBackend : testsupport::ForwardingBackend {
        CountingBackend(bool device) : ForwardingBackend(createCpuBackend(1)), device(device) {}
        using ForwardingBackend::download;
        bool memoryOnHost() const override { return !device; }
        void download(void* h, const void* d, size_t bytes) override
        {
            ++downloads;
            ForwardingBackend::download(h, d, bytes);
        }
        bool device;
        int downloads = 0;
    };
    auto reads = [](bool device, int64_t readEvery, int64_t batch, int64_t steps) {
        CountingBackend counting(device);
        const Data d = makeData(counting, 64, 0);
        TrainerConfig cfg = config();
        cfg.batchSize = batch;
        cfg.steps = steps;
        RunPolicy policy;
        policy.readEvery = readEvery;
        policy.progressInterval = 0;  // would report every step, if anyone listened
        policy.hostCopySeconds = 1e9; // on a device: one host copy, at the start
        Model m(counting, cfg);
        counting.downloads = 0;
        m.train(cfg, d, policy);
        return counting.downloads;
    };
    // Each run first reads the targets once (one chunk here), for the watch's baseline loss
    // (TrainingWatch.h); the watch's windows end at steps 25 and 50, where reads happen anyway.
    QCOMPARE(reads(false, 4, 8, 16), 1 + 4); // after steps 4, 8 (epoch end), 12 and 16
    QCOMPARE(reads(false, 1, 2, 50), 1 + 50);
    // On a device, asked for every step: the targets, the host copy at the start (6 network
    // tensors, Adam's m and v), then reads after steps 25, 32 (the epoch end) and 50 (the last).
    QCOMPARE(reads(true, 1, 2, 50), 1 + 8 + 3);
}

void TestDeviceRecovery::deviceFailureKeepsLastGoodWeights()
{
    TrainerConfig cfg = config();
    RunPolicy policy = quiet();
    policy.readEvery = 8;
    policy.hostCopySeconds = 0; // a host copy at every read: the first step, then every 8 steps
    cfg.batchSize = 8;          // 8 steps per epoch
    // Constant rate: a reference run of fewer steps then sees the same learning rates.
    cfg.schedule.kind = ScheduleKind::Constant;
    const int64_t totalSteps = cfg.epochs * 8;

    // The "GPU" faults in the middle of the second epoch: a step takes 8 or 9 matrix products
    // (3 forward, 3 weight gradients, the input gradients), so the 99th falls in step 11 to
    // 13, after the host copy at the end of epoch 1 and before the next one.
    FaultyBackend gpu(createCpuBackend(1), 98);
    const Data gpuData = makeData(gpu, 64, 0);
    Model onGpu(gpu, cfg);
    const TrainResult r = onGpu.train(cfg, gpuData, policy);
    QVERIFY(gpu.failed());
    QCOMPARE(r.reason, StopReason::DeviceFailure);
    QVERIFY(r.lastGood);
    const int64_t kept = r.lastGood->state.step;
    QVERIFY2(kept > 0 && kept < totalSteps, qPrintable(QString::number(kept)));
    const QString message = QString::fromStdString(r.message);
    const auto failedAt =
        QRegularExpression("failed at step (\\d+)").match(message).captured(1).toLongLong();
    QVERIFY2(failedAt - 1 > kept, qPrintable(message)); // steps were done after the copy...
    QCOMPARE(onGpu.state.step, kept); // ...and the counters went back to the kept weights
    QVERIFY2(message.contains("the device failed at step") &&
                 message.contains("illegal memory access") &&
                 message.contains(QString("weights after step %1 were kept").arg(kept)) &&
                 message.contains("continue on the CPU"),
             qPrintable(message));

    // Rebuilt on the CPU: exactly the weights of a CPU run of `kept` steps...
    auto cpu = createCpuBackend(1);
    MovedModel moved = moveModel(*onGpu.net, cfg.optimizer, *r.lastGood, *cpu);
    QCOMPARE(moved.state.step, kept);
    const Data cpuData = makeData(*cpu, 64, 0);
    Model reference(*cpu, cfg);
    TrainerConfig part = cfg;
    part.steps = kept;
    reference.train(part, cpuData, policy);
    QVERIFY(testutil::bitIdentical(testutil::toHost(*cpu, moved.network->parameters()),
                                   reference.weights()));

    // ...and training on from there ends where a run that never failed ends.
    Trainer onward(*moved.network, *moved.optimizer, cfg, moved.state, policy);
    QCOMPARE(onward.run(cpuData.view()).reason, StopReason::Finished);
    Model straight(*cpu, cfg);
    straight.train(cfg, cpuData, policy);
    QCOMPARE(moved.state.step, totalSteps);
    QVERIFY(testutil::bitIdentical(testutil::toHost(*cpu, moved.network->parameters()),
                                   straight.weights()));
}

void TestDeviceRecovery::hostCopyRestoresIntoSameArchitectureOnly()
{
    auto cpu = createCpuBackend(1);
    const TrainerConfig cfg = config();
    Model a(*cpu, cfg);
    const HostCopy s = takeHostCopy(*a.net, *a.opt, a.state);
    QCOMPARE(s.tensors.size(), a.net->namedTensors().size());
    QCOMPARE(s.optimizer.size(), size_t(2)); // Adam's m and v

    Network other(*cpu, 2, "dense:9,tanh,dense:8,tanh,dense:1", 1);
    Optimizer otherOpt(*cpu, cfg.optimizer, other.parameterRanges());
    try {
        restoreHostCopy(s, other, otherOpt);
        QFAIL("a host copy of another architecture was accepted");
    } catch (const EngineError& e) {
        QVERIFY2(QString(e.what()).contains("layers.0.weight"), e.what());
    }
}

QTEST_GUILESS_MAIN(TestDeviceRecovery)
#include "TestDeviceRecovery.moc"
