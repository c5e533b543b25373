// The bounded loss history in the model file (ModelJson.h, TrainingHistory.h): a long run's
// buckets go through a saved model and back bit for bit in a header of bounded size; a file
// written before the history was bounded (one row per evaluation, however many) still opens,
// its rows merged to the bound; malformed bucket rows fail naming the row.
#include "ModelFile.h"
#include "ModelJson.h"
#include "Network.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <bit>
#include <cmath>

using namespace il;
using namespace il::io;

namespace {

bool same(double a, double b)
{
    return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

bool sameRow(const HistoryPoint& a, const HistoryPoint& b)
{
    return a.step == b.step && a.count == b.count && a.firstStep == b.firstStep &&
           same(a.epoch, b.epoch) && same(a.trainLoss, b.trainLoss) &&
           same(a.valLoss, b.valLoss) && same(a.lr, b.lr) && same(a.metric, b.metric) &&
           same(a.trainMin, b.trainMin) && same(a.trainMax, b.trainMax) &&
           same(a.valMin, b.valMin) && same(a.valMax, b.valMax);
}

HistoryPoint evaluation(int64_t i)
{
    HistoryPoint p;
    p.step = i;
    p.epoch = static_cast<double>(i) / 3.0;
    p.trainLoss = 1.0 / static_cast<double>(i) + (i == 777 ? 9.0 : 0.0);
    p.valLoss = 1.5 / static_cast<double>(i);
    p.lr = 1e-3 / std::sqrt(static_cast<double>(i));
    p.metric = i % 2 ? NAN : 0.5; // a metric at some evaluations only
    return p;
}

} // namespace

class TestHistoryFile : public QObject {
    Q_OBJECT

private slots:
    void longHistoryRoundTripsInABoundedHeader();
    void fileWithAFullHistoryOpens();
    void badBucketRows_data();
    void badBucketRows();
};

void TestHistoryFile::longHistoryRoundTripsInABoundedHeader()
{
    const int64_t n = 300'000; // 30 times the limit: merged 5 times
    TrainingState state;
    for (int64_t i = 1; i <= n; ++i)
        state.history.add(evaluation(i));
    state.step = n;
    QVERIFY(state.history.size() <= TrainingHistory::kDefaultLimit);
    QVERIFY(state.history.bucketWidth() >= 32);

    auto cpu = createCpuBackend(1);
    Network net(*cpu, 2, "dense:4,tanh,dense:1", 1);
    net.initialize(1);
    QTemporaryDir dir;
    const QString path = dir.filePath("long.safetensors");
    QString error;
    QVERIFY2(saveModel(path, net, nullptr, TrainerConfig{}, state, QJsonObject{{"kind", "x"}},
                       &error),
             qPrintable(error));
    // About 200 bytes a bucket: a few MB at most, whatever the run's length.
    QVERIFY2(QFileInfo(path).size() < 3'000'000, qPrintable(QString::number(QFileInfo(path).size())));

    ModelInfo info;
    QVERIFY2(readModelInfo(path, info, &error), qPrintable(error));
    const TrainingHistory& read = info.state.history;
    QCOMPARE(read.size(), state.history.size());
    QCOMPARE(read.bucketWidth(), state.history.bucketWidth());
    QCOMPARE(read.evaluations(), n);
    for (size_t i = 0; i < read.size(); ++i)
        QVERIFY2(sameRow(read[i], state.history[i]), qPrintable(QString("row %1").arg(i)));
    // A resumed run goes on merging where the saved one stopped.
    TrainingState resumed = info.state;
    TrainingState straight = state;
    for (int64_t i = n + 1; i <= n + 5000; ++i) {
        resumed.history.add(evaluation(i));
        straight.history.add(evaluation(i));
    }
    QCOMPARE(resumed.history.size(), straight.history.size());
    for (size_t i = 0; i < resumed.history.size(); ++i)
        QVERIFY(sameRow(resumed.history[i], straight.history[i]));
}

// Files written before the history was bounded hold one 6-number row per evaluation, however
// many. A short one reads back exactly; a long one opens with its rows merged to the bound.
void TestHistoryFile::fileWithAFullHistoryOpens()
{
    const auto oldFile = [](int64_t rows) {
        QJsonArray history;
        for (int64_t i = 1; i <= rows; ++i) {
            const HistoryPoint p = evaluation(i);
            history.append(QJsonArray{qint64(p.step), doubleToJson(p.epoch),
                                      doubleToJson(p.trainLoss), doubleToJson(p.valLoss),
                                      doubleToJson(p.lr), doubleToJson(p.metric)});
        }
        return QJsonObject{{"step", qint64(rows)}, {"history", history}};
    };
    TrainingState state;
    QString error;
    QVERIFY2(trainingStateFromJson(oldFile(50), state, &error), qPrintable(error));
    QCOMPARE(state.history.size(), size_t(50));
    for (int64_t i = 1; i <= 50; ++i) {
        HistoryPoint expected = evaluation(i);
        TrainingHistory one{expected};
        QVERIFY(sameRow(state.history[size_t(i - 1)], one[0]));
    }

    const int64_t n = 3 * int64_t(TrainingHistory::kDefaultLimit) + 17;
    QVERIFY2(trainingStateFromJson(oldFile(n), state, &error), qPrintable(error));
    QVERIFY(state.history.size() <= TrainingHistory::kDefaultLimit);
    QCOMPARE(state.history.evaluations(), n);
    QCOMPARE(state.history[0].firstStep, int64_t(1));
    QCOMPARE(state.history.back().step, n);
    double hi = 0;
    for (const HistoryPoint& row : state.history)
        hi = std::max(hi, row.trainMax);
    QCOMPARE(hi, evaluation(777).trainLoss); // the spike survives the merges
    QVERIFY(state.history[0].trainLoss > 100 * state.history.back().trainLoss);
}

void TestHistoryFile::badBucketRows_data()
{
    QTest::addColumn<QJsonArray>("row");
    const QJsonArray head{100, 1.0, 0.5, 0.6, 1e-3, QJsonValue()};
    const auto bucket = [&head](QJsonValue count, QJsonValue first) {
        QJsonArray row = head;
        for (const QJsonValue& v : {count, first, QJsonValue(0.1), QJsonValue(0.9),
                                    QJsonValue(0.2), QJsonValue(1.0)})
            row.append(v);
        return row;
    };
    QTest::newRow("seven numbers") << head + QJsonValue(2);
    QTest::newRow("count 1 with extremes") << bucket(1, 99);
    QTest::newRow("count not an integer") << bucket(2.5, 99);
    QTest::newRow("count not a number") << bucket("two", 99);
    QTest::newRow("first step after the last") << bucket(2, 101);
    QTest::newRow("first step not a number") << bucket(2, QJsonValue());
    QJsonArray badMin = bucket(2, 99);
    badMin[8] = "low";
    QTest::newRow("min not a number") << badMin;
}

void TestHistoryFile::badBucketRows()
{
    QFETCH(QJsonArray, row);
    TrainingState state;
    state.history.add(evaluation(1));
    QString error;
    const QJsonObject json{{"history", QJsonArray{QJsonArray{1, 1.0, 0.5, 0.6, 1e-3, 0.5}, row}}};
    QVERIFY(!trainingStateFromJson(json, state, &error));
    QVERIFY2(error.startsWith("training: history row 1 is not"), qPrintable(error));
    QCOMPARE(state.history.size(), size_t(1)); // unchanged
}

QTEST_GUILESS_MAIN(TestHistoryFile)
#include "TestHistoryFile.moc"
