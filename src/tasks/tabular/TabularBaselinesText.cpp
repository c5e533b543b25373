// The baselines of a table in words (TabularBaselines.h): the network against the linear model,
// the lines the CLI and the studio print, the note on an imbalanced target. They read the JSON
// keys that TabularBaselines.cpp writes (tabularBaselinesJson).
#include "TabularBaselines.h"

#include "Counting.h"

#include <cmath>

namespace il::tasks {

namespace {

QString percent(double v)
{
    return QString::number(100 * v, 'f', 2) + "%";
}

} // namespace

QString versusLinearModel(const QJsonObject& b, const QJsonObject& net, bool onlyWorse)
{
    const bool cls = b.contains("majority_class");
    const QJsonValue linearValue = b[cls ? "logistic_regression" : "linear_regression"];
    if (!linearValue.isObject()) return {};
    const QJsonObject linear = linearValue.toObject();
    auto num = [](const QJsonObject& o, const char* key) { return o[key].toDouble(NAN); };
    if (!cls) {
        if (onlyWorse && num(net, "mse") < num(linear, "mse")) return {};
        return "MSE " + QString::number(num(net, "mse"), 'g', 5) + " vs " +
               QString::number(num(linear, "mse"), 'g', 5);
    }
    QStringList figures;
    for (const char* key : {"accuracy", "balanced_accuracy"})
        if (!onlyWorse || num(net, key) < num(linear, key))
            figures << QString(key).replace('_', ' ') + " " + percent(num(net, key)) + " vs " +
                           percent(num(linear, key));
    return figures.join(", ");
}

// Long: the compact and the full sentences, built side by side from the same figures and
// formatters, so the two always say the same thing.
QStringList describeTabularBaselines(const QJsonObject& b, const QJsonObject& net,
                                     const QString& where, bool compact, bool judge)
{
    QStringList lines;
    if (b.isEmpty()) return lines;
    if (b.contains("not_available")) {
        lines << "baselines: " + b["not_available"].toString();
        return lines;
    }
    const bool cls = b.contains("majority_class");
    const QJsonObject constant = b[cls ? "majority_class" : "mean"].toObject();
    const QJsonValue linearValue = b[cls ? "logistic_regression" : "linear_regression"];
    const QJsonObject linear = linearValue.toObject();
    const bool haveLinear = linearValue.isObject();
    auto num = [](const QJsonObject& o, const char* key) { return o[key].toDouble(NAN); };
    const QString always = "always '" + constant["class"].toString() + "'";
    QString line;
    if (!cls) {
        auto mse = [&](const QJsonObject& o) {
            return QString::number(num(o, "mse"), 'g', compact ? 4 : 5);
        };
        auto r2 = [&](const QJsonObject& o) {
            return " (R2 " + QString::number(num(o, "r2"), 'f', 4) + ")";
        };
        if (compact) {
            line = "MSE: network " + mse(net) + (haveLinear ? ", linear " + mse(linear) : "") +
                   ", mean " + mse(constant);
        } else {
            line = "baselines on " + where + ": the mean MSE " + mse(constant) + r2(constant);
            if (haveLinear)
                line += ", linear regression (least squares) MSE " + mse(linear) + r2(linear);
            line += "; the network MSE " + mse(net) + r2(net);
        }
    } else {
        auto acc = [&](const QJsonObject& o, const char* key) {
            return compact ? QString::number(100 * num(o, key), 'f', 1) + "%"
                           : percent(num(o, key));
        };
        if (compact) {
            line = "accuracy: network " + acc(net, "accuracy") +
                   (haveLinear ? ", logistic " + acc(linear, "accuracy") : "") + ", majority " +
                   acc(constant, "accuracy") + " · balanced: network " +
                   acc(net, "balanced_accuracy") +
                   (haveLinear ? ", logistic " + acc(linear, "balanced_accuracy") : "") +
                   ", majority " + acc(constant, "balanced_accuracy");
        } else {
            auto both = [&](const QJsonObject& o) {
                return "accuracy " + acc(o, "accuracy") + " (balanced " +
                       acc(o, "balanced_accuracy") + ")";
            };
            line = "baselines on " + where + ": majority class (" + always + ") " + both(constant);
            if (haveLinear) line += ", logistic regression " + both(linear);
            line += "; the network " + both(net);
        }
    }
    if (!haveLinear)
        line += QString(compact ? " (%1 not fitted: %2)" : "; %1 not fitted: %2")
                    .arg(cls ? "logistic regression" : "linear regression")
                    .arg(b["not_fitted"].toString());
    const qint64 fitted = b["fitted_on_rows"].toInteger(),
                 training = b["training_rows"].toInteger();
    if (!compact && haveLinear && fitted < training)
        line += QString(" (fitted on an even sample of %1 of the %2 training rows)")
                    .arg(fitted)
                    .arg(training);
    // A network that is its linear start (a wide-and-deep stack whose hidden layers did not beat
    // it: Task::settle) equals the linear baseline by construction: said, not warned about.
    const bool isLinear = judge && haveLinear && b["network_is_linear_model"].toBool(false);
    const QString linearName = cls ? "logistic regression" : "least squares";
    if (isLinear && compact)
        line +=
            " · the network is the " + linearName + " model (its hidden layers did not beat it)";
    lines << line;
    if (isLinear && !compact)
        lines << "the network is its linear start, the same model as " + linearName +
                     " (its hidden layers' output weights are zero)";
    else if (judge && haveLinear && !isLinear && !b["network_beats_linear_model"].toBool(true))
        lines << QString("the network does not beat %1 here: ")
                         .arg(cls ? "logistic regression" : "linear regression") +
                     versusLinearModel(b, net, true);
    if (cls && num(net, "accuracy") < num(constant, "accuracy"))
        lines << QString("always answering '%1' scores %2 accuracy, more than the network's %3: "
                         "look at balanced accuracy")
                     .arg(constant["class"].toString())
                     .arg(percent(num(constant, "accuracy")))
                     .arg(percent(num(net, "accuracy")));
    return lines;
}

QString classImbalanceNote(const TabularSchema& s, const std::vector<float>& y, int64_t rows,
                           MessageReader reader)
{
    if (!s.isClassification() || rows <= 0) return {};
    const auto k = static_cast<size_t>(s.classes.size());
    std::vector<int64_t> count(k, 0);
    for (size_t r = 0; r < static_cast<size_t>(rows); ++r)
        ++count[std::min(static_cast<size_t>(y[r]), k - 1)];
    // Rare: under 15% and under half of an even share (ten even classes are 10% each).
    const double threshold = std::min(kRareClassShare, 0.5 / static_cast<double>(k));
    const auto rarest =
        static_cast<size_t>(std::min_element(count.begin(), count.end()) - count.begin());
    const auto majority =
        static_cast<size_t>(std::max_element(count.begin(), count.end()) - count.begin());
    const double n = static_cast<double>(rows);
    const double share = static_cast<double>(count[rarest]) / n;
    if (share >= threshold) return {};
    int64_t others = 0;
    for (size_t c = 0; c < k; ++c)
        others += c != rarest && static_cast<double>(count[c]) / n < threshold;
    QString note = QString("class '%1' is %2% of the training rows")
                       .arg(s.classes[static_cast<qsizetype>(rarest)])
                       .arg(100 * share, 0, 'f', 1);
    if (others > 0)
        note += QString(" (%1 under %2%)")
                    .arg(countOf(others, "other class"))
                    .arg(100 * threshold, 0, 'f', 1);
    note += QString(": always answering '%1' scores %2% accuracy; look at balanced accuracy, or "
                    "weight the classes %3")
                .arg(s.classes[static_cast<qsizetype>(majority)])
                .arg(100 * static_cast<double>(count[majority]) / n, 0, 'f', 1)
                .arg(forReader(reader, "(--class-weight balanced)",
                               "(Balance the classes, in the Training tab)"));
    return note;
}

} // namespace il::tasks
