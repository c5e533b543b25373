// The mean / least-squares and majority / logistic-regression baselines of a table: fitting,
// saving and measuring them (TabularBaselines.h); TabularBaselinesText.cpp says them in words.
#include "TabularBaselines.h"

#include <QJsonArray>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace il::tasks {

namespace {

// How much work a fit may do, in multiply-adds: the normal equations cost rows x (d+1)^2 / 2,
// logistic regression about 2 x rows x (d+1) x logits per evaluation of the loss and up to a few
// hundred evaluations. A table past the budget is fitted on an even sample of its training rows;
// one whose sample would be under kMinSampleRows rows (thousands of inputs, hundreds of classes)
// is not fitted. Each budget is about a second on one core.
constexpr double kLeastSquaresBudget = 2e9;
constexpr double kLogisticBudget = 4e7; // per loss evaluation
constexpr int64_t kMinSampleRows = 2000;
constexpr int kMaxIterations = 200;
// An absent class's logit: below any log share a real table can have.
constexpr double kAbsentLogit = -50;

QJsonArray toArray(const std::vector<double>& v)
{
    QJsonArray a;
    for (double d : v)
        a.append(d);
    return a;
}

bool fromArray(const QJsonValue& value, size_t size, std::vector<double>& out)
{
    const QJsonArray a = value.toArray();
    if (static_cast<size_t>(a.size()) != size) return false;
    out.clear();
    out.reserve(size);
    for (const auto& x : a) {
        if (!x.isDouble() || !std::isfinite(x.toDouble())) return false;
        out.push_back(x.toDouble());
    }
    return true;
}

// The training rows a fit uses: all of them, an even sample when there are more than cap, or
// none when that sample would be under kMinSampleRows (too few to stand for the table).
std::vector<int64_t> sampleRows(int64_t rows, double cap)
{
    if (cap < static_cast<double>(std::min(rows, kMinSampleRows))) return {};
    const auto m = std::min(rows, static_cast<int64_t>(std::min(cap, 1e15)));
    std::vector<int64_t> picked(static_cast<size_t>(m));
    for (int64_t i = 0; i < m; ++i)
        picked[static_cast<size_t>(i)] = m == rows ? i : i * rows / m;
    return picked;
}

QString tooSlow(size_t inputs, size_t outputs)
{
    return QString("%1 inputs x %2 outputs take too long to fit").arg(inputs).arg(outputs);
}

// Solves (A + ridge I) W = B in place (A p x p symmetric, B p x t, row-major) by Cholesky; a
// failed factor (a singular A in rounding) retries with a thousand times the ridge.
void solveSymmetric(std::vector<double> a, std::vector<double>& b, size_t p, size_t t)
{
    double trace = 0;
    for (size_t i = 0; i < p; ++i)
        trace += a[i * p + i];
    if (!(trace > 0)) { // every input constant over the rows: nothing to fit
        std::fill(b.begin(), b.end(), 0.0);
        return;
    }
    double ridge = 1e-9 * trace / static_cast<double>(p);
    std::vector<double> l(p * p);
    for (int attempt = 0; attempt < 6; ++attempt, ridge *= 1000) {
        bool ok = true;
        for (size_t j = 0; j < p && ok; ++j) {
            for (size_t i = j; i < p; ++i) {
                double s = a[i * p + j] + (i == j ? ridge : 0.0);
                for (size_t k = 0; k < j; ++k)
                    s -= l[i * p + k] * l[j * p + k];
                if (i == j) {
                    if (!(s > 0)) {
                        ok = false;
                        break;
                    }
                    l[j * p + j] = std::sqrt(s);
                } else {
                    l[i * p + j] = s / l[j * p + j];
                }
            }
        }
        if (!ok) continue;
        for (size_t c = 0; c < t; ++c) { // L z = b, then L^T w = z
            for (size_t i = 0; i < p; ++i) {
                double s = b[i * t + c];
                for (size_t k = 0; k < i; ++k)
                    s -= l[i * p + k] * b[k * t + c];
                b[i * t + c] = s / l[i * p + i];
            }
            for (size_t i = p; i-- > 0;) {
                double s = b[i * t + c];
                for (size_t k = i + 1; k < p; ++k)
                    s -= l[k * p + i] * b[k * t + c];
                b[i * t + c] = s / l[i * p + i];
            }
        }
        return;
    }
    std::fill(b.begin(), b.end(), 0.0);
}

// Ordinary least squares with an intercept on centred inputs and targets.
LinearMap leastSquares(const std::vector<float>& x, const std::vector<float>& y,
                       const std::vector<int64_t>& rows, size_t d, size_t t)
{
    const auto n = static_cast<double>(rows.size());
    std::vector<double> mx(d, 0.0), my(t, 0.0);
    for (int64_t r : rows) {
        const auto ri = static_cast<size_t>(r);
        for (size_t j = 0; j < d; ++j)
            mx[j] += x[ri * d + j];
        for (size_t k = 0; k < t; ++k)
            my[k] += y[ri * t + k];
    }
    for (double& v : mx)
        v /= n;
    for (double& v : my)
        v /= n;
    std::vector<double> a(d * d, 0.0), b(d * t, 0.0), xc(d), yc(t);
    for (int64_t r : rows) {
        const auto ri = static_cast<size_t>(r);
        for (size_t j = 0; j < d; ++j)
            xc[j] = x[ri * d + j] - mx[j];
        for (size_t k = 0; k < t; ++k)
            yc[k] = y[ri * t + k] - my[k];
        for (size_t i = 0; i < d; ++i) { // the upper triangle; mirrored below
            const double xi = xc[i];
            double* row = &a[i * d];
            for (size_t j = i; j < d; ++j)
                row[j] += xi * xc[j];
            for (size_t k = 0; k < t; ++k)
                b[i * t + k] += xi * yc[k];
        }
    }
    for (size_t i = 0; i < d; ++i)
        for (size_t j = 0; j < i; ++j)
            a[i * d + j] = a[j * d + i];
    solveSymmetric(std::move(a), b, d, t);
    LinearMap m;
    m.inputs = static_cast<int64_t>(d);
    m.outputs = static_cast<int64_t>(t);
    m.weights = std::move(b);
    m.bias = my;
    for (size_t k = 0; k < t; ++k)
        for (size_t j = 0; j < d; ++j)
            m.bias[k] -= mx[j] * m.weights[j * t + k];
    return m;
}

// Logistic regression over the classes that occur: one logit (two classes, binary) or a softmax
// over `present` (several). Minimises mean log loss + lambda/2 |W|^2 by L-BFGS (memory 10,
// backtracking Armijo line search) from zero; theta = W (k x d: one row of weights per logit,
// so both loops below run along the inputs), then the k biases.
struct LogisticFit {
    std::vector<double> theta;
    int iterations = 0;
    bool converged = false;
};

// Long: L-BFGS with its loss lambda, two-loop recursion, Armijo search and history update;
// the steps share theta, the gradients and the s/y memory.
LogisticFit logistic(const std::vector<float>& x, const std::vector<float>& y,
                     const std::vector<int64_t>& rows, size_t d, bool binary,
                     const std::vector<int>& column) // class id -> logit column, -1 absent
{
    const size_t k =
        binary ? 1 : static_cast<size_t>(*std::max_element(column.begin(), column.end()) + 1);
    const size_t np = (d + 1) * k;
    const auto n = static_cast<double>(rows.size());
    const double lambda = 1.0 / n; // scikit-learn's C = 1 on the summed loss
    std::vector<double> z(k), r(k), xd(d);
    auto evaluate = [&](const std::vector<double>& th, std::vector<double>& g) {
        std::fill(g.begin(), g.end(), 0.0);
        const double* w = th.data();
        const double* bias = th.data() + d * k;
        double loss = 0;
        for (int64_t row : rows) {
            const float* xr = &x[static_cast<size_t>(row) * d];
            const int cls = static_cast<int>(y[static_cast<size_t>(row)]);
            for (size_t j = 0; j < d; ++j)
                xd[j] = xr[j];
            for (size_t c = 0; c < k; ++c) {
                const double* wc = w + c * d;
                double v = bias[c];
                for (size_t j = 0; j < d; ++j)
                    v += xd[j] * wc[j];
                z[c] = v;
            }
            if (binary) {
                const double t = cls == 1 ? 1.0 : 0.0, v = z[0];
                // log(1 + e^v) - t v, without overflow either way
                loss += (v > 0 ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v))) - t * v;
                r[0] = 1.0 / (1.0 + std::exp(-v)) - t;
            } else {
                const double mx = *std::max_element(z.begin(), z.end());
                double s = 0;
                for (size_t c = 0; c < k; ++c)
                    s += std::exp(z[c] - mx);
                const double lse = mx + std::log(s);
                const auto target = static_cast<size_t>(column[static_cast<size_t>(cls)]);
                loss += lse - z[target];
                for (size_t c = 0; c < k; ++c)
                    r[c] = std::exp(z[c] - lse) - (c == target ? 1.0 : 0.0);
            }
            for (size_t c = 0; c < k; ++c) {
                double* gc = g.data() + c * d;
                const double rc = r[c];
                for (size_t j = 0; j < d; ++j)
                    gc[j] += rc * xd[j];
            }
            for (size_t c = 0; c < k; ++c)
                g[d * k + c] += r[c];
        }
        double penalty = 0;
        for (size_t i = 0; i < np; ++i) {
            g[i] /= n;
            if (i < d * k) {
                penalty += th[i] * th[i];
                g[i] += lambda * th[i];
            }
        }

