#include "RaceChart.h"

#include "ChartViews.h"

#include <QChart>
#include <QChartView>
#include <QLineSeries>
#include <QPen>
#include <QValueAxis>

#include <cmath>

namespace il::app {

namespace {

// Colours that stay apart on light and dark backgrounds, one per preset in order.
QColor presetColour(int index)
{
    static const QColor colours[] = {QColor(31, 119, 180),  QColor(214, 39, 40),
                                     QColor(44, 160, 44),   QColor(255, 127, 14),
                                     QColor(148, 103, 189), QColor(140, 86, 75)};
    return colours[static_cast<size_t>(index) % std::size(colours)];
}

} // namespace

RaceChart::RaceChart(QChartView* view, QObject* parent)
    : QObject(parent), m_chart(new QChart), m_x(new QValueAxis(m_chart)),
      m_y(new QValueAxis(m_chart))
{
    m_chart->setTitle("PSNR over training time (higher is sharper)");
    m_chart->legend()->setAlignment(Qt::AlignBottom);
    m_chart->setMargins(QMargins(4, 4, 4, 4));
    m_x->setTitleText("seconds of training");
    m_x->setLabelFormat("%.0f");
    m_y->setTitleText("PSNR (dB)");
    m_y->setLabelFormat("%.0f");
    m_y->setTickType(QValueAxis::TicksDynamic); // ticks at multiples of 5 or 10 dB
    m_y->setTickAnchor(0);
    m_y->setTickInterval(5);
    m_chart->addAxis(m_x, Qt::AlignBottom);
    m_chart->addAxis(m_y, Qt::AlignLeft);
    m_x->setRange(0, 10);
    m_y->setRange(0, 40);
    installChart(view, m_chart);
    view->setRenderHint(QPainter::Antialiasing);
}

void RaceChart::reset(const QStringList& presets, double seconds)
{
    for (QLineSeries* s : m_series) {
        m_chart->removeSeries(s);
        delete s;
    }
    m_series.clear();
    m_points.assign(static_cast<size_t>(presets.size()), {});
    for (int i = 0; i < presets.size(); ++i) {
        auto* s = new QLineSeries;
        s->setName(presets[i]);
        m_chart->addSeries(s);
        s->attachAxis(m_x);
        s->attachAxis(m_y);
        m_series.push_back(s);
        setPoints(i, {}, false);
    }
    m_x->setRange(0, seconds);
    m_x->setLabelFormat(seconds < 5 ? "%.1f" : "%.0f");
    m_x->setTickCount(seconds <= 10 ? static_cast<int>(std::ceil(seconds)) + 1 : 6);
    m_y->setRange(0, 40);
}

void RaceChart::addEstimate(int index, double seconds, double psnr)
{
    if (index < 0 || index >= seriesCount() || !std::isfinite(psnr)) return;
    QList<QPointF>& points = m_points[static_cast<size_t>(index)];
    points.append({seconds, psnr});
    m_series[static_cast<size_t>(index)]->replace(points);
    fitY();
}

void RaceChart::setMeasured(int index, const tasks::RaceEntry& entry)
{
    std::vector<QPointF> points;
    for (size_t i = 0; i < entry.psnrAt.size(); ++i)
        if (std::isfinite(entry.psnrAt[i]) && std::isfinite(entry.secondsAt[i]))
            points.emplace_back(entry.secondsAt[i], entry.psnrAt[i]);
    // The final weights, when they came after the last checkpoint (a run stopped early).
    if (std::isfinite(entry.psnr) && (points.empty() || entry.seconds > points.back().x()))
        points.emplace_back(entry.seconds, entry.psnr);
    setPoints(index, std::move(points), true);
}

void RaceChart::clearEstimates(int index)
{
    setPoints(index, {}, true);
}

void RaceChart::setPoints(int index, std::vector<QPointF> points, bool measured)
{
    if (index < 0 || index >= seriesCount()) return;
    QLineSeries* s = m_series[static_cast<size_t>(index)];
    QPen pen(presetColour(index), measured ? 2.5 : 1.5);
    pen.setStyle(measured ? Qt::SolidLine : Qt::DashLine);
    s->setPen(pen);
    s->setPointsVisible(measured);
    QList<QPointF>& kept = m_points[static_cast<size_t>(index)];
    kept = QList<QPointF>(points.begin(), points.end());
    s->replace(kept);
    fitY();
}

// From a multiple of 5 dB below the lowest point to one above the highest.
void RaceChart::fitY()
{
    double lo = INFINITY, hi = -INFINITY;
    for (const QList<QPointF>& points : m_points)
        for (const QPointF& p : points) {
            lo = std::min(lo, p.y());
            hi = std::max(hi, p.y());
        }
    if (!std::isfinite(lo)) return;
    const double bottom = std::floor(std::max(0.0, lo - 1) / 5) * 5;
    const double top = std::ceil((hi + 1) / 5) * 5;
    m_y->setRange(bottom, top);
    m_y->setTickAnchor(0);
    m_y->setTickInterval(top - bottom > 40 ? 10 : 5);
}

} // namespace il::app
