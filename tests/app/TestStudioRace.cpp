// The race view end to end: the real MainWindow, offscreen, its race view opened from the Train
// menu and driven by object names. Races are short (a 48x48 picture, two presets, a second
// each); waits are generous, so a loaded machine makes the test slower, not red.
#include "StudioTestCase.h"

#include "MainWindow.h"
#include "RaceChart.h"
#include "RaceTile.h"
#include "RaceWindow.h"
#include "Session.h"
#include "ThreadGuard.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <mutex>

using namespace il::app;

namespace {

constexpr int kRaceWait = 90000;     // ms: a whole race (seconds alone)
constexpr int kTrainingWait = 60000; // ms: the user's short run

std::mutex g_violationsMutex;
QStringList g_violations; // engine work the guard saw on the GUI thread

} // namespace

class TestStudioRace : public studiotest::StudioTestCase {
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void cleanup();

    void racesTwoPresetsSideBySide();
    void stopMidRaceKeepsWhatWasReached();
    void neverRacesNextToTraining();
    void openingOtherDataOrClosingStopsTheRace();

private:
    // The widget of this name in the window or in a race view.
    template <typename T> T* find(QObject* in, const QString& name) const
    {
        T* w = in->findChild<T*>(name);
        if (!w) qFatal("no %s named %s", T::staticMetaObject.className(), qPrintable(name));
        return w;
    }
    // The camera at 48x48 and a small SIREN as the user's model.
    void openSmallImage();
    // Opens the race view from the Train menu with only these presets checked.
    RaceWindow* openRace(const QStringList& presets, double seconds);
    // The user's weights, read on the training worker.
    std::vector<float> userWeights();
};

void TestStudioRace::initTestCase()
{
    isolateSettings("testStudioRace");
    // As the studio's main() does: the race must keep the engine off the GUI thread.
    il::setEngineThreadGuardEnabled(true);
    il::forbidEngineWorkOnThisThread();
    il::setEngineThreadViolationHandler([](const std::string& what) {
        const std::lock_guard lock(g_violationsMutex);
        g_violations << QString::fromStdString(what);
    });
}

void TestStudioRace::init()
{
    newWindow();
}

void TestStudioRace::cleanup()
{
    session()->stop();
    delete m_window; // stops a race that still runs, and waits for it
    m_window = nullptr;
    const std::lock_guard lock(g_violationsMutex);
    QVERIFY2(g_violations.isEmpty(), qPrintable(g_violations.join('\n')));
}

void TestStudioRace::openSmallImage()
{
    find<QAction>(m_window, "actionSample_camera")->trigger();
    QVERIFY(session()->task());
    auto* size = find<QSpinBox>(m_window, "trainingSizeSpinBox");
    size->setValue(48);
    emit size->editingFinished();
    QTRY_COMPARE(imageTrainingSize(), QSize(48, 48));
    auto* spec = find<QLineEdit>(m_window, "specLineEdit");
    spec->setText("dense:16,sine:30,dense");
    emit spec->returnPressed();
    QCOMPARE(session()->spec(), QString("dense:16,sine:30,dense"));
}

RaceWindow* TestStudioRace::openRace(const QStringList& presets, double seconds)
{
    QAction* action = find<QAction>(m_window, "actionRacePresets");
    if (!action->isEnabled()) qFatal("Race presets… is disabled with a picture open");
    action->trigger();
    RaceWindow* race = m_window->raceWindow();
    if (!race || !race->isVisible()) qFatal("the race view did not open");
    int checked = 0;
    for (QCheckBox* box : race->findChildren<QCheckBox*>()) {
        const QString preset = box->property("preset").toString();
        if (preset.isEmpty()) continue;
        box->setChecked(presets.contains(preset));
        checked += box->isChecked();
    }
    if (checked != presets.size()) qFatal("a preset to race has no check box");
    find<QDoubleSpinBox>(race, "secondsSpinBox")->setValue(seconds);
    return race;
}

std::vector<float> TestStudioRace::userWeights()
{
    std::vector<float> weights;
    session()->worker()->post([&weights](ModelState& m) {
        if (!m.network) return;
        const il::Tensor p = m.network->parameters();
        weights.resize(static_cast<size_t>(p.size()));
        m.network->backend().download(weights.data(), p);
    });
    session()->worker()->waitForIdle();
    return weights;
}

