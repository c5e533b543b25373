// Predictions in the file's units and the metrics people know: MSE, RMSE, MAE and R2 for
// regression; accuracy, balanced accuracy, per-class precision/recall/F1, the confusion matrix and
// (two classes) ROC AUC for classification.
#include "TabularTask.h"

#include "Counting.h"

#include <QJsonArray>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace il::tasks {

std::vector<double> tabularProbabilities(const TabularSchema& s, const std::vector<float>& outputs)
{
    std::vector<double> p;
    if (s.kind == TabularKind::Binary) {
        p.reserve(outputs.size() * 2);
        for (float z : outputs) {
            const double p1 = 1.0 / (1.0 + std::exp(-static_cast<double>(z)));
            p.push_back(1.0 - p1);
            p.push_back(p1);
        }
    } else if (s.kind == TabularKind::MultiClass) {
        const auto k = static_cast<size_t>(s.classes.size());
        p.reserve(outputs.size());
        for (size_t r = 0; r + k <= outputs.size(); r += k) {
            double mx = outputs[r];
            for (size_t j = 1; j < k; ++j)
                mx = std::max(mx, static_cast<double>(outputs[r + j]));
            double sum = 0;
            const size_t base = p.size();
            for (size_t j = 0; j < k; ++j) {
                p.push_back(std::exp(outputs[r + j] - mx));
                sum += p.back();
            }
            for (size_t j = 0; j < k; ++j)
                p[base + j] /= sum;
        }
    }
    return p;
}

std::vector<double> tabularPredictions(const TabularSchema& s, const std::vector<float>& outputs)
{
    std::vector<double> pred;
    if (s.kind == TabularKind::Regression) {
        const auto t = static_cast<size_t>(s.targets.size());
        pred.reserve(outputs.size());
        for (size_t i = 0; i < outputs.size(); ++i)
            pred.push_back(static_cast<double>(outputs[i]) * s.targetScale[i % t] +
                           s.targetOffset[i % t]);
        return pred;
    }
    if (s.kind == TabularKind::Binary) { // one logit: class 1 when it is positive
        for (float z : outputs)
            pred.push_back(z > 0 ? 1.0 : 0.0);
        return pred;
    }
    const auto k = static_cast<size_t>(s.classes.size());
    for (size_t r = 0; r + k <= outputs.size(); r += k)
        pred.push_back(static_cast<double>(
            std::max_element(outputs.begin() + static_cast<std::ptrdiff_t>(r),
                             outputs.begin() + static_cast<std::ptrdiff_t>(r + k)) -
            (outputs.begin() + static_cast<std::ptrdiff_t>(r))));
    return pred;
}

double rocAuc(const std::vector<double>& scores, const std::vector<int>& labels)
{
    // Mann-Whitney: the share of (positive, negative) pairs ranked the right way round, from
    // the rank sum of the positives; tied scores share their average rank (a tie counts half).
    // A NaN score ranks nowhere (and would make the sort's order undefined and the tie scan
    // below never end): the AUC of such a model is undefined, reported as such.
    if (std::any_of(scores.begin(), scores.end(), [](double s) { return std::isnan(s); }))
        return NAN;
    const size_t n = scores.size();
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), size_t(0));
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return scores[a] < scores[b]; });
    double positiveRanks = 0;
    int64_t positives = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && scores[order[j]] == scores[order[i]])
            ++j;
        const double rank = 0.5 * static_cast<double>(i + 1 + j); // average of ranks i+1..j
        for (size_t q = i; q < j; ++q)
            if (labels[order[q]] == 1) {
                positiveRanks += rank;
                ++positives;
            }
        i = j;
    }
    const auto negatives = static_cast<int64_t>(n) - positives;
    if (positives == 0 || negatives == 0) return NAN;
    const auto p = static_cast<double>(positives);
    return (positiveRanks - p * (p + 1) / 2) / (p * static_cast<double>(negatives));
}

