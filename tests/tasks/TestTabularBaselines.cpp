// The simple models beside a table's metrics: least squares against a fit worked out by hand,
// logistic regression against the optimum of the same objective found by a reference solver
// (scipy BFGS to a gradient of 1e-12, which scikit-learn's LogisticRegression(C=1) agrees with
// to 1e-5), the mean and majority exactly, degenerate tables, the saved coefficients, the
// report lines and the rare-class note.
#include "TabularBaselines.h"
#include "TabularLosses.h"
#include "TabularTestUtil.h"

#include "Backend.h"
#include "Network.h"
#include "Task.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QTest>

#include <cmath>

using namespace il;
using namespace il::tasks;
using namespace il::tasks::test;

namespace {

// Every row trains (no validation split), so the baselines are measured on the rows they saw.
TabularDataset trainOnAll(const QByteArray& csv, const QString& normalisation = "zscore")
{
    TabularOptions o;
    o.valSplit = 0;
    o.normalisation = normalisation;
    TabularDataset ds;
    QString error;
    if (!prepare(csv, o, ds, &error)) qWarning("%s", qPrintable(error));
    return ds;
}

TabularBaselines fit(const TabularDataset& ds)
{
    return fitTabularBaselines(ds.schema, ds.train.x, ds.train.y, ds.train.rows);
}

// The baselines' metrics on the training rows, next to a network scoring `network`.
QJsonObject scored(const TabularDataset& ds, const TabularBaselines& b,
                   const TabularMetrics& network = {})
{
    return tabularBaselinesJson(ds.schema, b, ds.train.x, ds.train, network);
}

// rows of "x1,x2,label" with x1 = i, x2 = i * i % 11 (the reference fits below use them).
QByteArray squares(int rows, int (*label)(int))
{
    QByteArray csv = "x1,x2,label\n";
    for (int i = 0; i < rows; ++i)
        csv += QByteArray::number(i) + "," + QByteArray::number(i * i % 11) + "," +
               QByteArray::number(label(i)) + "\n";
    return csv;
}

} // namespace

class TestTabularBaselines : public QObject {
    Q_OBJECT

private slots:
    void leastSquaresByHand_data();
    void leastSquaresByHand();
    void leastSquaresDegenerate_data();
    void leastSquaresDegenerate();
    void severalTargets();
    void logisticBinary();
    void logisticMulticlass();
    void majorityAndOneClass();
    void savedCoefficients();
    void reportLines();
    void imbalanceNote();
    void taskReportsBaselines();
    void fastOnALargeTable();
    void tooLargeToFit();
    void rowLossesAsTheTrainerMeasures();
    void pairedComparison();
};

void TestTabularBaselines::leastSquaresByHand_data()
{
    // Min-max inputs are not centred: the intercept must carry their mean.
    QTest::addColumn<QString>("normalisation");
    QTest::newRow("zscore") << "zscore";
    QTest::newRow("minmax") << "minmax";
}

void TestTabularBaselines::leastSquaresByHand()
{
    QFETCH(QString, normalisation);
    // x = 0, 1, 2, 3 and y = 1, 3, 2, 5: slope = sum (x - 1.5)(y - 2.75) / sum (x - 1.5)^2
    // = 5.5 / 5 = 1.1, intercept 2.75 - 1.1 * 1.5 = 1.1; predictions 1.1, 2.2, 3.3, 4.4, squared
    // errors 0.01, 0.64, 1.69, 0.36: MSE 0.675. The mean 2.75 scores 8.75 / 4 = 2.1875.
    const TabularDataset ds = trainOnAll("x,y\n0,1\n1,3\n2,2\n3,5\n", normalisation);
    const TabularBaselines b = fit(ds);
    QVERIFY(b.linear.fitted());
    const QJsonObject j = scored(ds, b);
    QVERIFY(near(j["mean"]["mse"].toDouble(), 2.1875, 1e-5));
    QVERIFY(near(j["mean"]["r2"].toDouble(), 0.0, 1e-6));
    QVERIFY2(near(j["linear_regression"]["mse"].toDouble(), 0.675, 1e-5),
             qPrintable(QString::number(j["linear_regression"]["mse"].toDouble())));
    QVERIFY(near(j["linear_regression"]["r2"].toDouble(), 1 - 0.675 / 2.1875, 1e-5));
    // The coefficients, back in the file's units (inputs and targets are both scaled).
    const TabularSchema& s = ds.schema;
    const double slope = b.linear.weights[0] * s.targetScale[0] / s.inputScale[0];
    QVERIFY2(near(slope, 1.1, 1e-5), qPrintable(QString::number(slope)));
    QCOMPARE(j["fitted_on_rows"].toInteger(), qint64(4));
}

