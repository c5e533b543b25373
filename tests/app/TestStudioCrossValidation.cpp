// Cross-validation in the studio: the Training tab's Cross-validation row (tables only; its
// Automatic is 5 folds for a regression table under 5,000 rows, whose default stack averages
// them, and a validation split otherwise), 5 folds chosen: Start runs the folds (the run bar
// says which fold) and then the model chosen on every row; the loss chart shows the folds'
// validation losses as a band, the verdict says what the folds decided in one sentence, and the
// folds are saved with the model. "Off" goes back to a validation split.
#include "ChartsPanel.h"
#include "FoldBand.h"
#include "Session.h"
#include "StudioTestCase.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QFrame>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

using namespace il::app;
using namespace studiotest;

class TestStudioCrossValidation : public StudioTestCase {
    Q_OBJECT

private slots:
    void initTestCase() { isolateSettings("testStudioCrossValidation"); }
    void init()
    {
        m_crossValidate = true; // the default, as a learner gets it
        newWindow();
    }
    void cleanup() { closeWindow(); }
    void smallTableCrossValidated();
    void offGivesValidationSplit();
    void tablesOnly();
    void linearKeptOffersNoRevert();
    void regressionDefaultFollowsTheFolds();
    void resetAfterAveragingTrainsThePresetAgain();

private:
    ChartsPanel* charts() const { return find<ChartsPanel>("chartsPanel"); }
    QComboBox* folds() const { return find<QComboBox>("foldsComboBox"); }
    bool foldsShown() const { return !folds()->isHidden(); }
    void choose(int index)
    {
        folds()->setCurrentIndex(index);
        emit folds()->activated(index);
    }
};

void TestStudioCrossValidation::smallTableCrossValidated()
{
    openSample("iris");
    QVERIFY(foldsShown());
    QCOMPARE(folds()->currentIndex(), 0);
    QCOMPARE(folds()->currentText(), QString("Automatic: off (a validation split)"));
    QCOMPARE(session()->task()->folds(), 0);
    choose(3); // 5 folds
    QTRY_COMPARE(session()->task()->folds(), 5);
    QCOMPARE(session()->task()->data().valRows, int64_t(0));

    QSignalSpy progress(session(), &Session::crossValidationProgressed);
    QSignalSpy foldsDone(session(), &Session::foldsChanged);
    QElapsedTimer clock;
    clock.start();
    train(0, true); // the default budget: the folds stop early, the refit where their mean curve is
                    // lowest
    // What a learner waits for the first table's result (issue: under 2 s on 2 cores); said,
    // not asserted (a timing is a benchmark's, not a unit test's).
    qInfo("iris, default stack, 5 folds and the refit: %.2f s from Start to the evaluated result",
          clock.elapsed() / 1000.0);
    QVERIFY(progress.count() >= 1);
    QCOMPARE(progress.first().at(1).toInt(), 5);
    QVERIFY(foldsDone.count() >= 5);
    QCOMPARE(session()->foldCurves().size(), size_t(5));

    // The band: every fold's validation losses, from the lowest to the highest.
    const FoldBand* band = charts()->foldBand();
    QTRY_VERIFY(!band->isEmpty());
    QCOMPARE(band->folds(), 5);
    QCOMPARE(band->name(), QString("5 folds: validation"));
    const QList<QPointF> lo = band->lowerPoints(), hi = band->upperPoints();
    QCOMPARE(lo.size(), hi.size());
    for (int i = 0; i < lo.size(); ++i)
        QVERIFY(lo[i].y() <= hi[i].y());

    // One verdict: what the folds decided, in the status bar as on the page.
    const il::tasks::RunVerdict& v = session()->verdict();
    QVERIFY(v.valid());
    QVERIFY2(v.sentence().contains("cross-validation") && v.sentence().contains("150 rows"),
             qPrintable(v.sentence()));
    QTRY_VERIFY2(m_window->statusBar()->currentMessage().contains("cross-validation"),
                 qPrintable(m_window->statusBar()->currentMessage()));

    // Saved with the model.
    QTemporaryDir dir;
    saveAs(dir.filePath("iris.safetensors"));
    QCOMPARE(session()->taskJson()["folds"].toInt(), 5);

    // Other data: the band goes.
    openSample("diabetes");
    QTRY_VERIFY(charts()->foldBand()->isEmpty());
}

// diabetes with 5 folds keeps least squares: the refit trained the network for the folds'
// length and set it back to the linear model. Nothing held out judged the refit's steps, so no
// "loss rose" bar and no Revert to best weights (its training loss at step 1 against the folds'
// validation loss of the linear model was offered before); Continue trains on past the refit.
void TestStudioCrossValidation::linearKeptOffersNoRevert()
{
    openSample("diabetes");
    choose(3);
    QTRY_COMPARE(session()->task()->folds(), 5);
    train(0, true);
    const il::tasks::RunVerdict& v = session()->verdict();
    QVERIFY2(v.sentence().contains("least squares"), qPrintable(v.sentence()));
    const int64_t refit = session()->trainedSteps();
    QVERIFY(refit >= 1);
    QVERIFY(!find<QAction>("actionRevertToBest")->isEnabled());
    QVERIFY(find<QFrame>("revertFrame")->isHidden());

    train(refit + 30); // Continue: the budget asked for, not the refit's length again
    QVERIFY2(session()->trainedSteps() > refit,
             qPrintable(QString("%1 after %2").arg(session()->trainedSteps()).arg(refit)));
}

