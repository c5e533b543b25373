// What a table's verdict is made from, as the studio keeps it in a model file
// (tasks::VerdictRecord under task.studio_run_verdict): it comes back as it was written, NaN
// figures included, and anything else (an older file's value, a hand edit) is no record.
#include "RunVerdict.h"

#include <QJsonArray>
#include <QTest>

#include <cmath>

using namespace il::tasks;

class TestRunVerdict : public QObject {
    Q_OBJECT

private slots:
    void roundTrip();
    void otherValuesAreNoRecord();
    void sameVerdictFromTheRecord();
};

namespace {

VerdictRecord sample()
{
    VerdictRecord r;
    r.settled.replaced = true;
    r.settled.note = "kept the linear start";
    r.settled.trainLoss = 0.25;
    r.settled.valLoss = 0.5;
    r.settled.judged = true;
    r.settled.networkLoss = 0.52;
    r.settled.simplerLoss = 0.5;
    r.settled.stdError = 0.01;
    r.settled.margin = 2;
    r.settled.rows = 89;
    r.settled.simplerName = "least squares";
    r.settled.folds = 5;
    r.settled.refitSteps = 0;
    r.settled.foldMetric = NAN; // not measured: written as null, read back as NaN
    r.settled.foldMetricError = NAN;
    r.restoredStep = -1;
    r.lastStep = 400;
    r.ending = "Finished 400 steps";
    return r;
}

} // namespace

void TestRunVerdict::roundTrip()
{
    const VerdictRecord r = sample();
    VerdictRecord back;
    QVERIFY(verdictRecordFromJson(verdictRecordToJson(r), back));
    const Settled &a = r.settled, &b = back.settled;
    QCOMPARE(b.replaced, a.replaced);
    QCOMPARE(b.note, a.note);
    QCOMPARE(b.trainLoss, a.trainLoss);
    QCOMPARE(b.valLoss, a.valLoss);
    QCOMPARE(b.judged, a.judged);
    QCOMPARE(b.networkLoss, a.networkLoss);
    QCOMPARE(b.simplerLoss, a.simplerLoss);
    QCOMPARE(b.stdError, a.stdError);
    QCOMPARE(b.margin, a.margin);
    QCOMPARE(b.rows, a.rows);
    QCOMPARE(b.simplerName, a.simplerName);
    QCOMPARE(b.folds, a.folds);
    QCOMPARE(b.refitSteps, a.refitSteps);
    QVERIFY(std::isnan(b.foldMetric) && std::isnan(b.foldMetricError));
    QVERIFY(std::isnan(b.averagedShare));
    QCOMPARE(back.restoredStep, r.restoredStep);
    QCOMPARE(back.lastStep, r.lastStep);
    QCOMPARE(back.ending, r.ending);
}

void TestRunVerdict::otherValuesAreNoRecord()
{
    const QJsonObject good = verdictRecordToJson(sample());
    VerdictRecord out;
    out.lastStep = 7; // untouched by a refusal
    QVERIFY(!verdictRecordFromJson(QJsonValue(), out));
    QVERIFY(!verdictRecordFromJson(QJsonValue("kept"), out));
    QVERIFY(!verdictRecordFromJson(QJsonArray{1, 2}, out));
    auto without = [&](const char* key) {
        QJsonObject o = good;
        o.remove(key);
        return o;
    };
    QVERIFY(!verdictRecordFromJson(without("settled"), out));
    QVERIFY(!verdictRecordFromJson(without("last_step"), out));
    QJsonObject o = good;
    o["last_step"] = -1; // no run ended at no step
    QVERIFY(!verdictRecordFromJson(o, out));
    o = good;
    o["restored_step"] = "64";
    QVERIFY(!verdictRecordFromJson(o, out));
    QJsonObject settled = good["settled"].toObject();
    settled["replaced"] = 1; // a number where a yes or no belongs
    o = good;
    o["settled"] = settled;
    QVERIFY(!verdictRecordFromJson(o, out));
    settled = good["settled"].toObject();
    settled["val_loss"] = "0.5";
    o["settled"] = settled;
    QVERIFY(!verdictRecordFromJson(o, out));
    settled = good["settled"].toObject();
    settled["folds"] = 1e6;
    o["settled"] = settled;
    QVERIFY(!verdictRecordFromJson(o, out));
    settled = good["settled"].toObject();
    settled["averaged_share"] = 1.5; // a share of a blend is between 0 and 1
    o["settled"] = settled;
    QVERIFY(!verdictRecordFromJson(o, out));
    QCOMPARE(out.lastStep, int64_t(7));

    // The folds' networks averaged: the share comes back, and so does the sentence; a record
    // written before (no share) is not averaged.
    VerdictRecord avg = sample();
    avg.settled.replaced = false;
    avg.settled.averagedShare = 0.75;
    VerdictRecord back;
    QVERIFY(verdictRecordFromJson(verdictRecordToJson(avg), back));
    QCOMPARE(back.settled.averagedShare, 0.75);
    settled = verdictRecordToJson(avg)["settled"].toObject();
    settled.remove("averaged_share");
    o = verdictRecordToJson(avg);
    o["settled"] = settled;
    QVERIFY(verdictRecordFromJson(o, back));
    QVERIFY(std::isnan(back.settled.averagedShare));
}

void TestRunVerdict::sameVerdictFromTheRecord()
{
    // The verdict is a function of the record and the evaluation: the same sentence from the
    // record read back as from the one written.
    const VerdictRecord r = sample();
    VerdictRecord back;
    QVERIFY(verdictRecordFromJson(verdictRecordToJson(r), back));
    const QJsonObject values{{"mse", 0.5}, {"baselines", QJsonObject{{"linear_mse", 0.5}}}};
    const RunVerdict a = tableVerdict(r.settled, r.restoredStep, r.lastStep, values);
    const RunVerdict b = tableVerdict(back.settled, back.restoredStep, back.lastStep, values);
    QVERIFY(a.valid());
    QCOMPARE(b.kept, a.kept);
    QCOMPARE(b.keptStep, a.keptStep);
    QCOMPARE(b.sentence(), a.sentence());
}

QTEST_GUILESS_MAIN(TestRunVerdict)
#include "TestRunVerdict.moc"