void TestTabularBaselines::leastSquaresDegenerate_data()
{
    QTest::addColumn<QByteArray>("csv");
    QTest::addColumn<double>("mse"); // of least squares on the training rows
    // y = 1 + 2a; c is constant, b = 2a repeats a: the fit is still exact.
    QByteArray collinear = "a,b,c,y\n";
    for (int i = 0; i < 8; ++i)
        collinear += QByteArray::number(i) + "," + QByteArray::number(2 * i) + ",5," +
                     QByteArray::number(1 + 2 * i) + "\n";
    QTest::newRow("constant and collinear columns") << collinear << 0.0;
    // Five inputs, three rows: a plane passes through every row.
    QTest::newRow("more inputs than rows")
        << QByteArray("a,b,c,d,e,y\n1,0,3,1,2,7\n2,5,1,0,0,-1\n0,1,1,4,2,3\n") << 0.0;
    // Nothing varies but the target: the mean is all there is.
    QTest::newRow("every input constant") << QByteArray("a,y\n1,2\n1,4\n1,6\n1,8\n") << 5.0;
}

void TestTabularBaselines::leastSquaresDegenerate()
{
    QFETCH(QByteArray, csv);
    QFETCH(double, mse);
    const TabularDataset ds = trainOnAll(csv);
    const TabularBaselines b = fit(ds);
    QVERIFY(b.linear.fitted());
    for (double w : b.linear.weights)
        QVERIFY(std::isfinite(w));
    const QJsonObject j = scored(ds, b);
    const double got = j["linear_regression"]["mse"].toDouble();
    QVERIFY2(near(got, mse, 1e-4 * std::max(1.0, mse)), qPrintable(QString::number(got)));
}

void TestTabularBaselines::severalTargets()
{
    // y1 = 3a - b, y2 = 10 - a: two exact planes, each target its own.
    QByteArray csv = "a,b,y1,y2\n";
    for (int i = 0; i < 10; ++i) {
        const int a = i, b = i * i % 7;
        csv += QByteArray::number(a) + "," + QByteArray::number(b) + "," +
               QByteArray::number(3 * a - b) + "," + QByteArray::number(10 - a) + "\n";
    }
    TabularOptions o;
    o.valSplit = 0;
    o.target = "y1,y2";
    TabularDataset ds;
    QString error;
    QVERIFY2(prepare(csv, o, ds, &error), qPrintable(error));
    const TabularBaselines b = fit(ds);
    QCOMPARE(b.linear.outputs, int64_t(2));
    const QJsonObject j = scored(ds, b);
    QVERIFY(near(j["linear_regression"]["mse"].toDouble(), 0.0, 1e-4));
    QVERIFY(j["mean"]["mse"].toDouble() > 1.0);
    QVERIFY(j["linear_regression"].toObject().contains("per_target"));
}

