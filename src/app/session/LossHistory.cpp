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

void LossHistory::Series::add(QPointF p, size_t maxKept)
{
    // Non-finite values are never drawn (decimated drops them): keeping them out of the merged
    // means keeps a bucket drawable.
    if (!std::isfinite(p.y())) return;
    if (!points.empty() && lastCount < width) {
        QPointF& last = points.back();
        const double n = static_cast<double>(lastCount);
        last = (last * n + p) / (n + 1);
        ++lastCount;
        return;
    }
    if (points.size() >= maxKept) { // merge neighbours in pairs
        size_t out = 0;
        for (size_t i = 0; i + 1 < points.size(); i += 2, ++out)
            points[out] = (points[i] + points[i + 1]) / 2;
        // An odd last point stays alone, as wide as before: the next points fill it up.
        const bool odd = points.size() % 2 == 1;
        if (odd) points[out++] = points.back();
        points.resize(out);
        lastCount = odd ? width : 2 * width;
        width *= 2;
        if (lastCount < width) {
            add(p, maxKept);
            return;
        }
    }
    points.push_back(p);
    lastCount = 1;
}

void LossHistory::Series::truncateAfter(double x)
{
    while (!points.empty() && points.back().x() > x)
        points.pop_back();
    lastCount = width; // a merged point may have held later steps: start a fresh one
}

void LossHistory::clear()
{
    for (Series* s : {&m_train, &m_val, &m_lr, &m_metric, &m_side})
        s->clear();
    m_overfit.reset();
    m_trainSinceEval = 0;
    m_trainsSinceEval = 0;
}

void LossHistory::addTrainLoss(int64_t step, double loss, double lr)
{
    const auto x = static_cast<double>(step);
    m_train.add(QPointF(x, loss), m_maxKept);
    if (std::isfinite(lr)) m_lr.add(QPointF(x, lr), m_maxKept);
    if (std::isfinite(loss)) {
        m_trainSinceEval += loss;
        ++m_trainsSinceEval;
    }
}

void LossHistory::addEvaluation(int64_t step, double valLoss, double metric)
{
    const auto x = static_cast<double>(step);
    if (!std::isnan(valLoss)) {
        m_val.add(QPointF(x, valLoss), m_maxKept);
        // The watch sees what the trainer's saw: the validation loss and the mean training loss
        // since the previous evaluation.
        m_overfit.add(
            step,
            m_trainsSinceEval > 0 ? m_trainSinceEval / static_cast<double>(m_trainsSinceEval) : NAN,
            valLoss);
        m_trainSinceEval = 0;
        m_trainsSinceEval = 0;
    }
    if (!std::isnan(metric)) m_metric.add(QPointF(x, metric), m_maxKept);
}

void LossHistory::rewatch()
{
    m_overfit.reset();
    m_trainSinceEval = 0;
    m_trainsSinceEval = 0;
    size_t t = 0;
    for (const QPointF& v : m_val.points) {
        for (; t < m_train.points.size() && m_train.points[t].x() <= v.x(); ++t) {
            m_trainSinceEval += m_train.points[t].y();
            ++m_trainsSinceEval;
        }
        m_overfit.add(
            static_cast<int64_t>(v.x()),
            m_trainsSinceEval > 0 ? m_trainSinceEval / static_cast<double>(m_trainsSinceEval) : NAN,
            v.y());
        m_trainSinceEval = 0;
        m_trainsSinceEval = 0;
    }
    for (; t < m_train.points.size(); ++t) {
        m_trainSinceEval += m_train.points[t].y();
        ++m_trainsSinceEval;
    }
}

void LossHistory::load(const std::vector<HistoryPoint>& history)
{
    clear();
    int64_t previous = 0; // the last step of the previous row
    for (const HistoryPoint& h : history) {
        // A bucket of evaluations is drawn at the middle of its steps.
        const int64_t first = h.count > 1 && h.firstStep >= 0 ? h.firstStep : h.step;
        const int64_t step = first + (h.step - first) / 2;
        // A row's training loss is the mean of the steps since the previous row: drawn at their
        // middle (a row a step, as the studio saves them, stays at its step), so a file with a
        // row an epoch does not end in a mean that the next run's losses fall away from.
        const int64_t since = std::min(first, previous + 1);
        addTrainLoss(since + (h.step - since) / 2, h.trainLoss, h.lr);
        addEvaluation(step, h.valLoss, h.metric);
        previous = h.step;
    }
}

void LossHistory::truncateAfter(int64_t step)
{
    for (Series* s : {&m_train, &m_val, &m_lr, &m_metric, &m_side})
        s->truncateAfter(static_cast<double>(step));
    rewatch(); // a rise after step is gone with the points
}

int64_t LossHistory::lastStep() const
{
    double last = 0;
    if (!m_train.points.empty()) last = m_train.points.back().x();
    if (!m_val.points.empty()) last = std::max(last, m_val.points.back().x());
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
    return decimated(m_train.points, maxPoints, positiveOnly);
}

QList<QPointF> LossHistory::trainSmoothed(int maxPoints, bool positiveOnly, double keep) const
{
    std::vector<QPointF> smooth;
    smooth.reserve(m_train.points.size());
    double ema = NAN, weight = 0;
    for (const QPointF& p : m_train.points) {
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
    return decimated(m_val.points, maxPoints, positiveOnly);
}

QList<QPointF> LossHistory::learningRate(int maxPoints) const
{
    return decimated(m_lr.points, maxPoints, false);
}

QList<QPointF> LossHistory::metric(int maxPoints) const
{
    return decimated(m_metric.points, maxPoints, false);
}

void LossHistory::addSideMetric(int64_t step, double value)
{
    if (std::isfinite(value)) m_side.add(QPointF(static_cast<double>(step), value), m_maxKept);
}

QList<QPointF> LossHistory::sideMetric(int maxPoints) const
{
    return decimated(m_side.points, maxPoints, false);
}

} // namespace il::app
