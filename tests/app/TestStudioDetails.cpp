// The studio's smaller details, driven through the real MainWindow offscreen:
// Revert to best weights after a run that went wrong; the loss title says when label smoothing is
// in the training loss, and the legend shows no validation where there is none; a held-out name is
// not NEW; the custom render size keeps the image's aspect; Export PNG confirms and starts near the
// model; step decay's period and factor; CPU threads; one number format; predictions by file line.
#include "NamesRequests.h"
#include "Session.h"
#include "StudioTestCase.h"

#include <QAction>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileInfo>
#include <QJsonObject>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QListWidget>
#include <QLocale>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

using namespace il::app;
using namespace studiotest;

namespace {
// The learner's decimal point as a regular expression ("\." or ","): the studio shows numbers
// in the locale (CI runs the suite under de_DE.UTF-8).
QString localePoint()
{
    return QRegularExpression::escape(QLocale().decimalPoint());
}
} // namespace

class TestStudioDetails : public StudioWindowTestCase {
    Q_OBJECT

private slots:

    void revertsToTheBestWeightsAfterADivergence();
    void revertsAnImageToItsBestTrainingLoss();
    void lossTitleSaysLabelSmoothingIsInTrainingLoss();
    void noValidationLegendWithoutValidation();
    void aHeldOutNameIsNotNew();
    void customRenderSizeKeepsTheImagesAspect();
    void exportSaysWhereAndStartsNearTheModel();
    void stepDecayHasItsPeriodAndFactor();
    void cpuThreadsAreAChoiceThatIsRemembered();
    void predictionRowsAreNumberedByFileLine();

private:
    // The loss chart's series whose name starts so (not the faint every-step one), or null.
    QLineSeries* lossSeries(const QString& nameStart) const;
    bool inLegend(QLineSeries* series) const;
    // Trains and returns the evaluation that follows the run.
    Evaluation trainAndEvaluate(int steps);
};

Evaluation TestStudioDetails::trainAndEvaluate(int steps)
{
    QSignalSpy evaluated(session(), &Session::evaluated);
    train(steps);
    if (evaluated.isEmpty()) evaluated.wait(kTrainingWait);
    return evaluated.isEmpty() ? Evaluation{} : evaluated.last().first().value<Evaluation>();
}

// Item 9, "no way back to a good snapshot": a run at a learning rate far too high wrecks the
// weights of a good run; the run bar offers Revert, which goes back to the best validation loss
// (the weights, the step, the curve), marks the model unsaved, and Continue trains on from there.
void TestStudioDetails::revertsToTheBestWeightsAfterADivergence()
{
    openSample("iris");
    find<QSpinBox>("patienceSpinBox")->setValue(0); // no early stopping: it would go back itself
    auto* lr = find<QDoubleSpinBox>("learningRateSpinBox");
    lr->setValue(0.01);
    auto* revert = find<QPushButton>("revertButton");
    auto* action = find<QAction>("actionRevertToBest");

    const Evaluation good = trainAndEvaluate(40);
    QVERIFY(!good.values.isEmpty());
    QCOMPARE(session()->best().step, int64_t(40)); // the last evaluation of a falling curve
    QVERIFY(session()->best().validation);
    QVERIFY(!revert->isVisibleTo(m_window)); // nothing better to go back to
    QVERIFY(!action->isEnabled());

    lr->setValue(10);
    // At a constant rate: full-batch AdamW (the tables' default) survives a cosine schedule
    // from 10 down to 0, as the rate falls before the weights blow up.
    find<QComboBox>("scheduleComboBox")->setCurrentText("constant");
    train(80, true); // and its evaluation, so the one after the revert is the next
    const BestWeightsInfo best = session()->best();
    QCOMPARE(best.step, int64_t(40));
    QVERIFY(best.worseThanKept());
    QVERIFY(revert->isVisibleTo(m_window));
    QVERIFY(action->isEnabled());
    QVERIFY(revert->toolTip().contains("step 40"));
    const QString note = find<QLabel>("revertNoteLabel")->text();
    QVERIFY2(note.startsWith("The validation loss rose from ") && note.contains("at step 40 to "),
             qPrintable(note));

    QSignalSpy evaluated(session(), &Session::evaluated);
    revert->click();
    QTRY_COMPARE(session()->trainedSteps(), int64_t(40));
    QTRY_VERIFY(!evaluated.isEmpty());
    // The same weights as at step 40: the same predictions, to the last digit.
    QCOMPARE(evaluated.last().first().value<Evaluation>().values, good.values);
    QVERIFY(m_window->statusBar()->currentMessage().contains("step 40"));
    QVERIFY(session()->isModified());
    QVERIFY(session()->history().lastStep() <= 40);
    QVERIFY(!revert->isVisibleTo(m_window));
    QVERIFY(!action->isEnabled());

    // Continue goes on from step 40.
    lr->setValue(0.01);
    train(50);
    QCOMPARE(session()->trainedSteps(), int64_t(50));
}

