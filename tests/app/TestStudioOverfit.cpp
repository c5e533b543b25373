// Overfitting made visible in the studio: a tiny noisy table trained long by a big network,
// early stopping off. The loss chart marks where the validation loss started rising (a band
// from that step, labelled "validation loss rising since step N: the network is memorising"),
// the status bar says it as the run notices it, the label stays inside the plot at the
// smallest window (1024x700), the mark comes back when the model is reopened (recomputed from
// the saved evaluations) and goes with Reset weights.
#include "ChartsPanel.h"
#include "NoisyTable.h"
#include "Session.h"
#include "StudioTestCase.h"

#include <QFile>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>

using namespace il::app;
using namespace studiotest;

class TestStudioOverfit : public StudioWindowTestCase {
    Q_OBJECT

private slots:
    void initTestCase(); // more than the fixture's
    void lossChartMarksOverfitting();

private:
    ChartsPanel* charts() const { return find<ChartsPanel>("chartsPanel"); }
    QTemporaryDir m_dir;
};

void TestStudioOverfit::initTestCase()
{
    isolateSettings("testStudioOverfit");
    QVERIFY(m_dir.isValid());
    // 60 rows a network learns by heart (the same as TestCliOverfit's).
    QFile f(m_dir.filePath("noisy.csv"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(testdata::noisyLinearTable(60));
}

void TestStudioOverfit::lossChartMarksOverfitting()
{
    m_window->openFile(m_dir.filePath("noisy.csv"));
    QVERIFY(session()->task());
    useValidationSplit(); // the overfitting mark is drawn over a validation curve
    QVERIFY(session()->task()->data().valRows > 0);
    QVERIFY(std::isnan(charts()->overfitMarkStep()));
    auto* spec = find<QLineEdit>("specLineEdit");
    spec->setText("dense:128,relu,dense:128,relu,dense");
    emit spec->returnPressed();
    find<QSpinBox>("batchSizeSpinBox")->setValue(0); // full batch: an epoch a step
    find<QSpinBox>("patienceSpinBox")->setValue(0);  // early stopping off: it goes on
    QSignalSpy messages(session(), &Session::message);
    train(1500);

    // The chart marks it, from the step the rise started.
    const double since = charts()->overfitMarkStep();
    QVERIFY2(since > 0 && since < 1500, qPrintable(QString::number(since)));
    QCOMPARE(charts()->overfitMarkText(),
             QString("validation loss rising since step %1: the network is memorising").arg(since));
    QCOMPARE(static_cast<double>(session()->history().overfitting().bestStep), since);
    QVERIFY(charts()->overfitLabelInsidePlot());
    // The status bar said it when the run noticed it (the trainer's notice, as other notices).
    bool said = false;
    for (const QList<QVariant>& m : messages)
        said = said || m.first().toString().contains(
                           QString("validation loss rising since step %1").arg(since));
    QVERIFY(said);

    // The smallest window: the label stays inside the plot (cut short if need be).
    m_window->resize(1024, 700);
    QTRY_COMPARE(m_window->size(), QSize(1024, 700));
    QTest::qWait(100);
    QVERIFY(charts()->overfitLabelInsidePlot());

    // Saved and reopened: recomputed from the saved evaluations, at the same step.
    const QString path = m_dir.filePath("noisy.safetensors");
    saveAs(path);
    closeWindow();
    newWindow();
    QSignalSpy opened(session(), &Session::modelOpened);
    m_window->openFile(path);
    QTRY_COMPARE(opened.count(), 1);
    QTRY_COMPARE(charts()->overfitMarkStep(), since);

    // Reset weights: a new curve, no mark.
    find<QPushButton>("resetButton")->click();
    QTRY_VERIFY(std::isnan(charts()->overfitMarkStep()));
    QVERIFY(charts()->overfitMarkText().isEmpty());
}

QTEST_MAIN(TestStudioOverfit)
#include "TestStudioOverfit.moc"
