// Tidy text and windows that fit: the real MainWindow, offscreen, driven by object names.
// A finished run's status text leaves when other data opens or a new model begins; Stop reads
// "Stopped" wherever it is said; a reopened model's timeline thumb sits where its label says;
// the PSNR label follows the chart while a run continues; a gray picture is not offered a gray
// version. The race window, the predictions table, the progress bar's text and a restored
// window geometry fit a 1024x700 screen: this executable runs on one (its own offscreen screen
// configuration, written in main()). The window and the helpers are StudioTestCase.h's.
#include "ChartsPanel.h"
#include "ImageTask.h"
#include "NumberFormat.h"
#include "RaceWindow.h"
#include "ScreenFit.h"
#include "StudioSettings.h"
#include "StudioTestCase.h"

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QDataStream>
#include <QDir>
#include <QFile>
#include <QHeaderView>
#include <QLabel>
#include <QLegend>
#include <QProgressBar>
#include <QScreen>
#include <QScrollBar>
#include <QSlider>
#include <QStatusBar>
#include <QStyleOptionSlider>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>

#include <cmath>

using namespace il::app;
using studiotest::kTrainingWait;

namespace {

// The screen this executable runs on: the smallest the studio supports.
constexpr int kScreenWidth = 1024;
constexpr int kScreenHeight = 700;

// WCAG's contrast ratio of two colours (1: the same, 21: black on white).
double contrast(QRgb a, QRgb b)
{
    auto luminance = [](QRgb c) {
        auto channel = [](int v) {
            const double s = v / 255.0;
            return s <= 0.03928 ? s / 12.92 : std::pow((s + 0.055) / 1.055, 2.4);
        };
        return 0.2126 * channel(qRed(c)) + 0.7152 * channel(qGreen(c)) + 0.0722 * channel(qBlue(c));
    };
    const double la = luminance(a), lb = luminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

} // namespace

class TestStudioTidy : public studiotest::StudioWindowTestCase {
    Q_OBJECT

private slots:
    void initTestCase(); // more than the fixture's

    // Stale text.
    void finishedTextLeavesWhenOtherDataOpens();
    void finishedTextLeavesWhenANewModelBegins();
    void stopSaysStoppedEverywhere();
    void reopenedTimelineThumbSitsAtItsStep();
    void psnrLabelFollowsTheChartDuringContinue();
    void grayPictureIsNotOfferedAGrayVersion();

    // Layout on a 1024x700 screen.
    void raceWindowFitsTheScreen();
    void predictionsShowEveryColumnAfterTheWindowShrinks_data();
    void predictionsShowEveryColumnAfterTheWindowShrinks();
    void progressTextIsReadableAtAnyProgress();
    void fitFrameIntoClampsToTheAvailableArea_data();
    void fitFrameIntoClampsToTheAvailableArea();
    void restoredGeometryFitsASmallerScreen();

private:
    void setSpec(const QString& spec);
    QString status() const { return m_window->statusBar()->currentMessage(); }
    // Every word the window shows now: labels, buttons, the status bar, the run list.
    QString visibleText() const;
    // A training budget of `steps` steps in the Training panel.
    void setBudget(int steps);

