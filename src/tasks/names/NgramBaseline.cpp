#include "NgramBaseline.h"

#include <cmath>

namespace il::tasks {

std::u32string NgramBaseline::key(const float* contextIds) const
{
    // Ids are small non-negative integers stored as floats; one char32_t each is exact.
    std::u32string k(static_cast<size_t>(m_context), U'\0');
    for (int i = 0; i < m_context; ++i)
        k[static_cast<size_t>(i)] = static_cast<char32_t>(contextIds[i]);
    return k;
}

void NgramBaseline::addPairs(const std::vector<float>& x, const std::vector<float>& y, int64_t rows)
{
    for (int64_t r = 0; r < rows; ++r) {
        std::u32string k = key(x.data() + r * m_context);
        ++m_contextCounts[k];
        k.push_back(static_cast<char32_t>(y[static_cast<size_t>(r)]));
        ++m_pairCounts[k];
    }
}

std::pair<uint32_t, uint32_t> NgramBaseline::counts(const float* contextIds, int next) const
{
    std::u32string k = key(contextIds);
    const auto ctx = m_contextCounts.find(k);
    if (ctx == m_contextCounts.end()) return {0, 0};
    k.push_back(static_cast<char32_t>(next));
    const auto pair = m_pairCounts.find(k);
    return {pair == m_pairCounts.end() ? 0 : pair->second, ctx->second};
}

double NgramBaseline::probability(const float* contextIds, int next, double k) const
{
    const auto [pair, total] = counts(contextIds, next);
    return (pair + k) / (total + k * static_cast<double>(m_vocab));
}

double NgramBaseline::crossEntropy(const std::vector<float>& x, const std::vector<float>& y,
                                   int64_t rows, double k) const
{
    if (rows <= 0) return NAN;
    double sum = 0;
    for (int64_t r = 0; r < rows; ++r)
        sum -= std::log(
            probability(x.data() + r * m_context, static_cast<int>(y[static_cast<size_t>(r)]), k));
    return sum / static_cast<double>(rows);
}

std::vector<double> NgramBaseline::kGrid()
{
    std::vector<double> grid;
    for (int e = -16; e <= 4; ++e)
        grid.push_back(std::pow(10.0, e / 4.0));
    return grid;
}

double NgramBaseline::tuneK(const std::vector<float>& x, const std::vector<float>& y, int64_t rows,
                            double* bestCrossEntropy) const
{
    // Look the counts up once; each k is then a cheap pass over plain numbers.
    std::vector<std::pair<uint32_t, uint32_t>> c(static_cast<size_t>(std::max<int64_t>(rows, 0)));
    for (int64_t r = 0; r < rows; ++r)
        c[static_cast<size_t>(r)] =
            counts(x.data() + r * m_context, static_cast<int>(y[static_cast<size_t>(r)]));
    double bestK = 1, best = INFINITY;
    for (double k : kGrid()) {
        double sum = 0;
        for (const auto& [pair, total] : c)
            sum -= std::log((pair + k) / (total + k * static_cast<double>(m_vocab)));
        const double ce = rows > 0 ? sum / static_cast<double>(rows) : NAN;
        if (ce < best) {
            best = ce;
            bestK = k;
        }
    }
    if (bestCrossEntropy) *bestCrossEntropy = rows > 0 ? best : NAN;
    return bestK;
}

} // namespace il::tasks
