// Parameter groups (Optimizer.h): a hash grid's tables train with their group's learning rate,
// β₂, ε and weight decay while the rest of the network takes the run's, checked against Adam
// worked out by hand in double; the network's ranges; the group settings' checks.
#include "Errors.h"
#include "Network.h"
#include "Optimizer.h"
#include "TestUtil.h"
#include "Trainer.h"

#include <QTest>

#include <cmath>

using namespace il;
using testutil::toDevice;
using testutil::toHost;

namespace {

struct AdamSettings {
    double lr, beta1, beta2, eps, weightDecay;
};

// Two steps of Adam (L2 weight decay) on one weight, in double.
double adamByHand(double w, double g1, double g2, const AdamSettings& s, double lr2)
{
    double m = 0, v = 0;
    const double grads[2] = {g1, g2}, lrs[2] = {s.lr, lr2};
    for (int t = 1; t <= 2; ++t) {
        const double g = grads[t - 1] + s.weightDecay * w;
        m = s.beta1 * m + (1 - s.beta1) * g;
        v = s.beta2 * v + (1 - s.beta2) * g * g;
        const double mHat = m / (1 - std::pow(s.beta1, t)), vHat = v / (1 - std::pow(s.beta2, t));
        w -= lrs[t - 1] * mHat / (std::sqrt(vHat) + s.eps);
    }
    return w;
}

} // namespace

class TestParameterGroups : public QObject {
    Q_OBJECT

private slots:
    void networkRangesFollowGroups();
    void tablesTrainWithTheirOwnSettings();
    void groupSettingsAreChecked();
    void otherOptimizersKeepTheGroups();
    void recoveryLowersTheTablesToo();
};

void TestParameterGroups::networkRangesFollowGroups()
{
    auto cpu = createCpuBackend(1);
    // 2 levels x 16 rows x 1 feature, then dense 2 -> 1 (2 weights, 1 bias).
    Network net(*cpu, 2, "hashgrid:2:1:4:2:2,dense:1", 1);
    const auto& ranges = net.parameterRanges();
    QCOMPARE(ranges.size(), size_t(2));
    QCOMPARE(ranges[0].group, std::string("grid_tables"));
    QCOMPARE(ranges[0].offset, int64_t(0));
    QCOMPARE(ranges[0].count, int64_t(32));
    QCOMPARE(ranges[1].group, std::string());
    QCOMPARE(ranges[1].offset, int64_t(32));
    QCOMPARE(ranges[1].count, int64_t(3));
    Network mlp(*cpu, 2, "dense:4,relu,dense:1", 1);
    QCOMPARE(mlp.parameterRanges().size(), size_t(1));
    QCOMPARE(mlp.parameterRanges()[0].count, mlp.parameterCount());
}

// Two steps on a tiny net with made-up gradients: each table entry moves as Adam with the
// group's settings would move it, each MLP weight as Adam with the run's.
void TestParameterGroups::tablesTrainWithTheirOwnSettings()
{
    auto cpu = createCpuBackend(1);
    Network net(*cpu, 2, "hashgrid:1:1:4:1:1,dense:1", 1); // 16 table entries, then 2 MLP
    net.initialize(3);
    const int64_t n = net.parameterCount(), tables = net.parameterRanges()[0].count;
    QCOMPARE(tables, int64_t(16));
    OptimizerConfig config = OptimizerConfig::named("adam");
    config.set("eps", 0.05f); // large enough to show in the MLP's steps
    config.set("weight_decay", 0.5f);
    config.setGroupLr("grid_tables", 0.4f);
    config.setGroupSetting("grid_tables", "beta2", 0.5f); // the defaults keep eps 1e-15, wd 0
    Optimizer opt(*cpu, config, net.parameterRanges());

    Rng rng(11);
    const std::vector<float> w0 = toHost(*cpu, net.parameters());
    const std::vector<float> g1 = testutil::randomVector(rng, static_cast<size_t>(n), -1, 1),
                             g2 = testutil::randomVector(rng, static_cast<size_t>(n), -1, 1);
    Buffer grads = toDevice(*cpu, g1);
    // The run's schedule at half its peak of 0.02 on the second step: the tables follow it.
    opt.step(net.parameters(), grads.view(1, n), 0.02f, 0.02f, 1, nullptr);
    cpu->upload(grads.data(), g2.data(), g2.size() * sizeof(float));
    opt.step(net.parameters(), grads.view(1, n), 0.01f, 0.02f, 2, nullptr);
    const std::vector<float> w = toHost(*cpu, net.parameters());

    const AdamSettings table{0.4, 0.9, 0.5, 1e-15, 0}, mlp{0.02, 0.9, 0.999, 0.05, 0.5};
    for (int64_t i = 0; i < n; ++i) {
        const auto k = static_cast<size_t>(i);
        const bool inTable = i < tables;
        const double want =
            adamByHand(w0[k], g1[k], g2[k], inTable ? table : mlp, inTable ? 0.2 : 0.01);
        QVERIFY2(std::abs(w[k] - want) <= 1e-5 * (1 + std::abs(want)),
                 qPrintable(QString("parameter %1 (%2): %3, by hand %4")
                                .arg(i)
                                .arg(inTable ? "table" : "MLP")
                                .arg(w[k])
                                .arg(want)));
    }
}

