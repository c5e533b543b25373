#include "NetworkInside.h"

#include "LayerRegistry.h"
#include "Limits.h"
#include "Task.h"

#include <algorithm>
#include <numeric>

namespace il::tasks {

namespace {

constexpr int64_t kMaxRows = 2000; // validation rows judged at most (evenly spaced)

// The interval a layer of this kind keeps its outputs in (LayerType::outputRange), if bounded.
std::optional<std::pair<float, float>> outputRange(const std::string& kind)
{
    const LayerType* type = findLayerType(kind);
    return type ? type->outputRange : std::nullopt;
}

// The dense layer between layer `from` (exclusive; -1: the input) and column c's layer, when
// its inputs are the `before` units there: its weights into c's shown units.
void feedingWeights(const Network& net, int from, int64_t before, UnitColumn& c)
{
    int dense = -1;
    for (int i = c.layer - 1; i > from; --i)
        if (net.layers()[static_cast<size_t>(i)]->kind() == "dense") {
            dense = i;
            break;
        }
    if (dense < 0) return;
    const std::string name = "layers." + std::to_string(dense) + ".weight";
    for (const NamedTensor& t : net.namedTensors()) {
        if (t.name != name || t.tensor.cols() != before || t.tensor.rows() < c.shown) continue;
        std::vector<float> all(static_cast<size_t>(t.tensor.size()));
        net.backend().download(all.data(), t.tensor);
        c.fanIn = before;
        c.weights.assign(all.begin(), all.begin() + c.shown * before);
        return;
    }
}

} // namespace

namespace unitview {

std::vector<int> columnLayers(const Network& net, bool features, int maxColumns)
{
    std::vector<int> layers;
    const auto& all = net.layers();
    for (int i = 0; i + 1 < static_cast<int>(all.size()); ++i) {
        const Layer& l = *all[static_cast<size_t>(i)];
        const bool feature = features && (l.kind() == "fourier" || l.kind() == "hashgrid");
        if (l.type().activation || feature) layers.push_back(i);
        if (static_cast<int>(layers.size()) == maxColumns) break;
    }
    return layers;
}

std::vector<std::vector<float>> layerOutputs(Network& net, const std::vector<float>& x,
                                             int64_t rows, const std::vector<int>& layers,
                                             std::vector<int64_t>& widths)
{
    Backend& b = net.backend();
    const int64_t in = net.inputWidth();
    const int64_t chunk = inferenceChunkRows(net, 4096);
    Buffer input(&b, static_cast<size_t>(std::max<int64_t>(1, std::min(rows, chunk) * in)));
    std::vector<std::vector<float>> out(layers.size());
    widths.assign(layers.size(), 0);
    for (int64_t r = 0; r < rows; r += chunk) {
        const int64_t n = std::min(chunk, rows - r);
        b.upload(input.view(n, in), x.data() + r * in);
        net.forward(input.view(n, in), false);
        for (size_t k = 0; k < layers.size(); ++k) {
            const ConstTensor y = net.layerOutput(layers[k]);
            widths[k] = y.cols();
            out[k].resize(static_cast<size_t>(rows * y.cols()));
            b.download(out[k].data() + r * y.cols(), y);
        }
    }
    return out;
}

std::vector<float> someRows(const std::vector<float>& x, int64_t rows, int64_t width, int64_t& kept)
{
    kept = std::min(rows, kMaxRows);
    std::vector<float> out(static_cast<size_t>(kept * width));
    for (int64_t k = 0; k < kept; ++k) {
        const int64_t r = k * rows / std::max<int64_t>(kept, 1);
        std::copy_n(x.data() + r * width, width, out.data() + k * width);
    }
    return out;
}

void judgeUnits(UnitColumn& c, const std::vector<float>& out, int64_t rows, int64_t width)
{
    c.dead.assign(static_cast<size_t>(c.shown), 0);
    c.saturated.assign(static_cast<size_t>(c.shown), 0);
    if (rows == 0) return;
    const auto range = outputRange(c.kind); // bounded activations saturate at its ends
    for (int u = 0; u < c.shown; ++u) {
        float lo = INFINITY, hi = -INFINITY;
        int64_t atEnds = 0;
        for (int64_t r = 0; r < rows; ++r) {
            const float v = out[static_cast<size_t>(r * width + u * c.stride)];
            lo = std::min(lo, v);
            hi = std::max(hi, v);
            if (range && (v < range->first + 0.01f || v > range->second - 0.01f)) ++atEnds;
        }
        c.dead[static_cast<size_t>(u)] = hi - lo <= 1e-6f * std::max(1.f, std::fabs(hi));
        c.saturated[static_cast<size_t>(u)] =
            !c.dead[static_cast<size_t>(u)] && range && atEnds * 20 >= rows * 19;
    }
}

void fillMaps(UnitColumn& c, const std::vector<float>& out, int64_t points, int64_t width)
{
    c.maps.resize(static_cast<size_t>(c.shown * points));
    c.lo = INFINITY;
    c.hi = -INFINITY;
    for (int u = 0; u < c.shown; ++u)
        for (int64_t p = 0; p < points; ++p) {
            const float v = out[static_cast<size_t>(p * width + u * c.stride)];
            c.maps[static_cast<size_t>(u * points + p)] = v;
            c.lo = std::min(c.lo, v);
            c.hi = std::max(c.hi, v);
        }
    if (!(c.hi > c.lo)) c.hi = c.lo + 1;
}

void fillHistograms(UnitColumn& c, const std::vector<float>& out, int64_t rows, int64_t width)
{
    if (const auto range = outputRange(c.kind)) {
        c.lo = range->first;
        c.hi = range->second;
    } else {
        c.lo = INFINITY;
        c.hi = -INFINITY;
        for (int64_t r = 0; r < rows; ++r)
            for (int u = 0; u < c.shown; ++u) {
                const float v = out[static_cast<size_t>(r * width + u * c.stride)];
                if (!std::isfinite(v)) continue;
                c.lo = std::min(c.lo, v);
                c.hi = std::max(c.hi, v);
            }
        if (!std::isfinite(c.lo)) c.lo = c.hi = 0;
        if (!(c.hi > c.lo)) c.hi = c.lo + 1;
    }
    c.histograms.assign(static_cast<size_t>(c.shown * kInsideBins), 0);
    for (int64_t r = 0; r < rows; ++r)
        for (int u = 0; u < c.shown; ++u) {
            const float v = out[static_cast<size_t>(r * width + u * c.stride)];
            if (!std::isfinite(v)) continue;
            const int bin = std::clamp(static_cast<int>((v - c.lo) / (c.hi - c.lo) * kInsideBins),
                                       0, kInsideBins - 1);
            ++c.histograms[static_cast<size_t>(u * kInsideBins + bin)];
        }
}

std::vector<UnitColumn> makeColumns(const Network& net, const std::vector<int>& layers,
                                    const std::vector<int64_t>& widths, int maxUnits)
{
    std::vector<UnitColumn> columns;
    int from = -1;
    int64_t before = net.inputWidth();
    for (size_t k = 0; k < layers.size(); ++k) {
        UnitColumn c;
        c.layer = layers[k];
        c.kind = net.layers()[static_cast<size_t>(c.layer)]->kind();
        c.units = widths[k];
        if (c.kind == "hashgrid") {
            // Level-major outputs (HashGridMath.h): one map per level, its first feature, so
            // the coarse levels and the fine ones are seen side by side.
            const std::string spec = net.summary()[static_cast<size_t>(c.layer)].spec;
            const QStringList args = QString::fromStdString(spec).split(':');
            c.stride = std::max(1, args.size() > 2 ? args[2].toInt() : 2);
        }
        c.shown = static_cast<int>(std::min<int64_t>(widths[k] / c.stride, maxUnits));
        feedingWeights(net, from, before, c);
        from = c.layer;
        before = c.stride == 1 ? c.units : -1; // no lines from a column drawn a level at a time
        columns.push_back(std::move(c));
    }
    return columns;
}

} // namespace unitview

namespace {

// y := C y for the symmetric d x d matrix C.
std::vector<double> times(const std::vector<double>& c, const std::vector<double>& v)
{
    const size_t d = v.size();
    std::vector<double> out(d, 0.0);
    for (size_t i = 0; i < d; ++i)
        for (size_t j = 0; j < d; ++j)
            out[i] += c[i * d + j] * v[j];
    return out;
}

// The leading eigenvector of the symmetric positive semi-definite C (power iteration from a
// fixed start, so the same matrix gives the same axis), its sign chosen so that its largest
// component is positive; returns its eigenvalue.
double leadingAxis(const std::vector<double>& c, size_t d, std::vector<double>& v)
{
    v.assign(d, 0.0);
    for (size_t i = 0; i < d; ++i)
        v[i] = 1.0 + 0.1 * static_cast<double>(i % 7); // not orthogonal to any likely axis
    double lambda = 0;
    for (int iteration = 0; iteration < 500; ++iteration) {
        std::vector<double> w = times(c, v);
        const double norm = std::sqrt(std::inner_product(w.begin(), w.end(), w.begin(), 0.0));
        if (norm == 0) return 0;
        for (double& e : w)
            e /= norm;
        double change = 0;
        for (size_t i = 0; i < d; ++i)
            change = std::max(change, std::fabs(w[i] - v[i]));
        v = std::move(w);
        lambda = norm;
        if (change < 1e-12) break;
    }
    const auto largest = std::max_element(
        v.begin(), v.end(), [](double a, double b) { return std::fabs(a) < std::fabs(b); });
    if (*largest < 0)
        for (double& e : v)
            e = -e;
    return lambda;
}

} // namespace

double principalPlane(const std::vector<float>& rows, int64_t n, int64_t d, std::vector<float>& x,
                      std::vector<float>& y)
{
    x.assign(static_cast<size_t>(n), 0.f);
    y.assign(static_cast<size_t>(n), 0.f);
    if (n < 2 || d < 1) return NAN;
    const size_t nd = static_cast<size_t>(d);
    std::vector<double> mean(nd, 0.0);
    for (int64_t r = 0; r < n; ++r)
        for (size_t j = 0; j < nd; ++j)
            mean[j] += rows[static_cast<size_t>(r) * nd + j];
    for (double& m : mean)
        m /= static_cast<double>(n);
    std::vector<double> c(nd * nd, 0.0);
    for (int64_t r = 0; r < n; ++r)
        for (size_t i = 0; i < nd; ++i) {
            const double a = rows[static_cast<size_t>(r) * nd + i] - mean[i];
            for (size_t j = 0; j < nd; ++j)
                c[i * nd + j] += a * (rows[static_cast<size_t>(r) * nd + j] - mean[j]);
        }
    double trace = 0;
    for (size_t i = 0; i < nd; ++i)
        trace += c[i * nd + i];
    std::vector<double> v1, v2;
    const double l1 = leadingAxis(c, nd, v1);
    for (size_t i = 0; i < nd; ++i) // deflate: what is left once the first axis is taken out
        for (size_t j = 0; j < nd; ++j)
            c[i * nd + j] -= l1 * v1[i] * v1[j];
    const double l2 = nd > 1 ? leadingAxis(c, nd, v2) : 0.0;
    if (nd == 1) v2.assign(1, 0.0);
    for (int64_t r = 0; r < n; ++r) {
        double px = 0, py = 0;
        for (size_t j = 0; j < nd; ++j) {
            const double a = rows[static_cast<size_t>(r) * nd + j] - mean[j];
            px += a * v1[j];
            py += a * v2[j];
        }
        x[static_cast<size_t>(r)] = static_cast<float>(px);
        y[static_cast<size_t>(r)] = static_cast<float>(py);
    }
    return trace > 0 ? std::min(1.0, (l1 + l2) / trace) : NAN;
}

void Task::lookInside(Network& net, const InsideRequest& request, NetworkInside& inside) const
{
    (void)net;
    (void)request;
    inside.view = InsideView::None;
    inside.note = "This kind of data has no view of its units";
}

NetworkInside lookInside(const Task& task, Network& net, const InsideRequest& request)
{
    NetworkInside inside;
    task.lookInside(net, request, inside);
    return inside;
}

} // namespace il::tasks
