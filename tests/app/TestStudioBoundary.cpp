// The decision-boundary tab of the table output: the picture changes while a run
// trains, with the event loop as responsive as the other studio tests ask; choosing other
// features or a row to hold the others at draws it again; it follows other data and comes back
// with the first; a regression table is drawn on the value ramp; a table without two numeric
// features leaves the tab disabled, saying why. The window and the helpers are
// StudioTestCase.h's.
#include "EventLoopProbe.h"
#include "StudioTestCase.h"

#include "BoundaryPanel.h"
#include "DecisionBoundaryView.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QLabel>
#include <QTabWidget>
#include <QTemporaryDir>

#include <set>

using namespace il::app;

// A picture takes milliseconds of the worker: generous for a loaded 2-core machine.
constexpr int kPictureWait = 30000; // ms

// Waits for a picture after the `after`th (a QTRY macro: it returns from the test on failure).
#define WAIT_FOR_PICTURE_AFTER(after)                                                              \
    QTRY_VERIFY_WITH_TIMEOUT(view()->pictures() > (after), kPictureWait)

class TestStudioBoundary : public studiotest::StudioWindowTestCase {
    Q_OBJECT

private slots:
    void initTestCase(); // more than the fixture's

    void updatesWhileTrainingWithoutStalling();
    void otherFeaturesAndHeldRowRedraw();
    void followsOtherDataAndComesBack();
    void regressionOnTheValueRamp();
    void disabledWithoutTwoNumericFeatures();

private:
    DecisionBoundaryView* view() const
    {
        return find<DecisionBoundaryView>("decisionBoundaryView");
    }
    QTabWidget* tabs() const { return find<QTabWidget>("tableOutputTabWidget"); }
    void showBoundaryTab() { tabs()->setCurrentWidget(find<BoundaryPanel>("boundaryPanel")); }
    void choose(const QString& comboName, int index)
    {
        auto* box = find<QComboBox>(comboName);
        box->setCurrentIndex(index);
        emit box->activated(index);
    }

    QTemporaryDir m_dir;
};

void TestStudioBoundary::initTestCase()
{
    isolateSettings("testStudioBoundary");
    QVERIFY(m_dir.isValid());
}

void TestStudioBoundary::updatesWhileTrainingWithoutStalling()
{
    openSample("spiral");
    // A table of two numbers opens on its boundary; there is no network before Start.
    QCOMPARE(tabs()->currentWidget(), find<BoundaryPanel>("boundaryPanel"));
    QVERIFY(!view()->hasGrid());
    QVERIFY2(view()->message().contains("Press Start"), qPrintable(view()->message()));

    find<QComboBox>("budgetUnitComboBox")->setCurrentIndex(1);
    find<QSpinBox>("budgetSpinBox")->setValue(1'000'000);
    find<QSpinBox>("patienceSpinBox")->setValue(0); // no early stop: the run goes on till Stop
    find<QPushButton>("startButton")->click();
    QTRY_VERIFY_WITH_TIMEOUT(view()->hasGrid() && view()->step() > 0, studiotest::kTrainingWait);
    QCOMPARE(session()->runState(), Session::RunState::Training);
    const QImage first = view()->field();
    const qint64 firstStep = view()->step();
    const int pictures = view()->pictures();
    QCOMPARE(first.size(), QSize(BoundaryPanel::kGridSide, BoundaryPanel::kGridSide));
    QCOMPARE(view()->grid().points.size(), size_t(800)); // 640 dots and 160 rings
    QCOMPARE(view()->grid().classes, QStringList({"0", "1"}));

    // The event loop is never blocked while the pictures keep coming (EventLoopProbe.h).
    const qint64 limit = eventLoopGapLimit();
    const qint64 worst = worstEventLoopGap(1500);
    const int during = view()->pictures() - pictures;
    qInfo("worst event-loop gap while drawing the boundary: %lld ms; %d pictures in 1.5 s", worst,
          during);
    QVERIFY2(worst < limit, qPrintable(QString("event loop blocked for %1 ms").arg(worst)));
    // At most one picture every kRefreshMs while training (the worker's time is the run's).
    QVERIFY2(during <= 1500 / BoundaryPanel::kRefreshMs + 1, qPrintable(QString::number(during)));

    // Pictures of later weights, between two evaluations of the run, and a picture that moved.
    WAIT_FOR_PICTURE_AFTER(pictures);
    QTRY_VERIFY_WITH_TIMEOUT(view()->step() > firstStep && view()->field() != first,
                             studiotest::kTrainingWait);
    QVERIFY(session()->runState() == Session::RunState::Training);
    find<QPushButton>("stopButton")->click();
    QTRY_COMPARE_WITH_TIMEOUT(session()->runState(), Session::RunState::Idle, 60000);
    // The run's end is drawn too: the weights as they ended.
    QTRY_COMPARE(view()->step(), session()->trainedSteps());
}

