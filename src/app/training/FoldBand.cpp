#include "FoldBand.h"

#include <QAreaSeries>
#include <QChart>
#include <QLegendMarker>
#include <QLineSeries>
#include <QPen>

#include <algorithm>
#include <cmath>
#include <map>

namespace il::app {

FoldBand::FoldBand(QChart* chart, QAbstractAxis* x)
    : m_lower(new QLineSeries), m_upper(new QLineSeries), m_area(new QAreaSeries(m_upper, m_lower)),
      m_low(NAN), m_high(NAN), m_lastStep(NAN)
{
    QColor fill(40, 120, 200, 45); // the validation curve's blue, faint: behind the live curves
    // An area series does not own its edges.
    m_lower->setParent(m_area);
    m_upper->setParent(m_area);
    m_area->setBrush(fill);
    QColor edge = fill;
    edge.setAlpha(110);
    m_area->setPen(QPen(edge, 1));
    chart->addSeries(m_area);
    m_area->attachAxis(x);
    m_area->setVisible(false);
    if (QLegendMarker* marker = chart->legend()->markers(m_area).value(0))
        marker->setVisible(false);
}

void FoldBand::setCurves(const std::vector<QList<QPointF>>& curves, bool positiveOnly,
                         int maxPoints)
{
    // Per step, the lowest and highest loss over the folds that evaluated it.
    std::map<double, std::pair<double, double>> range;
    for (const QList<QPointF>& curve : curves)
        for (const QPointF& p : curve) {
            if (!std::isfinite(p.y()) || (positiveOnly && p.y() <= 0)) continue;
            auto [it, fresh] = range.try_emplace(p.x(), p.y(), p.y());
            if (!fresh) {
                it->second.first = std::min(it->second.first, p.y());
                it->second.second = std::max(it->second.second, p.y());
            }
        }
    // A step only some folds reached (the others stopped early) still shows their range: the
    // band narrows to the folds that trained on.
    QList<QPointF> lower, upper;
    const size_t n = range.size();
    const size_t stride =
        maxPoints > 0 && n > static_cast<size_t>(maxPoints)
            ? (n + static_cast<size_t>(maxPoints) - 1) / static_cast<size_t>(maxPoints)
            : 1;
    size_t i = 0;
    m_low = m_high = m_lastStep = NAN;
    for (const auto& [step, lh] : range) {
        const bool last = i + 1 == n;
        if (i++ % stride != 0 && !last) continue;
        lower.append(QPointF(step, lh.first));
        upper.append(QPointF(step, lh.second));
        m_low = std::isnan(m_low) ? lh.first : std::min(m_low, lh.first);
        m_high = std::isnan(m_high) ? lh.second : std::max(m_high, lh.second);
        m_lastStep = step;
    }
    m_folds = static_cast<int>(curves.size());
    m_lower->replace(lower);
    m_upper->replace(upper);
    m_area->setName(name());
    m_area->setVisible(!lower.isEmpty());
    if (QLegendMarker* marker =
            m_area->chart() ? m_area->chart()->legend()->markers(m_area).value(0) : nullptr)
        marker->setVisible(!lower.isEmpty());
}

void FoldBand::setAxis(QAbstractAxis* oldY, QAbstractAxis* newY)
{
    if (oldY) m_area->detachAxis(oldY);
    if (newY) m_area->attachAxis(newY);
}

bool FoldBand::isEmpty() const
{
    return m_lower->count() == 0;
}

QList<QPointF> FoldBand::lowerPoints() const
{
    return m_lower->points();
}

QList<QPointF> FoldBand::upperPoints() const
{
    return m_upper->points();
}

QString FoldBand::name() const
{
    return m_folds > 0 ? QString("%1 folds: validation").arg(m_folds) : QString();
}

} // namespace il::app
