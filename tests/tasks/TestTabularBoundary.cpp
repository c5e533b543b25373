// The decision-boundary grid (TabularBoundary.h): every grid value is the network's prediction
// for the same row written into a CSV file and encoded the way evaluate encodes it; the other
// features are held at the training rows' mean and most common category (or at one row); the
// points are the rows, in the file's units; bad planes are refused with a message.
#include "TabularBoundary.h"
#include "TabularTestUtil.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <map>

using namespace il;
using namespace il::tasks;
using namespace il::tasks::test;

class TestTabularBoundary : public QObject {
    Q_OBJECT

private slots:
    void gridIsThePredictionOfEncodedRows_data();
    void gridIsThePredictionOfEncodedRows();
    void heldAtTheMeanOrARow();
    void pointsAreTheRowsInFileUnits();
    void refusesBadPlanes();
};

namespace {

const char* const kColours[] = {"red", "green", "blue"};

// 80 rows: three numbers on different scales, a colour (red most common) and a target that is
// a class (three words) or a number.
QByteArray mixedTable(bool regression)
{
    QByteArray csv = "a,colour,b,c,target\n";
    for (int i = 0; i < 80; ++i) {
        const double a = 0.5 * i, b = 100.0 + 37.0 * ((i * 7) % 11), c = std::sin(i) * 3;
        const char* colour = kColours[i % 5 < 3 ? 0 : i % 5 - 2];
        csv += QByteArray::number(a) + "," + colour + "," + QByteArray::number(b) + "," +
               QByteArray::number(c) + ",";
        if (regression)
            csv += QByteArray::number(a * 2 - b / 50 + c);
        else
            csv += kColours[(i / 3 + i % 2) % 3] + QByteArray("_class");
        csv += "\n";
    }
    return csv;
}

TaskData dataOf(const TabularDataset& ds)
{
    TaskData d;
    d.inputWidth = ds.schema.inputWidth();
    d.outputWidth = ds.schema.outputWidth();
    d.targetWidth = ds.schema.targetWidth();
    d.trainRows = ds.train.rows;
    d.valRows = ds.val.rows;
    d.trainX = ds.train.x;
    d.trainY = ds.train.y;
    d.valX = ds.val.x;
    d.valY = ds.val.y;
    return d;
}

QByteArray number(double v)
{
    return QByteArray::number(v, 'g', 17);
}

} // namespace

void TestTabularBoundary::gridIsThePredictionOfEncodedRows_data()
{
    QTest::addColumn<bool>("regression");
    QTest::addColumn<QString>("normalisation");
    QTest::newRow("classes, z-scores") << false << "zscore";
    QTest::newRow("classes, min-max") << false << "minmax";
    QTest::newRow("regression, z-scores") << true << "zscore";
}

