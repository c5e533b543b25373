// Memorising made visible for names, in the real MainWindow, offscreen: the metric
// chart carries the innovation rate at each evaluation beside the validation cross-entropy, and
// Sweep… charts the innovation rate and the likelihood of the drawn names against temperature.
#include "ChartsPanel.h"
#include "NamesOutputPage.h"
#include "StudioTestCase.h"
#include "TemperatureSweepDialog.h"

#include <QFile>
#include <QLabel>
#include <QTemporaryDir>

using namespace il::app;
using namespace studiotest;

class TestStudioMemorising : public StudioTestCase {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        isolateSettings("testStudioMemorising");
        QVERIFY(m_dir.isValid());
        // The first 600 names of the bundled list: a few seconds of training.
        QFile all(QStringLiteral(IRONLEARN_SAMPLES) + "/names-ssa2018.txt");
        QVERIFY(all.open(QIODevice::ReadOnly));
        QByteArray names;
        for (int i = 0; i < 600 && !all.atEnd(); ++i)
            names += all.readLine();
        m_names = m_dir.filePath("names600.txt");
        QFile f(m_names);
        QVERIFY(f.open(QIODevice::WriteOnly) && f.write(names) == names.size());
    }
    void init() { newWindow(); }
    void cleanup() { closeWindow(); }

    void innovationRateChartedWhileTraining();
    void temperatureSweepChart();

private:
    void trainNames()
    {
        QVERIFY(session()->openDataset(m_names));
        find<QComboBox>("budgetUnitComboBox")->setCurrentIndex(0); // epochs
        find<QSpinBox>("budgetSpinBox")->setValue(6);
        train(0, true);
    }

    QTemporaryDir m_dir;
    QString m_names;
};

// Each evaluation of a names run puts a point of the innovation rate (the share of 200 names
// drawn at T = 1 that are not training names) on the metric chart, in percent, at the same steps
// as the validation cross-entropy.
void TestStudioMemorising::innovationRateChartedWhileTraining()
{
    trainNames();
    auto* charts = find<ChartsPanel>("chartsPanel");
    QTRY_VERIFY(!charts->sideMetricPoints().isEmpty());
    const QList<QPointF> side = charts->sideMetricPoints(), metric = charts->metricPoints();
    QCOMPARE(side.size(), metric.size());
    for (qsizetype i = 0; i < side.size(); ++i) {
        QCOMPARE(side[i].x(), metric[i].x());
        QVERIFY2(side[i].y() > 0 && side[i].y() <= 100, qPrintable(QString::number(side[i].y())));
    }
    QVERIFY(find<QWidget>("metricChartView")->toolTip().contains("innovation rate"));
    // Other data (the session's open, past the window's save question): a table has no side
    // metric, and the chart shows none.
    QVERIFY(session()->openDataset(QStringLiteral(IRONLEARN_SAMPLES) + "/iris.csv"));
    QTRY_VERIFY(charts->sideMetricPoints().isEmpty());
}

// Sweep… draws 300 names at each temperature from 0.2 to 2.0 on the worker: colder draws repeat
// the training list and are likelier under the network, hotter ones are new and unlikely.
void TestStudioMemorising::temperatureSweepChart()
{
    trainNames();
    auto* page = find<NamesOutputPage>("namesOutputPage");
    find<QPushButton>("sweepButton")->click();
    TemperatureSweepDialog* dialog = page->sweepDialog();
    QVERIFY(dialog && dialog->isVisible());
    QTRY_COMPARE_WITH_TIMEOUT(dialog->innovationPoints().size(), 10, kTrainingWait);
    const QList<QPointF> innovation = dialog->innovationPoints();
    const QList<QPointF> likelihood = dialog->likelihoodPoints();
    QCOMPARE(likelihood.size(), 10);
    QCOMPARE(innovation.first().x(), 0.2);
    QVERIFY(std::fabs(innovation.last().x() - 2.0) < 1e-9);
    QVERIFY2(innovation.last().y() > innovation.first().y() + 20,
             qPrintable(QString("%1% at 0.2, %2% at 2.0")
                            .arg(innovation.first().y())
                            .arg(innovation.last().y())));
    QVERIFY(likelihood.first().y() > likelihood.last().y());
    QVERIFY2(find<QLabel>("sweepStatusLabel")->text().contains("300 names at each temperature"),
             qPrintable(find<QLabel>("sweepStatusLabel")->text()));
    // Reset weights: the sweep of the old weights is cleared, not left standing.
    session()->resetWeights();
    QTRY_VERIFY(dialog->innovationPoints().isEmpty());
}

QTEST_MAIN(TestStudioMemorising)
#include "TestStudioMemorising.moc"
