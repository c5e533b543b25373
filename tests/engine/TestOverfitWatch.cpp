// The watch for overfitting (OverfitWatch.h) on synthetic loss curves: a validation loss that
// turns up while the training loss falls is noticed once, at the right step, on clean and
// noisy curves; a noisy flat validation loss and a divergence (both losses rising) are not; a
// recovery re-arms it; early stopping's stretch is judged before the run ends; a saved history
// replays to the same sighting. Then the trainer: a tiny noisy regression with a big network
// says it in one notice, with early stopping on (before it ends the run, and the best weights
// are restored) and off (the run goes on and its last message repeats it).
#include "Network.h"
#include "Optimizer.h"
#include "OverfitWatch.h"
#include "Random.h"
#include "TestUtil.h"
#include "Trainer.h"

#include <QTest>

#include <cmath>
#include <memory>

using namespace il;
using testutil::toDevice;

namespace {

struct Curve {
    std::vector<double> train, val;
    int64_t stepsPerEval = 10; // evaluation i is at step (i + 1) * stepsPerEval
};

int64_t stepOf(const Curve& c, size_t i)
{
    return static_cast<int64_t>(i + 1) * c.stepsPerEval;
}

// The steps at which the watch notices overfitting.
std::vector<int64_t> noticed(const Curve& c, OverfitWatch& watch)
{
    std::vector<int64_t> at;
    for (size_t i = 0; i < c.val.size(); ++i)
        if (watch.add(stepOf(c, i), c.train[i], c.val[i])) at.push_back(stepOf(c, i));
    return at;
}

std::vector<int64_t> noticed(const Curve& c)
{
    OverfitWatch watch;
    return noticed(c, watch);
}

// A network that learns (both losses fall from 1) until evaluation `turn`, then memorises: the
// training loss goes on falling, the validation loss climbs by `slope` per evaluation. noise:
// relative, on the validation loss (a small validation set); the training loss gets a quarter.
Curve overfitting(int evals, int turn, double slope, double noise, uint64_t seed)
{
    Rng rng(seed);
    Curve c;
    for (int i = 0; i < evals; ++i) {
        const double x = i;
        const double learnt = 0.3 + 0.7 * std::exp(-x / 15);
        const double val = learnt + slope * std::max(0.0, x - turn);
        const double train = 0.02 + 0.98 * std::exp(-x / 40);
        c.val.push_back(val * (1 + noise * rng.normal()));
        c.train.push_back(train * (1 + noise / 4 * rng.normal()));
    }
    return c;
}

// The validation loss flat at 1 with relative noise (autocorrelated with lag-1 correlation
// `correlation`) while the training loss falls steadily.
Curve flat(int evals, double noise, double correlation, uint64_t seed)
{
    Rng rng(seed);
    Curve c;
    double e = 0;
    const double innovation = noise * std::sqrt(1 - correlation * correlation);
    for (int i = 0; i < evals; ++i) {
        e = i == 0 ? noise * rng.normal() : correlation * e + innovation * rng.normal();
        c.val.push_back(1 + e);
        c.train.push_back(1 - 0.9 * i / evals);
    }
    return c;
}

QString text(const std::string& s)
{
    return QString::fromStdString(s);
}

} // namespace

class TestOverfitWatch : public QObject {
    Q_OBJECT

private slots:
    void risingValidationIsNoticed_data();
    void risingValidationIsNoticed();
    void noisyFlatValidationIsQuiet_data();
    void noisyFlatValidationIsQuiet();
    void divergenceIsNotOverfitting();
    void noticedAgainOnlyAfterARecovery();
    void earlyStoppingStretchIsJudged();
    void historyReplaysToTheSameSighting();
    void trainerSaysItWithEarlyStoppingOff();
    void trainerSaysItBeforeEarlyStopping();
    void trainerJudgesTheStretchEarlyStoppingEnds();
    void trainerWithoutValidationIsQuiet();
};

void TestOverfitWatch::risingValidationIsNoticed_data()
{
    QTest::addColumn<double>("slope");
    QTest::addColumn<double>("noise");
    QTest::addColumn<int>("latest"); // the evaluation by which it must be noticed
    // Clean: the turn at 60 (the minimum of the learnt curve + the rise sits near 55-60); 5 %
    // above the best window is 0.015 above 0.3, at 0.004 an evaluation about 4 evaluations past
    // the turn, then the window must pass it and hold for 5: noticed by evaluation ~75.
    QTest::newRow("clean") << 0.004 << 0.0 << 80;
    // 5 % noise (a validation set of a few dozen rows): later, by the noise's margin (typically
    // 35 evaluations after the turn, 85 at worst over 50 seeds).
    for (int seed = 1; seed <= 5; ++seed)
        QTest::addRow("5%% noise, seed %d", seed) << 0.004 << 0.05 << 150;
    // 10 % noise and a steeper rise.
    for (int seed = 1; seed <= 5; ++seed)
        QTest::addRow("10%% noise, seed %d", seed) << 0.01 << 0.10 << 150;
}

