// Tables from rows to results: normalisation fitted on the training rows only, metrics
// against values worked out by hand (ROC AUC included), predictions in the file's units, the
// saved schema, and the table task behind the Task interface.
#include "TabularTestUtil.h"

#include <QJsonArray>
#include <QTest>

#include <cmath>

using namespace il;
using namespace il::tasks;
using namespace il::tasks::test;

class TestTabularOutputs : public QObject {
    Q_OBJECT

private slots:
    void normalisation_data();
    void normalisation();
    void regressionMetrics();
    void classMetrics();
    void rocAucByHand();
    void predictions();
    void schemaJson();
    void taskInterface();
};

void TestTabularOutputs::normalisation_data()
{
    QTest::addColumn<QString>("method");
    QTest::newRow("zscore") << "zscore";
    QTest::newRow("minmax") << "minmax";
}

void TestTabularOutputs::normalisation()
{
    QFETCH(QString, method);
    TabularOptions o;
    o.normalisation = method;
    o.valSplit = 0.3;
    o.testSplit = 0.2;
    TabularDataset ds;
    QString error;
    QVERIFY2(prepare(linear(50), o, ds, &error), qPrintable(error));
    const TabularSchema& s = ds.schema;
    QCOMPARE(s.normalisation, method);
    // Statistics by hand from the training rows alone (row i holds a = i, y = 2i + 0.5).
    double sum = 0, sumSq = 0, lo = 1e9, hi = -1e9;
    for (int64_t r : ds.train.source) {
        sum += r;
        sumSq += double(r) * r;
        lo = std::min(lo, double(r));
        hi = std::max(hi, double(r));
    }
    const double n = static_cast<double>(ds.train.rows);
    const double mean = sum / n, sd = std::sqrt(sumSq / n - mean * mean);
    QVERIFY(!near(mean, 24.5, 0.01)); // the mean of all 50 rows would be 24.5
    if (method == "zscore") {
        QVERIFY(near(s.inputOffset[0], mean, 1e-4));
        QVERIFY(near(s.inputScale[0], sd, 1e-4));
        QVERIFY(near(s.targetOffset[0], 2 * mean + 0.5, 1e-4));
        QVERIFY(near(s.targetScale[0], 2 * sd, 1e-4));
    } else {
        QVERIFY(near(s.inputOffset[0], lo, 1e-6));
        QVERIFY(near(s.inputScale[0], hi - lo, 1e-6));
        QVERIFY(near(s.targetOffset[0], 2 * lo + 0.5, 1e-5));
        for (size_t i = 0; i < ds.train.y.size(); ++i)
            QVERIFY(ds.train.y[i] >= -1e-6f && ds.train.y[i] <= 1.f + 1e-6f);
    }
    // Training rows: inputs centred (z-score) or within [0, 1] (min-max).
    double xs = 0;
    for (int64_t i = 0; i < ds.train.rows; ++i)
        xs += ds.train.x[static_cast<size_t>(i * s.inputWidth())];
    if (method == "zscore") QVERIFY(near(xs / n, 0, 1e-4));
    // The normalised targets turn back into the file's units.
    const auto back = tabularPredictions(s, ds.val.y);
    for (size_t i = 0; i < back.size(); ++i)
        QVERIFY(near(back[i], ds.val.rawTarget[i], 1e-4));
}

void TestTabularOutputs::regressionMetrics()
{
    TabularSchema s;
    s.targets = {"y"};
    s.target = "y";
    s.targetOffset = {10.f};
    s.targetScale = {2.f};
    TabularSplit data;
    data.rows = 4;
    data.rawTarget = {1, 3, 2, 5};
    // Outputs are normalised: prediction = 2 z + 10 = 1, 2, 3, 4.
    const std::vector<float> outputs = {-4.5f, -4.f, -3.5f, -3.f};
    const TabularMetrics m = tabularMetrics(s, outputs, data);
    QVERIFY(near(m.mse, 0.75));
    QVERIFY(near(m.rmse, std::sqrt(0.75)));
    QVERIFY(near(m.mae, 0.75));
    QVERIFY(near(m.r2, 1.0 - 3.0 / 8.75)); // residual 3 over a total of 8.75 around 2.75
    const QJsonObject j = tabularMetricsJson(s, m, outputs, data);
    for (const char* key : {"mse", "rmse", "mae", "r2", "rows"})
        QVERIFY2(j.contains(key), key);
    QVERIFY(!j.contains("accuracy"));
    // On the normalised targets (scale 2): 0.75 / 4, the scale of the MSE loss.
    QVERIFY(near(m.normalisedMse, 0.1875));
    const QString summary = describeTabularMetrics(m, "validation");
    QVERIFY2(summary.startsWith("validation, in y's units: MSE 0.75, RMSE"), qPrintable(summary));
    QVERIFY2(summary.endsWith("; on standardised targets (the loss's scale): MSE 0.1875"),
             qPrintable(summary));
}