void TestTabularBaselines::logisticBinary()
{
    const TabularDataset ds =
        trainOnAll(squares(12, [](int i) { return i == 3 || i == 5 || i == 6 || i >= 8 ? 1 : 0; }));
    QCOMPARE(ds.schema.kind, TabularKind::Binary);
    const TabularBaselines b = fit(ds);
    QVERIFY(b.converged);
    // The optimum of mean log loss + |w|^2 / (2 n) on the z-scored inputs (see the top).
    const double w[] = {1.12230261, 0.32799172}, bias = 0.39642404;
    for (int j = 0; j < 2; ++j)
        QVERIFY2(near(b.linear.weights[static_cast<size_t>(j)], w[j], 1e-6),
                 qPrintable(QString::number(b.linear.weights[static_cast<size_t>(j)], 'g', 9)));
    QVERIFY(near(b.linear.bias[0], bias, 1e-6));
    const QJsonObject j = scored(ds, b);
    QVERIFY(near(j["logistic_regression"]["accuracy"].toDouble(), 10.0 / 12, 1e-9));
    QVERIFY(j["logistic_regression"].toObject().contains("roc_auc"));
}

void TestTabularBaselines::logisticMulticlass()
{
    const TabularDataset ds = trainOnAll(squares(30, [](int i) { return i * 5 % 7 / 3; }));
    QCOMPARE(ds.schema.kind, TabularKind::MultiClass);
    const TabularBaselines b = fit(ds);
    QVERIFY(b.converged);
    // Softmax over three classes, every class's weights penalised, intercepts free.
    const double w[3][2] = {
        {0.01650173, -0.10601743}, {-0.00981593, -0.07798575}, {-0.0066858, 0.18400318}};
    const double bias[3] = {0.40169764, 0.40276625, -0.80446389};
    for (size_t c = 0; c < 3; ++c) {
        for (size_t j = 0; j < 2; ++j)
            QVERIFY2(near(b.linear.weights[j * 3 + c], w[c][j], 1e-6),
                     qPrintable(QString("class %1 input %2: %3")
                                    .arg(c)
                                    .arg(j)
                                    .arg(b.linear.weights[j * 3 + c], 0, 'g', 9)));
        QVERIFY(near(b.linear.bias[c], bias[c], 1e-6));
    }
    const QJsonObject j = scored(ds, b);
    QVERIFY(near(j["logistic_regression"]["accuracy"].toDouble(), 14.0 / 30, 1e-9));
}

void TestTabularBaselines::majorityAndOneClass()
{
    // 13, 13 and 4 rows: the first of the tied classes is the majority.
    const TabularDataset ds = trainOnAll(squares(30, [](int i) { return i * 5 % 7 / 3; }));
    const TabularBaselines b = fit(ds);
    QCOMPARE(b.majorityClass, 0);
    const QJsonObject j = scored(ds, b);
    QVERIFY(near(j["majority_class"]["accuracy"].toDouble(), 13.0 / 30, 1e-12));
    QVERIFY(near(j["majority_class"]["balanced_accuracy"].toDouble(), 1.0 / 3, 1e-12));
    QCOMPARE(j["majority_class"]["class"].toString(), QString("0"));

    // Training rows of one class: no logistic regression, said so, the majority stands.
    const std::vector<float> zeros(static_cast<size_t>(ds.train.rows), 0.f);
    const TabularBaselines one = fitTabularBaselines(ds.schema, ds.train.x, zeros, ds.train.rows);
    QVERIFY(one.available());
    QVERIFY(!one.linear.fitted());
    QCOMPARE(one.notFitted, QString("the training rows hold one class"));
    const QJsonObject k = scored(ds, one);
    QVERIFY(k["logistic_regression"].isNull());
    QVERIFY(near(k["majority_class"]["accuracy"].toDouble(), 13.0 / 30, 1e-12));
    const QStringList lines =
        describeTabularBaselines(k, QJsonObject{{"accuracy", 0.5}}, "t", false);
    QVERIFY2(lines.first().contains("logistic regression not fitted: the training rows hold one "
                                    "class"),
             qPrintable(lines.join('\n')));

    // A class absent from the training rows is never predicted by either.
    std::vector<float> twoOfThree = ds.train.y;
    for (float& v : twoOfThree)
        v = v == 2.f ? 1.f : v;
    const TabularBaselines absent =
        fitTabularBaselines(ds.schema, ds.train.x, twoOfThree, ds.train.rows);
    QVERIFY(absent.linear.fitted());
    const auto out = absent.linear.apply(ds.train.x, ds.train.rows);
    for (size_t r = 0; r < static_cast<size_t>(ds.train.rows); ++r)
        QVERIFY(out[r * 3 + 2] < out[r * 3] && out[r * 3 + 2] < out[r * 3 + 1]);
}