void TestOverfitWatch::risingValidationIsNoticed()
{
    QFETCH(double, slope);
    QFETCH(double, noise);
    QFETCH(int, latest);
    const QString tag = QTest::currentDataTag();
    const uint64_t seed = tag.contains("seed") ? tag.section(' ', -1).toULongLong() : 1;
    const Curve c = overfitting(200, 60, slope, noise, seed);
    OverfitWatch watch;
    const std::vector<int64_t> at = noticed(c, watch);
    // Once: the validation loss never comes back.
    QCOMPARE(at.size(), size_t(1));
    QVERIFY2(at[0] > stepOf(c, 60) && at[0] <= stepOf(c, latest),
             qPrintable(QString("noticed at step %1").arg(at[0])));
    const OverfitSighting& s = watch.last();
    QVERIFY(s.valid() && watch.overfitting());
    QCOMPARE(s.noticedStep, at[0]);
    // The rise started from the lowest evaluation near the turn.
    QVERIFY2(s.bestStep >= stepOf(c, 40) && s.bestStep <= stepOf(c, 70),
             qPrintable(QString("since step %1").arg(s.bestStep)));
    QVERIFY(s.valLoss > s.bestLoss * 1.05);
    QVERIFY(s.trainNow < s.trainAtBest);
    const QString line = text(OverfitWatch::describe(s));
    QVERIFY2(
        line.startsWith(QString("validation loss rising since step %1 (best ").arg(s.bestStep)) &&
            line.endsWith(") while the training loss falls: the network is memorising "
                          "the training rows"),
        qPrintable(line));
    QVERIFY(!line.contains('\n'));
}

void TestOverfitWatch::noisyFlatValidationIsQuiet_data()
{
    QTest::addColumn<double>("noise");
    QTest::addColumn<double>("correlation");
    QTest::newRow("10% noise") << 0.10 << 0.0;
    QTest::newRow("20% noise") << 0.20 << 0.0;
    // Neighbouring evaluations that move together (a validation loss that wanders): at
    // correlation 0.5 about 9 runs in 100 are noticed, at 0.3 none of these.
    QTest::newRow("10% noise, correlated 0.3") << 0.10 << 0.3;
}

void TestOverfitWatch::noisyFlatValidationIsQuiet()
{
    QFETCH(double, noise);
    QFETCH(double, correlation);
    // 30 runs of 500 evaluations: the lowest window of each lies far below the level, and the
    // level never rises. A threshold without the noise (or with a window mean's) notices
    // nearly every one of them.
    int runs = 0;
    for (uint64_t seed = 1; seed <= 30; ++seed)
        if (!noticed(flat(500, noise, correlation, seed)).empty()) ++runs;
    QVERIFY2(runs == 0, qPrintable(QString("noticed in %1 of 30 flat runs").arg(runs)));
}

void TestOverfitWatch::divergenceIsNotOverfitting()
{
    // Both losses turn up together at evaluation 60: the run diverges (TrainingWatch's case).
    Curve c = overfitting(200, 60, 0.004, 0.02, 3);
    for (size_t i = 60; i < c.train.size(); ++i)
        c.train[i] = c.train[59] + 0.004 * static_cast<double>(i - 59);
    QVERIFY(noticed(c).empty());
    // The same curve with the training loss falling is noticed (the test above, here as the
    // control of this one).
    QCOMPARE(noticed(overfitting(200, 60, 0.004, 0.02, 3)).size(), size_t(1));
}

void TestOverfitWatch::noticedAgainOnlyAfterARecovery()
{
    // Rise from 60, noticed; back down to the best at 100 (a lower learning rate, say) and
    // below it, then up again from 140: noticed a second time. Without the recovery the long
    // rise stays one notice (the risingValidationIsNoticed rows).
    Curve c = overfitting(240, 60, 0.004, 0.0, 1);
    for (size_t i = 100; i < c.val.size(); ++i) {
        const double x = static_cast<double>(i);
        c.val[i] = 0.29 + 0.004 * std::max(0.0, x - 140);
    }
    OverfitWatch watch;
    const std::vector<int64_t> at = noticed(c, watch);
    QCOMPARE(at.size(), size_t(2));
    QVERIFY(at[0] < stepOf(c, 100));
    QVERIFY(at[1] > stepOf(c, 140));
    QVERIFY2(watch.last().bestStep >= stepOf(c, 100) && watch.last().bestStep <= stepOf(c, 145),
             qPrintable(QString::number(watch.last().bestStep)));
}

