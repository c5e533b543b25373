// The simple models a table's network must beat, fitted on the same training rows and the same
// normalised inputs, and measured on the same rows with the same metrics (tabularMetrics):
//   regression: the mean of the training targets, and ordinary least squares with an intercept
//     (the normal equations, centred, with a ridge of 1e-9 of the mean diagonal so constant or
//     collinear columns and more inputs than rows still solve);
//   classification: the majority class of the training rows, and logistic regression (binary:
//     one logit; several classes: multinomial softmax), with scikit-learn's default L2 penalty
//     (C = 1: mean log loss + |W|^2 / (2 n), the intercepts unpenalised), by L-BFGS from zero
//     weights, at most 200 iterations, single-threaded: the same rows give the same model.
// Each is a linear map into the network's output space (normalised targets, a logit, or one
// logit per class), so the network's own metric code measures it. A large table is fitted on an
// even sample of its training rows (fittedRows says how many), to keep the fit near a second.
// The coefficients are saved with the model (toJson) so `evaluate` measures the baselines of the
// model's own training rows on another file.
#pragma once

#include "TabularTask.h"

#include <QJsonObject>
#include <QString>

#include <cstdint>
#include <vector>

namespace il::tasks {

// outputs = x * weights + bias; weights inputs x outputs, row-major. Not fitted: outputs 0.
struct LinearMap {
    int64_t inputs = 0, outputs = 0;
    std::vector<double> weights, bias;
    bool fitted() const { return outputs > 0; }
    // x: rows x inputs (the network's normalised inputs); the result rows x outputs.
    std::vector<float> apply(const std::vector<float>& x, int64_t rows) const;
};

// Baselines are fitted only below this many coefficients ((inputs + 1) x outputs); they are
// also the most a model file holds.
constexpr int64_t kMaxBaselineCoefficients = 100'000;
// A class under this share of the training rows (and under half of an even share) is named by
// the imbalance note.
constexpr double kRareClassShare = 0.15;

struct TabularBaselines {
    bool classification = false;
    // The constant predictor: the training targets' mean (normalised) or the log of the training
    // class shares (their argmax is the majority class).
    LinearMap constant;
    LinearMap linear; // least squares or logistic regression
    int majorityClass = 0;
    int64_t trainRows = 0, fittedRows = 0;
    int iterations = 0;    // L-BFGS iterations (logistic regression)
    bool converged = true; // false: stopped at the iteration limit
    QString notFitted;     // why `linear` is missing, e.g. "the training rows hold one class"

    bool available() const { return constant.fitted(); }
    QJsonObject toJson() const;
    // Checks the widths against the schema's (a model file may be edited); false + why.
    static bool fromJson(const QJsonObject& o, const TabularSchema& schema, TabularBaselines& out,
                         QString* error);
};

// Fits both baselines on the training rows: x rows x inputWidth (normalised), y as TabularSplit
// holds it (normalised targets, 0/1, or class ids).
TabularBaselines fitTabularBaselines(const TabularSchema& schema, const std::vector<float>& x,
                                     const std::vector<float>& y, int64_t rows);

// The --metrics-json "baselines" object for rows (x: their normalised inputs): "mean" and
// "linear_regression", or "majority_class" and "logistic_regression", each with the network's
// metric keys (tabularMetricsJson; null when not fitted), plus "fitted_on_rows" and
// "network_beats_linear" (MSE; accuracy and balanced accuracy), compared with network.
QJsonObject tabularBaselinesJson(const TabularSchema& schema, const TabularBaselines& b,
                                 const std::vector<float>& x, const TabularSplit& rows,
                                 const TabularMetrics& network);
// For people, from that object and the network's metrics object: one line of baselines and,
// when the network does not beat them, a line that says so; when the object says the network is
// its linear start ("network_is_linear_model", set by the table task), that instead. compact: the
// studio's short form
// ("MSE: network 2890, linear 3001, mean 5929"). Empty when values has no baselines.
// judge false: the numbers only, without the lines (or the compact line's ending) that judge
// the network against the linear model; the studio says that in its verdict (RunVerdict.h).
QStringList describeTabularBaselines(const QJsonObject& baselines, const QJsonObject& network,
                                     const QString& where, bool compact, bool judge = true);
// The network against the linear model in that object: "accuracy 93.33% vs 96.67%, balanced
// accuracy 93.94% vs 96.97%" or "MSE 3291.9 vs 3001.4"; onlyWorse: only the measures where the
// network falls short (empty when none). Empty when no linear model was fitted.
QString versusLinearModel(const QJsonObject& baselines, const QJsonObject& network,
                          bool onlyWorse = false);

// "class 'spam' is 7.4% of the training rows: always answering 'ham' scores 92.6% ..." when a
// class is rare in y (class ids or 0/1), empty otherwise. The way to weigh the classes is
// named for the reader.
QString classImbalanceNote(const TabularSchema& schema, const std::vector<float>& y, int64_t rows,
                           MessageReader reader = MessageReader::Cli);

} // namespace il::tasks
