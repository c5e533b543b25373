// tasks::Model: build, save, open and resume, attach data, choose the optimizer, and the one way
// back to the CPU after a device failure.
#include "../support/ForwardingBackend.h"
#include "TabularTestUtil.h"

#include "BackendRegistry.h"
#include "Model.h"

#include <QTemporaryDir>
#include <QTest>

using namespace il;
using il::tasks::Model;

class TestModel : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void savedModelResumesWhereItStopped();
    void attachRefusesDataOfOtherWidths();
    void anotherOptimizerStartsFresh();
    void recoversOnCpuWithTheLastGoodWeights();
    void recoversOnCpuFromAReadableDevice();

private:
    // A fresh model for the linear table on backend, trained for steps steps.
    std::unique_ptr<Model> trained(std::unique_ptr<Backend> backend, int64_t steps);
    static std::vector<float> weights(const Model& m);
    static TrainResult train(Model& m, int64_t steps);

    QTemporaryDir m_dir;
    std::shared_ptr<tasks::Task> m_task;
};

void TestModel::initTestCase()
{
    QVERIFY(m_dir.isValid());
    QString error;
    tasks::TaskOptions options;
    m_task = tasks::openTask("linear.csv", tasks::test::linear(64), options, &error);
    QVERIFY2(m_task, qPrintable(error));
}

std::vector<float> TestModel::weights(const Model& m)
{
    return m.backend->toHost(m.network->parameters());
}

TrainResult TestModel::train(Model& m, int64_t steps)
{
    m.config.steps = steps;
    m.config.epochs = 0;
    m.upload();
    Trainer trainer(*m.network, *m.optimizer, m.config, m.state);
    return trainer.run(m.trainingData());
}

std::unique_ptr<Model> TestModel::trained(std::unique_ptr<Backend> backend, int64_t steps)
{
    auto m = std::make_unique<Model>();
    m->backend = std::move(backend);
    m->task = m_task;
    m_task->applyDefaults(m->config);
    m->config.schedule.kind = ScheduleKind::Constant; // a shorter run sees the same rates
    m->config.batchSize = 16;
    m->build("dense:8,tanh,dense");
    if (steps > 0) train(*m, steps);
    return m;
}

void TestModel::savedModelResumesWhereItStopped()
{
    auto first = trained(createCpuBackend(1), 10);
    const QString path = m_dir.filePath("linear.safetensors");
    QString error;
    QVERIFY2(first->save(path, m_task->toJson(), &error), qPrintable(error));

    Model resumed;
    resumed.backend = createCpuBackend(1);
    io::ModelInfo info;
    QVERIFY2(resumed.open(path, &info, &error), qPrintable(error));
    QCOMPARE(info.spec, first->network->spec());
    QCOMPARE(resumed.state.step, int64_t(10));
    QVERIFY(resumed.attach(m_task, &error));
    QVERIFY(resumed.makeOptimizer(resumed.config.optimizer, &error)); // the saved state fits
    QCOMPARE(weights(resumed), weights(*first));
    train(resumed, 25);

    auto straight = trained(createCpuBackend(1), 25);
    QCOMPARE(resumed.state.step, int64_t(25));
    QCOMPARE(weights(resumed), weights(*straight)); // bit for bit
}

void TestModel::attachRefusesDataOfOtherWidths()
{
    auto m = trained(createCpuBackend(1), 0);
    QString error;
    tasks::TaskOptions options;
    std::shared_ptr<tasks::Task> other =
        tasks::openTask("classes.csv", tasks::test::threeClasses(30), options, &error);
    QVERIFY2(other, qPrintable(error));
    QVERIFY(!m->attach(other, &error));
    QVERIFY2(error.contains("does not fit the model"), qPrintable(error));
    QCOMPARE(m->task, m_task);
}

void TestModel::anotherOptimizerStartsFresh()
{
    auto first = trained(createCpuBackend(1), 5); // adam by default
    const QString path = m_dir.filePath("optimizer.safetensors");
    QString error;
    QVERIFY2(first->save(path, m_task->toJson(), &error), qPrintable(error));
    Model m;
    m.backend = createCpuBackend(1);
    QVERIFY(m.open(path, nullptr, &error));
    const OptimizerConfig sgd = OptimizerConfig::named("sgd");
    QString note;
    QVERIFY(!m.makeOptimizer(sgd, &note));
    QVERIFY(!note.isEmpty());
    QCOMPARE(m.optimizer->config().name(), std::string("sgd"));
}

void TestModel::recoversOnCpuWithTheLastGoodWeights()
{
    // The "GPU" fails in its 20th matrix product; the trainer's host copy is from the start.
    auto gpu = std::make_unique<testsupport::FaultyBackend>(createCpuBackend(1), 19);
    auto* faulty = gpu.get();
    auto m = trained(std::move(gpu), 0);
    const std::vector<float> initial = weights(*m);
    const TrainResult r = train(*m, 50);
    QVERIFY(faulty->failed());
    QCOMPARE(r.reason, StopReason::DeviceFailure);
    QVERIFY(r.lastGood);
    const int64_t kept = m->recoverOnCpu(createCpuBackend(1), r.lastGood);
    QCOMPARE(kept, r.lastGood->state.step);
    QCOMPARE(m->state.step, kept);
    QVERIFY(m->backend->memoryOnHost());
    QCOMPARE(kept, int64_t(0));
    QCOMPARE(weights(*m), initial);
    // Training goes on on the CPU.
    QCOMPARE(train(*m, 20).reason, StopReason::Finished);
    QCOMPARE(m->state.step, int64_t(20));
}

void TestModel::recoversOnCpuFromAReadableDevice()
{
    // No copy from the trainer (say, the data did not fit on the device): one is taken now.
    auto m = trained(std::make_unique<testsupport::FaultyBackend>(createCpuBackend(1), -1), 0);
    train(*m, 7);
    const std::vector<float> now = weights(*m);
    QCOMPARE(m->recoverOnCpu(createCpuBackend(1), nullptr), int64_t(7));
    QVERIFY(m->backend->memoryOnHost());
    QCOMPARE(weights(*m), now);
}

QTEST_GUILESS_MAIN(TestModel)
#include "TestModel.moc"
