// The Network tab (Ctrl+5): what each unit has learned, drawn from the worker's copy of the
// weights. A trained spiral's unit maps are not the untrained ones'; the picture follows a run
// and stays still while it is paused; the names plot has a point per letter; a too-high rate's
// dead units are marked; hovering says what a unit computes; Export PNG writes the picture.
#include "NetworkPanel.h"
#include "NetworkView.h"
#include "StudioTestCase.h"

#include <QImage>
#include <QTemporaryDir>

#include <cmath>

using namespace il;
using namespace il::app;
using namespace studiotest;

class TestStudioNetwork : public StudioWindowTestCase {
    Q_OBJECT

private slots:

    void trainedUnitsDifferFromUntrained();
    void followsARunAndStaysWhilePaused();
    void namesPlotHasAPointPerLetter();
    void deadUnitsAreMarked();
    void hoverAndExport();
    void chosenPlaneOfALargerTable();

private:
    NetworkPanel* panel() const { return find<NetworkPanel>("networkPanel"); }
    const tasks::NetworkInside& inside() const { return panel()->view()->inside(); }
    void showNetworkTab()
    {
        QTest::keyClick(m_window, Qt::Key_5, Qt::ControlModifier);
        QTRY_VERIFY(panel()->isVisible());
    }
    // Waits for a picture of the weights at `step` or later.
    void waitForPicture(int64_t step, tasks::InsideView view)
    {
        QTRY_VERIFY_WITH_TIMEOUT(inside().step >= step && inside().view == view, kTrainingWait);
    }
    void setSpec(const QString& spec)
    {
        auto* edit = find<QLineEdit>("specLineEdit");
        edit->setText(spec);
        emit edit->returnPressed();
        QCOMPARE(session()->spec(), spec);
    }
    QTemporaryDir m_dir;
};

void TestStudioNetwork::trainedUnitsDifferFromUntrained()
{
    openSample("spiral");
    showNetworkTab();
    train(1);
    waitForPicture(1, tasks::InsideView::Plane);
    const tasks::NetworkInside before = inside();
    QVERIFY(!before.columns.empty());
    QCOMPARE(before.columns[0].fanIn, int64_t(2)); // x and y feed the first layer
    QVERIFY(before.mapWidth > 0 && !before.output.empty());

    train(400);
    waitForPicture(400, tasks::InsideView::Plane);
    const tasks::NetworkInside after = inside();
    QCOMPARE(after.columns.size(), before.columns.size());
    // The last hidden layer's maps and the output's map have changed as the spiral was learned.
    const auto& a = after.columns.back().maps;
    const auto& b = before.columns.back().maps;
    QCOMPARE(a.size(), b.size());
    double change = 0;
    for (size_t i = 0; i < a.size(); ++i)
        change = std::max(change, static_cast<double>(std::fabs(a[i] - b[i])));
    QVERIFY2(change > 0.3, qPrintable(QString("largest change %1").arg(change)));
    int flipped = 0;
    for (size_t i = 0; i < after.output.size(); ++i)
        flipped += after.output[i] != before.output[i];
    QVERIFY2(flipped > 0, "the output map did not change");
}

void TestStudioNetwork::followsARunAndStaysWhilePaused()
{
    openSample("spiral");
    showNetworkTab();
    find<QComboBox>("budgetUnitComboBox")->setCurrentIndex(1);
    find<QSpinBox>("budgetSpinBox")->setValue(1000000);
    // Early stopping off: the spiral trains fast, and the run must still be going when paused.
    auto* patience = find<QSpinBox>("patienceSpinBox");
    patience->setValue(patience->minimum());
    find<QPushButton>("startButton")->click();
    QTRY_COMPARE(session()->runState(), Session::RunState::Training);
    // Pictures come while it trains, each of later weights (at most every kRefreshMs).
    const int first = panel()->updates();
    QTRY_VERIFY_WITH_TIMEOUT(panel()->updates() >= first + 3, kTrainingWait);
    const int64_t earlier = inside().step;
    QTRY_VERIFY_WITH_TIMEOUT(inside().step > earlier, kTrainingWait);

    find<QPushButton>("pauseButton")->click();
    QTRY_COMPARE(session()->runState(), Session::RunState::Paused);
    QTest::qWait(NetworkPanel::kRefreshMs + 300); // an answer already asked for may still come
    const int paused = panel()->updates();
    const int64_t step = inside().step;
    QTest::qWait(3 * NetworkPanel::kRefreshMs);
    QCOMPARE(panel()->updates(), paused);
    QCOMPARE(inside().step, step);

    find<QPushButton>("pauseButton")->click(); // Resume: pictures come again
    QTRY_VERIFY_WITH_TIMEOUT(panel()->updates() > paused, kTrainingWait);
    session()->stop();
    QTRY_COMPARE(session()->runState(), Session::RunState::Idle);
}

void TestStudioNetwork::namesPlotHasAPointPerLetter()
{
    openSample("names-ssa2018");
    showNetworkTab();
    train(2);
    waitForPicture(2, tasks::InsideView::Embedding);
    QCOMPARE(inside().letters.size(), qsizetype(session()->vocab()));
    QCOMPARE(inside().x.size(), size_t(session()->vocab()));
    QCOMPARE(inside().y.size(), size_t(session()->vocab()));
    QVERIFY(inside().letters.contains("a") && inside().letters.contains("z"));
    QVERIFY(inside().explained > 0 && inside().explained <= 1);
    // Every letter is drawn inside the view, and hovering one names its nearest letters.
    NetworkView* view = panel()->view();
    const int a = static_cast<int>(inside().letters.indexOf("a"));
    for (int i = 0; i < inside().letters.size(); ++i)
        QVERIFY(QRectF(QPointF(0, 0), QSizeF(view->sizeHint())).contains(view->letterPoint(i)));
    const QString tip = view->toolTipAt(view->letterPoint(a));
    QVERIFY2(tip.contains("Nearest letters:"), qPrintable(tip));
}