void TestTabularBoundary::gridIsThePredictionOfEncodedRows()
{
    QFETCH(bool, regression);
    QFETCH(QString, normalisation);
    TabularOptions o;
    o.normalisation = normalisation;
    TabularDataset ds;
    QString error;
    QVERIFY2(prepare(mixedTable(regression), o, ds, &error), qPrintable(error));
    const TabularSchema& s = ds.schema;
    QCOMPARE(s.isClassification(), !regression);
    QCOMPARE(s.features, QStringList({"a", "colour", "b", "c"}));
    const TaskData data = dataOf(ds);
    auto backend = createCpuBackend(1);
    Network net(*backend, s.inputWidth(), "dense:8,tanh,dense", s.outputWidth());
    net.initialize(3);

    // The plane of a (x) and c (y); colour and b held at a chosen value.
    BoundaryPlane plane;
    plane.featureA = 0;
    plane.featureB = 3;
    plane.width = 7;
    plane.height = 5;
    QCOMPARE(s.featureCategories[1], QStringList({"blue", "green", "red"})); // sorted
    plane.held = {0.0, 0.0 /* blue */, 250.0, 0.0};
    BoundaryGrid grid;
    QVERIFY2(boundaryGrid(net, s, data, plane, grid, &error), qPrintable(error));
    QCOMPARE(grid.width, 7);
    QCOMPARE(grid.height, 5);
    QCOMPARE(grid.xName, QString("a"));
    QCOMPARE(grid.yName, QString("c"));
    QCOMPARE(grid.heldText, QString("colour = blue, b = 250"));
    // Row 0 is the top of the picture: y falls down the grid, x grows along it.
    QVERIFY(grid.yAt(0) > grid.yAt(4) && grid.xAt(0) < grid.xAt(6));

    // The same points as rows of a CSV file, encoded as evaluate encodes a file.
    QByteArray csv = "a,colour,b,c\n";
    for (int j = 0; j < grid.height; ++j)
        for (int i = 0; i < grid.width; ++i)
            csv += number(grid.xAt(i)) + ",blue,250," + number(grid.yAt(j)) + "\n";
    TabularSplit rows;
    QVERIFY2(encodeTabular(tableOf(csv, "grid.csv"), s, "fail", false, rows, nullptr, &error),
             qPrintable(error));
    QCOMPARE(rows.rows, int64_t(35));
    const std::vector<float> outputs = predictRows(net, rows.x, rows.rows);
    const std::vector<double> expected =
        regression ? tabularPredictions(s, outputs) : tabularProbabilities(s, outputs);
    QCOMPARE(grid.values.size(), expected.size());
    double worst = 0;
    for (size_t k = 0; k < expected.size(); ++k)
        worst = std::max(worst, std::fabs(grid.values[k] - expected[k]) /
                                    std::max(1.0, std::fabs(expected[k])));
    QVERIFY2(worst < 1e-5, qPrintable(QString("worst relative difference %1").arg(worst)));
    // The grid is not flat: it depends on both axes.
    const size_t k = regression ? 1 : static_cast<size_t>(s.classes.size());
    QVERIFY(grid.values[0] != grid.values[6 * k]);  // left and right ends of the top row
    QVERIFY(grid.values[0] != grid.values[28 * k]); // top and bottom of the first column
    if (!regression) {
        for (size_t c = 0; c < grid.values.size(); c += k) {
            double sum = 0;
            for (size_t m = 0; m < k; ++m)
                sum += grid.values[c + m];
            QVERIFY(std::fabs(sum - 1) < 1e-5);
        }
    } else {
        // The ramp spans the training and validation targets.
        double lo = INFINITY, hi = -INFINITY;
        for (const auto* split : {&ds.train, &ds.val})
            for (float t : split->rawTarget) {
                lo = std::min(lo, double(t));
                hi = std::max(hi, double(t));
            }
        QVERIFY(near(grid.valueMin, lo, 1e-4 * std::fabs(lo) + 1e-4));
        QVERIFY(near(grid.valueMax, hi, 1e-4 * std::fabs(hi) + 1e-4));
        QCOMPARE(grid.valueName, QString("target"));
    }
}

void TestTabularBoundary::heldAtTheMeanOrARow()
{
    TabularOptions o;
    o.normalisation = "minmax"; // the offsets are minima here, not means
    TabularDataset ds;
    QString error;
    QVERIFY2(prepare(mixedTable(false), o, ds, &error), qPrintable(error));
    const TabularSchema& s = ds.schema;
    const TaskData data = dataOf(ds);
    const io::CsvTable table = tableOf(mixedTable(false));
    // By hand from the file's training rows.
    double sums[3] = {0, 0, 0};
    std::map<QString, int> colours;
    for (int64_t r : ds.train.source) {
        const int i = static_cast<int>(r);
        sums[0] += 0.5 * i;
        sums[1] += 100.0 + 37.0 * ((i * 7) % 11);
        sums[2] += static_cast<float>(std::sin(i) * 3);
        ++colours[kColours[i % 5 < 3 ? 0 : i % 5 - 2]];
    }
    const double n = static_cast<double>(ds.train.rows);
    QVERIFY(colours["red"] > colours["green"] && colours["red"] > colours["blue"]);
    const std::vector<double> mean = boundaryHeldValues(s, data, -1);
    QCOMPARE(mean.size(), size_t(4));
    QVERIFY2(near(mean[0], sums[0] / n, 1e-3), qPrintable(QString::number(mean[0])));
    QCOMPARE(s.featureCategories[1].value(static_cast<int>(mean[1])), QString("red"));
    QVERIFY2(near(mean[2], sums[1] / n, 1e-2), qPrintable(QString::number(mean[2])));
    QVERIFY2(near(mean[3], sums[2] / n, 1e-3), qPrintable(QString::number(mean[3])));

    // A training row: its own values (row 4 of the file is blue: 4 % 5 = 4).
    const auto at = std::find(ds.train.source.begin(), ds.train.source.end(), int64_t(4));
    QVERIFY(at != ds.train.source.end());
    const std::vector<double> row = boundaryHeldValues(s, data, at - ds.train.source.begin());
    QVERIFY(near(row[0], 2.0, 1e-4));
    QCOMPARE(s.featureCategories[1].value(static_cast<int>(row[1])), QString("blue"));
    QVERIFY(near(row[2], 100.0 + 37.0 * 6, 1e-3));
    QVERIFY(near(row[3], std::sin(4) * 3, 1e-4));

    // The default plane holds the means.
    auto backend = createCpuBackend(1);
    Network net(*backend, s.inputWidth(), "dense", s.outputWidth());
    net.initialize(1);
    BoundaryPlane plane;
    plane.featureA = 2;
    plane.featureB = 0;
    BoundaryGrid grid;
    QVERIFY2(boundaryGrid(net, s, data, plane, grid, &error), qPrintable(error));
    QCOMPARE(grid.held, mean);
    QVERIFY2(grid.heldText.startsWith("colour = red, c = "), qPrintable(grid.heldText));
    // Or at the row asked for.
    plane.heldRow = at - ds.train.source.begin();
    QVERIFY2(boundaryGrid(net, s, data, plane, grid, &error), qPrintable(error));
    QCOMPARE(grid.held, row);
    QVERIFY2(grid.heldText.startsWith("colour = blue, c = "), qPrintable(grid.heldText));
}