    QTemporaryDir m_dir;
};

void TestStudioTidy::initTestCase()
{
    isolateSettings("testStudioTidy");
    QVERIFY(m_dir.isValid());
    const QRect screen = QGuiApplication::primaryScreen()->availableGeometry();
    QCOMPARE(screen.size(), QSize(kScreenWidth, kScreenHeight)); // main() set it up
}

void TestStudioTidy::setSpec(const QString& spec)
{
    auto* edit = find<QLineEdit>("specLineEdit");
    edit->setText(spec);
    emit edit->returnPressed();
    QCOMPARE(session()->spec(), spec);
}

void TestStudioTidy::setBudget(int steps)
{
    find<QComboBox>("budgetUnitComboBox")->setCurrentIndex(1);
    find<QSpinBox>("budgetSpinBox")->setValue(steps);
}

QString TestStudioTidy::visibleText() const
{
    QStringList texts{status()};
    for (const QLabel* l : m_window->findChildren<QLabel*>())
        if (l->isVisible()) texts << l->text();
    for (const QAbstractButton* b : m_window->findChildren<QAbstractButton*>())
        if (b->isVisible()) texts << b->text();
    for (const QAbstractItemView* v : m_window->findChildren<QAbstractItemView*>()) {
        const QAbstractItemModel* model = v->model();
        if (!model) continue;
        for (int r = 0; r < model->rowCount(); ++r)
            for (int c = 0; c < model->columnCount(); ++c)
                texts << model->index(r, c).data().toString();
    }
    return texts.join('\n');
}

// "Finished 20 steps…; the network beats its linear start" was the status bar's over the next
// data for its 20 seconds: it leaves the moment other data opens.
void TestStudioTidy::finishedTextLeavesWhenOtherDataOpens()
{
    openSample("xor");
    train(20);
    QVERIFY2(status().startsWith("Finished 20 steps"), qPrintable(status()));
    QVERIFY(find<QLabel>("rateLabel")->text().startsWith("Finished"));
    Dialogs::setNextAnswer(QMessageBox::Discard); // the xor model is unsaved
    openSample("iris");
    QCOMPARE(session()->task()->data().outputWidth, 3);
    QVERIFY2(!status().contains("Finished") && !status().contains("linear start"),
             qPrintable(status()));
    QCOMPARE(find<QLabel>("rateLabel")->text(), QString("Ready"));
}

// A new model (the stack changed, Start) begins with no word of the previous model's end.
void TestStudioTidy::finishedTextLeavesWhenANewModelBegins()
{
    openSample("xor");
    train(20);
    QVERIFY2(status().startsWith("Finished 20 steps"), qPrintable(status()));
    setSpec("dense:6,tanh,dense");
    setBudget(2000000);
    Dialogs::setNextAnswer(QMessageBox::Discard); // the trained model is unsaved
    find<QPushButton>("startButton")->click();
    QCOMPARE(session()->runState(), Session::RunState::Training);
    QVERIFY2(!status().contains("Finished"), qPrintable(status()));
    session()->stop();
    QTRY_COMPARE_WITH_TIMEOUT(session()->runState(), Session::RunState::Idle, kTrainingWait);
}

// Stop: the run bar said "Stopped", the status bar "Cancelled at step N". One word everywhere.
void TestStudioTidy::stopSaysStoppedEverywhere()
{
    openSample("xor");
    setBudget(2000000);
    QSignalSpy progressed(session(), &Session::progressed);
    QSignalSpy finished(session(), &Session::trainingFinished);
    find<QPushButton>("startButton")->click();
    QTRY_VERIFY_WITH_TIMEOUT(progressed.count() > 0, kTrainingWait);
    find<QPushButton>("stopButton")->click();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kTrainingWait);
    QTRY_VERIFY(session()->runState() == Session::RunState::Idle);
    QVERIFY2(status().startsWith("Stopped at step"), qPrintable(status()));
    QCOMPARE(find<QLabel>("rateLabel")->text(), QString("Stopped"));
    find<QTabWidget>("setupTabWidget")->setCurrentWidget(find<QWidget>("runListPanel"));
    QTest::qWait(50);
    const QString text = visibleText();
    QVERIFY2(!text.contains("cancel", Qt::CaseInsensitive), qPrintable(text));
}

