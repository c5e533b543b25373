// The loss history of a run, bounded whatever the run's length.
//
// Every evaluation is kept as it is until the history holds `limit` rows. Past that, neighbouring
// rows merge in pairs into buckets (HistoryPoint::count evaluations each, with the mean, min and
// max of the losses), and each new evaluation joins the last bucket until that bucket is as wide
// as the others. So a history never holds more than `limit` rows, the rows stay spread evenly
// over the whole run (the chart shows the whole curve), and the first and last values, the
// minimum and the maximum of the losses survive every merge. Memory and the model file's header
// stay bounded: a month-long run saves at most `limit` rows.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace il {

struct HistoryPoint {
    int64_t step = 0; // the last step the row covers
    double epoch = 0; // fractional, at `step`
    double trainLoss = NAN;
    double valLoss = NAN;
    double lr = NAN;
    double metric = NAN; // the task metric, when a metric hook is set
    // A row that stands for `count` consecutive evaluations (a bucket of a long run): step and
    // epoch are the last one's, firstStep the first one's; trainLoss, valLoss, lr and metric are
    // their means, and the min/max fields the extremes of the losses (NaN where none was
    // recorded). TrainingHistory::add fills these in for a single evaluation (count 1).
    int64_t count = 1;
    int64_t firstStep = -1;
    double trainMin = NAN, trainMax = NAN;
    double valMin = NAN, valMax = NAN;
};

class TrainingHistory {
public:
    // Rows kept at most. At about 200 bytes a row in a model file, 10,000 rows stay under 2 MB.
    static constexpr size_t kDefaultLimit = 10000;

    TrainingHistory() : TrainingHistory(kDefaultLimit) {}
    explicit TrainingHistory(size_t limit);
    TrainingHistory(std::initializer_list<HistoryPoint> points); // each added in turn

    // One evaluation, or one row read back from a model file (a bucket: count > 1). Merges
    // rows in pairs when the history is full. Allocates only when the rows outgrow their
    // capacity (reserve), which never needs to exceed limit() rows.
    void add(const HistoryPoint& point);
    void clear();
    void reserve(size_t rows) { m_rows.reserve(rows < m_limit ? rows : m_limit); }

    size_t size() const { return m_rows.size(); }
    bool empty() const { return m_rows.empty(); }
    const HistoryPoint& operator[](size_t i) const { return m_rows[i]; }
    const HistoryPoint& back() const { return m_rows.back(); }
    std::vector<HistoryPoint>::const_iterator begin() const { return m_rows.begin(); }
    std::vector<HistoryPoint>::const_iterator end() const { return m_rows.end(); }
    const std::vector<HistoryPoint>& rows() const { return m_rows; }

    size_t limit() const { return m_limit; }
    // Evaluations per full row: 1 until the first merge, then doubling at each merge.
    int64_t bucketWidth() const { return m_width; }
    // Evaluations recorded in all (the sum of the rows' counts).
    int64_t evaluations() const { return m_evaluations; }

    // later's evaluations appended to earlier's: counts add, means are weighted by the counts,
    // extremes combine. Public for the tests.
    static HistoryPoint merged(const HistoryPoint& earlier, const HistoryPoint& later);

private:
    void mergePairs();

    size_t m_limit;
    int64_t m_width = 1;
    int64_t m_evaluations = 0;
    std::vector<HistoryPoint> m_rows;
};

} // namespace il