void TestTabularBoundary::pointsAreTheRowsInFileUnits()
{
    TabularDataset ds;
    QString error;
    QVERIFY2(prepare(mixedTable(false), {}, ds, &error), qPrintable(error));
    const TabularSchema& s = ds.schema;
    auto backend = createCpuBackend(1);
    Network net(*backend, s.inputWidth(), "dense", s.outputWidth());
    net.initialize(1);
    BoundaryPlane plane;
    plane.featureA = 2; // b
    plane.featureB = 3; // c
    BoundaryGrid grid;
    QVERIFY2(boundaryGrid(net, s, dataOf(ds), plane, grid, &error), qPrintable(error));
    QCOMPARE(grid.points.size(), size_t(ds.train.rows + ds.val.rows));
    QCOMPARE(grid.trainRows, ds.train.rows);
    QCOMPARE(grid.valRows, ds.val.rows);
    QVERIFY(ds.val.rows > 0);
    for (size_t p = 0; p < grid.points.size(); ++p) {
        const BoundaryPoint& pt = grid.points[p];
        const bool val = p >= static_cast<size_t>(ds.train.rows);
        const TabularSplit& split = val ? ds.val : ds.train;
        const size_t r = val ? p - static_cast<size_t>(ds.train.rows) : p;
        const int i = static_cast<int>(split.source[r]);
        QCOMPARE(pt.validation, val);
        QVERIFY2(near(pt.x, 100.0 + 37.0 * ((i * 7) % 11), 1e-3),
                 qPrintable(QString::number(pt.x)));
        QVERIFY(near(pt.y, std::sin(i) * 3, 1e-4));
        QCOMPARE(pt.label, static_cast<int>(split.y[r]));
        // Inside the axes, which leave a margin.
        QVERIFY(pt.x > grid.xMin && pt.x < grid.xMax && pt.y > grid.yMin && pt.y < grid.yMax);
    }
    QVERIFY(grid.xMin < 100 && grid.xMin > 100 - 0.06 * 370);
}

void TestTabularBoundary::refusesBadPlanes()
{
    TabularDataset ds;
    QString error;
    QVERIFY2(prepare(mixedTable(false), {}, ds, &error), qPrintable(error));
    const TabularSchema& s = ds.schema;
    QCOMPARE(boundaryAxes(s), std::vector<int>({0, 2, 3})); // not the one-hot colour
    const TaskData data = dataOf(ds);
    auto backend = createCpuBackend(1);
    Network net(*backend, s.inputWidth(), "dense", s.outputWidth());
    net.initialize(1);
    auto refused = [&](BoundaryPlane plane, const QString& says) {
        BoundaryGrid grid;
        error.clear();
        if (boundaryGrid(net, s, data, plane, grid, &error)) return false;
        if (!error.contains(says)) qWarning("%s", qPrintable(error));
        return error.contains(says);
    };
    BoundaryPlane colourAxis;
    colourAxis.featureA = 1;
    QVERIFY(refused(colourAxis, "two numeric features"));
    BoundaryPlane outside;
    outside.featureB = 4;
    QVERIFY(refused(outside, "two numeric features"));
    BoundaryPlane same;
    same.featureA = same.featureB = 2;
    QVERIFY(refused(same, "two different features"));
    BoundaryPlane tiny;
    tiny.featureB = 2;
    tiny.width = 1;
    QVERIFY(refused(tiny, "2 to 512 points"));
    BoundaryPlane held;
    held.featureB = 2;
    held.held = {1, 2};
    QVERIFY(refused(held, "holds 4 features, not 2"));
}

QTEST_GUILESS_MAIN(TestTabularBoundary)
#include "TestTabularBoundary.moc"