void TestStudioRace::racesTwoPresetsSideBySide()
{
    openSmallImage();
    // The user's model trains a little first: the race must leave it exactly as it is.
    find<QComboBox>(m_window, "budgetUnitComboBox")->setCurrentIndex(1);
    find<QSpinBox>(m_window, "budgetSpinBox")->setValue(30);
    QSignalSpy trained(session(), &Session::trainingFinished);
    find<QPushButton>(m_window, "startButton")->click();
    QTRY_VERIFY_WITH_TIMEOUT(trained.count() == 1, kTrainingWait);
    const int64_t steps = session()->trainedSteps();
    const std::vector<float> before = userWeights();
    QVERIFY(steps > 0 && !before.empty());

    RaceWindow* race = openRace({"hashgrid", "classic"}, 1.0);
    QSignalSpy racing(session(), &Session::racingChanged);
    find<QPushButton>(race, "startButton")->click();
    QVERIFY(race->isRacing());
    QVERIFY(session()->isRacing());
    QVERIFY(!find<QPushButton>(m_window, "startButton")->isEnabled()); // never two trainings
    QTRY_VERIFY_WITH_TIMEOUT(!race->isRacing(), kRaceWait);
    QCOMPARE(racing.count(), 2);
    QVERIFY(!session()->isRacing());
    QVERIFY(find<QPushButton>(m_window, "startButton")->isEnabled());

    // One curve per preset: measured checkpoints, increasing in time, finite PSNR.
    RaceChart* chart = race->chart();
    QCOMPARE(chart->seriesCount(), 2);
    for (int i = 0; i < 2; ++i) {
        const QList<QPointF> points = chart->series(i)->points();
        QVERIFY2(points.size() >= 3, qPrintable(chart->series(i)->name()));
        for (qsizetype p = 0; p < points.size(); ++p) {
            QVERIFY(std::isfinite(points[p].y()) && points[p].y() > 5);
            QVERIFY(points[p].x() > 0 && points[p].x() < 1.5);
            if (p > 0) QVERIFY(points[p].x() > points[p - 1].x());
        }
        QVERIFY(chart->series(i)->pen().style() == Qt::SolidLine); // measured, not estimated
    }
    QCOMPARE(chart->series(0)->name(), QString("hashgrid"));

    // Tiles: the picture, then each preset's reconstruction with its PSNR.
    const QList<RaceTile*> tiles = race->findChildren<RaceTile*>();
    QCOMPARE(tiles.size(), 3);
    for (RaceTile* tile : tiles) {
        QVERIFY(!tile->image().isNull());
        QVERIFY(tile->isVisible());
    }
    int withPsnr = 0;
    for (RaceTile* tile : tiles)
        withPsnr += tile->caption().contains(" dB");
    QCOMPARE(withPsnr, 2);

    // The table: a row per preset with its numbers.
    auto* table = find<QTableWidget>(race, "resultsTableWidget");
    QCOMPARE(table->rowCount(), 2);
    QCOMPARE(table->item(0, 0)->text(), QString("hashgrid"));
    QCOMPARE(table->item(1, 0)->text(), QString("classic"));
    for (int r = 0; r < 2; ++r) {
        QVERIFY(table->item(r, 1)->text().remove(QRegularExpression("[^0-9]")).toLongLong() > 0);
        QVERIFY(table->item(r, 2)->text().toDouble() > 0);
        QVERIFY(table->item(r, 3)->text().endsWith(" dB"));
        const double ssim = table->item(r, 4)->text().toDouble();
        QVERIFY(ssim > 0 && ssim <= 1);
    }
    QVERIFY(find<QLabel>(race, "statusLabel")->text().contains("sharpest"));

    // The user's model is untouched.
    QCOMPARE(session()->trainedSteps(), steps);
    QCOMPARE(session()->spec(), QString("dense:16,sine:30,dense"));
    QVERIFY(userWeights() == before);
}