void TestTabularBaselines::savedCoefficients()
{
    const TabularDataset ds = trainOnAll(squares(30, [](int i) { return i * 5 % 7 / 3; }));
    const TabularBaselines b = fit(ds);
    TabularBaselines back;
    QString error;
    QVERIFY2(TabularBaselines::fromJson(b.toJson(), ds.schema, back, &error), qPrintable(error));
    QCOMPARE(back.linear.apply(ds.train.x, ds.train.rows),
             b.linear.apply(ds.train.x, ds.train.rows));
    QCOMPARE(back.constant.apply(ds.train.x, ds.train.rows),
             b.constant.apply(ds.train.x, ds.train.rows));
    QCOMPARE(back.majorityClass, 0);
    // Coefficients that do not fit the inputs (an edited file) are refused, saying why.
    QJsonObject broken = b.toJson();
    QJsonObject linear = broken["linear"].toObject();
    linear["weights"] = QJsonArray{1.0, 2.0};
    broken["linear"] = linear;
    QVERIFY(!TabularBaselines::fromJson(broken, ds.schema, back, &error));
    QVERIFY2(error.contains("do not match the 2 inputs and 3 outputs"), qPrintable(error));
    QVERIFY(!back.available());
}

void TestTabularBaselines::reportLines()
{
    const TabularDataset ds = trainOnAll("x,y\n0,1\n1,3\n2,2\n3,5\n");
    const TabularBaselines b = fit(ds);
    TabularMetrics worse; // a network behind least squares
    worse.mse = 1.5;
    QJsonObject net{{"mse", 1.5}, {"r2", 0.3}};
    QJsonObject j = scored(ds, b, worse);
    QVERIFY(!j["network_beats_linear_model"].toBool(true));
    QStringList lines = describeTabularBaselines(j, net, "training", false);
    QCOMPARE(lines.size(), 2);
    QVERIFY2(lines[0].startsWith("baselines on training: the mean MSE 2.1875 (R2 0.0000), linear "
                                 "regression (least squares) MSE 0.675 (R2 0.6914); the network "
                                 "MSE 1.5 (R2 0.3000)"),
             qPrintable(lines[0]));
    QCOMPARE(lines[1], QString("the network does not beat linear regression here: MSE 1.5 vs "
                               "0.675"));
    QCOMPARE(describeTabularBaselines(j, net, "training", true).first(),
             QString("MSE: network 1.5, linear 0.675, mean 2.188"));
    TabularMetrics better;
    better.mse = 0.5;
    j = scored(ds, b, better);
    QVERIFY(j["network_beats_linear_model"].toBool(false));
    QCOMPARE(describeTabularBaselines(j, QJsonObject{{"mse", 0.5}}, "training", false).size(), 1);

    // Classes: the majority beating the network's accuracy is named too.
    const TabularDataset c =
        trainOnAll(squares(12, [](int i) { return i == 3 || i == 5 || i == 6 || i >= 8 ? 1 : 0; }));
    TabularMetrics poor;
    poor.accuracy = 0.5;
    poor.balancedAccuracy = 0.5;
    const QJsonObject k = scored(c, fit(c), poor);
    lines = describeTabularBaselines(k, QJsonObject{{"accuracy", 0.5}, {"balanced_accuracy", 0.5}},
                                     "validation", false);
    QCOMPARE(lines.size(), 3);
    QVERIFY2(lines[0].startsWith("baselines on validation: majority class (always '1') accuracy "
                                 "58.33% (balanced 50.00%), logistic regression accuracy 83.33%"),
             qPrintable(lines[0]));
    QVERIFY2(lines[1].startsWith("the network does not beat logistic regression here: accuracy "
                                 "50.00% vs 83.33%, balanced accuracy 50.00% vs "),
             qPrintable(lines[1]));
    QCOMPARE(lines[2], QString("always answering '1' scores 58.33% accuracy, more than the "
                               "network's 50.00%: look at balanced accuracy"));
    QVERIFY(describeTabularBaselines(k, QJsonObject{{"accuracy", 0.5}}, "v", true)
                .first()
                .startsWith("accuracy: network 50.0%, logistic 83.3%, majority 58.3% · balanced:"));
    QVERIFY(describeTabularBaselines(QJsonObject(), net, "v", false).isEmpty());
}