        return loss / n + 0.5 * lambda * penalty;
    };
    auto dot = [](const std::vector<double>& a, const std::vector<double>& b) {
        return std::inner_product(a.begin(), a.end(), b.begin(), 0.0);
    };
    auto maxAbs = [](const std::vector<double>& v) {
        double m = 0;
        for (double e : v)
            m = std::max(m, std::fabs(e));
        return m;
    };

    LogisticFit fit;
    fit.theta.assign(np, 0.0);
    std::vector<double> g(np), gNew(np), dir(np), next(np);
    double f = evaluate(fit.theta, g);
    constexpr size_t kMemory = 10;
    std::vector<std::vector<double>> s, yv;
    std::vector<double> rho;
    std::vector<double> alpha(kMemory);
    int stalled = 0;
    for (fit.iterations = 0; fit.iterations < kMaxIterations; ++fit.iterations) {
        if (maxAbs(g) <= 1e-9) {
            fit.converged = true;
            break;
        }
        // The two-loop recursion: dir = -H g.
        dir = g;
        for (size_t i = s.size(); i-- > 0;) {
            alpha[i] = rho[i] * dot(s[i], dir);
            for (size_t q = 0; q < np; ++q)
                dir[q] -= alpha[i] * yv[i][q];
        }
        const double gamma = s.empty() ? 1.0 / std::max(1.0, std::sqrt(dot(g, g)))
                                       : dot(s.back(), yv.back()) / dot(yv.back(), yv.back());
        for (double& e : dir)
            e *= gamma;
        for (size_t i = 0; i < s.size(); ++i) {
            const double beta = rho[i] * dot(yv[i], dir);
            for (size_t q = 0; q < np; ++q)
                dir[q] += (alpha[i] - beta) * s[i][q];
        }
        for (double& e : dir)
            e = -e;
        double slope = dot(g, dir);
        if (!(slope < 0)) { // not a descent direction (rounding): restart from the gradient
            s.clear();
            yv.clear();
            rho.clear();
            for (size_t q = 0; q < np; ++q)
                dir[q] = -g[q];
            slope = dot(g, dir);
        }
        double step = 1, fNew = f;
        bool accepted = false;
        for (int tries = 0; tries < 30; ++tries, step *= 0.5) {
            for (size_t q = 0; q < np; ++q)
                next[q] = fit.theta[q] + step * dir[q];
            fNew = evaluate(next, gNew);
            if (fNew <= f + 1e-4 * step * slope) {
                accepted = true;
                break;
            }
        }
        if (!accepted) { // no decrease left within rounding: as converged as doubles allow
            fit.converged = true;
            break;
        }
        std::vector<double> sk(np), yk(np);
        for (size_t q = 0; q < np; ++q) {
            sk[q] = next[q] - fit.theta[q];
            yk[q] = gNew[q] - g[q];
        }
        const double sy = dot(sk, yk);
        if (sy > 1e-300) {
            if (s.size() == kMemory) {
                s.erase(s.begin());
                yv.erase(yv.begin());
                rho.erase(rho.begin());
            }
            s.push_back(std::move(sk));
            yv.push_back(std::move(yk));
            rho.push_back(1.0 / sy);
        }
        // Near the optimum the loss stops changing in its last digits before the gradient
        // reaches 1e-9: two steps in a row that gain nothing a double can hold end the fit.
        stalled = f - fNew <= 1e-14 * std::max(1.0, std::fabs(f)) ? stalled + 1 : 0;
        fit.theta.swap(next);
        g.swap(gNew);
        f = fNew;
        if (stalled >= 2) {
            fit.converged = maxAbs(g) <= 1e-5;
            ++fit.iterations;
            break;
        }
    }
    return fit;
}

