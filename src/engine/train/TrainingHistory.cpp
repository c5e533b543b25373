#include "TrainingHistory.h"

#include <algorithm>

namespace il {

namespace {

// A single evaluation's extremes are its values; its first step is its step.
HistoryPoint normalized(HistoryPoint p)
{
    if (p.count < 1) p.count = 1;
    if (p.count == 1) {
        p.firstStep = p.step;
        p.trainMin = p.trainMax = p.trainLoss;
        p.valMin = p.valMax = p.valLoss;
    } else if (p.firstStep < 0 || p.firstStep > p.step) {
        p.firstStep = p.step;
    }
    return p;
}

// The mean of two means over a and b values; a NaN mean means no values.
double meanOf(double x, int64_t a, double y, int64_t b)
{
    if (std::isnan(x)) return y;
    if (std::isnan(y)) return x;
    const double wa = static_cast<double>(a), wb = static_cast<double>(b);
    return (x * wa + y * wb) / (wa + wb);
}

} // namespace

TrainingHistory::TrainingHistory(size_t limit) : m_limit(std::max<size_t>(limit, 2)) {}

TrainingHistory::TrainingHistory(std::initializer_list<HistoryPoint> points) : TrainingHistory()
{
    for (const HistoryPoint& p : points)
        add(p);
}

HistoryPoint TrainingHistory::merged(const HistoryPoint& earlier, const HistoryPoint& later)
{
    const HistoryPoint a = normalized(earlier), b = normalized(later);
    HistoryPoint m = b;
    m.count = a.count + b.count;
    m.firstStep = a.firstStep;
    m.trainLoss = meanOf(a.trainLoss, a.count, b.trainLoss, b.count);
    m.valLoss = meanOf(a.valLoss, a.count, b.valLoss, b.count);
    m.lr = meanOf(a.lr, a.count, b.lr, b.count);
    m.metric = meanOf(a.metric, a.count, b.metric, b.count);
    m.trainMin = std::fmin(a.trainMin, b.trainMin);
    m.trainMax = std::fmax(a.trainMax, b.trainMax);
    m.valMin = std::fmin(a.valMin, b.valMin);
    m.valMax = std::fmax(a.valMax, b.valMax);
    return m;
}

void TrainingHistory::add(const HistoryPoint& point)
{
    const HistoryPoint row = normalized(point);
    m_evaluations += row.count;
    // A row read back from a file may be a bucket wider than ours: ours grows to match.
    while (m_width < row.count && m_width < (int64_t(1) << 52))
        m_width *= 2;
    if (!m_rows.empty() && m_rows.back().count < m_width) {
        m_rows.back() = merged(m_rows.back(), row);
        return;
    }
    if (m_rows.size() >= m_limit) {
        mergePairs();
        if (m_rows.back().count < m_width) {
            m_rows.back() = merged(m_rows.back(), row);
            return;
        }
    }
    m_rows.push_back(row);
}

void TrainingHistory::mergePairs()
{
    const size_t n = m_rows.size();
    size_t out = 0;
    for (size_t i = 0; i < n; i += 2, ++out)
        m_rows[out] = i + 1 < n ? merged(m_rows[i], m_rows[i + 1]) : m_rows[i];
    m_rows.resize(out);
    m_width *= 2;
}

void TrainingHistory::clear()
{
    m_rows.clear();
    m_width = 1;
    m_evaluations = 0;
}

} // namespace il