void TestStudioNetwork::deadUnitsAreMarked()
{
    openSample("spiral");
    setSpec("dense:32,relu,dense:32,relu,dense");
    // A sensible rate: a few ReLUs may die, not most.
    showNetworkTab();
    train(100);
    waitForPicture(100, tasks::InsideView::Plane);
    auto deadCount = [this] {
        int dead = 0;
        for (const tasks::UnitColumn& c : inside().columns)
            for (char d : c.dead)
                dead += d;
        return dead;
    };
    const int sensible = deadCount();
    // The highest rate the form takes, from fresh weights: the ReLUs are pushed below zero for
    // every row, and the view marks them.
    il::app::Dialogs::setNextAnswer(QMessageBox::Discard); // the unsaved training goes
    find<QPushButton>("resetButton")->click();
    il::app::Dialogs::setNextAnswer(QMessageBox::NoButton);
    auto* rate = find<QDoubleSpinBox>("learningRateSpinBox");
    rate->setValue(rate->maximum());
    emit rate->editingFinished();
    find<QComboBox>("budgetUnitComboBox")->setCurrentIndex(1);
    find<QSpinBox>("budgetSpinBox")->setValue(60);
    QSignalSpy finished(session(), &Session::trainingFinished);
    find<QPushButton>("startButton")->click();
    QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, kTrainingWait);
    QTRY_VERIFY_WITH_TIMEOUT(inside().step == session()->trainedSteps() &&
                                 inside().view == tasks::InsideView::Plane,
                             kTrainingWait);
    const int dead = deadCount();
    qInfo("dead units: %d at rate %g, %d at the default", dead, rate->value(), sensible);
    QVERIFY2(dead >= sensible + 4,
             qPrintable(QString("dead units: %1 at rate %2, %3 at the default")
                            .arg(dead)
                            .arg(rate->value())
                            .arg(sensible)));
    // The tooltip of a dead unit says so.
    NetworkView* view = panel()->view();
    bool said = false;
    for (int k = 0; k < static_cast<int>(inside().columns.size()) && !said; ++k)
        for (int u = 0; u < inside().columns[static_cast<size_t>(k)].shown && !said; ++u)
            if (inside().columns[static_cast<size_t>(k)].dead[static_cast<size_t>(u)])
                said = view->toolTipAt(view->unitRect(k, u).center()).contains("Dead");
    QVERIFY(said);
}

void TestStudioNetwork::hoverAndExport()
{
    openSample("spiral");
    showNetworkTab();
    train(20);
    waitForPicture(20, tasks::InsideView::Plane);
    NetworkView* view = panel()->view();
    const QString tip = view->toolTipAt(view->unitRect(0, 0).center());
    for (const char* part : {"Layer 2 (tanh), unit 1", "tanh(z)", "Incoming weights (2)"})
        QVERIFY2(tip.contains(part), qPrintable(part + (" not in: " + tip)));

    const QString path = m_dir.filePath("spiral-network.png");
    il::app::Dialogs::setNextFileName(path);
    find<QPushButton>("exportNetworkButton")->click();
    const QImage written(path);
    QVERIFY(!written.isNull());
    QCOMPARE(written.size(), view->sizeHint());
}

// A table of more features draws histograms, or its units over a plane of two chosen numeric
// features (the others at their means) when the learner picks them.
void TestStudioNetwork::chosenPlaneOfALargerTable()
{
    openSample("iris");
    showNetworkTab();
    train(30);
    waitForPicture(30, tasks::InsideView::Distributions);
    auto* across = find<QComboBox>("insideAcrossComboBox");
    auto* up = find<QComboBox>("insideUpComboBox");
    QVERIFY(across->isVisible());
    QVERIFY(!up->isVisible());
    const int petal = across->findText("petal_length_cm");
    QVERIFY(petal > 0);
    across->setCurrentIndex(petal);
    emit across->activated(petal);
    QVERIFY(up->isVisible());
    QCOMPARE(up->findText("petal_length_cm"), -1); // not the same feature twice
    const int width = up->findText("petal_width_cm");
    up->setCurrentIndex(width);
    emit up->activated(width);
    QTRY_COMPARE(inside().inputNames, QStringList({"petal_length_cm", "petal_width_cm"}));
    QCOMPARE(inside().view, tasks::InsideView::Plane);
    QVERIFY2(inside().note.contains("training means"), qPrintable(inside().note));
    QCOMPARE(inside().classes, 3);
    // Back to the rows.
    across->setCurrentIndex(0);
    emit across->activated(0);
    QTRY_VERIFY(inside().view == tasks::InsideView::Distributions);
    QVERIFY(!up->isVisible());
    // A table of two features has no choice to make: its plane is drawn.
    QTimer::singleShot(0, m_window, [] {
        if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget()))
            box->button(QMessageBox::Discard)->click();
    });
    openSample("moons");
    QVERIFY(!across->isVisible());
}

QTEST_MAIN(TestStudioNetwork)
#include "TestStudioNetwork.moc"
