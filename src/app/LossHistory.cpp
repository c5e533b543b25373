#include "LossHistory.h"

#include "Trainer.h"

#include <cmath>

namespace il::app {

namespace {

bool usable(double v, bool positiveOnly)
{
    return std::isfinite(v) && (!positiveOnly || v > 0);
}

} // namespace

void LossHistory::clear()
{
    m_train.clear();
    m_val.clear();
    m_lr.clear();
    m_metric.clear();
}

void LossHistory::addTrainLoss(int64_t step, double loss, double lr)
{
    const auto x = static_cast<double>(step);
    m_train.emplace_back(x, loss);
    if (std::isfinite(lr)) m_lr.emplace_back(x, lr);
}

void LossHistory::addEvaluation(int64_t step, double valLoss, double metric)
{
    const auto x = static_cast<double>(step);
    if (!std::isnan(valLoss)) m_val.emplace_back(x, valLoss);
    if (!std::isnan(metric)) m_metric.emplace_back(x, metric);
}

void LossHistory::load(const std::vector<HistoryPoint>& history)
{
    clear();
    for (const HistoryPoint& h : history) {
        addTrainLoss(h.step, h.trainLoss, h.lr);
        addEvaluation(h.step, h.valLoss, h.metric);
    }
}

void LossHistory::truncateAfter(int64_t step)
{
    const auto x = static_cast<double>(step);
    for (std::vector<QPointF>* v : {&m_train, &m_val, &m_lr, &m_metric})
        while (!v->empty() && v->back().x() > x)
            v->pop_back();
}

int64_t LossHistory::lastStep() const
{
    double last = 0;
    if (!m_train.empty()) last = m_train.back().x();
    if (!m_val.empty()) last = std::max(last, m_val.back().x());
    return static_cast<int64_t>(last);
}

QList<QPointF> LossHistory::decimated(const std::vector<QPointF>& points, int maxPoints,
                                      bool positiveOnly)
{
    QList<QPointF> out;
    const size_t n = points.size();
    if (maxPoints <= 0 || n == 0) return out;
    if (n <= static_cast<size_t>(maxPoints)) {
        out.reserve(static_cast<qsizetype>(n));
        for (const QPointF& p : points)
            if (usable(p.y(), positiveOnly)) out.append(p);
        return out;
    }
    // Buckets of equal point counts; each becomes the mean of its usable points.
    const double per = static_cast<double>(n) / maxPoints;
    out.reserve(maxPoints);
    for (int b = 0; b < maxPoints; ++b) {
        const auto first = static_cast<size_t>(b * per);
        const auto last = std::min(n, static_cast<size_t>((b + 1) * per));
        double sx = 0, sy = 0;
        int count = 0;
        for (size_t i = first; i < last; ++i) {
            if (!usable(points[i].y(), positiveOnly)) continue;
            sx += points[i].x();
            sy += points[i].y();
            ++count;
        }
        if (count > 0) out.append(QPointF(sx / count, sy / count));
    }
    return out;
}

QList<QPointF> LossHistory::train(int maxPoints, bool positiveOnly) const
{
    return decimated(m_train, maxPoints, positiveOnly);
}

QList<QPointF> LossHistory::trainSmoothed(int maxPoints, bool positiveOnly, double keep) const
{
    std::vector<QPointF> smooth;
    smooth.reserve(m_train.size());
    double ema = NAN, weight = 0;
    for (const QPointF& p : m_train) {
        if (!std::isfinite(p.y())) continue;
        // Debiased like Adam's moments, so the curve does not start at zero.
        ema = std::isnan(ema) ? (1 - keep) * p.y() : keep * ema + (1 - keep) * p.y();
        weight = keep * weight + (1 - keep);
        smooth.emplace_back(p.x(), ema / weight);
    }
    return decimated(smooth, maxPoints, positiveOnly);
}

QList<QPointF> LossHistory::validation(int maxPoints, bool positiveOnly) const
{
    return decimated(m_val, maxPoints, positiveOnly);
}

QList<QPointF> LossHistory::learningRate(int maxPoints) const
{
    return decimated(m_lr, maxPoints, false);
}

QList<QPointF> LossHistory::metric(int maxPoints) const
{
    return decimated(m_metric, maxPoints, false);
}

} // namespace il::app