void TestOverfitWatch::earlyStoppingStretchIsJudged()
{
    // A rise after evaluation 60: early stopping's stretch (the evaluations since the best
    // window) shows it before the held windows do, so a run that early stopping ends says why.
    const Curve c = overfitting(200, 60, 0.006, 0.0, 1);
    OverfitWatch watch;
    size_t i = 0, stretchFirst = 0;
    for (; i < c.val.size(); ++i) {
        if (watch.add(stepOf(c, i), c.train[i], c.val[i])) break;
        OverfitWatch atStop = watch; // as if early stopping ended the run here
        if (!stretchFirst && atStop.stretchAtStop(stepOf(c, i))) {
            stretchFirst = i;
            QCOMPARE(atStop.last().noticedStep, stepOf(c, i));
            QVERIFY(atStop.overfitting());
            QVERIFY(!atStop.stretchAtStop(stepOf(c, i))); // said once
        }
    }
    QVERIFY2(stretchFirst > 60 && stretchFirst < i,
             qPrintable(QString("stretch %1, windows %2").arg(stretchFirst).arg(i)));
    // A stretch that is only noise above a flat loss is not overfitting.
    for (uint64_t seed = 1; seed <= 10; ++seed) {
        OverfitWatch quiet;
        const Curve f = flat(60, 0.1, 0, seed);
        for (size_t j = 0; j < f.val.size(); ++j)
            quiet.add(stepOf(f, j), f.train[j], f.val[j]);
        QVERIFY(!quiet.stretchAtStop(stepOf(f, f.val.size() - 1)));
    }
}

void TestOverfitWatch::historyReplaysToTheSameSighting()
{
    // A history as the studio saves it: a loss-only row every step (training loss of that
    // step, no validation loss) and an evaluation every 10 steps. Replayed, its evaluations
    // carry the mean training loss of their 10 steps, as the trainer fed the watch live.
    const Curve c = overfitting(150, 60, 0.005, 0.03, 2);
    OverfitWatch live;
    noticed(c, live);
    QVERIFY(live.last().valid());
    TrainingHistory history;
    for (size_t i = 0; i < c.val.size(); ++i)
        for (int64_t s = 1; s <= c.stepsPerEval; ++s) {
            HistoryPoint h;
            h.step = static_cast<int64_t>(i) * c.stepsPerEval + s;
            h.trainLoss = c.train[i]; // each step's loss: the interval's mean is c.train[i]
            if (s == c.stepsPerEval) h.valLoss = c.val[i];
            history.add(h);
        }
    OverfitWatch replayed;
    QVERIFY(replayed.replay(history));
    QCOMPARE(replayed.last().bestStep, live.last().bestStep);
    QCOMPARE(replayed.last().noticedStep, live.last().noticedStep);
    QVERIFY(std::abs(replayed.last().valLoss - live.last().valLoss) < 1e-12);
}

namespace {

// A tiny noisy regression a big network memorises: y = x + noise (sd 0.5) from 24 training and
// 24 validation rows; full-batch Adam at 1e-3, an evaluation every 10 steps. Its validation
// loss is lowest near step 220 and climbs from there.
struct Memorising {
    std::unique_ptr<Backend> backend = createCpuBackend(1);
    Buffer trainX, trainY, valX, valY;
    std::vector<std::string> progressNotices;
    Memorising()
    {
        Rng rng(11);
        std::vector<float> x(48), y(48);
        for (size_t i = 0; i < x.size(); ++i) {
            x[i] = static_cast<float>(rng.uniform(-1, 1));
            y[i] = static_cast<float>(x[i] + 0.5 * rng.normal());
        }
        const std::vector<float> tx(x.begin(), x.begin() + 24), ty(y.begin(), y.begin() + 24);
        const std::vector<float> vx(x.begin() + 24, x.end()), vy(y.begin() + 24, y.end());
        trainX = toDevice(*backend, tx);
        trainY = toDevice(*backend, ty);
        valX = toDevice(*backend, vx);
        valY = toDevice(*backend, vy);
    }
    TrainResult run(int patience, bool withValidation = true, int64_t steps = 3000)
    {
        TrainerConfig cfg;
        cfg.optimizer = OptimizerConfig::named("adam");
        cfg.schedule.kind = ScheduleKind::Constant;
        cfg.schedule.lrMax = 1e-3f;
        cfg.steps = steps;
        cfg.evalEvery = 10;
        cfg.patience = patience;
        Network net(*backend, 1, "dense:128,relu,dense:128,relu,dense", 1);
        net.initialize(5);
        Optimizer opt(*backend, cfg.optimizer, net.parameterRanges());
        TrainingState state;
        RunPolicy policy;
        policy.progressInterval = 0;
        Trainer trainer(net, opt, cfg, state, policy);
        progressNotices.clear();
        trainer.setProgressCallback([this](const Progress& p) {
            if (!p.notice.empty()) progressNotices.push_back(p.notice);
        });
        TrainingData data{trainX.view(24, 1), trainY.view(24, 1), {}, {}};
        if (withValidation) {
            data.valX = valX.view(24, 1);
            data.valY = valY.view(24, 1);
        }
        return trainer.run(data);
    }
};

} // namespace