QJsonObject mapJson(const LinearMap& m, bool withWeights)
{
    QJsonObject o{{"bias", toArray(m.bias)}};
    if (withWeights) o["weights"] = toArray(m.weights);
    return o;
}

bool mapFromJson(const QJsonValue& v, int64_t inputs, int64_t outputs, bool withWeights,
                 LinearMap& m)
{
    const QJsonObject o = v.toObject();
    m = LinearMap{};
    m.inputs = inputs;
    m.outputs = outputs;
    if (!fromArray(o["bias"], static_cast<size_t>(outputs), m.bias)) return false;
    return !withWeights ||
           fromArray(o["weights"], static_cast<size_t>(inputs * outputs), m.weights);
}

} // namespace

std::vector<float> LinearMap::apply(const std::vector<float>& x, int64_t rows) const
{
    const auto d = static_cast<size_t>(inputs), k = static_cast<size_t>(outputs);
    std::vector<float> out(static_cast<size_t>(rows) * k);
    std::vector<double> z(k);
    for (size_t r = 0; r < static_cast<size_t>(rows); ++r) {
        std::copy(bias.begin(), bias.end(), z.begin());
        if (!weights.empty())
            for (size_t j = 0; j < d; ++j) {
                const double xj = x[r * d + j];
                for (size_t c = 0; c < k; ++c)
                    z[c] += xj * weights[j * k + c];
            }
        for (size_t c = 0; c < k; ++c)
            out[r * k + c] = static_cast<float>(z[c]);
    }
    return out;
}