// Long: the classification and regression branches, each adding its per-class or per-target
// scores into the totals in the loop that computes them.
TabularMetrics tabularMetrics(const TabularSchema& s, const std::vector<float>& outputs,
                              const TabularSplit& data)
{
    TabularMetrics m;
    m.rows = data.rows;
    m.classification = s.isClassification();
    m.targets = s.targets;
    m.classes = s.classes;
    if (data.rows == 0 || data.rawTarget.empty()) return m;
    const auto pred = tabularPredictions(s, outputs);
    const auto n = static_cast<size_t>(data.rows);
    if (m.classification) {
        const auto k = static_cast<size_t>(s.classes.size());
        m.confusion.assign(k * k, 0);
        int64_t correct = 0;
        for (size_t i = 0; i < n; ++i) {
            const auto actual = static_cast<size_t>(data.y[i]);
            const auto predicted = static_cast<size_t>(pred[i]);
            ++m.confusion[actual * k + predicted];
            correct += actual == predicted;
        }
        m.accuracy = static_cast<double>(correct) / static_cast<double>(n);
        int64_t present = 0; // classes with rows here
        for (size_t c = 0; c < k; ++c) {
            ClassScores cs;
            int64_t predictedAs = 0;
            for (size_t a = 0; a < k; ++a) {
                cs.support += m.confusion[c * k + a];
                predictedAs += m.confusion[a * k + c];
            }
            const auto tp = static_cast<double>(m.confusion[c * k + c]);
            cs.precision = predictedAs > 0 ? tp / static_cast<double>(predictedAs) : 0.0;
            cs.recall = cs.support > 0 ? tp / static_cast<double>(cs.support) : 0.0;
            const double pr = cs.precision + cs.recall;
            cs.f1 = pr > 0 ? 2 * cs.precision * cs.recall / pr : 0.0;
            m.macroF1 += cs.f1 / static_cast<double>(k);
            if (cs.support > 0) {
                m.balancedAccuracy += cs.recall;
                ++present;
            }
            m.perClass.push_back(cs);
        }
        m.balancedAccuracy /= static_cast<double>(std::max<int64_t>(present, 1));
        if (s.kind == TabularKind::Binary) {
            std::vector<double> scores(outputs.begin(), outputs.begin() + static_cast<long>(n));
            std::vector<int> labels(n);
            for (size_t i = 0; i < n; ++i)
                labels[i] = data.y[i] > 0.5f ? 1 : 0;
            m.rocAuc = rocAuc(scores, labels); // the logit ranks rows as the probability does
        }
        return m;
    }
    const auto t = static_cast<size_t>(s.targets.size());
    double se = 0, ae = 0, normalisedSe = 0;
    for (size_t j = 0; j < t; ++j) {
        double mean = 0;
        for (size_t i = 0; i < n; ++i)
            mean += data.rawTarget[i * t + j];
        mean /= static_cast<double>(n);
        RegressionScores rs;
        double tot = 0, sej = 0, aej = 0;
        for (size_t i = 0; i < n; ++i) {
            const double y = data.rawTarget[i * t + j];
            const double d = pred[i * t + j] - y;
            sej += d * d;
            aej += std::fabs(d);
            tot += (y - mean) * (y - mean);
        }
        rs.mse = sej / static_cast<double>(n);
        rs.rmse = std::sqrt(rs.mse);
        rs.mae = aej / static_cast<double>(n);
        // A constant target has no variance to explain: 1 if matched exactly, else 0 (as
        // scikit-learn reports it).
        rs.r2 = tot > 0 ? 1.0 - sej / tot : (sej == 0 ? 1.0 : 0.0);
        m.r2 += rs.r2 / static_cast<double>(t);
        se += sej;
        ae += aej;
        if (j < s.targetScale.size() && s.targetScale[j] != 0)
            normalisedSe += rs.mse / (static_cast<double>(s.targetScale[j]) * s.targetScale[j]);
        m.perTarget.push_back(rs);
    }
    if (s.targetScale.size() == t) m.normalisedMse = normalisedSe / static_cast<double>(t);
    m.minMax = s.normalisation == "minmax";
    m.mse = se / static_cast<double>(n * t);
    m.rmse = std::sqrt(m.mse);
    m.mae = ae / static_cast<double>(n * t);
    return m;
}

QJsonObject tabularMetricsJson(const TabularSchema& schema, const TabularMetrics& m,
                               const std::vector<float>& outputs, const TabularSplit& data)
{
    (void)schema;
    (void)outputs;
    (void)data;
    QJsonObject j;
    j["rows"] = static_cast<qint64>(m.rows);
    if (!m.classification) {
        j["mse"] = m.mse;
        j["rmse"] = m.rmse;
        j["mae"] = m.mae;
        j["r2"] = m.r2;
        if (m.perTarget.size() > 1) {
            QJsonObject per;
            for (size_t t = 0; t < m.perTarget.size(); ++t) {
                const RegressionScores& rs = m.perTarget[t];
                per[m.targets[static_cast<qsizetype>(t)]] =
                    QJsonObject{{"mse", rs.mse}, {"rmse", rs.rmse}, {"mae", rs.mae}, {"r2", rs.r2}};
            }
            j["per_target"] = per;
        }
        return j;
    }
    j["accuracy"] = m.accuracy;
    j["balanced_accuracy"] = m.balancedAccuracy;
    j["macro_f1"] = m.macroF1;
    j["classes"] = QJsonArray::fromStringList(m.classes);
    QJsonObject per;
    for (size_t c = 0; c < m.perClass.size(); ++c) {
        const ClassScores& cs = m.perClass[c];
        per[m.classes[static_cast<qsizetype>(c)]] =
            QJsonObject{{"precision", cs.precision},
                        {"recall", cs.recall},
                        {"f1", cs.f1},
                        {"support", static_cast<qint64>(cs.support)}};
    }
    j["per_class"] = per;
    QJsonArray matrix;
    const auto k = m.perClass.size();
    for (size_t a = 0; a < k; ++a) {
        QJsonArray row;
        for (size_t p = 0; p < k; ++p)
            row.append(static_cast<qint64>(m.confusion[a * k + p]));
        matrix.append(row);
    }
    j["confusion_matrix"] = matrix;
    if (m.classes.size() == 2)
        j["roc_auc"] = std::isnan(m.rocAuc) ? QJsonValue() : QJsonValue(m.rocAuc);
    return j;
}