void TestTabularOutputs::classMetrics()
{
    TabularSchema s;
    s.kind = TabularKind::MultiClass;
    s.targets = {"t"};
    s.classes = {"a", "b", "c"};
    s.classValues = {0, 1, 2};
    TabularSplit data;
    data.rows = 6;
    data.y = {0, 0, 1, 1, 2, 2};
    data.rawTarget = data.y;
    // Logits whose largest entries predict 0, 1, 1, 1, 2, 0.
    const std::vector<float> outputs = {3, 0, 0, 0, 3, 0, 0, 3, 0, 0, 3, 0, 0, 0, 3, 3, 0, 0};
    const TabularMetrics m = tabularMetrics(s, outputs, data);
    QVERIFY(near(m.accuracy, 4.0 / 6));
    QCOMPARE(m.confusion, (std::vector<int64_t>{1, 1, 0, 0, 2, 0, 1, 0, 1}));
    QVERIFY(near(m.perClass[0].precision, 0.5) && near(m.perClass[0].recall, 0.5));
    QVERIFY(near(m.perClass[1].precision, 2.0 / 3) && near(m.perClass[1].recall, 1.0));
    QVERIFY(near(m.perClass[1].f1, 0.8));
    QVERIFY(near(m.perClass[2].precision, 1.0) && near(m.perClass[2].recall, 0.5));
    QVERIFY(near(m.perClass[2].f1, 2.0 / 3));
    QVERIFY(near(m.macroF1, (0.5 + 0.8 + 2.0 / 3) / 3));
    QVERIFY(near(m.balancedAccuracy, (0.5 + 1.0 + 0.5) / 3)); // the mean recall
    QCOMPARE(m.perClass[2].support, int64_t(2));
    QVERIFY(std::isnan(m.rocAuc));
    const QJsonObject j = tabularMetricsJson(s, m, outputs, data);
    QVERIFY(near(j["accuracy"].toDouble(), 4.0 / 6));
    QVERIFY(near(j["balanced_accuracy"].toDouble(), 2.0 / 3));
    QVERIFY(near(j["per_class"]["b"]["f1"].toDouble(), 0.8));
    QCOMPARE(j["per_class"]["c"]["support"].toInteger(), qint64(2));
    QCOMPARE(j["confusion_matrix"].toArray()[2].toArray()[0].toInteger(), qint64(1));
    QCOMPARE(j["classes"].toArray().size(), qsizetype(3));
    QVERIFY(!j.contains("roc_auc")); // three classes
    const QString text = describeTabularMetrics(m, "validation");
    QVERIFY2(text.startsWith(
                 "validation: accuracy 66.67% (6 rows), balanced accuracy 66.67%, macro F1 0.6556"),
             qPrintable(text));
    QVERIFY(text.contains("confusion matrix"));
}

