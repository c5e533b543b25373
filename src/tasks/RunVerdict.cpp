#include "RunVerdict.h"

#include "ModelJson.h"
#include "TabularBaselines.h"

#include <QJsonValue>

#include <cmath>

namespace il::tasks {

namespace {

QString loss(double v)
{
    return QString::number(v, 'g', 4);
}

// What the settle measured: "(0.07782 vs 0.1653 on 30 rows)", or over every row held out by
// the folds: "(0.05617 vs 0.1506 on 150 rows, each held out once by 5 folds)".
QString lossFigures(const Settled& s)
{
    const QString folds =
        s.folds > 0 ? QString(", each held out once by %1 folds").arg(s.folds) : QString();
    return QString("(%1 vs %2 on %3 rows%4)")
        .arg(loss(s.networkLoss), loss(s.simplerLoss))
        .arg(static_cast<qlonglong>(s.rows))
        .arg(folds);
}

// The verdict of a run decided by cross-validation: the model kept is the simpler one fitted on
// every row, or the network trained again on every row for the folds' length.
RunVerdict crossValidatedVerdict(const Settled& settled, int64_t lastStep, const QString& linear,
                                 bool classes)
{
    RunVerdict v;
    v.lastStep = lastStep;
    const QString simpler = settled.simplerName.isEmpty() ? linear : settled.simplerName;
    if (std::isfinite(settled.averagedShare)) {
        // "the 5 folds' networks averaged, blended 0.83 : 0.17 with least squares fitted on every
        // row: cross-validated loss 0.4908 (0.4919 for the networks, 0.5183 for least squares)"
        v.kept = RunVerdict::Kept::LastStep;
        v.keptStep = lastStep;
        v.keptText = QString("the %1 folds' networks averaged, blended %2 : %3 with %4 fitted on "
                             "every row")
                         .arg(settled.folds)
                         .arg(QString::number(settled.averagedShare, 'f', 2),
                              QString::number(1 - settled.averagedShare, 'f', 2), simpler);
        v.comparison = QString("cross-validated loss %1 (%2 for the networks, %3 for %4) on %5 "
                               "rows, each held out once")
                           .arg(QString::number(settled.valLoss, 'g', 4),
                                QString::number(settled.networkLoss, 'g', 4),
                                QString::number(settled.simplerLoss, 'g', 4), simpler)
                           .arg(static_cast<qlonglong>(settled.rows));
        return v;
    }
    if (settled.replaced) {
        v.kept = RunVerdict::Kept::LinearStart;
        v.keptStep = 0;
        v.keptText = "the " + simpler + " model, fitted on every row";
        if (settled.judged)
            v.comparison = QString("in cross-validation the network did not beat it by more than "
                                   "%1 standard errors ")
                               .arg(settled.margin) +
                           lossFigures(settled);
        return v;
    }
    v.kept = RunVerdict::Kept::LastStep;
    v.keptStep = lastStep;
    v.keptText = QString("the network trained on every row for %1 steps, the folds' median best")
                     .arg(static_cast<qlonglong>(settled.refitSteps));
    if (settled.judged)
        v.comparison =
            "in cross-validation it beats " + simpler + " on the loss " + lossFigures(settled);
    else if (!std::isnan(settled.simplerLoss))
        v.comparison = "cross-validated loss " + lossFigures(settled) + " against " + simpler;
    // What the folds measured on rows they had not seen: "its accuracy there 96.67% ± 1.5%".
    if (std::isfinite(settled.foldMetric)) {
        const double scale = classes ? 100 : 1;
        const QString unit = classes ? "%" : "";
        v.comparison += QString("%1its %2 on the rows the folds held out %3%4 ± %5%6")
                            .arg(v.comparison.isEmpty() ? "" : "; ", classes ? "accuracy" : "RMSE")
                            .arg(settled.foldMetric * scale, 0, 'g', 4)
                            .arg(unit)
                            .arg(settled.foldMetricError * scale, 0, 'g', 2)
                            .arg(unit);
    }
    return v;
}

} // namespace

QString RunVerdict::sentence() const
{
    if (!valid()) return {};
    return "Kept " + keptText + (comparison.isEmpty() ? QString() : ": " + comparison) + ".";
}

QString RunVerdict::label() const
{
    // One word: the legend of a 1024-pixel-wide window has room for little more beside
    // "training" and "validation"; the mark's place says the step, its tooltip the sentence.
    return kept == Kept::None ? QString() : QStringLiteral("kept");
}

RunVerdict tableVerdict(const Settled& settled, int64_t restoredStep, int64_t lastStep,
                        const QJsonObject& values)
{
    RunVerdict v;
    v.lastStep = lastStep;
    const QJsonObject b = values["baselines"].toObject();
    const bool cls = b.contains("majority_class") || values.contains("accuracy");
    const QString linear = cls ? "logistic regression" : "linear regression";
    if (settled.folds > 0) return crossValidatedVerdict(settled, lastStep, linear, cls);
    if (settled.replaced) {
        // The network went back to the linear model it started as: equal by construction.
        v.kept = RunVerdict::Kept::LinearStart;
        v.keptStep = 0;
        v.keptText = "the linear start, the " +
                     (settled.simplerName.isEmpty() ? linear : settled.simplerName) + " model";
        if (settled.judged)
            v.comparison = QString("the hidden layers did not beat it on the validation loss by "
                                   "more than %1 standard errors ")
                               .arg(settled.margin) +
                           lossFigures(settled);
        return v;
    }
    if (restoredStep >= 0 && restoredStep < lastStep) {
        v.kept = RunVerdict::Kept::BestWeights;
        v.keptStep = restoredStep;
        v.keptText = QString("the network of step %1, its lowest validation loss")
                         .arg(static_cast<qlonglong>(restoredStep));
    } else {
        v.kept = RunVerdict::Kept::LastStep;
        v.keptStep = lastStep;
        v.keptText =
            QString("the network of step %1, the run's last").arg(static_cast<qlonglong>(lastStep));
    }
    const QString all = versusLinearModel(b, values);
    if (all.isEmpty()) return v; // no linear model to compare with
    const QString worse = versusLinearModel(b, values, true);
    if (settled.judged) {
        // The settle kept the network because its validation loss beats the linear model's by
        // more than the noise: that is the verdict; a measure it loses on is said with it.
        v.comparison =
            "it beats " + settled.simplerName + " on the validation loss " + lossFigures(settled);
        if (!worse.isEmpty()) v.comparison += " but not on " + worse;
        return v;
    }
    if (b["network_is_linear_model"].toBool(false)) {
        v.comparison =
            "it is the " + linear + " model (its hidden layers' output weights are zero)";
        return v;
    }
    if (!worse.isEmpty()) {
        v.fallsShort = true;
        v.comparison = "it does not beat " + linear + " here: " + worse;
        return v;
    }
    // Nowhere worse: better somewhere, or equal (the same predictions on every row).
    const QJsonObject l = b[cls ? "logistic_regression" : "linear_regression"].toObject();
    auto num = [](const QJsonObject& o, const char* key) { return o[key].toDouble(NAN); };
    const bool better = cls ? num(values, "accuracy") > num(l, "accuracy") ||
                                  num(values, "balanced_accuracy") > num(l, "balanced_accuracy")
                            : num(values, "mse") < num(l, "mse");
    v.comparison = (better ? "it beats " : "it does as well as ") + linear + " here: " + all;
    return v;
}

QJsonObject verdictRecordToJson(const VerdictRecord& r)
{
    const Settled& s = r.settled;
    const QJsonObject settled{{"replaced", s.replaced},
                              {"note", s.note},
                              {"train_loss", io::doubleToJson(s.trainLoss)},
                              {"val_loss", io::doubleToJson(s.valLoss)},
                              {"judged", s.judged},
                              {"network_loss", io::doubleToJson(s.networkLoss)},
                              {"simpler_loss", io::doubleToJson(s.simplerLoss)},
                              {"std_error", io::doubleToJson(s.stdError)},
                              {"margin", io::doubleToJson(s.margin)},
                              {"rows", static_cast<qint64>(s.rows)},
                              {"simpler_name", s.simplerName},
                              {"folds", s.folds},
                              {"refit_steps", static_cast<qint64>(s.refitSteps)},
                              {"fold_metric", io::doubleToJson(s.foldMetric)},
                              {"fold_metric_error", io::doubleToJson(s.foldMetricError)},
                              {"averaged_share", io::doubleToJson(s.averagedShare)}};
    return {{"settled", settled},
            {"restored_step", static_cast<qint64>(r.restoredStep)},
            {"last_step", static_cast<qint64>(r.lastStep)},
            {"ending", r.ending}};
}

bool verdictRecordFromJson(const QJsonValue& json, VerdictRecord& record)
{
    const QJsonObject o = json.toObject();
    const QJsonObject s = o.value("settled").toObject();
    VerdictRecord r;
    Settled& st = r.settled;
    const auto integer = [](const QJsonValue& v, int64_t& out) {
        if (!v.isDouble()) return false;
        out = v.toInteger(-2);
        return out >= -1;
    };
    int64_t folds = 0;
    bool ok = s.value("replaced").isBool() && s.value("judged").isBool() &&
              integer(o.value("restored_step"), r.restoredStep) &&
              integer(o.value("last_step"), r.lastStep) && r.lastStep >= 0 &&
              integer(s.value("rows"), st.rows) && integer(s.value("folds"), folds) &&
              integer(s.value("refit_steps"), st.refitSteps) &&
              io::doubleFromJson(s.value("train_loss"), st.trainLoss) &&
              io::doubleFromJson(s.value("val_loss"), st.valLoss) &&
              io::doubleFromJson(s.value("network_loss"), st.networkLoss) &&
              io::doubleFromJson(s.value("simpler_loss"), st.simplerLoss) &&
              io::doubleFromJson(s.value("std_error"), st.stdError) &&
              io::doubleFromJson(s.value("margin"), st.margin) &&
              io::doubleFromJson(s.value("fold_metric"), st.foldMetric) &&
              io::doubleFromJson(s.value("fold_metric_error"), st.foldMetricError) && folds >= 0 &&
              folds <= 1000;
    // Files written before the averaged folds have no share: not averaged.
    if (ok && s.contains("averaged_share"))
        ok = io::doubleFromJson(s.value("averaged_share"), st.averagedShare) &&
             (std::isnan(st.averagedShare) || (st.averagedShare >= 0 && st.averagedShare <= 1));
    if (!ok) return false;
    st.replaced = s.value("replaced").toBool();
    st.judged = s.value("judged").toBool();
    st.folds = static_cast<int>(folds);
    st.note = s.value("note").toString();
    st.simplerName = s.value("simpler_name").toString();
    r.ending = o.value("ending").toString();
    record = std::move(r);
    return true;
}

} // namespace il::tasks