void TestParameterGroups::groupSettingsAreChecked()
{
    OptimizerConfig c;
    QCOMPARE(c.group("grid_tables").lr, 5e-2f);
    QCOMPARE(c.forGroup("grid_tables").value("beta2"), 0.99f);
    QCOMPARE(c.forGroup("grid_tables").value("eps"), 1e-15f);
    QCOMPARE(c.forGroup("").value("beta2"), 0.999f);
    QCOMPARE(c.groupLr("grid_tables", 2e-3f), 5e-2f);
    c.setGroupLr("grid_tables", 0.f); // 0: the run's
    QCOMPARE(c.groupLr("grid_tables", 2e-3f), 2e-3f);
    QVERIFY_THROWS_EXCEPTION(EngineError, c.setGroupLr("grid_tables", -1.f));
    QVERIFY_THROWS_EXCEPTION(EngineError, c.setGroupLr("no_such_group", 1.f));
    QVERIFY_THROWS_EXCEPTION(EngineError, c.setGroupSetting("grid_tables", "beta2", 1.5f));
    QVERIFY_THROWS_EXCEPTION(EngineError, c.setGroupSetting("grid_tables", "no_such_key", 1.f));
    auto cpu = createCpuBackend(1);
    QVERIFY_THROWS_EXCEPTION(EngineError,
                             Optimizer(*cpu, c, std::vector<ParameterRange>{{"", 1, 4}}));
}

// SGD has no β₂ or ε: the tables keep their lr and weight decay 0 there, and the settings come
// back when the run switches to Adam again.
void TestParameterGroups::otherOptimizersKeepTheGroups()
{
    OptimizerConfig adam;
    adam.setGroupLr("grid_tables", 5e-3f);
    OptimizerConfig sgd = adam.switchedTo(*findOptimizer("sgd"));
    sgd.set("weight_decay", 0.1f);
    QCOMPARE(sgd.groupLr("grid_tables", 1.f), 5e-3f);
    QCOMPARE(sgd.forGroup("grid_tables").value("weight_decay"), 0.f);
    QCOMPARE(sgd.forGroup("").value("weight_decay"), 0.1f);
    QCOMPARE(sgd.switchedTo(*findOptimizer("adam")).forGroup("grid_tables").value("eps"), 1e-15f);
}

// A run that recovered from a stall lowered the run's rate, and the tables' with it (they follow
// the run's schedule); the configuration kept for a resume lowers both by the same factor.
void TestParameterGroups::recoveryLowersTheTablesToo()
{
    TrainerConfig config;
    config.schedule.lrMax = 2e-3f;
    config.optimizer.setGroupLr("grid_tables", 1e-2f);
    ScheduleConfig lowered = config.schedule;
    lowered.lrMax = 5e-4f;
    keepLoweredRates(config, lowered);
    QCOMPARE(config.schedule.lrMax, 5e-4f);
    QCOMPARE(config.optimizer.group("grid_tables").lr, 2.5e-3f);
    config.optimizer.setGroupLr("grid_tables", 0.f); // the run's: stays so
    keepLoweredRates(config, lowered);
    QCOMPARE(config.optimizer.group("grid_tables").lr, 0.f);
}

QTEST_GUILESS_MAIN(TestParameterGroups)
#include "TestParameterGroups.moc"
