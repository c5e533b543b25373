// The simple models beside a table's results in the studio: the real MainWindow, offscreen,
// driven by object names. After a run the headline of the table output has the baselines under
// it (least squares and the mean for diabetes), and says plainly when the network does not beat
// them; a table with a rare class says so in the Data panel, with what always answering the
// common class scores.
#include "Session.h"
#include "StudioTestCase.h"

#include <QComboBox>
#include <QFile>
#include <QFrame>
#include <QLabel>
#include <QRegularExpression>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>

using namespace il::app;
using namespace studiotest;

class TestStudioBaselines : public StudioTestCase {
    Q_OBJECT

private slots:
    void initTestCase() { isolateSettings("testStudioBaselines"); }
    void init() { newWindow(); }
    void cleanup()
    {
        session()->stop();
        QTRY_VERIFY(session()->runState() == Session::RunState::Idle);
        delete m_window; // not closed: nothing asks to save
        m_window = nullptr;
    }

    void regressionHeadlineHasBaselines();
    void rareClassNoted();
    void defaultKeepsTheLinearModelWhenItAddsNothing();
    void defaultKeepsTheNetworkWhenItBeatsTheLine();
};

void TestStudioBaselines::regressionHeadlineHasBaselines()
{
    openSample("diabetes");
    // The mlp preset (the default starts as least squares): one step is far behind it.
    auto* presets = find<QComboBox>("presetComboBox");
    presets->setCurrentIndex(presets->findData("mlp"));
    emit presets->activated(presets->currentIndex());
    QCOMPARE(session()->spec(), QString("dense:32,tanh,dense:32,tanh,dense"));
    train(1, true);
    auto* label = find<QLabel>("metricsLabel");
    const QRegularExpressionMatch m =
        QRegularExpression(R"(<br>Baselines — MSE: network ([0-9.e+]+), linear ([0-9.e+]+), )"
                           R"(mean ([0-9.e+]+)<br>)")
            .match(label->text());
    QVERIFY2(m.hasMatch(), qPrintable(label->text()));
    const double network = m.captured(1).toDouble(), linear = m.captured(2).toDouble(),
                 mean = m.captured(3).toDouble();
    // Diabetes progression: least squares explains about half the variance (MSE ~3000 of ~6000).
    QVERIFY2(linear > 1500 && linear < 4500 && mean > 4500 && mean < 8000,
             qPrintable(label->text()));
    QVERIFY(network > linear);
    // The run's verdict, in red: the network of its last step falls short.
    QVERIFY2(label->text().contains("Kept the network of step 1, the run's last: it does not beat "
                                    "linear regression here: MSE"),
             qPrintable(label->text()));
    QVERIFY(label->text().contains("color:#da3633"));
    // The full report, baselines included, is the tooltip.
    QVERIFY2(label->toolTip().contains("baselines on validation: the mean MSE"),
             qPrintable(label->toolTip()));
}

void TestStudioBaselines::rareClassNoted()
{
    QTemporaryDir dir;
    QByteArray csv = "x,label\n";
    for (int i = 0; i < 200; ++i)
        csv += QByteArray::number(i) + (i % 16 == 0 ? ",spam\n" : ",ham\n");
    const QString path = dir.filePath("spam.csv");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly) && f.write(csv) == csv.size());
    f.close();
    QVERIFY(session()->openDataset(path));
    auto* summary = find<QLabel>("summaryLabel");
    QTRY_VERIFY2(summary->text().contains("Note: class &#x27;spam&#x27; is") ||
                     summary->text().contains("Note: class 'spam' is"),
                 qPrintable(summary->text()));
    QVERIFY2(QRegularExpression(R"(of the training rows: always answering (&#x27;|')ham(&#x27;|') )"
                                R"(scores 9\d\.\d% accuracy; look at balanced accuracy)")
                 .match(summary->text())
                 .hasMatch(),
             qPrintable(summary->text()));
    train(20, true);
    // The headline of a classification names balanced accuracy next to accuracy.
    QVERIFY2(find<QLabel>("metricsLabel")->text().contains("balanced accuracy"),
             qPrintable(find<QLabel>("metricsLabel")->text()));
    QVERIFY(find<QLabel>("metricsLabel")->text().contains("Baselines — accuracy: network "));
}

// The default table stack (wide) on diabetes, trained to its end: its hidden layers do not beat
// the least squares it started from on the validation rows, so the model is least squares again,
// the verdict says why (in the status bar and under the headline), the headline's network equals
// the linear baseline, and no Revert to best weights is offered for the network it set aside.
void TestStudioBaselines::defaultKeepsTheLinearModelWhenItAddsNothing()
{
    openSample("diabetes");
    QCOMPARE(session()->spec(), QString("dense:32,tanh,dense:32,tanh,dense,skip"));
    train(0, true); // the default budget: early stopping ends it
    QTRY_VERIFY2(m_window->statusBar()->currentMessage().contains(
                     "Kept the linear start, the least squares model: the hidden layers did not "
                     "beat it"),
                 qPrintable(m_window->statusBar()->currentMessage()));
    auto* label = find<QLabel>("metricsLabel");
    const QRegularExpressionMatch m =
        QRegularExpression(R"(Baselines — MSE: network ([0-9.e+]+), linear ([0-9.e+]+), )")
            .match(label->text());
    QVERIFY2(m.hasMatch(), qPrintable(label->text()));
    QCOMPARE(m.captured(1), m.captured(2));
    QVERIFY2(label->text().contains("Kept the linear start, the least squares model: the hidden "
                                    "layers did not beat it"),
             qPrintable(label->text()));
    QVERIFY2(!label->text().contains("does not beat"), qPrintable(label->text()));
    QVERIFY(!find<QFrame>("revertFrame")->isVisibleTo(m_window));
}

// On the spiral the same default ends far beyond the logistic regression it started from and
// keeps its network.
void TestStudioBaselines::defaultKeepsTheNetworkWhenItBeatsTheLine()
{
    openSample("spiral");
    train(0, true);
    QTRY_VERIFY2(m_window->statusBar()->currentMessage().contains(
                     "it beats logistic regression on the validation loss"),
                 qPrintable(m_window->statusBar()->currentMessage()));
    QVERIFY2(!find<QLabel>("metricsLabel")->text().contains("does not beat"),
             qPrintable(find<QLabel>("metricsLabel")->text()));
}

QTEST_MAIN(TestStudioBaselines)
#include "TestStudioBaselines.moc"
