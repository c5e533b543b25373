// tasks::lookInside (NetworkInside.h) without the studio: which view each kind of data gets, the
// maps and weights of a two-feature table, dead and saturated units, and the principal plane of
// the names embeddings.
#include "NetworkInside.h"

#include "Backend.h"
#include "Model.h"
#include "Task.h"

#include <QTest>

#include <cmath>

using namespace il;
using namespace il::tasks;

namespace {

std::unique_ptr<Model> fresh(const QString& name, const QByteArray& bytes, const std::string& spec)
{
    QString error;
    std::shared_ptr<Task> task = openTask(name, bytes, TaskOptions{}, &error);
    if (!task) qFatal("%s", qPrintable(error));
    auto model = std::make_unique<Model>();
    model->backend = createCpuBackend(1);
    model->task = task;
    task->applyDefaults(model->config);
    model->build(spec);
    return model;
}

QByteArray twoFeatures()
{
    QByteArray csv = "x,y,label\n";
    for (int i = 0; i < 200; ++i) {
        const double x = (i % 20) / 10.0 - 1, y = (i / 20) / 5.0 - 1;
        csv += QByteArray::number(x) + "," + QByteArray::number(y) + "," +
               (x * y > 0 ? "same" : "other") + "\n";
    }
    return csv;
}

// Sets a tensor of the network to one value everywhere.
void fill(Network& net, const std::string& name, float value)
{
    for (const NamedTensor& t : net.namedTensors())
        if (t.name == name) {
            std::vector<float> v(static_cast<size_t>(t.tensor.size()), value);
            net.backend().upload(t.tensor, v.data());
            return;
        }
    qFatal("no tensor %s", name.c_str());
}

} // namespace

class TestNetworkInside : public QObject {
    Q_OBJECT

private slots:
    void planeOfTwoFeatures();
    void deadAndSaturatedUnits();
    void otherTablesGetHistograms();
    void principalPlaneOfKnownPoints();
};

void TestNetworkInside::planeOfTwoFeatures()
{
    auto model = fresh("t.csv", twoFeatures(), "dense:6,tanh,dense:5,relu,dense");
    InsideRequest request;
    request.side = 12;
    const NetworkInside inside = lookInside(*model->task, *model->network, request);
    QCOMPARE(inside.view, InsideView::Plane);
    QCOMPARE(inside.mapWidth, 12);
    QCOMPARE(inside.mapHeight, 12);
    QCOMPARE(inside.columns.size(), size_t(2));
    const UnitColumn& first = inside.columns[0];
    QCOMPARE(first.kind, std::string("tanh"));
    QCOMPARE(first.shown, 6);
    QCOMPARE(first.maps.size(), size_t(6 * 12 * 12));
    QCOMPARE(first.fanIn, int64_t(2)); // from x and y
    QCOMPARE(first.weights.size(), size_t(6 * 2));
    const UnitColumn& second = inside.columns[1];
    QCOMPARE(second.kind, std::string("relu"));
    QCOMPARE(second.fanIn, int64_t(6));
    // A tanh unit's map lies in (-1, 1), and a fresh unit is not flat over the plane.
    QVERIFY(first.lo >= -1 && first.hi <= 1 && first.hi > first.lo);
    QCOMPARE(inside.classes, 2);
    QCOMPARE(inside.output.size(), size_t(144));
    for (float c : inside.output)
        QVERIFY(c == 0 || c == 1);
}