// Long: two branches (targets, classes), each filling b in order: the constant model, the
// checks that return early with their reason, then the linear fit.
TabularBaselines fitTabularBaselines(const TabularSchema& s, const std::vector<float>& x,
                                     const std::vector<float>& y, int64_t rows)
{
    TabularBaselines b;
    b.classification = s.isClassification();
    b.trainRows = rows;
    const auto d = static_cast<size_t>(s.inputWidth());
    const auto outputs = static_cast<size_t>(s.outputWidth());
    if (rows <= 0) return b;
    const double width = static_cast<double>(d + 1);
    if (!b.classification) {
        const auto t = outputs;
        b.constant.inputs = static_cast<int64_t>(d);
        b.constant.outputs = static_cast<int64_t>(t);
        b.constant.bias.assign(t, 0.0);
        for (size_t r = 0; r < static_cast<size_t>(rows); ++r)
            for (size_t k = 0; k < t; ++k)
                b.constant.bias[k] += y[r * t + k];
        for (double& v : b.constant.bias)
            v /= static_cast<double>(rows);
        if (width * static_cast<double>(t) > kMaxBaselineCoefficients) {
            b.notFitted = QString("%1 x %2 coefficients are more than %3")
                              .arg(d + 1)
                              .arg(t)
                              .arg(kMaxBaselineCoefficients);
            b.fittedRows = rows;
            return b;
        }
        const auto picked = sampleRows(rows, 2 * kLeastSquaresBudget / (width * width));
        if (picked.empty()) {
            b.notFitted = tooSlow(d, t);
            b.fittedRows = rows;
            return b;
        }
        b.fittedRows = static_cast<int64_t>(picked.size());
        b.linear = leastSquares(x, y, picked, d, t);
        return b;
    }
    // Classes: y holds the class id (0/1 for two classes).
    const auto classes = static_cast<size_t>(s.classes.size());
    std::vector<int64_t> count(classes, 0);
    for (size_t r = 0; r < static_cast<size_t>(rows); ++r)
        ++count[std::min(static_cast<size_t>(y[r]), classes - 1)];
    b.majorityClass =
        static_cast<int>(std::max_element(count.begin(), count.end()) - count.begin());
    auto logShare = [&](size_t c) {
        return count[c] > 0 ? std::log(static_cast<double>(count[c]) / static_cast<double>(rows))
                            : kAbsentLogit;
    };
    const bool binary = s.kind == TabularKind::Binary;
    b.constant.inputs = static_cast<int64_t>(d);
    b.constant.outputs = static_cast<int64_t>(outputs);
    if (binary) {
        b.constant.bias = {std::clamp(logShare(1) - logShare(0), kAbsentLogit, -kAbsentLogit)};
    } else {
        for (size_t c = 0; c < classes; ++c)
            b.constant.bias.push_back(logShare(c));
    }
    b.fittedRows = rows;
    std::vector<int> column(classes, -1);
    int present = 0;
    for (size_t c = 0; c < classes; ++c)
        if (count[c] > 0) column[c] = present++;
    if (present < 2) {
        b.notFitted = "the training rows hold one class";
        return b;
    }
    const size_t logits = binary ? 1 : static_cast<size_t>(present);
    if (width * static_cast<double>(outputs) > kMaxBaselineCoefficients) {
        b.notFitted = QString("%1 x %2 coefficients are more than %3")
                          .arg(d + 1)
                          .arg(outputs)
                          .arg(kMaxBaselineCoefficients);
        return b;
    }
    const auto picked =
        sampleRows(rows, kLogisticBudget / (2 * width * static_cast<double>(logits)));
    if (picked.empty()) {
        b.notFitted = tooSlow(d, outputs);
        return b;
    }
    b.fittedRows = static_cast<int64_t>(picked.size());
    const LogisticFit fit = logistic(x, y, picked, d, binary, column);
    b.iterations = fit.iterations;
    b.converged = fit.converged;
    LinearMap& m = b.linear;
    m.inputs = static_cast<int64_t>(d);
    m.outputs = static_cast<int64_t>(outputs);
    m.weights.assign(d * outputs, 0.0);
    m.bias.assign(outputs, kAbsentLogit);
    for (size_t c = 0; c < outputs; ++c) {
        const int from = binary ? 0 : column[c];
        if (from < 0) continue; // a class the training rows lack: never predicted
        const auto f = static_cast<size_t>(from);
        for (size_t j = 0; j < d; ++j)
            m.weights[j * outputs + c] = fit.theta[f * d + j];
        m.bias[c] = fit.theta[d * logits + f];
    }
    return b;
}

