// Class-weighted training (TrainerConfig::classWeighting and classWeights): scikit-learn's
// balanced weights, the trainer's refusals, a validation loss weighted like the training loss,
// and the point of it all: on imbalanced data the rare class is found far more often.
#include "Backend.h"
#include "Errors.h"
#include "Network.h"
#include "Optimizer.h"
#include "Random.h"
#include "TestUtil.h"
#include "Trainer.h"

#include <QTest>

#include <cmath>
#include <memory>

using namespace il;
using testutil::toDevice;
using testutil::toHost;

namespace {

// One feature, two classes: 5% positives. x ~ N(0, 1) for negatives and N(1.5, 1) for
// positives, so the classes overlap and a model of the unweighted loss rarely says "positive".
struct Imbalanced {
    std::vector<float> x, y;
    int64_t rows = 0;
};

Imbalanced imbalanced(uint64_t seed, int64_t rows)
{
    Imbalanced d;
    d.rows = rows;
    Rng rng(seed);
    for (int64_t i = 0; i < rows; ++i) {
        const bool positive = rng.uniform() < 0.05;
        d.x.push_back(static_cast<float>(rng.normal() + (positive ? 1.5 : 0.0)));
        d.y.push_back(positive ? 1.f : 0.f);
    }
    return d;
}

std::vector<int64_t> classCounts(const std::vector<float>& y)
{
    std::vector<int64_t> counts(2, 0);
    for (float v : y)
        ++counts[v > 0.5f ? 1 : 0];
    return counts;
}

TrainerConfig bceConfig()
{
    TrainerConfig c;
    c.loss = LossKind::BinaryCrossEntropy;
    c.optimizer = OptimizerConfig::named("adam");
    c.schedule.kind = ScheduleKind::Constant;
    c.schedule.lrMax = 0.05f;
    c.batchSize = 64;
    c.epochs = 20;
    return c;
}

struct Model {
    std::unique_ptr<Network> net;
    std::unique_ptr<Optimizer> opt;
    TrainingState state;

    Model(Backend& b, const TrainerConfig& cfg)
    {
        net = std::make_unique<Network>(b, 1, "dense:1", 1);
        net->initialize(3);
        opt = std::make_unique<Optimizer>(b, cfg.optimizer, net->parameterRanges());
    }
    TrainResult train(const TrainerConfig& cfg, const TrainingData& data)
    {
        Trainer t(*net, *opt, cfg, state);
        return t.run(data);
    }
    // Recall of each class (logit > 0: positive) on (x, y).
    std::pair<double, double> recalls(Backend& b, const Imbalanced& d)
    {
        Buffer x = toDevice(b, d.x), out(&b, static_cast<size_t>(d.rows));
        net->predict(x.view(d.rows, 1), out.view(d.rows, 1));
        const auto logits = toHost(b, out.view(d.rows, 1));
        double hit[2] = {0, 0}, total[2] = {0, 0};
        for (size_t i = 0; i < logits.size(); ++i) {
            const int truth = d.y[i] > 0.5f ? 1 : 0;
            total[truth] += 1;
            hit[truth] += ((logits[i] > 0) ? 1 : 0) == truth ? 1 : 0;
        }
        return {hit[0] / total[0], hit[1] / total[1]};
    }
};

} // namespace

class TestClassWeights : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { m_backend = createCpuBackend(1); }
    void balancedWeights();
    void names();
    void refusals();
    void validationLossIsWeighted();
    void balancedRaisesMinorityRecall();

private:
    Backend& b() { return *m_backend; }
    std::unique_ptr<Backend> m_backend;
};

void TestClassWeights::balancedWeights()
{
    // w_c = n / (k n_c): 93 and 7 rows of 100.
    const auto w = balancedClassWeights({93, 7});
    QCOMPARE(w.size(), size_t(2));
    QVERIFY(std::fabs(w[0] - 100.0 / 186) < 1e-7);
    QVERIFY(std::fabs(w[1] - 100.0 / 14) < 1e-6);
    // They average 1 over the rows: sum_c n_c w_c = n.
    QVERIFY(std::fabs(93 * w[0] + 7 * w[1] - 100) < 1e-4);
    // A balanced table weighs every row 1.
    for (float v : balancedClassWeights({5, 5, 5}))
        QCOMPARE(v, 1.f);
    // A class without training rows: 1, and k counts only the classes that have rows.
    const auto absent = balancedClassWeights({6, 0, 2});
    QCOMPARE(absent[1], 1.f);
    QVERIFY(std::fabs(absent[0] - 8.0 / 12) < 1e-7);
    QVERIFY(std::fabs(absent[2] - 8.0 / 4) < 1e-7);
}

void TestClassWeights::names()
{
    ClassWeighting w = ClassWeighting::None;
    QVERIFY(parseClassWeighting("balanced", w));
    QCOMPARE(w, ClassWeighting::Balanced);
    QCOMPARE(classWeightingName(w), std::string("balanced"));
    QVERIFY(parseClassWeighting("none", w));
    QCOMPARE(w, ClassWeighting::None);
    QVERIFY(!parseClassWeighting("Balanced!", w));
    QCOMPARE(w, ClassWeighting::None);
}