void TestOverfitWatch::trainerSaysItWithEarlyStoppingOff()
{
    Memorising m;
    const TrainResult r = m.run(0);
    QCOMPARE(r.reason, StopReason::Finished);
    QCOMPARE(r.steps, int64_t(3000)); // it goes on
    QCOMPARE(r.notices.size(), size_t(1));
    QCOMPARE(m.progressNotices, r.notices);
    const QString line = text(r.notices[0]);
    const OverfitSighting& s = r.overfitting;
    QVERIFY(s.valid());
    QVERIFY2(line.startsWith(QString("step %1: validation loss rising since step %2 (best ")
                                 .arg(s.noticedStep)
                                 .arg(s.bestStep)) &&
                 line.endsWith("the network is memorising the training rows; training goes on "
                               "(early stopping is off)"),
             qPrintable(line));
    QVERIFY(s.noticedStep > s.bestStep);
    QVERIFY2(r.valLoss > s.bestLoss * 1.05, qPrintable(QString::number(r.valLoss)));
    QVERIFY2(text(r.message).contains(
                 QString("; the validation loss has risen since step %1 while the training loss "
                         "fell (overfitting): these are the weights of the last step, early "
                         "stopping would have kept those of step %1")
                     .arg(s.bestStep)),
             r.message.c_str());
}

void TestOverfitWatch::trainerSaysItBeforeEarlyStopping()
{
    Memorising m;
    const TrainResult r = m.run(20);
    QCOMPARE(r.reason, StopReason::EarlyStopping);
    QVERIFY(r.steps < 3000);
    // The notice came with the last report, before the run's message.
    QCOMPARE(r.notices.size(), size_t(1));
    QCOMPARE(m.progressNotices, r.notices);
    const QString line = text(r.notices[0]);
    QVERIFY2(line.contains("the network is memorising the training rows; early stopping ends "),
             qPrintable(line));
    const OverfitSighting& s = r.overfitting;
    QVERIFY(s.valid());
    // The best weights were restored, and the message says from which step: the step the rise
    // started from.
    const QString message = text(r.message);
    QVERIFY2(message.startsWith("validation loss did not improve for 20 evaluations; best ") &&
                 message.endsWith(
                     QString("; the best weights, of step %1, were restored").arg(s.bestStep)),
             qPrintable(message));
    QVERIFY(std::abs(r.valLoss - s.bestLoss) < 1e-9);
}

void TestOverfitWatch::trainerJudgesTheStretchEarlyStoppingEnds()
{
    // Patience 15: early stopping ends the run before the held windows confirm the rise, and
    // its stretch is judged then: the notice is made at the run's last evaluation.
    Memorising m;
    const TrainResult r = m.run(15);
    QCOMPARE(r.reason, StopReason::EarlyStopping);
    QCOMPARE(r.notices.size(), size_t(1));
    QVERIFY2(text(r.notices[0]).endsWith("; early stopping ends the run"), r.notices[0].c_str());
    QCOMPARE(r.overfitting.noticedStep, r.steps);
    QVERIFY2(
        text(r.message).endsWith(
            QString("; the best weights, of step %1, were restored").arg(r.overfitting.bestStep)),
        r.message.c_str());
}

void TestOverfitWatch::trainerWithoutValidationIsQuiet()
{
    Memorising m;
    const TrainResult r = m.run(0, false, 1000);
    QVERIFY(r.notices.empty());
    QVERIFY(!r.overfitting.valid());
}

QTEST_GUILESS_MAIN(TestOverfitWatch)
#include "TestOverfitWatch.moc"