// Without validation (an image) the best is the lowest mean training loss between evaluations;
// the reconstruction shown after the revert is drawn from the weights gone back to.
void TestStudioDetails::revertsAnImageToItsBestTrainingLoss()
{
    openSample("camera");
    setTrainingSize(64); // one step per epoch: an evaluation each step
    train(20);
    QCOMPARE(session()->best().step, int64_t(20));
    QVERIFY(!session()->best().validation);
    find<QDoubleSpinBox>("learningRateSpinBox")->setValue(10);
    train(30);
    QVERIFY(session()->best().worseThanKept());
    QVERIFY(find<QLabel>("revertNoteLabel")->text().contains("training loss"));
    find<QPushButton>("revertButton")->click();
    QTRY_COMPARE(session()->trainedSteps(), int64_t(20));
    QTRY_COMPARE(find<QLabel>("timelineStepLabel")->text(), QString("step 20"));
    QVERIFY(!find<QPushButton>("revertButton")->isVisibleTo(m_window));
}

QLineSeries* TestStudioDetails::lossSeries(const QString& nameStart) const
{
    for (QAbstractSeries* s : find<QChartView>("lossChartView")->chart()->series())
        if (s->name().startsWith(nameStart) && s->name() != "training (every step)")
            return qobject_cast<QLineSeries*>(s);
    return nullptr;
}

bool TestStudioDetails::inLegend(QLineSeries* series) const
{
    const auto markers = find<QChartView>("lossChartView")->chart()->legend()->markers(series);
    return series->isVisible() && !markers.isEmpty() && markers.first()->isVisible();
}

// Item 9: the names' validation loss lies below the training loss because label smoothing is in
// the training loss only: the loss title and its tooltip say so; without smoothing not.
void TestStudioDetails::lossTitleSaysLabelSmoothingIsInTrainingLoss()
{
    openSample("names-ssa2018");
    QVERIFY(session()->config().labelSmoothing > 0);
    auto* title = find<QLabel>("lossTitleLabel");
    QVERIFY2(title->text().contains("training includes label smoothing ε = 0.1"),
             qPrintable(title->text()));
    QVERIFY(title->toolTip().contains("the validation loss does not"));
    QTRY_VERIFY(inLegend(lossSeries("validation")));

    find<QDoubleSpinBox>("labelSmoothingSpinBox")->setValue(0);
    QTRY_COMPARE(session()->config().labelSmoothing, 0.f);
    QVERIFY(!title->text().contains("label smoothing"));
    QVERIFY(!title->toolTip().contains("label smoothing"));
}

// Item 9: an image has no validation data: no "validation" in the loss chart's legend.
void TestStudioDetails::noValidationLegendWithoutValidation()
{
    openSample("iris");
    QTRY_VERIFY(inLegend(lossSeries("validation")));
    openSample("camera");
    QTest::qWait(50); // the legend lays its markers out later
    QVERIFY(!inLegend(lossSeries("validation")));
    QTRY_VERIFY(inLegend(lossSeries("training")));
}