void TestStudioCrossValidation::offGivesValidationSplit()
{
    openSample("iris");
    choose(3); // 5 folds, then Off: one validation split
    QTRY_COMPARE(session()->task()->folds(), 5);
    choose(1);
    QTRY_COMPARE(session()->task()->folds(), 0);
    QVERIFY(session()->task()->data().valRows > 0);
    QCOMPARE(folds()->currentIndex(), 1);
    QSignalSpy progress(session(), &Session::crossValidationProgressed);
    train(200);
    QCOMPARE(progress.count(), 0);
    QVERIFY(charts()->foldBand()->isEmpty());
    QVERIFY(!session()->verdict().sentence().contains("cross-validation"));

    choose(4); // 10 folds, asked for
    QTRY_COMPARE(session()->task()->folds(), 10);
    QCOMPARE(session()->task()->data().valRows, int64_t(0));
}

void TestStudioCrossValidation::tablesOnly()
{
    openSmallImage();
    QVERIFY(!foldsShown());
    openSample("iris");
    QVERIFY(foldsShown());
}

// A small regression table: Automatic is 5 folds, with the ensemble stack and its settings (Adam,
// rate 0.001, batches of 200, no decay); Off gives the wide stack and the table defaults (AdamW),
// Automatic brings the ensemble back. A stack the learner chose stays whatever the folds.
void TestStudioCrossValidation::regressionDefaultFollowsTheFolds()
{
    openSample("diabetes");
    QCOMPARE(folds()->currentText(), QString("Automatic: 5 folds here"));
    QCOMPARE(session()->spec(), QString("dense:100:xavier,relu,dense"));
    QCOMPARE(QString(session()->config().optimizer.type().name), QString("adam"));
    QCOMPARE(session()->config().batchSize, int64_t(200));
    QCOMPARE(session()->foldModel(), il::tasks::FoldModel::Averaged);
    // The Model tab names the preset, and its tooltip says what it does with the folds.
    auto* presets = find<QComboBox>("presetComboBox");
    QCOMPARE(presets->currentData().toString(), QString("ensemble"));
    QVERIFY2(presets->itemData(presets->currentIndex(), Qt::ToolTipRole)
                 .toString()
                 .contains("folds' networks averaged"),
             qPrintable(presets->itemData(presets->currentIndex(), Qt::ToolTipRole).toString()));
    choose(folds()->findData(0)); // Off
    QTRY_COMPARE(session()->task()->folds(), 0);
    QCOMPARE(session()->spec(), QString("dense:32,tanh,dense:32,tanh,dense,skip"));
    QCOMPARE(QString(session()->config().optimizer.type().name), QString("adamw"));
    QCOMPARE(session()->config().batchSize, int64_t(0));
    QCOMPARE(session()->foldModel(), il::tasks::FoldModel::Refit);
    choose(folds()->findData(-1)); // Automatic again
    QTRY_COMPARE(session()->task()->folds(), 5);
    QCOMPARE(session()->spec(), QString("dense:100:xavier,relu,dense"));
    QCOMPARE(QString(session()->config().optimizer.type().name), QString("adam"));

    // The learner's own stack is kept when the folds change, and is not averaged.
    auto* spec = find<QLineEdit>("specLineEdit");
    spec->setText("dense:16,tanh,dense");
    emit spec->editingFinished();
    QTRY_COMPARE(session()->spec(), QString("dense:16,tanh,dense"));
    QCOMPARE(session()->foldModel(), il::tasks::FoldModel::Refit);
    choose(folds()->findData(0));
    QTRY_COMPARE(session()->task()->folds(), 0);
    QCOMPARE(session()->spec(), QString("dense:16,tanh,dense"));
}

// The averaged folds replace the preset's stack in the Model tab; Reset weights goes back to the
// preset, and Start runs its folds and averages them again (the same model: the same seed).
void TestStudioCrossValidation::resetAfterAveragingTrainsThePresetAgain()
{
    openSample("diabetes");
    train(0, true);
    QTRY_COMPARE(session()->spec(), QString("dense:500:xavier,relu,dense,skip"));
    // Its budget is the folds' length, spent: Continue would ask for as much again.
    QVERIFY(session()->trainedSteps() > 0);
    QCOMPARE(session()->config().steps, session()->trainedSteps());
    QVERIFY(session()->budgetSpent());
    const QString sentence = session()->verdict().sentence();
    QVERIFY2(sentence.startsWith("Kept the 5 folds' networks averaged"), qPrintable(sentence));
    QTimer::singleShot(0, m_window, [] {
        if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget()))
            box->button(QMessageBox::Discard)->click();
    });
    find<QPushButton>("resetButton")->click();
    QTRY_COMPARE(session()->spec(), QString("dense:100:xavier,relu,dense"));
    QCOMPARE(find<QLineEdit>("specLineEdit")->text(), session()->spec());
    QCOMPARE(session()->config().epochs, int64_t(3000)); // the preset's budget again
    QCOMPARE(session()->config().steps, int64_t(0));
    QCOMPARE(session()->foldModel(), il::tasks::FoldModel::Averaged);
    train(0, true);
    QTRY_COMPARE(session()->spec(), QString("dense:500:xavier,relu,dense,skip"));
    QTRY_COMPARE(session()->verdict().sentence(), sentence);
}

QTEST_MAIN(TestStudioCrossValidation)
#include "TestStudioCrossValidation.moc"
