// The simple models beside a table's results in the studio: the real MainWindow, offscreen,
// driven by object names. After a run the headline of the table output has the baselines under
// it (least squares and the mean for diabetes), and says plainly when the network does not beat
// them; a table with a rare class says so in the Data panel, with what always answering the
// common class scores.
#include "Session.h"
#include "StudioTestCase.h"

#include <QFile>
#include <QLabel>
#include <QRegularExpression>
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
};

void TestStudioBaselines::regressionHeadlineHasBaselines()
{
    openSample("diabetes");
    train(1, true); // one step: far behind least squares
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
    QVERIFY2(label->text().contains("the network does not beat linear regression here: MSE"),
             qPrintable(label->text()));
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

QTEST_MAIN(TestStudioBaselines)
#include "TestStudioBaselines.moc"