void TestStudioRace::stopMidRaceKeepsWhatWasReached()
{
    openSmallImage();
    RaceWindow* race = openRace({"hashgrid", "classic"}, 60.0);
    find<QPushButton>(race, "startButton")->click();
    QVERIFY(race->isRacing());
    // The first preset's tile shows its live preview, and its curve has begun.
    QTRY_VERIFY_WITH_TIMEOUT(race->findChildren<RaceTile*>().size() == 3 &&
                                 race->chart()->series(0)->count() >= 2,
                             kRaceWait);
    find<QPushButton>(race, "stopButton")->click();
    QTRY_VERIFY_WITH_TIMEOUT(!race->isRacing(), kRaceWait);
    QVERIFY(!session()->isRacing());
    QVERIFY(find<QPushButton>(race, "startButton")->isEnabled());
    QVERIFY(!find<QPushButton>(race, "stopButton")->isEnabled());

    // hashgrid (the presets race in the order of their list) was measured where it stopped;
    // classic never ran.
    auto* table = find<QTableWidget>(race, "resultsTableWidget");
    QCOMPARE(table->rowCount(), 1);
    QCOMPARE(table->item(0, 0)->text(), QString("hashgrid"));
    const QList<QPointF> points = race->chart()->series(0)->points();
    QVERIFY(!points.isEmpty() && points.last().x() < 60);
    QCOMPARE(race->chart()->series(1)->count(), 0);
    const QList<RaceTile*> tiles = race->findChildren<RaceTile*>();
    QVERIFY(std::any_of(tiles.begin(), tiles.end(),
                        [](RaceTile* t) { return t->caption().contains("stopped at"); }));
    QVERIFY(std::any_of(tiles.begin(), tiles.end(),
                        [](RaceTile* t) { return t->caption() == "did not run"; }));
    QVERIFY(find<QLabel>(race, "statusLabel")->text().startsWith("Stopped"));

    // A second race starts from a clean view.
    openRace({"classic"}, 0.5);
    find<QPushButton>(race, "startButton")->click();
    QTRY_VERIFY_WITH_TIMEOUT(!race->isRacing(), kRaceWait);
    QCOMPARE(table->rowCount(), 1);
    QCOMPARE(race->chart()->seriesCount(), 1);
    QCOMPARE(race->findChildren<RaceTile*>().size(), 2);
}

void TestStudioRace::neverRacesNextToTraining()
{
    openSmallImage();
    // While the user's model trains the race refuses, and says why.
    find<QComboBox>(m_window, "budgetUnitComboBox")->setCurrentIndex(1);
    find<QSpinBox>(m_window, "budgetSpinBox")->setValue(1000000);
    find<QPushButton>(m_window, "startButton")->click();
    QCOMPARE(session()->runState(), Session::RunState::Training);
    RaceWindow* race = openRace({"classic"}, 1.0);
    QVERIFY(!race->startRace());
    QVERIFY(!race->isRacing());
    auto* message = find<QLabel>(race, "messageLabel");
    QVERIFY(message->isVisible() && message->text().contains("training"));
    QCOMPARE(session()->runState(), Session::RunState::Training); // the run goes on
    QSignalSpy finished(session(), &Session::trainingFinished);
    session()->stop();
    QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, kTrainingWait);

    // While the race runs, the session will not start training.
    openRace({"classic"}, 60.0);
    QVERIFY(race->startRace());
    QVERIFY(!message->isVisible());
    QVERIFY(!find<QPushButton>(m_window, "startButton")->isEnabled());
    QSignalSpy said(session(), &Session::message);
    session()->start();
    QCOMPARE(session()->runState(), Session::RunState::Idle);
    QCOMPARE(said.count(), 1);
    QVERIFY(said.first().first().toString().contains("race"));
    race->stopRace();
    QTRY_VERIFY_WITH_TIMEOUT(!race->isRacing(), kRaceWait);
    QVERIFY(find<QPushButton>(m_window, "startButton")->isEnabled());
}

void TestStudioRace::openingOtherDataOrClosingStopsTheRace()
{
    openSmallImage();
    RaceWindow* race = openRace({"hashgrid", "classic"}, 60.0);
    QVERIFY(race->startRace());
    QTRY_VERIFY_WITH_TIMEOUT(race->chart()->series(0)->count() >= 1, kRaceWait);
    find<QAction>(m_window, "actionSample_iris")->trigger(); // a table: nothing to race on
    QTRY_VERIFY_WITH_TIMEOUT(!race->isRacing(), kRaceWait);
    QVERIFY(find<QLabel>(race, "messageLabel")->text().contains("other data"));
    QVERIFY(!find<QPushButton>(race, "startButton")->isEnabled());
    QVERIFY(!find<QAction>(m_window, "actionRacePresets")->isEnabled());

    // Back to a picture; closing the race view mid-race stops it, and so does deleting the
    // whole window (cleanup) while a new race runs.
    openSmallImage();
    openRace({"classic"}, 60.0);
    QVERIFY(race->startRace());
    race->close();
    QTRY_VERIFY_WITH_TIMEOUT(!race->isRacing(), kRaceWait);
    QVERIFY(race->startRace());
    QTRY_VERIFY_WITH_TIMEOUT(race->chart()->series(0)->count() >= 1, kRaceWait);
}

QTEST_MAIN(TestStudioRace)
#include "TestStudioRace.moc"
