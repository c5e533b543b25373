// One verdict for a trained table. The default stack (wide and deep: it starts as the linear
// model) on iris stops early and goes back to the network of its best validation loss, which
// beats logistic regression on that loss but not on accuracy; on diabetes it goes back to the
// linear start. Either way the status bar, the output page's lines under the headline and the
// charts say the same thing (Session::verdict), the charts mark the step whose weights were
// kept, and the validation curve stays inside the loss chart, clear of the overfitting label.
// Saved and reopened, the model says the same again. A small regression table cross-validated
// (the default) keeps its folds' networks averaged, and says so.
#include "ChartsPanel.h"
#include "Session.h"
#include "StudioTestCase.h"

#include <QElapsedTimer>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QTextDocumentFragment>

#include <cmath>

using namespace il::app;
using namespace studiotest;
using Kept = il::tasks::RunVerdict::Kept;

class TestStudioVerdict : public StudioWindowTestCase {
    Q_OBJECT

private slots:
    void networkKeptAfterEarlyStopping();
    void linearStartKept();
    void averagedFoldsKept();

private:
    ChartsPanel* charts() const { return find<ChartsPanel>("chartsPanel"); }
    QString status() const { return m_window->statusBar()->currentMessage(); }
    // The output page's lines under the headline, as the user reads them (no markup).
    QString outputText() const
    {
        return QTextDocumentFragment::fromHtml(find<QLabel>("metricsLabel")->text()).toPlainText();
    }
    // The status bar, the output page and the charts tell the one verdict, and nothing else
    // judges the network against the linear model.
    void saySameVerdict(const QString& sentence);
};

void TestStudioVerdict::saySameVerdict(const QString& sentence)
{
    QTRY_VERIFY2(status().endsWith(sentence), qPrintable(status()));
    const QString page = outputText();
    QVERIFY2(page.contains(sentence), qPrintable(page));
    QCOMPARE(charts()->keptMarkToolTip(), sentence);
    QVERIFY(find<QWidget>("metricChartView")->toolTip().contains(sentence));
    // The judges that used to speak apart: the settle's note, the baseline line, the report.
    for (const QString& text : {status(), page, find<QLabel>("metricsLabel")->toolTip()}) {
        QString rest = text;
        rest.remove(sentence);
        for (const char* judgement :
             {"beats its linear start", "does not beat", "is its linear start", "is the least"})
            QVERIFY2(!rest.contains(judgement), qPrintable(judgement + (": " + text)));
    }
}

void TestStudioVerdict::networkKeptAfterEarlyStopping()
{
    openSample("iris");
    QCOMPARE(session()->spec(), QString("dense:32,tanh,dense:32,tanh,dense,skip"));
    train(0, true); // the default budget: early stopping ends it
    const QRegularExpressionMatch restored =
        QRegularExpression("the best weights, of step (\\d+), were restored").match(status());
    QVERIFY2(restored.hasMatch(), qPrintable(status()));
    const int64_t step = restored.captured(1).toLongLong();
    QVERIFY(step > 0 && step < session()->trainedSteps());

    const il::tasks::RunVerdict& verdict = session()->verdict();
    QCOMPARE(verdict.kept, Kept::BestWeights);
    QCOMPARE(verdict.keptStep, step);
    const QString sentence = verdict.sentence();
    // It won on the measure that chose it and says where it did not.
    QVERIFY2(sentence.startsWith(QString("Kept the network of step %1, its lowest validation "
                                         "loss: it beats logistic regression on the validation "
                                         "loss (")
                                     .arg(step)),
             qPrintable(sentence));
    QVERIFY2(sentence.contains(" but not on accuracy "), qPrintable(sentence));
    QVERIFY(!verdict.fallsShort);
    saySameVerdict(sentence);
    if (QTest::currentTestFailed()) return;
    // Not in red: the network was kept by the measure that judged it.
    QVERIFY(!find<QLabel>("metricsLabel")->text().contains("color:#da3633"));

    // The kept step on both charts, named in the legend.
    QCOMPARE(charts()->keptMarkStep(), double(step));
    QCOMPARE(charts()->metricKeptMarkStep(), double(step));
    QCOMPARE(charts()->keptMarkText(), QString("kept"));

    // The validation loss rose after the kept step: marked, and the curve stays inside the
    // axis range, its highest points clear of the label at the top of the plot.
    QVERIFY(std::isfinite(charts()->overfitMarkStep()));
    QVERIFY(charts()->overfitLabelInsidePlot());
    const QPointF range = charts()->lossAxisRange();
    const QList<QPointF> validation = charts()->validationPoints();
    QVERIFY(!validation.isEmpty());
    for (const QPointF& p : validation)
        QVERIFY2(p.y() >= range.x() && p.y() <= range.y(),
                 qPrintable(QString("%1 outside %2..%3").arg(p.y()).arg(range.x()).arg(range.y())));
    QVERIFY(!charts()->validationHidden());
    // So at the smallest window, where the label takes a larger share of the plot.
    m_window->resize(1024, 700);
    QTRY_COMPARE(m_window->height(), 700);
    QTRY_VERIFY(!charts()->validationHidden());
    QVERIFY(charts()->overfitLabelInsidePlot());

    // Saved and opened again (with its data, found by the record in the file): the same verdict
    // and the same mark, made from the reopened model's own first evaluation.
    QTemporaryDir dir;
    const QString path = dir.filePath("iris.safetensors");
    saveAs(path);
    QSignalSpy opened(session(), &Session::modelOpened);
    QSignalSpy verdictMade(session(), &Session::verdictChanged);
    QVERIFY(m_window->openFile(path));
    QTRY_COMPARE(opened.count(), 1);
    QTRY_COMPARE(verdictMade.count(), 1);
    QCOMPARE(session()->verdict().kept, Kept::BestWeights);
    QCOMPARE(session()->verdict().keptStep, step);
    QCOMPARE(session()->verdict().sentence(), sentence);
    QTRY_COMPARE(charts()->keptMarkStep(), double(step));
    QCOMPARE(charts()->keptMarkToolTip(), sentence);

    // Other weights, no verdict: Reset weights (the unsaved training discarded) takes the mark
    // away.
    QTimer::singleShot(0, m_window, [] {
        if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget()))
            box->button(QMessageBox::Discard)->click();
    });
    find<QPushButton>("resetButton")->click();
    QTRY_VERIFY(std::isnan(charts()->keptMarkStep()));
    QVERIFY(std::isnan(charts()->metricKeptMarkStep()));
    QVERIFY(!session()->verdict().valid());
}

