// The decision-boundary grid: rows in the file's units made from grid points, encoded as the
// schema encodes a file's rows (TabularEncode.cpp), run through the network in one batch.
#include "TabularBoundary.h"

#include <algorithm>

namespace il::tasks {

namespace {

// Where each feature starts among the network's inputs (one-hot features take several).
std::vector<size_t> inputStarts(const TabularSchema& s)
{
    std::vector<size_t> starts;
    size_t k = 0;
    for (const QStringList& cats : s.featureCategories) {
        starts.push_back(k);
        k += cats.isEmpty() ? 1 : static_cast<size_t>(cats.size());
    }
    return starts;
}

// Input k of an encoded row back in the file's units (the inverse of the normalisation).
double decoded(const TabularSchema& s, const float* row, size_t k)
{
    return static_cast<double>(row[k]) * s.inputScale[k] + s.inputOffset[k];
}

// The rows of one split as points, at most `most` of them, evenly spaced.
void addPoints(const TabularSchema& s, const std::vector<float>& x, const std::vector<float>& y,
               int64_t rows, int a, int b, bool validation, int64_t most,
               std::vector<BoundaryPoint>& out)
{
    const auto width = static_cast<size_t>(s.inputWidth());
    const auto targets = static_cast<size_t>(std::max<int64_t>(s.targetWidth(), 1));
    if (rows <= 0 || x.size() < static_cast<size_t>(rows) * width) return;
    const std::vector<size_t> starts = inputStarts(s);
    const int64_t shown = std::min(rows, most);
    for (int64_t n = 0; n < shown; ++n) {
        const auto r = static_cast<size_t>(n * rows / shown);
        const float* row = x.data() + r * width;
        BoundaryPoint p;
        p.x = decoded(s, row, starts[static_cast<size_t>(a)]);
        p.y = decoded(s, row, starts[static_cast<size_t>(b)]);
        p.validation = validation;
        if (r * targets < y.size()) {
            const float t = y[r * targets];
            if (s.isClassification())
                p.label = static_cast<int>(t);
            else if (!s.targetScale.empty())
                p.value = static_cast<double>(t) * s.targetScale[0] + s.targetOffset[0];
        }
        out.push_back(p);
    }
}

// The span of a feature over the training and validation rows, plus a margin of 5% each side
// (a constant feature gets ±1 around its value).
void featureRange(const TabularSchema& s, const TaskData& d, size_t k, double& lo, double& hi)
{
    const auto width = static_cast<size_t>(s.inputWidth());
    lo = INFINITY;
    hi = -INFINITY;
    for (const auto* x : {&d.trainX, &d.valX})
        for (size_t r = 0; (r + 1) * width <= x->size(); ++r) {
            const double v = decoded(s, x->data() + r * width, k);
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    if (!std::isfinite(lo)) lo = hi = s.inputOffset[k];
    const double span = hi - lo;
    if (span <= 1e-12 * std::max(1.0, std::fabs(lo))) {
        lo -= 1;
        hi += 1;
        return;
    }
    lo -= 0.05 * span;
    hi += 0.05 * span;
}

QString heldDescription(const TabularSchema& s, const std::vector<double>& held, int a, int b)
{
    QStringList parts;
    for (int f = 0; f < s.features.size(); ++f) {
        if (f == a || f == b) continue;
        const QStringList& cats = s.featureCategories[static_cast<size_t>(f)];
        const double v = held[static_cast<size_t>(f)];
        parts << s.features[f] + " = " +
                     (cats.isEmpty() ? QString::number(v, 'g', 4)
                                     : cats.value(static_cast<int>(v)));
    }
    return parts.join(", ");
}

bool fail(QString* error, const QString& why)
{
    if (error) *error = why;
    return false;
}

} // namespace

std::vector<int> boundaryAxes(const TabularSchema& s)
{
    std::vector<int> axes;
    for (int f = 0; f < s.features.size(); ++f)
        if (s.featureCategories[static_cast<size_t>(f)].isEmpty()) axes.push_back(f);
    return axes;
}

std::vector<double> boundaryHeldValues(const TabularSchema& s, const TaskData& d, int64_t trainRow)
{
    const auto width = static_cast<size_t>(s.inputWidth());
    const auto rows = static_cast<int64_t>(width > 0 ? d.trainX.size() / width : 0);
    const std::vector<size_t> starts = inputStarts(s);
    std::vector<double> held(static_cast<size_t>(s.features.size()), 0.0);
    if (trainRow >= 0 && rows > 0) {
        const float* row =
            d.trainX.data() + static_cast<size_t>(std::min(trainRow, rows - 1)) * width;
        for (size_t f = 0; f < held.size(); ++f) {
            const QStringList& cats = s.featureCategories[f];
            if (cats.isEmpty()) {
                held[f] = decoded(s, row, starts[f]);
                continue;
            }
            const float* hot = row + starts[f];
            held[f] = static_cast<double>(std::max_element(hot, hot + cats.size()) - hot);
        }
        return held;
    }
    // Sums of each input over the training rows: a numeric feature's mean, and how often each
    // category of a one-hot feature occurs.
    std::vector<double> sums(width, 0.0);
    for (int64_t r = 0; r < rows; ++r)
        for (size_t k = 0; k < width; ++k)
            sums[k] += d.trainX[static_cast<size_t>(r) * width + k];
    for (size_t f = 0; f < held.size(); ++f) {
        const QStringList& cats = s.featureCategories[f];
        const size_t k = starts[f];
        if (cats.isEmpty()) {
            const double mean = rows > 0 ? sums[k] / static_cast<double>(rows) : 0.0;
            held[f] = mean * s.inputScale[k] + s.inputOffset[k];
            continue;
        }
        const auto first = sums.begin() + static_cast<long>(k);
        held[f] = static_cast<double>(std::max_element(first, first + cats.size()) - first);
    }
    return held;
}

std::vector<float> encodeFeatureValues(const TabularSchema& s, const std::vector<double>& values)
{
    std::vector<float> x(static_cast<size_t>(s.inputWidth()), 0.f);
    size_t k = 0;
    for (size_t f = 0; f < s.featureCategories.size() && f < values.size(); ++f) {
        const QStringList& cats = s.featureCategories[f];
        if (cats.isEmpty()) {
            // As encodeRows does it: in float, (value - offset) / scale.
            x[k] = (static_cast<float>(values[f]) - s.inputOffset[k]) / s.inputScale[k];
            ++k;
            continue;
        }
        const auto c = std::clamp<long>(std::lround(values[f]), 0, cats.size() - 1);
        x[k + static_cast<size_t>(c)] = 1.f;
        k += static_cast<size_t>(cats.size());
    }
    return x;
}

// Long: a third checks the request; the rest fills out in order: axes, the predicted grid,
// the rows, the colour range.
bool boundaryGrid(Network& net, const TabularSchema& s, const TaskData& d,
                  const BoundaryPlane& plane, BoundaryGrid& out, QString* error)
{
    const int features = static_cast<int>(s.features.size());
    const int a = plane.featureA, b = plane.featureB;
    auto numeric = [&](int f) {
        return f >= 0 && f < features && s.featureCategories[static_cast<size_t>(f)].isEmpty();
    };
    if (!numeric(a) || !numeric(b))
        return fail(error, QString("the decision boundary needs two numeric features (got "
                                   "feature numbers %1 and %2 of %3)")
                               .arg(a + 1)
                               .arg(b + 1)
                               .arg(features));
    if (a == b) return fail(error, "the decision boundary needs two different features");
    for (int side : {plane.width, plane.height})
        if (side < kMinBoundarySide || side > kMaxBoundarySide)
            return fail(error, QString("the decision boundary's grid must be %1 to %2 points a "
                                       "side (got %3)")
                                   .arg(kMinBoundarySide)
                                   .arg(kMaxBoundarySide)
                                   .arg(side));
    if (!plane.held.empty() && plane.held.size() != static_cast<size_t>(features))
        return fail(error, QString("the decision boundary holds %1 features, not %2")
                               .arg(features)
                               .arg(plane.held.size()));
    if (net.inputWidth() != s.inputWidth())
        return fail(error, QString("the network takes %1 inputs, the table gives %2")
                               .arg(net.inputWidth())
                               .arg(s.inputWidth()));

    out = BoundaryGrid{};
    out.width = plane.width;
    out.height = plane.height;
    out.xName = s.features[a];
    out.yName = s.features[b];
    out.classification = s.isClassification();
    out.classes = s.classes;
    out.held = plane.held.empty() ? boundaryHeldValues(s, d, plane.heldRow) : plane.held;
    out.heldText = heldDescription(s, out.held, a, b);
    out.trainRows = d.trainRows;
    out.valRows = d.valRows;
    const std::vector<size_t> starts = inputStarts(s);
    featureRange(s, d, starts[static_cast<size_t>(a)], out.xMin, out.xMax);
    featureRange(s, d, starts[static_cast<size_t>(b)], out.yMin, out.yMax);

    // Every grid point as an encoded row: the held row with the two axes replaced.
    const auto width = static_cast<size_t>(s.inputWidth());
    const auto cells = static_cast<size_t>(plane.width) * static_cast<size_t>(plane.height);
    std::vector<double> values = out.held;
    std::vector<float> x(cells * width);
    for (int j = 0; j < plane.height; ++j)
        for (int i = 0; i < plane.width; ++i) {
            values[static_cast<size_t>(a)] = out.xAt(i);
            values[static_cast<size_t>(b)] = out.yAt(j);
            const std::vector<float> row = encodeFeatureValues(s, values);
            std::copy(row.begin(), row.end(),
                      x.begin() +
                          static_cast<long>((static_cast<size_t>(j) * plane.width + i) * width));
        }
    const std::vector<float> outputs = predictRows(net, x, static_cast<int64_t>(cells));
    if (out.classification) {
        const std::vector<double> p = tabularProbabilities(s, outputs);
        out.values.assign(p.begin(), p.end());
    } else {
        const std::vector<double> p = tabularPredictions(s, outputs);
        const auto t = static_cast<size_t>(std::max<int64_t>(s.targetWidth(), 1));
        out.values.resize(cells);
        for (size_t c = 0; c < cells; ++c)
            out.values[c] = static_cast<float>(p[c * t]);
        out.valueName = s.target;
    }

    addPoints(s, d.trainX, d.trainY, d.trainRows, a, b, false, kMaxBoundaryTrainPoints, out.points);
    addPoints(s, d.valX, d.valY, d.valRows, a, b, true, kMaxBoundaryValPoints, out.points);
    if (!out.classification) {
        // The ramp spans the targets the rows have, so a point and the field under it share
        // one colour scale that does not move while the network learns.
        out.valueMin = INFINITY;
        out.valueMax = -INFINITY;
        for (const BoundaryPoint& p : out.points) {
            out.valueMin = std::min(out.valueMin, p.value);
            out.valueMax = std::max(out.valueMax, p.value);
        }
        if (!(out.valueMax > out.valueMin)) {
            out.valueMin = std::isfinite(out.valueMin) ? out.valueMin - 1 : 0;
            out.valueMax = out.valueMin + 2;
        }
    }
    return true;
}

} // namespace il::tasks
