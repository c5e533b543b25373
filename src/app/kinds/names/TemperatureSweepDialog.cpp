#include "TemperatureSweepDialog.h"

#include "ChartViews.h"
#include "NamesRequests.h"
#include "Session.h"

#include <QChart>
#include <QChartView>
#include <QDialogButtonBox>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QPushButton>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace il::app {

TemperatureSweepDialog::TemperatureSweepDialog(Session* session, QWidget* parent)
    : QDialog(parent), m_session(session), m_chart(new QChart), m_innovation(new QLineSeries),
      m_likelihood(new QLineSeries), m_temperatureAxis(new QValueAxis),
      m_innovationAxis(new QValueAxis), m_likelihoodAxis(new QValueAxis),
      m_status(new QLabel(this)), m_again(new QPushButton("Sweep again", this))
{
    setObjectName("temperatureSweepDialog");
    setWindowTitle("Temperature Sweep");
    auto* view = new QChartView(this);
    view->setObjectName("sweepChartView");
    view->setRenderHint(QPainter::Antialiasing);
    view->setMinimumSize(520, 320);
    installChart(view, m_chart);
    m_chart->setTitle("Innovation and likelihood against temperature");
    m_innovation->setName("new names (%)");
    m_likelihood->setName("mean ln p per character (at T = 1)");
    for (QLineSeries* s : {m_innovation, m_likelihood}) {
        s->setPointsVisible(true);
        m_chart->addSeries(s);
    }
    m_temperatureAxis->setTitleText("temperature");
    m_temperatureAxis->setRange(0, 2.2);
    m_temperatureAxis->setTickCount(12);
    m_temperatureAxis->setLabelFormat("%.1f");
    m_innovationAxis->setTitleText("new names");
    m_innovationAxis->setRange(0, 100);
    m_innovationAxis->setTickCount(5);
    m_innovationAxis->setLabelFormat("%.0f%%");
    m_likelihoodAxis->setTitleText("mean ln p (nats/char)");
    m_likelihoodAxis->setLabelFormat("%.1f");
    m_chart->addAxis(m_temperatureAxis, Qt::AlignBottom);
    m_chart->addAxis(m_innovationAxis, Qt::AlignLeft);
    m_chart->addAxis(m_likelihoodAxis, Qt::AlignRight);
    m_innovation->attachAxis(m_temperatureAxis);
    m_innovation->attachAxis(m_innovationAxis);
    m_likelihood->attachAxis(m_temperatureAxis);
    m_likelihood->attachAxis(m_likelihoodAxis);
    // The innovation rate in the metric chart's colour for it (ChartsPanel).
    const QColor purple(148, 103, 189);
    m_innovation->setPen(QPen(purple, 2));
    m_innovation->setColor(purple);
    m_likelihood->setPen(QPen(QColor(31, 119, 180), 2));
    m_innovationAxis->setLabelsColor(purple);
    m_likelihoodAxis->setLabelsColor(QColor(31, 119, 180));
    m_chart->legend()->setAlignment(Qt::AlignBottom);

    m_status->setObjectName("sweepStatusLabel");
    m_status->setWordWrap(true);
    // Room for its three lines from the start: the text arrives after the dialog is laid out.
    m_status->setMinimumHeight(3 * fontMetrics().lineSpacing() + 4);
    m_status->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    m_again->setObjectName("sweepAgainButton");
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    buttons->addButton(m_again, QDialogButtonBox::ActionRole);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::close);
    connect(m_again, &QPushButton::clicked, this, &TemperatureSweepDialog::sweep);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(view, 1);
    layout->addWidget(m_status);
    layout->addWidget(buttons);
    connect(&NamesRequests::of(*m_session), &NamesRequests::temperatureSwept, this,
            &TemperatureSweepDialog::swept);
    resize(640, 500);
    // Other data or other weights: the sweep shown is of a model that is gone.
    const auto stale = [this] {
        m_innovation->clear();
        m_likelihood->clear();
        m_status->setText("The model changed: press Sweep again for this one.");
    };
    connect(m_session, &Session::modelChanged, this, stale);
    connect(m_session, &Session::historyReset, this, stale);
}

void TemperatureSweepDialog::sweep()
{
    if (m_busy) return;
    m_busy = true;
    m_again->setEnabled(false);
    std::vector<double> temperatures;
    for (int i = 1; i <= 10; ++i)
        temperatures.push_back(0.2 * i);
    tasks::GenerationOptions options;
    options.count = kNamesPerTemperature;
    options.seed = 1;
    m_status->setText(QString("Drawing %1 names at each of %2 temperatures…")
                          .arg(kNamesPerTemperature)
                          .arg(temperatures.size()));
    NamesRequests::of(*m_session).sweepTemperatures(options, temperatures);
}

void TemperatureSweepDialog::swept(const std::vector<tasks::SweepPoint>& points,
                                   const QString& error)
{
    m_busy = false;
    m_again->setEnabled(true);
    QList<QPointF> innovation, likelihood;
    double lo = 0, hi = -1e300;
    for (const tasks::SweepPoint& p : points) {
        innovation << QPointF(p.temperature, 100 * p.innovationRate);
        if (std::isfinite(p.meanLogLikelihood)) {
            likelihood << QPointF(p.temperature, p.meanLogLikelihood);
            lo = std::min(lo, p.meanLogLikelihood);
            hi = std::max(hi, p.meanLogLikelihood);
        }
    }
    m_innovation->replace(innovation);
    m_likelihood->replace(likelihood);
    if (!likelihood.isEmpty())
        m_likelihoodAxis->setRange(std::floor(lo), std::min(0.0, std::ceil(hi)));
    if (!error.isEmpty()) {
        m_status->setText(error);
        return;
    }
    if (points.empty()) return;
    m_status->setText(
        QString("%1 names at each temperature (the same draws). At %2 the network repeats its "
                "training list (%3% new); at %4 %5% are new, but it finds its own names far "
                "less likely (%6 against %7 nats per character).")
            .arg(kNamesPerTemperature)
            .arg(points.front().temperature, 0, 'f', 1)
            .arg(100 * points.front().innovationRate, 0, 'f', 0)
            .arg(points.back().temperature, 0, 'f', 1)
            .arg(100 * points.back().innovationRate, 0, 'f', 0)
            .arg(points.back().meanLogLikelihood, 0, 'f', 2)
            .arg(points.front().meanLogLikelihood, 0, 'f', 2));
}

QList<QPointF> TemperatureSweepDialog::innovationPoints() const
{
    return m_innovation->points();
}

QList<QPointF> TemperatureSweepDialog::likelihoodPoints() const
{
    return m_likelihood->points();
}

} // namespace il::app