void TestTabularOutputs::rocAucByHand()
{
    // Positives score 0.3 and 1; negatives -2, 0.5 and 1. Of the 6 pairs, 3 are ordered
    // right, 2 wrong and one tied (counted half): AUC = 3.5 / 6.
    QVERIFY(near(rocAuc({-2, 0.5, 0.3, 1, 1}, {0, 0, 1, 1, 0}), 3.5 / 6));
    QVERIFY(near(rocAuc({0.1, 0.2, 0.8, 0.9}, {0, 0, 1, 1}), 1.0));
    QVERIFY(near(rocAuc({0.9, 0.8, 0.2, 0.1}, {0, 0, 1, 1}), 0.0));
    QVERIFY(near(rocAuc({0.5, 0.5, 0.5}, {0, 1, 1}), 0.5));
    QVERIFY(std::isnan(rocAuc({0.1, 0.2}, {1, 1})));
    // NaN scores (a diverged model) used to hang the tie scan; infinite ones rank normally.
    QVERIFY(std::isnan(rocAuc({0.1, NAN, 0.3, NAN}, {0, 1, 1, 0})));
    QVERIFY(std::isnan(rocAuc({NAN, NAN}, {0, 1})));
    QVERIFY(near(rocAuc({-INFINITY, 0.2, INFINITY, 1e38}, {0, 0, 1, 1}), 1.0));

    // Through the binary metrics: the logits rank the rows.
    TabularSchema s;
    s.kind = TabularKind::Binary;
    s.targets = {"t"};
    s.classes = {"no", "yes"};
    s.classValues = {0, 1};
    TabularSplit data;
    data.rows = 5;
    data.y = {0, 0, 1, 1, 0};
    data.rawTarget = data.y;
    const std::vector<float> logits = {-2, 0.5f, 0.3f, 1, 1};
    const TabularMetrics m = tabularMetrics(s, logits, data);
    QVERIFY(near(m.rocAuc, 3.5 / 6));
    QVERIFY(near(m.accuracy, 3.0 / 5)); // predicted 0, 1, 1, 1, 1
    const QJsonObject j = tabularMetricsJson(s, m, logits, data);
    QVERIFY(near(j["roc_auc"].toDouble(), 3.5 / 6));
    QVERIFY(describeTabularMetrics(m, "v").contains("ROC AUC 0.5833"));
}

void TestTabularOutputs::predictions()
{
    TabularOptions o;
    o.normalisation = "minmax";
    TabularDataset ds;
    QString error;
    QVERIFY(prepare(linear(30), o, ds, &error));
    // A file without the target column: inputs only; and one whose target is half empty is
    // fine for predict, which ignores the target.
    TabularSplit rows;
    QVERIFY2(
        encodeTabular(tableOf("b,a\n1,3\n2,40\n"), ds.schema, "fail", true, rows, nullptr, &error),
        qPrintable(error));
    QCOMPARE(rows.rows, int64_t(2));
    QVERIFY(rows.rawTarget.empty());
    QVERIFY(encodeTabular(tableOf("a,b,y\n1,3,\n2,4,5\n"), ds.schema, "fail", false, rows, nullptr,
                          &error));
    QCOMPARE(rows.rows, int64_t(2));
    // Outputs equal to the normalised targets predict the targets in the file's units.
    TabularSplit all;
    QVERIFY(encodeTabular(tableOf(linear(30)), ds.schema, "fail", true, all, nullptr, &error));
    const auto pred = tabularPredictions(ds.schema, all.y);
    for (size_t i = 0; i < pred.size(); ++i)
        QVERIFY(near(pred[i], 2.0 * static_cast<double>(i) + 0.5, 1e-4));
    // Missing features: refused with the line, or dropped and named.
    QVERIFY(!encodeTabular(tableOf("a,b\n1,2\n,3\n", "p.csv"), ds.schema, "fail", false, rows,
                           nullptr, &error));
    QVERIFY2(error.startsWith("p.csv:3: column 1 (\"a\"): missing value"), qPrintable(error));
    QStringList notes;
    QVERIFY(encodeTabular(tableOf("a,b\n1,2\n,3\n4,5\n"), ds.schema, "drop", false, rows, &notes,
                          &error));
    QCOMPARE(rows.source, (std::vector<int64_t>{0, 2}));
    QVERIFY(notes.join(' ').contains("line 3"));
    // A missing column is named.
    QVERIFY(!encodeTabular(tableOf("a,c\n1,2\n"), ds.schema, "fail", false, rows, nullptr, &error));
    QVERIFY2(error.contains("needs column \"b\""), qPrintable(error));
}