void TestTabularBaselines::imbalanceNote()
{
    QByteArray csv = "x,label\n";
    for (int i = 0; i < 100; ++i)
        csv += QByteArray::number(i) + (i % 14 == 0 ? ",spam\n" : ",ham\n");
    const TabularDataset ds = trainOnAll(csv);
    QCOMPARE(classImbalanceNote(ds.schema, ds.train.y, ds.train.rows),
             QString("class 'spam' is 8.0% of the training rows: always answering 'ham' scores "
                     "92.0% accuracy; look at balanced accuracy, or weight the classes "
                     "(--class-weight balanced)"));
    // 30% is not rare; nor are ten even classes of 10% each.
    QByteArray even = "x,label\n", ten = "x,label\n";
    for (int i = 0; i < 100; ++i) {
        even += QByteArray::number(i) + (i % 10 < 3 ? ",a\n" : ",b\n");
        ten += QByteArray::number(i) + ",c" + QByteArray::number(i % 10) + "\n";
    }
    const TabularDataset e = trainOnAll(even), t = trainOnAll(ten);
    QVERIFY(classImbalanceNote(e.schema, e.train.y, e.train.rows).isEmpty());
    QVERIFY(classImbalanceNote(t.schema, t.train.y, t.train.rows).isEmpty());
    // The table task says it at load, among its notes.
    QString error;
    auto task = openTask("spam.csv", csv, {}, &error);
    QVERIFY2(task, qPrintable(error));
    QVERIFY2(task->notes().join('\n').contains("of the training rows: always answering 'ham'"),
             qPrintable(task->notes().join('\n')));
}

void TestTabularBaselines::taskReportsBaselines()
{
    TaskOptions o;
    o.valSplit = 0.25;
    o.testSplit = 0.25;
    QString error;
    auto task = openTask("lin.csv", linear(40), o, &error);
    QVERIFY2(task, qPrintable(error));
    auto backend = createCpuBackend(1);
    Network net(*backend, 2, "dense", 1);
    net.initialize(1); // untrained: far behind least squares on y = 2a + 0.5
    const TaskMetrics m = task->evaluate(net);
    const QJsonObject b = m.values["baselines"].toObject();
    QVERIFY(near(b["linear_regression"]["mse"].toDouble(), 0.0, 1e-6));
    QCOMPARE(b["linear_regression"]["rows"].toInteger(), m.values["rows"].toInteger());
    QVERIFY(b["mean"]["mse"].toDouble() > 10);
    QVERIFY(m.values["test"]["baselines"]["linear_regression"].isObject());
    QVERIFY2(m.summary.contains("\nbaselines on validation: the mean MSE") &&
                 m.summary.contains("\nbaselines on test: ") &&
                 m.summary.contains("\nthe network does not beat linear regression here: MSE"),
             qPrintable(m.summary));

    // Saved with the model, measured on another file by `evaluate`.
    const QJsonObject saved = task->toJson();
    QVERIFY(saved.contains("baselines"));
    auto eval = openTaskForModel("more.csv", linear(60), saved, true, {}, &error);
    QVERIFY2(eval, qPrintable(error));
    const TaskMetrics e = eval->evaluate(net);
    QVERIFY(near(e.values["baselines"]["linear_regression"]["mse"].toDouble(), 0.0, 1e-5));
    QCOMPARE(e.values["baselines"]["linear_regression"]["rows"].toInteger(), qint64(60));
    QCOMPARE(e.values["baselines"]["training_rows"].toInteger(), qint64(20));
    // A model saved without them says so rather than refit on the rows it is measured on.
    QJsonObject old = saved;
    old.remove("baselines");
    auto oldEval = openTaskForModel("more.csv", linear(60), old, true, {}, &error);
    QVERIFY2(oldEval, qPrintable(error));
    const TaskMetrics f = oldEval->evaluate(net);
    QVERIFY(f.values["baselines"].toObject().contains("not_available"));
    QVERIFY2(f.summary.contains("\nbaselines: not available: the model file has none"),
             qPrintable(f.summary));
}