void TestClassWeights::refusals()
{
    const Imbalanced d = imbalanced(1, 64);
    Buffer x = toDevice(b(), d.x), y = toDevice(b(), d.y);
    TrainingData data;
    data.trainX = x.view(d.rows, 1);
    data.trainY = y.view(d.rows, 1);
    const auto refused = [&](const TrainerConfig& cfg, const char* words) {
        Model m(b(), cfg);
        try {
            m.train(cfg, data);
        } catch (const EngineError& e) {
            return QString(e.what()).contains(words);
        }
        return false;
    };
    TrainerConfig cfg = bceConfig();
    cfg.steps = 1;
    cfg.classWeighting = ClassWeighting::Balanced; // a caller that forgot the weights
    QVERIFY(refused(cfg, "needs the class weights"));
    cfg.classWeights = {1.f, 2.f, 3.f};
    QVERIFY(refused(cfg, "3 class weights for a loss over 2 classes"));
    cfg.classWeights = {1.f, -2.f};
    QVERIFY(refused(cfg, "not negative"));
    cfg.classWeights = {1.f, NAN};
    QVERIFY(refused(cfg, "finite"));
    cfg.loss = LossKind::MSE;
    cfg.classWeights = {1.f, 2.f};
    QVERIFY(refused(cfg, "not to mse"));
}

void TestClassWeights::validationLossIsWeighted()
{
    // Early stopping watches the validation loss: it must be the weighted objective too.
    const Imbalanced train = imbalanced(2, 512), val = imbalanced(3, 256);
    Buffer x = toDevice(b(), train.x), y = toDevice(b(), train.y);
    Buffer vx = toDevice(b(), val.x), vy = toDevice(b(), val.y);
    TrainingData data;
    data.trainX = x.view(train.rows, 1);
    data.trainY = y.view(train.rows, 1);
    data.valX = vx.view(val.rows, 1);
    data.valY = vy.view(val.rows, 1);
    TrainerConfig cfg = bceConfig();
    cfg.epochs = 1;
    cfg.classWeighting = ClassWeighting::Balanced;
    cfg.classWeights = balancedClassWeights(classCounts(train.y));
    Model m(b(), cfg);
    const TrainResult r = m.train(cfg, data);
    QVERIFY2(r.reason == StopReason::Finished, r.message.c_str());
    QVERIFY(!m.state.history.empty());
    const double recorded = m.state.history.back().valLoss;

    Buffer scratch, w = toDevice(b(), cfg.classWeights);
    const double weighted =
        Trainer::evaluateLoss(*m.net, cfg.loss, data.valX, data.valY, scratch, w.view(1, 2));
    const double plain = Trainer::evaluateLoss(*m.net, cfg.loss, data.valX, data.valY, scratch);
    QVERIFY2(std::fabs(recorded - weighted) < 1e-6,
             qPrintable(QString("recorded %1, weighted %2").arg(recorded).arg(weighted)));
    QVERIFY2(std::fabs(recorded - plain) > 1e-3,
             qPrintable(QString("recorded %1, unweighted %2").arg(recorded).arg(plain)));
}

void TestClassWeights::balancedRaisesMinorityRecall()
{
    const Imbalanced train = imbalanced(4, 4000), test = imbalanced(5, 4000);
    Buffer x = toDevice(b(), train.x), y = toDevice(b(), train.y);
    TrainingData data;
    data.trainX = x.view(train.rows, 1);
    data.trainY = y.view(train.rows, 1);

    TrainerConfig plain = bceConfig();
    Model a(b(), plain);
    QVERIFY(a.train(plain, data).reason == StopReason::Finished);
    const auto [negPlain, posPlain] = a.recalls(b(), test);

    TrainerConfig balanced = plain;
    balanced.classWeighting = ClassWeighting::Balanced;
    balanced.classWeights = balancedClassWeights(classCounts(train.y));
    Model w(b(), balanced);
    QVERIFY(w.train(balanced, data).reason == StopReason::Finished);
    const auto [negWeighted, posWeighted] = w.recalls(b(), test);

    const QString figures = QString("positives found: %1 unweighted, %2 balanced; negatives %3, %4")
                                .arg(posPlain)
                                .arg(posWeighted)
                                .arg(negPlain)
                                .arg(negWeighted);
    qInfo("%s", qPrintable(figures));
    // Unweighted, the best threshold for a 5% class on overlapping data is far out: few
    // positives are called. Balanced, the threshold moves to where the classes cross.
    QVERIFY2(posPlain < 0.2, qPrintable(figures));
    QVERIFY2(posWeighted > 0.6, qPrintable(figures));
    QVERIFY2((negWeighted + posWeighted) / 2 > (negPlain + posPlain) / 2 + 0.15,
             qPrintable(figures));
}

QTEST_GUILESS_MAIN(TestClassWeights)
#include "TestClassWeights.moc"