void TestTabularOutputs::schemaJson()
{
    QByteArray csv = "colour,size,label\n";
    for (int i = 0; i < 24; ++i)
        csv += QByteArray(i % 2 ? "red" : "blue") + "," + QByteArray::number(i) + "," +
               QByteArray(i % 3 ? "yes" : "no") + "\n";
    TabularOptions o;
    o.normalisation = "minmax";
    o.missing = "drop";
    o.testSplit = 0.25;
    TabularDataset ds;
    QString error;
    QVERIFY2(prepare(csv, o, ds, &error), qPrintable(error));
    TabularSchema back;
    QVERIFY2(TabularSchema::fromJson(ds.schema.toJson(), back, &error), qPrintable(error));
    QCOMPARE(back.toJson(), ds.schema.toJson());
    QCOMPARE(back.featureCategories[0], (QStringList{"blue", "red"}));
    QCOMPARE(back.classes, (QStringList{"no", "yes"}));
    QCOMPARE(back.normalisation, QString("minmax"));
    QCOMPARE(back.testSplit, 0.25);
    QCOMPARE(back.missing, QString("drop"));

    // A model saved before one-hot features and several targets still opens.
    QJsonObject old{{"task", "tabular"},
                    {"kind", "regression"},
                    {"features", QJsonArray{"a"}},
                    {"target", "y"},
                    {"feature_mean", QJsonArray{2.0}},
                    {"feature_std", QJsonArray{0.5}},
                    {"target_mean", 3.0},
                    {"target_std", 4.0}};
    QVERIFY2(TabularSchema::fromJson(old, back, &error), qPrintable(error));
    QCOMPARE(back.inputOffset, std::vector<float>{2.f});
    QCOMPARE(back.targetScale, std::vector<float>{4.f});
    QCOMPARE(back.targets, QStringList{"y"});
    // Broken statistics are refused.
    old["feature_std"] = QJsonArray{0.0};
    QVERIFY(!TabularSchema::fromJson(old, back, &error));
    QVERIFY(error.contains("normalisation statistics"));
}

void TestTabularOutputs::taskInterface()
{
    TaskOptions o;
    o.testSplit = 0.2;
    o.valSplit = 0.2;
    QString error;
    auto task = openTask("three.csv", threeClasses(60), o, &error);
    QVERIFY2(task, qPrintable(error));
    QVERIFY2(task->description().contains("60 rows, 2 features -> label (multi-class "
                                          "classification, 3 classes), 12 held out for "
                                          "validation, 12 for testing"),
             qPrintable(task->description()));
    QCOMPARE(task->data().trainRows, int64_t(36));
    QCOMPARE(task->data().trainX.size(), size_t(36 * 2));
    auto backend = createCpuBackend(1);
    Network net(*backend, 2, "dense", 3);
    net.initialize(1);
    const TaskMetrics m = task->evaluate(net);
    QCOMPARE(m.values["rows"].toInteger(), qint64(12));
    QVERIFY(m.values.contains("per_class"));
    QCOMPARE(m.values["test"].toObject()["rows"].toInteger(), qint64(12));
    QVERIFY(m.summary.contains("\ntest: accuracy"));

    // Evaluating a JSON dataset measures its test rows.
    const QByteArray json = R"({"m":4,"n":1,"x":[0,1,2,3],"y":[0,1,0,1],
                               "x_test":[4,5],"y_test":[0,1]})";
    auto train = openTask("j.json", json, {}, &error);
    QVERIFY2(train, qPrintable(error));
    const QJsonObject saved = train->toJson();
    auto eval = openTaskForModel("j.json", json, saved, true, {}, &error);
    QVERIFY2(eval, qPrintable(error));
    QCOMPARE(eval->data().valRows, int64_t(2));
    Network one(*backend, 1, "dense", 1);
    one.initialize(1);
    QVERIFY(eval->evaluate(one).summary.startsWith("j.json (test examples): accuracy"));

    // A broken saved task is refused naming the model file it came from.
    QJsonObject broken = saved;
    broken["kind"] = "weird";
    TaskOptions fromModel;
    fromModel.modelPath = "m.safetensors";
    QVERIFY(!openTaskForModel("j.json", json, broken, true, fromModel, &error));
    QVERIFY2(error.startsWith("m.safetensors: task: "), qPrintable(error));
}

QTEST_GUILESS_MAIN(TestTabularOutputs)
#include "TestTabularOutputs.moc"