void TestStudioVerdict::linearStartKept()
{
    openSample("diabetes");
    // Saved the moment the run ends, before the evaluation the verdict is made from has come
    // back (as a scripted --save does): the file still keeps what it is made from.
    QTemporaryDir dir;
    const QString path = dir.filePath("diabetes.safetensors");
    QSignalSpy saved(session(), &Session::modelSaved);
    const QMetaObject::Connection saveAtOnce =
        connect(session(), &Session::trainingFinished, this, [&] { session()->saveModel(path); });
    train(0, true);
    disconnect(saveAtOnce);
    QTRY_COMPARE(saved.count(), 1);
    const il::tasks::RunVerdict& verdict = session()->verdict();
    QCOMPARE(verdict.kept, Kept::LinearStart);
    QCOMPARE(verdict.keptStep, int64_t(0));
    const QString sentence = verdict.sentence();
    QVERIFY2(sentence.startsWith("Kept the linear start, the least squares model: the hidden "
                                 "layers did not beat it on the validation loss by more than 2 "
                                 "standard errors ("),
             qPrintable(sentence));
    saySameVerdict(sentence);
    if (QTest::currentTestFailed()) return;
    // The headline's network is least squares: the same MSE as the linear baseline.
    const QRegularExpressionMatch m =
        QRegularExpression(R"(MSE: network ([0-9.e+]+), linear ([0-9.e+]+), )").match(outputText());
    QVERIFY2(m.hasMatch(), qPrintable(outputText()));
    QCOMPARE(m.captured(1), m.captured(2));

    // The linear start is marked, at step 0, on both charts.
    QCOMPARE(charts()->keptMarkStep(), 0.0);
    QCOMPARE(charts()->metricKeptMarkStep(), 0.0);
    QCOMPARE(charts()->keptMarkText(), QString("kept"));
    QVERIFY(!charts()->validationHidden());

    QSignalSpy opened(session(), &Session::modelOpened);
    QSignalSpy verdictMade(session(), &Session::verdictChanged);
    QVERIFY(m_window->openFile(path));
    QTRY_COMPARE(opened.count(), 1);
    QTRY_COMPARE(verdictMade.count(), 1);
    QCOMPARE(session()->verdict().kept, Kept::LinearStart);
    QCOMPARE(session()->verdict().sentence(), sentence);
}

// The default on a small regression table (5 folds, the ensemble stack): the folds' networks
// averaged and blended with least squares are the model; the verdict says so, the Model tab
// shows the averaged stack, and the model saved and reopened says the same.
void TestStudioVerdict::averagedFoldsKept()
{
    m_crossValidate = true;
    openSample("diabetes");
    QCOMPARE(session()->spec(), QString("dense:100:xavier,relu,dense"));
    QCOMPARE(session()->task()->folds(), 5);
    QElapsedTimer clock;
    clock.start();
    train(0, true);
    // What a learner waits for the first table's result (issue: under 2 s on 2 cores); said, not
    // asserted (a timing is a benchmark's, not a unit test's).
    qInfo("diabetes, the default (5 folds averaged): %.2f s from Start to the evaluated result",
          clock.elapsed() / 1000.0);
    const il::tasks::RunVerdict& verdict = session()->verdict();
    QCOMPARE(verdict.kept, Kept::LastStep);
    const QString sentence = verdict.sentence();
    QVERIFY2(
        QRegularExpression(R"(^Kept the 5 folds' networks averaged, blended 0\.\d\d : 0\.\d\d )"
                           R"(with least squares fitted on every row: cross-validated loss )")
            .match(sentence)
            .hasMatch(),
        qPrintable(sentence));
    // The status bar and the output page say it; the model is the last step's (no mark).
    QTRY_VERIFY2(status().endsWith(sentence), qPrintable(status()));
    QVERIFY2(outputText().contains(sentence), qPrintable(outputText()));
    QVERIFY(std::isnan(charts()->keptMarkStep()));
    QCOMPARE(session()->spec(), QString("dense:500:xavier,relu,dense,skip"));
    QCOMPARE(find<QLineEdit>("specLineEdit")->text(), session()->spec());

    QTemporaryDir dir;
    const QString path = dir.filePath("averaged.safetensors");
    QSignalSpy saved(session(), &Session::modelSaved);
    session()->saveModel(path);
    QTRY_COMPARE(saved.count(), 1);
    QSignalSpy opened(session(), &Session::modelOpened);
    QSignalSpy verdictMade(session(), &Session::verdictChanged);
    QVERIFY(m_window->openFile(path));
    QTRY_COMPARE(opened.count(), 1);
    QTRY_COMPARE(verdictMade.count(), 1);
    QCOMPARE(session()->verdict().sentence(), sentence);
    QCOMPARE(session()->spec(), QString("dense:500:xavier,relu,dense,skip"));
}

QTEST_MAIN(TestStudioVerdict)
#include "TestStudioVerdict.moc"