// Item 9: a generated name held out for validation is in the file: not NEW ("invented"), but
// HELD; NEW only for names in neither part of the file.
void TestStudioDetails::aHeldOutNameIsNotNew()
{
    openSample("names-ssa2018");
    train(300);
    QFile file(QFINDTESTDATA("../../resources/samples/names-ssa2018.txt"));
    QVERIFY(file.open(QIODevice::ReadOnly | QIODevice::Text));
    const QStringList lines = QString::fromUtf8(file.readAll()).split('\n', Qt::SkipEmptyParts);
    const QSet<QString> inFile(lines.begin(), lines.end());

    find<QSpinBox>("countSpinBox")->setValue(1000);
    QSignalSpy generated(&NamesRequests::of(*session()), &NamesRequests::namesGenerated);
    find<QPushButton>("generateButton")->click();
    QTRY_COMPARE_WITH_TIMEOUT(generated.count(), 1, kTrainingWait);
    auto* list = find<QListWidget>("generatedListWidget");
    QCOMPARE(list->count(), 1000);
    int held = 0, fresh = 0;
    for (int i = 0; i < list->count(); ++i) {
        const QString text = list->item(i)->text();
        const QString name = text.mid(7).remove(QChar(u'…'));
        if (text.startsWith("NEW")) {
            QVERIFY2(!inFile.contains(name), qPrintable(name + " is in the file"));
            ++fresh;
        } else if (text.startsWith("HELD")) {
            QVERIFY(inFile.contains(name));
            QVERIFY(list->item(i)->toolTip().contains("held out"));
            ++held;
        }
    }
    QVERIFY(held > 0); // the case this guards happened
    QVERIFY(fresh > 0);
    // Item 9, one number format: a percentage has one decimal here as in the predictions table.
    const QString innovation = find<QLabel>("innovationLabel")->text();
    // (In the learner's locale: 88.9% in English, 88,9% under de_DE.)
    QVERIFY2(QRegularExpression(R"(<b>\d+)" + localePoint() + R"(\d%</b> new \(\d+ of 1000\))")
                 .match(innovation)
                 .hasMatch(),
             qPrintable(innovation));
}

// Item 9: the custom render size starts at the image's aspect (800x800 for a square picture,
// not 800x600), and with the aspect kept one side follows the other.
void TestStudioDetails::customRenderSizeKeepsTheImagesAspect()
{
    openSample("camera");
    const QSize image = imageTrainingSize();
    QCOMPARE(image.width(), image.height());
    auto* resolution = find<QComboBox>("resolutionComboBox");
    resolution->setCurrentIndex(resolution->findData(0));
    auto* width = find<QSpinBox>("customWidthSpinBox");
    auto* height = find<QSpinBox>("customHeightSpinBox");
    auto* lock = find<QCheckBox>("aspectLockCheckBox");
    QVERIFY(lock->isVisible() && lock->isChecked());
    QCOMPARE(width->value(), 800);
    QCOMPARE(height->value(), 800);
    width->setValue(300);
    QCOMPARE(height->value(), 300);
    height->setValue(640);
    QCOMPARE(width->value(), 640);
    lock->setChecked(false);
    width->setValue(500);
    QCOMPARE(height->value(), 640);
    lock->setChecked(true); // back to the aspect, from the width
    QCOMPARE(height->value(), 500);

    openSample("horse"); // 400x328: 800 wide, as high as its aspect says
    const QSize horse = imageTrainingSize();
    QCOMPARE(width->value(), 800);
    QCOMPARE(height->value(), qRound(800.0 * horse.height() / horse.width()));
}

// Item 9: Export PNG says what it saved in the status bar, and its dialog starts next to the
// model file (the data file's folder when unsaved), then in the last export's folder.
void TestStudioDetails::exportSaysWhereAndStartsNearTheModel()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY(QDir(dir.path()).mkdir("pictures"));
    openSample("camera");
    setTrainingSize(64);
    train(5);
    saveAs(dir.filePath("camera.safetensors"));

    const QString first = dir.filePath("pictures/first.png");
    Dialogs::setNextFileName(first);
    find<QPushButton>("exportButton")->click();
    QCOMPARE(QFileInfo(Dialogs::lastSaveStart()).absolutePath(),
             QFileInfo(dir.path()).absoluteFilePath());
    QVERIFY(QFileInfo::exists(first));
    const QString shown = m_window->statusBar()->currentMessage();
    QVERIFY2(shown.startsWith("Saved ") && shown.contains("first.png") && shown.contains("(64×64)"),
             qPrintable(shown));

    Dialogs::setNextFileName(dir.filePath("second.png"));
    find<QPushButton>("exportButton")->click();
    QCOMPARE(QFileInfo(Dialogs::lastSaveStart()).absolutePath(), QFileInfo(first).absolutePath());
}