// A reopened model has one snapshot, at its last step: the label said "step 1,601" while the
// thumb sat at the left end (a slider from 0 to 0 draws it there).
void TestStudioTidy::reopenedTimelineThumbSitsAtItsStep()
{
    openSmallImage();
    train(40);
    const QString path = m_dir.filePath("camera-tidy.safetensors");
    saveAs(path);
    closeWindow();
    newWindow();
    QSignalSpy opened(session(), &Session::modelOpened);
    QVERIFY(m_window->openFile(path));
    QTRY_COMPARE(opened.count(), 1);
    QTRY_VERIFY(!session()->timeline().empty());
    auto* label = find<QLabel>("timelineStepLabel");
    QTRY_COMPARE(label->text(), QString("step 40"));
    QCOMPARE(session()->timeline().back().step, int64_t(40));

    // Where the style draws the thumb, against the groove: at its right end (the newest step).
    auto* slider = find<QSlider>("timelineSlider");
    QStyleOptionSlider option;
    option.initFrom(slider);
    option.orientation = slider->orientation();
    option.minimum = slider->minimum();
    option.maximum = slider->maximum();
    option.sliderPosition = slider->sliderPosition();
    option.sliderValue = slider->value();
    option.upsideDown = slider->invertedAppearance();
    option.subControls = QStyle::SC_SliderGroove | QStyle::SC_SliderHandle;
    const QRect handle = slider->style()->subControlRect(QStyle::CC_Slider, &option,
                                                         QStyle::SC_SliderHandle, slider);
    const QRect groove = slider->style()->subControlRect(QStyle::CC_Slider, &option,
                                                         QStyle::SC_SliderGroove, slider);
    QVERIFY2(handle.right() >= groove.right() - 2,
             qPrintable(QString("thumb %1..%2 in a groove %3..%4 while the label says '%5'")
                            .arg(handle.left())
                            .arg(handle.right())
                            .arg(groove.left())
                            .arg(groove.right())
                            .arg(label->text())));

    // Continue: two snapshots, the thumb still at the newest one.
    setBudget(80);
    train(0);
    QTRY_VERIFY(session()->timeline().size() >= 2);
    QCOMPARE(slider->value(), slider->maximum());
}

// While a Continue runs, the PSNR label showed the previous run's last value while the chart
// drew new points: both show the newest measurement.
void TestStudioTidy::psnrLabelFollowsTheChartDuringContinue()
{
    openSmallImage();
    train(130, true); // PSNR measured at 128 and at the end (130)
    auto* label = find<QLabel>("imageMetricLabel");
    auto* charts = m_window->findChild<ChartsPanel*>();
    QVERIFY(charts);
    QTRY_VERIFY(!charts->metricPoints().isEmpty());
    QVERIFY2(label->text().contains(fmt::decibels(charts->metricPoints().last().y())),
             qPrintable(label->text()));

    setBudget(2000000); // Continue, for long enough to look
    const int before = static_cast<int>(charts->metricPoints().size());
    find<QPushButton>("startButton")->click();
    QTRY_VERIFY_WITH_TIMEOUT(charts->metricPoints().size() >= before + 2, kTrainingWait);
    find<QPushButton>("pauseButton")->click();
    QTRY_COMPARE(session()->runState(), Session::RunState::Paused);
    QTest::qWait(200); // the chart's throttled redraw
    const QPointF last = charts->metricPoints().last();
    QVERIFY(last.x() > 130);
    QVERIFY2(label->text().contains(fmt::decibels(last.y())),
             qPrintable(QString("label '%1', chart %2 at step %3")
                            .arg(label->text(), fmt::decibels(last.y()))
                            .arg(last.x())));
    session()->stop();
    QTRY_COMPARE_WITH_TIMEOUT(session()->runState(), Session::RunState::Idle, kTrainingWait);
}

