#include "TabularLosses.h"

#include <algorithm>
#include <cmath>

namespace il::tasks {

std::vector<double> tabularRowLosses(const TabularSchema& schema, const std::vector<float>& outputs,
                                     const std::vector<float>& y, int64_t rows,
                                     const std::vector<float>& classWeights)
{
    const auto n = static_cast<size_t>(std::max<int64_t>(rows, 0));
    const size_t k = n ? outputs.size() / n : 0;
    std::vector<double> out(n, NAN);
    if (k == 0) return out;
    auto weight = [&](size_t cls) {
        return cls < classWeights.size() ? static_cast<double>(classWeights[cls]) : 1.0;
    };
    for (size_t r = 0; r < n; ++r) {
        const float* z = outputs.data() + r * k;
        switch (schema.kind) {
        case TabularKind::Regression: {
            double sum = 0;
            for (size_t j = 0; j < k; ++j) {
                const double e = static_cast<double>(z[j]) - y[r * k + j];
                sum += e * e;
            }
            out[r] = sum / static_cast<double>(k);
            break;
        }
        case TabularKind::Binary: {
            // log(1 + e^z) - t z, written so a large |z| neither overflows nor loses digits.
            const double v = z[0], t = y[r] > 0.5f ? 1.0 : 0.0;
            const double softplus = std::max(v, 0.0) + std::log1p(std::exp(-std::fabs(v)));
            out[r] = (softplus - t * v) * weight(t > 0.5 ? 1 : 0);
            break;
        }
        case TabularKind::MultiClass: {
            const auto cls = static_cast<size_t>(y[r]);
            double top = z[0];
            for (size_t j = 1; j < k; ++j)
                top = std::max(top, static_cast<double>(z[j]));
            double sum = 0;
            for (size_t j = 0; j < k; ++j)
                sum += std::exp(static_cast<double>(z[j]) - top);
            out[r] = (top + std::log(sum) - (cls < k ? z[cls] : top)) * weight(cls);
            break;
        }
        }
    }
    return out;
}

PairedLosses comparePaired(const std::vector<double>& a, const std::vector<double>& b)
{
    PairedLosses p;
    const size_t n = std::min(a.size(), b.size());
    p.rows = static_cast<int64_t>(n);
    if (n == 0) return p;
    double sa = 0, sb = 0;
    for (size_t i = 0; i < n; ++i) {
        sa += a[i];
        sb += b[i];
    }
    p.meanA = sa / static_cast<double>(n);
    p.meanB = sb / static_cast<double>(n);
    p.meanDiff = p.meanA - p.meanB;
    double ss = 0;
    for (size_t i = 0; i < n; ++i) {
        const double e = (a[i] - b[i]) - p.meanDiff;
        ss += e * e;
    }
    p.stdError = n > 1 ? std::sqrt(ss / static_cast<double>(n - 1) / static_cast<double>(n)) : NAN;
    return p;
}

std::vector<double> tabularErrors(const std::vector<float>& outputs, const std::vector<float>& y)
{
    std::vector<double> e;
    if (outputs.size() != y.size()) return e;
    e.resize(y.size());
    for (size_t i = 0; i < y.size(); ++i)
        e[i] = static_cast<double>(outputs[i]) - y[i];
    return e;
}

bool linearPartOf(const LinearMap& linear, int64_t inputs, int64_t outputs, LinearPart& out)
{
    if (!linear.fitted() || linear.inputs != inputs || linear.outputs != outputs) return false;
    const auto d = static_cast<size_t>(inputs), k = static_cast<size_t>(outputs);
    if (linear.weights.size() != d * k || linear.bias.size() != k) return false;
    out.weights.assign(d * k, 0.f);
    out.bias.assign(k, 0.f);
    for (size_t c = 0; c < k; ++c) {
        out.bias[c] = static_cast<float>(linear.bias[c]);
        for (size_t j = 0; j < d; ++j) // LinearMap holds inputs x outputs
            out.weights[c * d + j] = static_cast<float>(linear.weights[j * k + c]);
    }
    return true;
}

} // namespace il::tasks
