// tasks::Model: build, save, open and resume, attach data, choose the optimizer, and the one way
// back to the CPU after a device failure.
#include "ForwardingBackend.h"
#include "TabularTestUtil.h"

#include "BackendRegistry.h"
#include "Model.h"

#include <QFile>
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
    void wideKeepsItsLinearStartUnlessItBeatsIt_data();
    void wideKeepsItsLinearStartUnlessItBeatsIt();
    void settleOnlyAfterARunThatEndedOnItsOwn();

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
    options.folds = 0; // a validation split (cross-validation: testCrossValidation)
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
    options.folds = 0; // a validation split (cross-validation: testCrossValidation)
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
    options.folds = 0; // a validation split (cross-validation: testCrossValidation)
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

void TestModel::wideKeepsItsLinearStartUnlessItBeatsIt_data()
{
    QTest::addColumn<QByteArray>("csv");
    QTest::addColumn<bool>("linearKept");
    // y = 2a - b plus noise that no feature predicts (a fixed pseudo-random sequence): nothing
    // for the hidden layers to find.
    QByteArray linear = "a,b,c,y\n";
    // y = a * b plus a little noise: a product no linear model fits.
    QByteArray product = "a,b,c,y\n";
    uint32_t state = 12345;
    auto uniform = [&state] { // [-1, 1)
        state = state * 1664525u + 1013904223u;
        return static_cast<double>(state >> 8) / double(1u << 23) - 1.0;
    };
    for (int i = 0; i < 300; ++i) {
        const double a = uniform() * 2, b = uniform() * 2, c = uniform(), noise = uniform();
        const auto row = [&](double y) {
            return QByteArray::number(a) + "," + QByteArray::number(b) + "," +
                   QByteArray::number(c) + "," + QByteArray::number(y) + "\n";
        };
        linear += row(2 * a - b + noise);
        product += row(a * b + 0.05 * noise);
    }
    QTest::newRow("linear plus noise: the linear model is kept") << linear << true;
    QTest::newRow("a product: the network is kept") << product << false;
    QTest::newRow("spiral: the network is kept") << QByteArray() << false;
}

// A wide-and-deep stack (the table default) trained to the end keeps its trained weights only when
// they beat its linear start on the validation rows by more than the noise (Task::settle);
// otherwise the network goes back to the linear model exactly, and says so.
void TestModel::wideKeepsItsLinearStartUnlessItBeatsIt()
{
    QFETCH(QByteArray, csv);
    QFETCH(bool, linearKept);
    if (csv.isEmpty()) {
        QFile spiral(QStringLiteral(IRONLEARN_SAMPLES) + "/spiral.csv");
        QVERIFY2(spiral.open(QIODevice::ReadOnly), "the bundled spiral sample");
        csv = spiral.readAll();
    }
    QString error;
    tasks::TaskOptions options;
    options.folds = 0; // a validation split (cross-validation: testCrossValidation)
    std::shared_ptr<tasks::Task> task = tasks::openTask("t.csv", csv, options, &error);
    QVERIFY2(task, qPrintable(error));
    QCOMPARE(task->presets().first(), QString("wide")); // the default
    Model m;
    m.backend = createCpuBackend(1);
    m.task = task;
    task->applyDefaults(m.config);
    m.build(task->presetSpec("wide").toStdString());
    m.upload();
    Trainer trainer(*m.network, *m.optimizer, m.config, m.state);
    TrainResult result = trainer.run(m.trainingData());
    QVERIFY(result.reason == StopReason::Finished || result.reason == StopReason::EarlyStopping);
    const double trainedVal = result.valLoss;
    const tasks::Settled s = tasks::settleRun(*task, *m.network, m.config, result);
    QCOMPARE(s.replaced, linearKept);
    QVERIFY2(s.note.contains(linearKept ? "the linear model is kept" : "so it is kept"),
             qPrintable(s.note));
    const QJsonObject v = task->evaluate(*m.network).values;
    const bool regression = v.contains("mse");
    const QString key = regression ? "mse" : "balanced_accuracy";
    const double net = v[key].toDouble();
    const double lin =
        v["baselines"][regression ? "linear_regression" : "logistic_regression"][key].toDouble();
    // The report says the network is its linear start (and not that it fails to beat it).
    QCOMPARE(v["baselines"]["network_is_linear_model"].toBool(), linearKept);
    if (linearKept) {
        // Exactly the baseline (to float rounding), with the baseline's losses reported.
        QVERIFY2(std::fabs(net - lin) <= 1e-5 * std::fabs(lin),
                 qPrintable(QString("network %1, linear %2").arg(net).arg(lin)));
        QVERIFY(std::fabs(result.valLoss - v["val_loss"].toDouble(result.valLoss)) < 1e-4);
        QVERIFY2(result.valLoss >= trainedVal - 1e-6,
                 "the trained network's validation loss was no better than the linear one's");
    } else {
        QVERIFY2(regression ? net < 0.5 * lin : net > lin + 0.2,
                 qPrintable(QString("network %1, linear %2").arg(net).arg(lin)));
        QCOMPARE(result.valLoss, trainedVal);
    }
}

// Only a run that ended on its own settles: a stopped one keeps its weights, and a stack without
// the skip (mlp) has no linear start to go back to.
void TestModel::settleOnlyAfterARunThatEndedOnItsOwn()
{
    QByteArray csv = "a,b,y\n";
    for (int i = 0; i < 100; ++i)
        csv += QByteArray::number(i % 10) + "," + QByteArray::number(i * 7 % 11) + "," +
               QByteArray::number(i % 10 + (i * 13 % 5) * 0.1) + "\n";
    QString error;
    tasks::TaskOptions options;
    options.folds = 0; // a validation split (cross-validation: testCrossValidation)
    std::shared_ptr<tasks::Task> task = tasks::openTask("t.csv", csv, options, &error);
    QVERIFY2(task, qPrintable(error));
    for (const QString preset : {"wide", "mlp"}) {
        Model m;
        m.backend = createCpuBackend(1);
        m.task = task;
        task->applyDefaults(m.config);
        m.build(task->presetSpec(preset).toStdString());
        train(m, 50);
        const std::vector<float> before = weights(m);
        TrainResult cancelled;
        cancelled.reason = StopReason::Cancelled;
        QVERIFY(tasks::settleRun(*task, *m.network, m.config, cancelled).note.isEmpty());
        QVERIFY(weights(m) == before);
        TrainResult finished;
        const tasks::Settled s = tasks::settleRun(*task, *m.network, m.config, finished);
        QCOMPARE(s.note.isEmpty(), preset == "mlp");
        if (preset == "mlp") QVERIFY(weights(m) == before);
    }
}

QTEST_GUILESS_MAIN(TestModel)
#include "TestModel.moc"