void TestNetworkInside::deadAndSaturatedUnits()
{
    auto model = fresh("t.csv", twoFeatures(), "dense:4,relu,dense:4,tanh,dense");
    // ReLUs whose bias is far below anything the weights can add: 0 on every row, dead.
    fill(*model->network, "layers.0.bias", -100.f);
    // tanh units driven far past their ends: saturated, not dead (the sign follows the inputs).
    fill(*model->network, "layers.2.weight", 0.f);
    fill(*model->network, "layers.2.bias", 50.f);
    const NetworkInside inside = lookInside(*model->task, *model->network);
    QCOMPARE(inside.columns.size(), size_t(2));
    for (int u = 0; u < 4; ++u) {
        QVERIFY(inside.columns[0].dead[static_cast<size_t>(u)]);
        QVERIFY(!inside.columns[0].saturated[static_cast<size_t>(u)]);
    }
    // Constant at tanh(50) = 1 on every row: that is the same output everywhere, so dead too.
    for (int u = 0; u < 4; ++u)
        QVERIFY(inside.columns[1].dead[static_cast<size_t>(u)]);

    // A tanh fed by the inputs with huge weights: at its ends almost everywhere, not constant.
    auto other = fresh("t.csv", twoFeatures(), "dense:3,tanh,dense");
    fill(*other->network, "layers.0.weight", 400.f);
    fill(*other->network, "layers.0.bias", 0.f);
    const NetworkInside s = lookInside(*other->task, *other->network);
    for (int u = 0; u < 3; ++u) {
        QVERIFY(!s.columns[0].dead[static_cast<size_t>(u)]);
        QVERIFY(s.columns[0].saturated[static_cast<size_t>(u)]);
    }
}

void TestNetworkInside::otherTablesGetHistograms()
{
    QByteArray csv = "a,b,c,y\n";
    for (int i = 0; i < 150; ++i)
        csv += QByteArray::number(i % 7) + "," + QByteArray::number(i % 11) + "," +
               QByteArray::number(i % 5) + "," + QByteArray::number(i % 13) + "\n";
    auto model = fresh("t.csv", csv, "dense:40,tanh,dense");
    const NetworkInside inside = lookInside(*model->task, *model->network);
    QCOMPARE(inside.view, InsideView::Distributions);
    QCOMPARE(inside.columns.size(), size_t(1));
    const UnitColumn& c = inside.columns[0];
    QCOMPARE(c.units, int64_t(40));
    QCOMPARE(c.shown, InsideRequest{}.maxUnits);
    QCOMPARE(c.histograms.size(), size_t(c.shown * kInsideBins));
    // Every judged row is counted once per unit.
    int counted = 0;
    for (int b = 0; b < kInsideBins; ++b)
        counted += c.histograms[static_cast<size_t>(b)];
    QVERIFY(counted > 0);
    for (int u = 1; u < c.shown; ++u) {
        int n = 0;
        for (int b = 0; b < kInsideBins; ++b)
            n += c.histograms[static_cast<size_t>(u * kInsideBins + b)];
        QCOMPARE(n, counted);
    }
}

void TestNetworkInside::principalPlaneOfKnownPoints()
{
    // Points on a line along (1, 2, 2) / 3, with a small spread along (2, -2, 1) / 3 and none
    // along the third axis: the first axis carries the line, the plane all the variance.
    std::vector<float> rows;
    const int n = 9;
    for (int i = 0; i < n; ++i) {
        const double t = i - 4, s = (i % 3 - 1) * 0.1;
        rows.push_back(static_cast<float>((1 * t + 2 * s) / 3));
        rows.push_back(static_cast<float>((2 * t - 2 * s) / 3));
        rows.push_back(static_cast<float>((2 * t + 1 * s) / 3));
    }
    std::vector<float> x, y;
    const double explained = principalPlane(rows, n, 3, x, y);
    QVERIFY2(std::fabs(explained - 1) < 1e-6, qPrintable(QString::number(explained)));
    for (int i = 0; i < n; ++i) // the positions along the line, centred (sign: largest component +)
        QVERIFY2(std::fabs(x[static_cast<size_t>(i)] - (i - 4)) <
                     1e-2, // s and t correlate a little
                 qPrintable(QString("%1: %2").arg(i).arg(x[static_cast<size_t>(i)])));
    double spread = 0;
    for (float v : y)
        spread = std::max(spread, static_cast<double>(std::fabs(v)));
    QVERIFY(spread > 0.05 && spread < 0.2);
    // The same rows give the same plane.
    std::vector<float> x2, y2;
    principalPlane(rows, n, 3, x2, y2);
    QCOMPARE(x2, x);
    QCOMPARE(y2, y);
}

QTEST_MAIN(TestNetworkInside)
#include "TestNetworkInside.moc"