// Item 9: the step schedule's period and factor (the CLI's --step-every, --gamma) in the Training
// panel, shown while the schedule is step decay.
void TestStudioDetails::stepDecayHasItsPeriodAndFactor()
{
    openSample("iris");
    auto* row = find<QWidget>("stepDecayRow");
    auto* panel = find<QWidget>("trainingPanel");
    auto* schedule = find<QComboBox>("scheduleComboBox");
    QCOMPARE(session()->config().schedule.kind, il::ScheduleKind::Cosine);
    QVERIFY(!row->isVisibleTo(panel));
    schedule->setCurrentIndex(schedule->findText("step decay"));
    QCOMPARE(session()->config().schedule.kind, il::ScheduleKind::StepDecay);
    QVERIFY(row->isVisibleTo(panel));
    find<QSpinBox>("stepEverySpinBox")->setValue(100);
    find<QDoubleSpinBox>("gammaSpinBox")->setValue(0.25);
    const il::ScheduleConfig& c = session()->config().schedule;
    QCOMPARE(c.stepEvery, int64_t(100));
    QCOMPARE(c.gamma, 0.25f);
    // The planned rate drops to a quarter at step 100.
    QCOMPARE(il::learningRate(c, 100, 1000), 0.25 * il::learningRate(c, 99, 1000));
    schedule->setCurrentIndex(schedule->findText("constant"));
    QVERIFY(!row->isVisibleTo(panel));
}

// Item 9: a CPU threads setting (the CLI's --threads, default all cores): the next run trains
// with it, and the next window starts with it.
void TestStudioDetails::cpuThreadsAreAChoiceThatIsRemembered()
{
    auto* threads = find<QSpinBox>("cpuThreadsSpinBox");
    QCOMPARE(threads->value(), 0); // the CLI's default: one per core
    QVERIFY(threads->text().startsWith("all cores"));
    openSample("iris");
    const auto backendThreads = [this] {
        int n = -1;
        session()->worker()->post([&n](ModelState& m) { n = m.backend->info().threads; });
        session()->worker()->waitForIdle();
        return n;
    };
    train(2);
    QCOMPARE(backendThreads(), std::max(1, QThread::idealThreadCount()));
    threads->setValue(1);
    QCOMPARE(session()->cpuThreads(), 1);
    QCOMPARE(session()->device().threads, 1);
    train(4);
    QCOMPARE(backendThreads(), 1);
    QCOMPARE(session()->trainedSteps(), int64_t(4)); // moving to one thread kept the weights

    closeWindow();
    newWindow();
    QCOMPARE(find<QSpinBox>("cpuThreadsSpinBox")->value(), 1);
    QCOMPARE(session()->cpuThreads(), 1);
    find<QSpinBox>("cpuThreadsSpinBox")->setValue(0);
    QCOMPARE(QSettings().value("training/threads").toInt(), 0);
}

// Item 9: the validation predictions are numbered by their line in the file (they are spread
// over it), not 1 to 30.
void TestStudioDetails::predictionRowsAreNumberedByFileLine()
{
    QFile file(QFINDTESTDATA("../../resources/samples/iris.csv"));
    QVERIFY(file.open(QIODevice::ReadOnly | QIODevice::Text));
    const QStringList lines = QString::fromUtf8(file.readAll()).split('\n');
    openSample("iris");
    train(2, true);
    auto* table = find<QTableWidget>("predictionsTableWidget");
    QCOMPARE(table->rowCount(), 30);
    int beyond = 0;
    for (int i = 0; i < table->rowCount(); ++i) {
        bool ok = false;
        const int line = table->verticalHeaderItem(i)->text().toInt(&ok);
        QVERIFY(ok && line >= 2 && line <= lines.size());
        // The row shown is the one on that line: its species is the actual class.
        QCOMPARE(table->item(i, 0)->text(), lines[line - 1].section(',', -1).trimmed());
        beyond += line > 31 ? 1 : 0;
        // Item 9, one number format: percentages with one decimal, as on the names page.
        const QString confidence = table->item(i, 2)->text();
        QVERIFY2(
            QRegularExpression(R"(^\d+)" + localePoint() + R"(\d%$)").match(confidence).hasMatch(),
            qPrintable(confidence));
    }
    QVERIFY(beyond > 0);
}

QTEST_MAIN(TestStudioDetails)
#include "TestStudioDetails.moc"