// The camera is gray: "Train on the gray version" (checked, disabled) offered nothing. A colour
// picture still offers it.
void TestStudioTidy::grayPictureIsNotOfferedAGrayVersion()
{
    auto* gray = find<QCheckBox>("grayscaleCheckBox");
    auto* tabs = find<QTabWidget>("setupTabWidget");
    openSample("camera");
    QVERIFY(session()->task());
    tabs->setCurrentWidget(find<QWidget>("datasetPanel"));
    QVERIFY(find<QSpinBox>("trainingSizeSpinBox")->isVisible());
    QVERIFY2(!gray->isVisible(), "a gray picture is offered its gray version");

    openSample("astronaut"); // colour (the camera was not trained: nothing to ask)
    tabs->setCurrentWidget(find<QWidget>("datasetPanel"));
    QVERIFY(gray->isVisible());
    QVERIFY(gray->isEnabled());
    QVERIFY(!gray->isChecked());
    gray->click(); // trained gray now: the box stays, to go back to colour
    QTRY_VERIFY(
        il::tasks::imageTaskType().setting(session()->taskOptions(), il::tasks::kGrayscaleSetting));
    QVERIFY(gray->isVisible() && gray->isEnabled() && gray->isChecked());
}

// The race window was 820 px tall from its form: on a 1024x700 (or 1280x800) screen its bottom,
// the chart's legend, was off the screen.
void TestStudioTidy::raceWindowFitsTheScreen()
{
    openSample("camera");
    find<QAction>("actionRacePresets")->trigger();
    RaceWindow* race = m_window->raceWindow();
    QVERIFY(race);
    QVERIFY(QTest::qWaitForWindowExposed(race));
    const QRect screen = race->screen()->availableGeometry();
    QTRY_VERIFY2(screen.contains(race->frameGeometry()),
                 qPrintable(QString("%1x%2 at %3,%4 on a %5x%6 screen")
                                .arg(race->frameGeometry().width())
                                .arg(race->frameGeometry().height())
                                .arg(race->frameGeometry().x())
                                .arg(race->frameGeometry().y())
                                .arg(screen.width())
                                .arg(screen.height())));
    const QSize least = race->minimumSizeHint();
    QVERIFY(least.width() <= kScreenWidth && least.height() <= kScreenHeight);

    // A race gives the legend its entries; all of them are inside the chart's view.
    race->findChild<QDoubleSpinBox*>("secondsSpinBox")->setValue(0.5);
    race->findChild<QPushButton*>("startButton")->click();
    QVERIFY(race->isRacing());
    auto* view = race->findChild<QChartView*>("psnrChartView");
    QChart* chart = view->chart();
    QTRY_VERIFY(!chart->series().isEmpty());
    QTest::qWait(100);
    const QRectF legend = chart->mapRectToScene(chart->legend()->geometry());
    const QRect shown = view->mapFromScene(legend).boundingRect();
    QVERIFY2(view->viewport()->rect().contains(shown) && legend.height() > 0,
             qPrintable(QString("legend %1x%2 at %3,%4 in a %5x%6 view")
                            .arg(shown.width())
                            .arg(shown.height())
                            .arg(shown.x())
                            .arg(shown.y())
                            .arg(view->viewport()->width())
                            .arg(view->viewport()->height())));
    race->stopRace();
    QTRY_VERIFY_WITH_TIMEOUT(!race->isRacing(), kTrainingWait);
}

void TestStudioTidy::predictionsShowEveryColumnAfterTheWindowShrinks_data()
{
    QTest::addColumn<QString>("sample");
    QTest::newRow("iris") << "iris";
    QTest::newRow("wine") << "wine";
    QTest::newRow("breast cancer") << "breast_cancer";
}

// Trained at 1280x800, then the window shrank to 1024x700 (a smaller screen, a restored
// geometry): the predictions table kept its width share and hid Confidence and ✓/✗.
void TestStudioTidy::predictionsShowEveryColumnAfterTheWindowShrinks()
{
    QFETCH(QString, sample);
    openSample(sample);
    train(30, true);
    auto* table = find<QTableWidget>("predictionsTableWidget");
    QTRY_VERIFY(table->isVisible() && table->rowCount() > 0);
    for (const QSize size : {QSize(kScreenWidth, kScreenHeight), QSize(1280, 800),
                             QSize(kScreenWidth, kScreenHeight)}) {
        m_window->resize(size);
        QTest::qWait(100); // layouts settle in posted events
        const QString where =
            QString("%1 at %2x%3").arg(sample).arg(size.width()).arg(size.height());
        QVERIFY2(table->horizontalScrollBar()->maximum() == 0,
                 qPrintable(where + ": a scroll bar hides columns"));
        for (int c = 0; c < table->columnCount(); ++c) {
            if (table->isColumnHidden(c)) continue;
            const int right = table->columnViewportPosition(c) + table->columnWidth(c);
            QVERIFY2(right <= table->viewport()->width(),
                     qPrintable(QString("%1: column '%2' ends at %3 of %4 px")
                                    .arg(where, table->horizontalHeaderItem(c)->text())
                                    .arg(right)
                                    .arg(table->viewport()->width())));
        }
    }
}