void TestStudioBoundary::otherFeaturesAndHeldRowRedraw()
{
    openSample("iris");
    // Four numeric features: the table opens on its predictions, the boundary a click away.
    QCOMPARE(tabs()->currentWidget(), find<QWidget>("predictionsTab"));
    train(60);
    int pictures = view()->pictures();
    showBoundaryTab();
    WAIT_FOR_PICTURE_AFTER(pictures);
    auto* x = find<QComboBox>("boundaryXComboBox");
    auto* y = find<QComboBox>("boundaryYComboBox");
    QCOMPARE(x->count(), 4);
    QCOMPARE(view()->grid().xName, x->itemText(0));
    QCOMPARE(view()->grid().yName, y->itemText(1));
    QCOMPARE(view()->grid().classes.size(), 3);
    QVERIFY2(find<QLabel>("boundaryHeldValuesLabel")->text().startsWith("Held: "),
             qPrintable(find<QLabel>("boundaryHeldValuesLabel")->text()));
    const QImage before = view()->field();

    // Another feature across: drawn again over that feature, in its own range.
    pictures = view()->pictures();
    choose("boundaryXComboBox", 2);
    WAIT_FOR_PICTURE_AFTER(pictures);
    QCOMPARE(view()->grid().xName, x->itemText(2));
    QVERIFY(view()->field() != before);
    // The same feature on both axes is no plane: the other axis moves on.
    pictures = view()->pictures();
    choose("boundaryYComboBox", 2);
    QCOMPARE(x->currentIndex(), 3);
    WAIT_FOR_PICTURE_AFTER(pictures);
    QCOMPARE(view()->grid().xName, x->itemText(3));
    QCOMPARE(view()->grid().yName, y->itemText(2));

    // The others held at a training row: its values, not the means.
    const std::vector<double> means = view()->grid().held;
    auto* row = find<QSpinBox>("boundaryRowSpinBox");
    QVERIFY(!row->isEnabled());
    pictures = view()->pictures();
    choose("boundaryHeldComboBox", 1);
    QVERIFY(row->isEnabled());
    WAIT_FOR_PICTURE_AFTER(pictures);
    const std::vector<double> first = view()->grid().held;
    QVERIFY(first != means);
    pictures = view()->pictures();
    row->setValue(40);
    WAIT_FOR_PICTURE_AFTER(pictures);
    QVERIFY(view()->grid().held != first);
}

void TestStudioBoundary::followsOtherDataAndComesBack()
{
    openSample("moons");
    train(100);
    WAIT_FOR_PICTURE_AFTER(0);
    QCOMPARE(view()->grid().points.size(), size_t(600));

    // Other data: no picture of the old model, then one of the new model over its features.
    Dialogs::setNextAnswer(QMessageBox::Discard);
    openSample("iris");
    QVERIFY(!view()->hasGrid());
    QCOMPARE(find<QComboBox>("boundaryXComboBox")->count(), 4);
    int pictures = view()->pictures();
    showBoundaryTab();
    train(40);
    WAIT_FOR_PICTURE_AFTER(pictures);
    QCOMPARE(view()->grid().classes.size(), 3);
    QCOMPARE(view()->grid().points.size(), size_t(150));

    // Back to the first data: its features, and its picture once it trains again.
    Dialogs::setNextAnswer(QMessageBox::Discard);
    openSample("moons");
    QCOMPARE(tabs()->currentWidget(), find<BoundaryPanel>("boundaryPanel"));
    QCOMPARE(find<QComboBox>("boundaryXComboBox")->count(), 2);
    QCOMPARE(find<QComboBox>("boundaryXComboBox")->currentText(), QString("x"));
    QCOMPARE(find<QComboBox>("boundaryYComboBox")->currentText(), QString("y"));
    pictures = view()->pictures();
    train(100);
    WAIT_FOR_PICTURE_AFTER(pictures);
    QTRY_COMPARE(view()->step(), session()->trainedSteps());
    QCOMPARE(view()->grid().points.size(), size_t(600));
    QCOMPARE(view()->grid().classes.size(), 2);
}