namespace {

QString cut(const QString& s, int width)
{
    return s.size() > width ? s.left(width - 1) + "~" : s;
}
QString fit(const QString& s, int width)
{
    return cut(s, width).leftJustified(width);
}
QString fitRight(const QString& s, int width)
{
    return cut(s, width).rightJustified(width);
}

} // namespace

QString describeTabularMetrics(const TabularMetrics& m, const QString& where)
{
    if (m.rows == 0) return where + ": no rows";
    if (!m.classification) {
        // Two scales, each named: the file's units (what the numbers mean) and the normalised
        // targets the network is trained on (what the MSE loss and early stopping see).
        QString out = QString("%1, in %2: MSE %3, RMSE %4, MAE %5, R2 %6 (%7)")
                          .arg(where)
                          .arg(m.targets.size() == 1 ? m.targets.first() + "'s units"
                                                     : QString("the targets' units"))
                          .arg(m.mse, 0, 'g', 5)
                          .arg(m.rmse, 0, 'g', 5)
                          .arg(m.mae, 0, 'g', 5)
                          .arg(m.r2, 0, 'f', 4)
                          .arg(countOf(m.rows, "row"));
        if (!std::isnan(m.normalisedMse))
            out += QString("; on %1 targets (the loss's scale): MSE %2")
                       .arg(m.minMax ? "0..1-scaled" : "standardised")
                       .arg(m.normalisedMse, 0, 'g', 4);
        if (m.perTarget.size() > 1)
            for (size_t t = 0; t < m.perTarget.size(); ++t)
                out += QString("\n  %1  RMSE %2, MAE %3, R2 %4")
                           .arg(fit(m.targets[static_cast<qsizetype>(t)], 16))
                           .arg(m.perTarget[t].rmse, 0, 'g', 5)
                           .arg(m.perTarget[t].mae, 0, 'g', 5)
                           .arg(m.perTarget[t].r2, 0, 'f', 4);
        return out;
    }
    QString out = QString("%1: accuracy %2% (%3), balanced accuracy %4%, macro F1 %5")
                      .arg(where)
                      .arg(m.accuracy * 100, 0, 'f', 2)
                      .arg(countOf(m.rows, "row"))
                      .arg(m.balancedAccuracy * 100, 0, 'f', 2)
                      .arg(m.macroF1, 0, 'f', 4);
    if (!std::isnan(m.rocAuc)) out += QString(", ROC AUC %1").arg(m.rocAuc, 0, 'f', 4);
    const auto k = m.perClass.size();
    int nameWidth = 5;
    for (const QString& c : m.classes)
        nameWidth = std::clamp(static_cast<int>(c.size()), nameWidth, 20);
    const size_t shown = std::min<size_t>(k, 20);
    out += "\n  " + fit("class", nameWidth) + "  precision  recall      F1  support";
    for (size_t c = 0; c < shown; ++c)
        out += QString("\n  %1  %2  %3  %4  %5")
                   .arg(fit(m.classes[static_cast<qsizetype>(c)], nameWidth))
                   .arg(m.perClass[c].precision, 9, 'f', 4)
                   .arg(m.perClass[c].recall, 6, 'f', 4)
                   .arg(m.perClass[c].f1, 6, 'f', 4)
                   .arg(m.perClass[c].support, 7);
    if (shown < k)
        out += QString("\n  ... %1 more").arg(countOf(static_cast<qint64>(k - shown), "class"));
    if (k > 10) return out;
    // The confusion matrix: how the rows of each actual class were predicted.
    const int cell = std::max(nameWidth, 6);
    out += "\n  confusion matrix (rows: actual, columns: predicted)\n  " + fit("", nameWidth);
    for (size_t p = 0; p < k; ++p)
        out += "  " + fitRight(m.classes[static_cast<qsizetype>(p)], cell);
    for (size_t a = 0; a < k; ++a) {
        out += "\n  " + fit(m.classes[static_cast<qsizetype>(a)], nameWidth);
        for (size_t p = 0; p < k; ++p)
            out += "  " + QString::number(m.confusion[a * k + p]).rightJustified(cell);
    }
    return out;
}

} // namespace il::tasks