QJsonObject TabularBaselines::toJson() const
{
    QJsonObject o;
    o["training_rows"] = static_cast<qint64>(trainRows);
    o["fitted_on_rows"] = static_cast<qint64>(fittedRows);
    o["constant"] = mapJson(constant, false);
    if (classification) o["majority_class"] = majorityClass;
    if (linear.fitted()) o["linear"] = mapJson(linear, true);
    if (!notFitted.isEmpty()) o["not_fitted"] = notFitted;
    if (classification && linear.fitted()) {
        o["iterations"] = iterations;
        o["converged"] = converged;
    }
    return o;
}

bool TabularBaselines::fromJson(const QJsonObject& o, const TabularSchema& s, TabularBaselines& b,
                                QString* error)
{
    b = TabularBaselines{};
    b.classification = s.isClassification();
    const int64_t inputs = s.inputWidth(), outputs = s.outputWidth();
    b.trainRows = o["training_rows"].toInteger(0);
    b.fittedRows = o["fitted_on_rows"].toInteger(0);
    b.majorityClass = o["majority_class"].toInt(0);
    b.notFitted = o["not_fitted"].toString();
    b.iterations = o["iterations"].toInt(0);
    b.converged = o["converged"].toBool(true);
    const bool ok =
        mapFromJson(o["constant"], inputs, outputs, false, b.constant) &&
        (!o.contains("linear") || mapFromJson(o["linear"], inputs, outputs, true, b.linear)) &&
        b.majorityClass >= 0 && b.majorityClass < std::max<qsizetype>(1, s.classes.size());
    if (!ok) {
        b = TabularBaselines{};
        if (error)
            *error = QString("task.baselines: the coefficients do not match the %1 inputs and %2 "
                             "outputs")
                         .arg(inputs)
                         .arg(outputs);
    }
    return ok;
}

QJsonObject tabularBaselinesJson(const TabularSchema& s, const TabularBaselines& b,
                                 const std::vector<float>& x, const TabularSplit& rows,
                                 const TabularMetrics& network)
{
    QJsonObject o;
    if (!b.available()) return o;
    o["training_rows"] = static_cast<qint64>(b.trainRows);
    o["fitted_on_rows"] = static_cast<qint64>(b.fittedRows);
    const bool cls = b.classification;
    const auto constantOut = b.constant.apply(x, rows.rows);
    QJsonObject constant =
        tabularMetricsJson(s, tabularMetrics(s, constantOut, rows), constantOut, rows);
    if (cls) constant["class"] = s.classes.value(b.majorityClass);
    o[cls ? "majority_class" : "mean"] = constant;
    const QString linearKey = cls ? "logistic_regression" : "linear_regression";
    if (!b.linear.fitted()) {
        o[linearKey] = QJsonValue();
        o["not_fitted"] = b.notFitted;
        return o;
    }
    const auto linearOut = b.linear.apply(x, rows.rows);
    const TabularMetrics lm = tabularMetrics(s, linearOut, rows);
    o[linearKey] = tabularMetricsJson(s, lm, linearOut, rows);
    if (cls) {
        o["iterations"] = b.iterations;
        o["converged"] = b.converged;
    }
    // Beaten: a lower MSE; for classes, neither accuracy nor balanced accuracy below.
    o["network_beats_linear_model"] =
        cls ? network.accuracy >= lm.accuracy && network.balancedAccuracy >= lm.balancedAccuracy
            : network.mse < lm.mse;
    return o;
}

} // namespace il::tasks