void TestStudioBoundary::regressionOnTheValueRamp()
{
    openSample("diabetes");
    train(40);
    int pictures = view()->pictures();
    showBoundaryTab();
    WAIT_FOR_PICTURE_AFTER(pictures);
    const il::tasks::BoundaryGrid& g = view()->grid();
    QVERIFY(!g.classification);
    QCOMPARE(g.valueName, session()->taskJson()["targets"].toArray().first().toString());
    QVERIFY(g.valueMax > g.valueMin);
    QVERIFY2(find<QLabel>("boundaryLegendLabel")->text().contains("predicted " + g.valueName),
             qPrintable(find<QLabel>("boundaryLegendLabel")->text()));
    // Each cell is its predicted value's place on the ramp (three quarters over the background),
    // and the values differ, so the field is not one colour.
    const QColor base = view()->palette().color(QPalette::Base);
    const QImage& field = view()->field();
    std::set<QRgb> colours;
    for (int j = 0; j < g.height; j += 9)
        for (int i = 0; i < g.width; i += 9) {
            const double t = (g.values[static_cast<size_t>(j * g.width + i)] - g.valueMin) /
                             (g.valueMax - g.valueMin);
            const QColor ramp = DecisionBoundaryView::rampColour(t);
            const QColor got = field.pixelColor(i, j);
            auto near = [](double a, double b) { return std::abs(a - b) <= 2.0 / 255; };
            QVERIFY2(
                near(got.redF(), base.redF() + (ramp.redF() - base.redF()) * 0.75) &&
                    near(got.greenF(), base.greenF() + (ramp.greenF() - base.greenF()) * 0.75) &&
                    near(got.blueF(), base.blueF() + (ramp.blueF() - base.blueF()) * 0.75),
                qPrintable(
                    QString("cell %1,%2: %3 for t = %4").arg(i).arg(j).arg(got.name()).arg(t)));
            colours.insert(got.rgb());
        }
    QVERIFY2(colours.size() > 10, qPrintable(QString::number(colours.size())));
    // The ramp's two ends are far apart (dark violet to yellow).
    QVERIFY(DecisionBoundaryView::rampColour(0).lightness() + 100 <
            DecisionBoundaryView::rampColour(1).lightness());
}

void TestStudioBoundary::disabledWithoutTwoNumericFeatures()
{
    // One number and one category: no plane of two numbers.
    const QString path = m_dir.filePath("one-number.csv");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    for (int i = 0; i < 40; ++i)
        f.write(i == 0 ? "size,colour,label\n"
                       : QByteArray::number(i) + "," + (i % 2 ? "red" : "blue") + "," +
                             QByteArray::number(i % 3 == 0) + "\n");
    f.close();
    m_window->openFile(path);
    QTRY_VERIFY(session()->dataPath().endsWith("one-number.csv"));
    const int index = tabs()->indexOf(find<BoundaryPanel>("boundaryPanel"));
    QVERIFY(!tabs()->isTabEnabled(index));
    QVERIFY2(tabs()->tabToolTip(index).contains("this table has 1 numeric feature"),
             qPrintable(tabs()->tabToolTip(index)));
    // The spiral next: the tab comes back.
    openSample("spiral");
    QVERIFY(tabs()->isTabEnabled(index));
    QCOMPARE(tabs()->currentIndex(), index);
}

QTEST_MAIN(TestStudioBoundary)
#include "TestStudioBoundary.moc"