// At 1024 px the run bar's progress bar was 110 px wide for "3008 / 3008 steps": the text ran
// off both ends, cut by the chunk's edge. Its text fits inside the bar and reads against the
// chunk and the empty groove alike, at every step.
void TestStudioTidy::progressTextIsReadableAtAnyProgress()
{
    m_window->resize(kScreenWidth, kScreenHeight);
    openSample("iris");
    setBudget(300000);
    QTest::qWait(100);
    auto* bar = find<QProgressBar>("progressBar");
    QCOMPARE(bar->maximum(), 300000);
    for (const double share : {0.0, 0.2, 0.4, 0.5, 0.6, 0.8, 1.0}) {
        bar->setValue(static_cast<int>(share * bar->maximum()));
        const QString where = QString("'%1' in %2 px").arg(bar->text()).arg(bar->width());
        const int need = QFontMetrics(bar->font()).horizontalAdvance(bar->text());
        QVERIFY2(need + 8 <= bar->width(), qPrintable(where + ": the text is cut"));

        const QImage with = bar->grab().toImage().convertToFormat(QImage::Format_RGB32);
        bar->setTextVisible(false);
        const QImage without = bar->grab().toImage().convertToFormat(QImage::Format_RGB32);
        bar->setTextVisible(true);
        QCOMPARE(with.size(), without.size());
        // The text's pixels, and the best contrast a glyph has over the chunk and over the groove
        // (anti-aliased edges blend; a glyph's stem is the text's colour).
        const QRgb chunk = bar->palette().color(QPalette::Highlight).rgb();
        double overChunk = 0, overGroove = 0;
        int left = with.width(), right = -1, onChunk = 0, onGroove = 0;
        for (int y = 0; y < with.height(); ++y)
            for (int x = 0; x < with.width(); ++x) {
                const QRgb t = with.pixel(x, y), b = without.pixel(x, y);
                if (t == b) continue;
                left = std::min(left, x);
                right = std::max(right, x);
                const bool isChunk = contrast(b, chunk) < 1.5;
                (isChunk ? overChunk : overGroove) =
                    std::max(isChunk ? overChunk : overGroove, contrast(t, b));
                ++(isChunk ? onChunk : onGroove);
            }
        const double dpr = with.devicePixelRatio();
        QVERIFY2(right > left, qPrintable(where + ": no text drawn"));
        QVERIFY2(left >= 3 * dpr && right <= with.width() - 1 - 3 * dpr,
                 qPrintable(QString("%1: text from %2 to %3 of %4 px")
                                .arg(where)
                                .arg(left)
                                .arg(right)
                                .arg(with.width())));
        QVERIFY2(onChunk < 20 || overChunk >= 3.0,
                 qPrintable(QString("%1: contrast %2 over the chunk").arg(where).arg(overChunk)));
        QVERIFY2(onGroove < 20 || overGroove >= 3.0,
                 qPrintable(QString("%1: contrast %2 over the groove").arg(where).arg(overGroove)));
    }
}

