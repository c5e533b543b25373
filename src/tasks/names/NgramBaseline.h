// The counting baseline for names: P(next | the previous N symbols) from counts of the training
// pairs, with add-k smoothing so unseen pairs keep some probability:
//     P(c | ctx) = (count(ctx, c) + k) / (count(ctx) + k * V)
// V is the vocabulary size including the boundary token (which also ends a name). This is the
// "n-gram" a learner can compute by hand; the network must beat it to have learned more than
// counting. k is tuned on the validation pairs over a fixed logarithmic grid.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace il::tasks {

class NgramBaseline {
public:
    NgramBaseline() = default;
    NgramBaseline(int context, int64_t vocab) : m_context(context), m_vocab(vocab) {}

    int context() const { return m_context; }
    int64_t vocab() const { return m_vocab; }
    bool isEmpty() const { return m_contextCounts.empty(); }

    // Counts rows pairs: x holds rows x context ids, y one next id per row (floats, as in
    // TaskData).
    void addPairs(const std::vector<float>& x, const std::vector<float>& y, int64_t rows);
    // P(next | context ids) with add-k smoothing.
    double probability(const float* contextIds, int next, double k) const;
    // Mean of -ln P over the rows: nats per character. NaN if rows == 0.
    double crossEntropy(const std::vector<float>& x, const std::vector<float>& y, int64_t rows,
                        double k) const;
    // The k of kGrid() with the lowest cross-entropy on (x, y); bestCrossEntropy gets it.
    double tuneK(const std::vector<float>& x, const std::vector<float>& y, int64_t rows,
                 double* bestCrossEntropy = nullptr) const;
    // 1e-4 ... 10, four steps per decade.
    static std::vector<double> kGrid();

private:
    // The counts of one pair: (count(ctx, next), count(ctx)).
    std::pair<uint32_t, uint32_t> counts(const float* contextIds, int next) const;
    std::u32string key(const float* contextIds) const;

    int m_context = 0;
    int64_t m_vocab = 0;
    std::unordered_map<std::u32string, uint32_t> m_contextCounts; // ctx -> count
    std::unordered_map<std::u32string, uint32_t> m_pairCounts;    // ctx + next -> count
};

} // namespace il::tasks
