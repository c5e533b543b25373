#include "TabularRows.h"

#include "Random.h"

#include <algorithm>

namespace il::tasks::tabular {

TabularSplit rowsFrom(const TabularSplit& in, int64_t first, size_t xWidth, size_t yWidth)
{
    TabularSplit out;
    for (size_t i = 0; i < static_cast<size_t>(in.rows); ++i) {
        if (in.source[i] < first) continue;
        out.x.insert(out.x.end(), in.x.begin() + static_cast<long>(i * xWidth),
                     in.x.begin() + static_cast<long>((i + 1) * xWidth));
        out.y.insert(out.y.end(), in.y.begin() + static_cast<long>(i * yWidth),
                     in.y.begin() + static_cast<long>((i + 1) * yWidth));
        out.rawTarget.insert(out.rawTarget.end(),
                             in.rawTarget.begin() + static_cast<long>(i * yWidth),
                             in.rawTarget.begin() + static_cast<long>((i + 1) * yWidth));
        out.source.push_back(in.source[i]);
        ++out.rows;
    }
    return out;
}

io::CsvTable headOf(io::CsvTable table, int64_t rows)
{
    const auto n = static_cast<size_t>(std::min(rows, table.rows));
    auto cut = [n](auto& v) {
        v.resize(std::min(v.size(), n));
        v.shrink_to_fit();
    };
    table.rows = static_cast<int64_t>(n);
    for (io::CsvColumn& c : table.columns) {
        cut(c.numbers);
        cut(c.missing);
        cut(c.codes);
    }
    return table;
}

TabularSplit pickRows(const TabularSplit& in, const std::vector<float>& xs,
                      const std::vector<size_t>& rows, size_t xWidth, size_t yWidth)
{
    TabularSplit out;
    const size_t rawWidth = in.rawTarget.empty() ? 0 : yWidth; // the file's units, as y
    for (size_t i : rows) {
        out.x.insert(out.x.end(), xs.begin() + static_cast<long>(i * xWidth),
                     xs.begin() + static_cast<long>((i + 1) * xWidth));
        out.y.insert(out.y.end(), in.y.begin() + static_cast<long>(i * yWidth),
                     in.y.begin() + static_cast<long>((i + 1) * yWidth));
        if (rawWidth > 0)
            out.rawTarget.insert(out.rawTarget.end(),
                                 in.rawTarget.begin() + static_cast<long>(i * rawWidth),
                                 in.rawTarget.begin() + static_cast<long>((i + 1) * rawWidth));
        if (i < in.source.size()) out.source.push_back(in.source[i]);
        ++out.rows;
    }
    return out;
}

std::vector<int> assignFolds(const TabularSchema& s, const std::vector<float>& y, int64_t rows,
                             int folds)
{
    const auto n = static_cast<size_t>(rows);
    const std::vector<int32_t> order = Rng::derive(s.splitSeed, "folds").permutation(rows);
    std::vector<size_t> dealt(order.begin(), order.end());
    if (s.isClassification())
        std::stable_sort(dealt.begin(), dealt.end(), [&y](size_t a, size_t b) {
            return y[a] < y[b]; // the class of a row (one y column)
        });
    std::vector<int> fold(n, 0);
    for (size_t i = 0; i < n; ++i)
        fold[dealt[i]] = static_cast<int>(i % static_cast<size_t>(folds));
    return fold;
}

} // namespace il::tasks::tabular
