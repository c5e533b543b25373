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
    void wideAndDeepStartsAsTheLinearBaseline_data();
    void wideAndDeepStartsAsTheLinearBaseline();

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

void TestModel::wideAndDeepStartsAsTheLinearBaseline_data()
{
    QTest::addColumn<QByteArray>("csv");
    QTest::addColumn<QString>("metric");   // the network's key in the metrics
    QTest::addColumn<QString>("baseline"); // the linear baseline's key under "baselines"
    QByteArray noisy = "a,b,y\n";          // linear plus a remainder no linear model fits
    for (int i = 0; i < 80; ++i)
        noisy += QByteArray::number(i % 17) + "," + QByteArray::number(i * i % 13) + "," +
                 QByteArray::number(2.0 * (i % 17) - (i * i % 13) + (i * 7 % 5)) + "\n";
    QTest::newRow("least squares") << noisy << "mse"
                                   << "linear_regression";
    QTest::newRow("softmax regression") << tasks::test::threeClasses(90) << "balanced_accuracy"
                                        << "logistic_regression";
}

// A stack ending in dense, skip starts as the linear baseline of its training rows (the task's
// warm start), so before any training it scores what the baseline scores; a reset goes back
// there too.
void TestModel::wideAndDeepStartsAsTheLinearBaseline()
{
    QFETCH(QByteArray, csv);
    QFETCH(QString, metric);
    QFETCH(QString, baseline);
    QString error;
    tasks::TaskOptions options;
    std::shared_ptr<tasks::Task> task = tasks::openTask("t.csv", csv, options, &error);
    QVERIFY2(task, qPrintable(error));
    Model m;
    m.backend = createCpuBackend(1);
    m.task = task;
    task->applyDefaults(m.config);
    m.build("dense:16,tanh,dense:16,tanh,dense,skip");
    const auto check = [&] {
        const QJsonObject v = task->evaluate(*m.network).values;
        const double net = v[metric].toDouble();
        const double lin = v["baselines"][baseline][metric].toDouble();
        QVERIFY2(std::fabs(net - lin) <= 1e-4 * std::max(1.0, std::fabs(lin)),
                 qPrintable(QString("network %1, baseline %2").arg(net).arg(lin)));
        if (metric == "mse") QVERIFY2(lin > 0.1, "the table must leave the linear model an error");
    };
    check();
    train(m, 20);
    m.resetWeights();
    check();
    // Any other stack starts from its own initialisation.
    m.build("dense:16,tanh,dense:16,tanh,dense");
    const QJsonObject v = task->evaluate(*m.network).values;
    QVERIFY(v[metric].toDouble() != v["baselines"][baseline][metric].toDouble());
}

QTEST_GUILESS_MAIN(TestModel)
#include "TestModel.moc"