void TestTabularBaselines::fastOnALargeTable()
{
    // 50,000 rows x 60 features, two classes: the fit takes well under a second on one core
    // (the bound here leaves room for a loaded machine and sanitizers).
    constexpr int rows = 50000, d = 60;
    TabularSchema s;
    for (int j = 0; j < d; ++j) {
        s.features << QString("f%1").arg(j);
        s.featureCategories.emplace_back();
    }
    s.target = "y";
    s.targets = {"y"};
    s.kind = TabularKind::Binary;
    s.classes = {"0", "1"};
    s.classValues = {0.f, 1.f};
    std::vector<float> x(static_cast<size_t>(rows) * d), y(rows);
    uint64_t state = 12345;
    auto uniform = [&] { // xorshift: the same table everywhere
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        return static_cast<double>(state >> 11) / 9007199254740992.0 - 0.5;
    };
    for (size_t r = 0; r < static_cast<size_t>(rows); ++r) {
        double z = 0;
        for (size_t j = 0; j < static_cast<size_t>(d); ++j) {
            x[r * d + j] = static_cast<float>(3.4 * uniform());
            z += (j % 3 == 0 ? 0.5 : -0.2) * x[r * d + j];
        }
        y[r] = z + 2 * uniform() > 0 ? 1.f : 0.f;
    }
    QElapsedTimer timer;
    timer.start();
    const TabularBaselines b = fitTabularBaselines(s, x, y, rows);
    const qint64 ms = timer.elapsed();
    qInfo("logistic regression on %d x %d: %lld ms, %d iterations", rows, d, ms, b.iterations);
    QVERIFY(b.linear.fitted());
    QVERIFY(b.converged);
    QCOMPARE(b.fittedRows, int64_t(rows));
    QVERIFY2(ms < 10000, qPrintable(QString::number(ms)));
}

void TestTabularBaselines::tooLargeToFit()
{
    // 500 classes of 60 inputs: an even sample within a second's work would be 655 rows, too
    // few to stand for 1,000; logistic regression is left out, saying why, the majority stays.
    constexpr int rows = 1000, d = 60, k = 500;
    TabularSchema s;
    for (int j = 0; j < d; ++j) {
        s.features << QString("f%1").arg(j);
        s.featureCategories.emplace_back();
    }
    s.target = "y";
    s.targets = {"y"};
    s.kind = TabularKind::MultiClass;
    for (int c = 0; c < k; ++c) {
        s.classes << QString("c%1").arg(c);
        s.classValues.push_back(static_cast<float>(c));
    }
    std::vector<float> x(static_cast<size_t>(rows) * d, 0.5f), y(rows);
    for (int r = 0; r < rows; ++r)
        y[static_cast<size_t>(r)] = static_cast<float>(r % k);
    QElapsedTimer timer;
    timer.start();
    const TabularBaselines b = fitTabularBaselines(s, x, y, rows);
    QVERIFY(timer.elapsed() < 1000);
    QVERIFY(b.available());
    QVERIFY(!b.linear.fitted());
    QCOMPARE(b.notFitted, QString("60 inputs x 500 outputs take too long to fit"));

    // A sample is named in the line.
    QJsonObject j{{"training_rows", 90000},
                  {"fitted_on_rows", 30000},
                  {"mean", QJsonObject{{"mse", 4.0}, {"r2", 0.0}}},
                  {"linear_regression", QJsonObject{{"mse", 2.0}, {"r2", 0.5}}},
                  {"network_beats_linear_model", true}};
    QVERIFY2(describeTabularBaselines(j, QJsonObject{{"mse", 1.0}, {"r2", 0.75}}, "v", false)
                 .first()
                 .endsWith("(fitted on an even sample of 30000 of the 90000 training rows)"),
             qPrintable(describeTabularBaselines(j, QJsonObject{}, "v", false).join('\n')));
}