void TestStudioTidy::fitFrameIntoClampsToTheAvailableArea_data()
{
    QTest::addColumn<QRect>("frame");
    QTest::addColumn<QRect>("available");
    QTest::addColumn<QRect>("expected");
    const QRect small(0, 0, 1024, 700), panel(0, 28, 1280, 772); // a panel above
    QTest::newRow("fits: unchanged") << QRect(10, 20, 800, 600) << small << QRect(10, 20, 800, 600);
    QTest::newRow("1280x800 on 1024x700") << QRect(0, 0, 1280, 800) << small << small;
    QTest::newRow("sticks out: moved in")
        << QRect(500, 400, 800, 600) << small << QRect(224, 100, 800, 600);
    QTest::newRow("left of the screen")
        << QRect(-300, -50, 600, 400) << small << QRect(0, 0, 600, 400);
    QTest::newRow("820 tall under a panel")
        << QRect(40, 0, 1200, 820) << panel << QRect(40, 28, 1200, 772);
    QTest::newRow("a second screen on the right")
        << QRect(1100, 10, 1280, 800) << QRect(1024, 0, 1024, 700) << QRect(1024, 0, 1024, 700);
}

// The clamp itself, on rectangles: a frame inside the available area, shrunk only where it is
// bigger, moved only where it sticks out.
void TestStudioTidy::fitFrameIntoClampsToTheAvailableArea()
{
    QFETCH(QRect, frame);
    QFETCH(QRect, available);
    QFETCH(QRect, expected);
    QCOMPARE(fitFrameInto(frame, available), expected);
}

// A 1280x800 window saved on a bigger screen came back 1280x800 on a 1024x700 one: the window
// reopens inside the screen.
void TestStudioTidy::restoredGeometryFitsASmallerScreen()
{
    closeWindow();
    // What QWidget::saveGeometry writes for a 1280x800 window on a 1920x1080 screen (format 3.0):
    // the frame, the normal geometry, the screen, maximized and full screen, the screen's width
    // and the geometry.
    QByteArray saved;
    {
        QDataStream out(&saved, QIODevice::WriteOnly);
        out.setVersion(QDataStream::Qt_4_0);
        out << quint32(0x1D9D0CB) << quint16(3) << quint16(0);
        out << QRect(100, 80, 1280, 800) << QRect(100, 80, 1280, 800) << qint32(0) << quint8(0)
            << quint8(0) << qint32(1920) << QRect(100, 80, 1280, 800);
    }
    settings::setWindowLayout({saved, {}, {}, {}});
    m_window = new MainWindow; // reads the layout
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window));
    const QRect screen = m_window->screen()->availableGeometry();
    QTRY_VERIFY2(screen.contains(m_window->frameGeometry()),
                 qPrintable(QString("%1x%2 at %3,%4")
                                .arg(m_window->frameGeometry().width())
                                .arg(m_window->frameGeometry().height())
                                .arg(m_window->frameGeometry().x())
                                .arg(m_window->frameGeometry().y())));
    QCOMPARE(m_window->frameGeometry().size(), screen.size()); // as big as it can be
    settings::setWindowLayout({});
}

// The offscreen platform with one 1024x700 screen (its "configfile" option), unless the
// platform was chosen otherwise.
int main(int argc, char* argv[])
{
    QTemporaryDir configDir;
    const QByteArray platform = qgetenv("QT_QPA_PLATFORM");
    if (platform.isEmpty() || platform == "offscreen") {
        const QString config = configDir.filePath("screens.json");
        QFile file(config);
        if (!file.open(QIODevice::WriteOnly)) return 1;
        file.write(QString(R"({"screens": [{"name": "small", "x": 0, "y": 0, "width": %1,)"
                           R"( "height": %2, "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]})")
                       .arg(kScreenWidth)
                       .arg(kScreenHeight)
                       .toUtf8());
        file.close();
        qputenv("QT_QPA_PLATFORM", "offscreen:configfile=" + QFile::encodeName(config));
    }
    QApplication app(argc, argv);
    app.setAttribute(Qt::AA_Use96Dpi, true);
    TestStudioTidy test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}

#include "TestStudioTidy.moc"