// Each row's loss as the trainer's losses define it, by hand: squared error averaged over the
// targets, the logistic loss of one logit, softmax cross-entropy; class weights multiply a row.
void TestTabularBaselines::rowLossesAsTheTrainerMeasures()
{
    TabularSchema regression;
    regression.kind = TabularKind::Regression;
    // Two targets: row 0 errs by (1, -3), row 1 by (0, 2).
    auto r = tabularRowLosses(regression, {1, -1, 5, 2}, {0, 2, 5, 0}, 2, {});
    QCOMPARE(r.size(), size_t(2));
    QVERIFY(test::near(r[0], (1 + 9) / 2.0, 1e-12));
    QVERIFY(test::near(r[1], (0 + 4) / 2.0, 1e-12));

    TabularSchema binary;
    binary.kind = TabularKind::Binary;
    // logit 0: log 2 whatever the label; logit 3, label 1: log(1 + e^-3); label 0: log(1 + e^3).
    r = tabularRowLosses(binary, {0, 3, 3, -800}, {1, 1, 0, 0}, 4, {});
    QVERIFY(test::near(r[0], std::log(2.0), 1e-12));
    QVERIFY(test::near(r[1], std::log1p(std::exp(-3.0)), 1e-12));
    QVERIFY(test::near(r[2], std::log1p(std::exp(3.0)), 1e-12));
    QVERIFY2(std::isfinite(r[3]) && r[3] < 1e-300, "a large logit neither overflows nor rounds up");
    // Weights 0.5 (class 0) and 4 (class 1).
    r = tabularRowLosses(binary, {0, 0}, {1, 0}, 2, {0.5f, 4.f});
    QVERIFY(test::near(r[0], 4 * std::log(2.0), 1e-12));
    QVERIFY(test::near(r[1], 0.5 * std::log(2.0), 1e-12));

    TabularSchema classes;
    classes.kind = TabularKind::MultiClass;
    // Logits (1, 2, 3): -log softmax of class 0 and of class 2, the second weighted by 2.
    const double logSum = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
    r = tabularRowLosses(classes, {1, 2, 3, 1, 2, 3}, {0, 2}, 2, {1.f, 1.f, 2.f});
    QVERIFY(test::near(r[0], logSum - 1, 1e-9));
    QVERIFY(test::near(r[1], 2 * (logSum - 3), 1e-9));
    // Logits far beyond exp's range still give a finite loss.
    r = tabularRowLosses(classes, {1000, 0, -1000}, {1}, 1, {});
    QVERIFY(test::near(r[0], 1000, 1e-9));
}

// The paired comparison: means, the mean difference and its standard error by hand.
void TestTabularBaselines::pairedComparison()
{
    // Differences 1, 2, 3, 6: mean 3, sample variance (4 + 1 + 0 + 9) / 3, over 4 rows.
    const PairedLosses p = comparePaired({2, 4, 6, 10}, {1, 2, 3, 4});
    QCOMPARE(p.rows, int64_t(4));
    QVERIFY(test::near(p.meanA, 5.5));
    QVERIFY(test::near(p.meanB, 2.5));
    QVERIFY(test::near(p.meanDiff, 3));
    QVERIFY(test::near(p.stdError, std::sqrt(14.0 / 3 / 4), 1e-12));
    QVERIFY(std::isnan(comparePaired({1}, {2}).stdError)); // one row: no spread to measure
    QCOMPARE(comparePaired({}, {}).rows, int64_t(0));
}

QTEST_GUILESS_MAIN(TestTabularBaselines)
#include "TestTabularBaselines.moc"
