#include "RunSettings.h"

#include "Duration.h"
#include "ModelJson.h"
#include "Optimizer.h"

#include <QJsonArray>
#include <QLocale>
#include <QSet>

#include <cmath>

namespace il::app {

namespace {

const QString kNone = QStringLiteral("—");

struct Label {
    const char* key;
    const char* label;
};

// The hyperparameters in the order the Training panel shows them; the optimizer's own settings
// follow the optimizer (their labels come from its registry entry).
constexpr Label kConfigLabels[] = {
    {"optimizer/kind", "Optimizer"},
    {"schedule/lr_max", "Learning rate"},
    {"schedule/kind", "Schedule"},
    {"schedule/lr_min", "Final learning rate"},
    {"schedule/warmup_steps", "Warm-up steps"},
    {"schedule/step_every", "Step the rate every"},
    {"schedule/gamma", "Step factor"},
    {"batch_size", "Batch size"},
    {"epochs", "Epochs"},
    {"steps", "Steps"},
    {"max_seconds", "Time limit (s)"},
    {"shuffle", "Shuffle"},
    {"seed", "Seed"},
    {"loss", "Loss"},
    {"label_smoothing", "Label smoothing"},
    {"class_weight", "Class weights"},
    {"clip_norm", "Gradient clipping"},
    {"patience", "Early stopping patience"},
    {"min_delta", "Early stopping: least gain"},
    {"restore_best", "Restore the best weights"},
    {"target_loss", "Target loss"},
    {"eval_every", "Validate every (steps)"},
};

// The metrics a task's evaluation reports (Task::evaluate's keys) that a learner compares.
struct MetricLabel {
    const char* key;
    const char* label;
    enum { Plain, Percent, Decibel } format;
};
constexpr MetricLabel kMetricLabels[] = {
    {"psnr_db", "PSNR", MetricLabel::Decibel},
    {"ssim", "SSIM", MetricLabel::Plain},
    {"accuracy", "Accuracy", MetricLabel::Percent},
    {"macro_f1", "Macro F1", MetricLabel::Plain},
    {"roc_auc", "ROC AUC", MetricLabel::Plain},
    {"rmse", "RMSE (file units)", MetricLabel::Plain},
    {"mae", "MAE (file units)", MetricLabel::Plain},
    {"r2", "R²", MetricLabel::Plain},
    {"val_cross_entropy", "Validation cross-entropy", MetricLabel::Plain},
    {"val_perplexity", "Perplexity", MetricLabel::Plain},
    {"innovation_rate", "Innovation rate", MetricLabel::Percent},
};
// The first of these a run has is its headline, under a short name (the list's column is narrow).
const Label kHeadlines[] = {{"psnr_db", "PSNR"},
                            {"accuracy", "Accuracy"},
                            {"rmse", "RMSE"},
                            {"val_cross_entropy", "Val. CE"}};

QString number(double v)
{
    if (std::isnan(v)) return kNone;
    if (std::isinf(v)) return v > 0 ? "∞" : "−∞";
    return QString::number(v, 'g', 5);
}

QString metricText(const MetricLabel& m, double v)
{
    if (std::isnan(v)) return kNone;
    switch (m.format) {
    case MetricLabel::Percent:
        return QString::number(100 * v, 'f', 1) + " %";
    case MetricLabel::Decibel:
        return std::isinf(v) ? "∞ dB" : QString::number(v, 'f', 2) + " dB";
    case MetricLabel::Plain:
        break;
    }
    return number(v);
}

double metricValue(const QJsonObject& metrics, const char* key)
{
    double v = NAN;
    if (!io::doubleFromJson(metrics.value(QLatin1String(key)), v)) return NAN;
    return v;
}

// A hyperparameter's value as the Training panel would say it.
QString settingText(const QString& key, const QJsonValue& v)
{
    if (v.isBool()) return v.toBool() ? "yes" : "no";
    if (v.isString()) {
        if (key == "optimizer/kind")
            if (const OptimizerType* t = findOptimizer(v.toString().toStdString())) return t->label;
        return v.toString() == "-Infinity" && key == "target_loss" ? "off" : v.toString();
    }
    if (!v.isDouble()) return kNone;
    const double d = v.toDouble();
    if (d == 0) {
        if (key == "batch_size") return "every row";
        if (key == "epochs" || key == "steps" || key == "max_seconds") return "unused";
        if (key == "clip_norm" || key == "patience") return "off";
        if (key == "eval_every") return "once an epoch";
    }
    return number(d);
}

void flatten(const QJsonObject& o, const QString& prefix,
             QList<std::pair<QString, QJsonValue>>& out)
{
    for (auto it = o.begin(); it != o.end(); ++it) {
        const QString key = prefix.isEmpty() ? it.key() : prefix + '/' + it.key();
        if (it.value().isObject())
            flatten(it.value().toObject(), key, out);
        else
            out.append({key, it.value()});
    }
}

// The label of a flattened hyperparameter key, or "" for one the tables do not know.
QString configLabel(const QString& key, const OptimizerType* optimizer)
{
    for (const Label& l : kConfigLabels)
        if (key == QLatin1String(l.key)) return l.label;
    const QStringList parts = key.split('/');
    auto settingLabel = [optimizer](const QString& k) -> QString {
        const OptimizerSetting* s = optimizer ? optimizer->setting(k.toStdString()) : nullptr;
        return s ? QString(s->label) : k == "lr" ? "learning rate" : k;
    };
    if (parts.size() == 2 && parts[0] == "optimizer") return settingLabel(parts[1]);
    if (parts.size() == 4 && parts[1] == "groups") // optimizer/groups/<group>/<setting>
        return parts[2] + ": " + settingLabel(parts[3]);
    return {};
}

} // namespace

QList<RunRow> configSettings(const TrainerConfig& config)
{
    QList<std::pair<QString, QJsonValue>> flat;
    flatten(io::trainerConfigToJson(config), {}, flat);
    const OptimizerType* optimizer = &config.optimizer.type();
    QList<RunRow> rows;
    QSet<QString> done;
    auto add = [&](const QString& key, const QString& label) {
        for (const auto& [k, v] : flat)
            if (k == key && !done.contains(k)) {
                rows.append({k, label, settingText(k, v)});
                done.insert(k);
            }
    };
    for (const Label& l : kConfigLabels) {
        add(l.key, l.label);
        if (QLatin1String(l.key) == QLatin1String("optimizer/kind"))
            for (const OptimizerSetting& s : optimizer->settings)
                add("optimizer/" + QString(s.key), s.label);
    }
    for (const auto& [k, v] : flat) // parameter groups, and keys newer than the tables
        if (!done.contains(k)) {
            const QString label = configLabel(k, optimizer);
            rows.append({k, label.isEmpty() ? k : label, settingText(k, v)});
        }
    return rows;
}

QList<RunRow> runSettings(const Run& run)
{
    // "4 features -> species" wrapped after its hyphen reads "features -" / "> species".
    const QString data =
        run.dataSummary.isEmpty() ? run.dataName : QString(run.dataSummary).replace(" -> ", " → ");
    QList<RunRow> rows{{"data", "Data", data},
                       {"stack", "Layer stack", QString(run.spec).replace(',', ", ")},
                       {"device", "Device", run.device}};
    rows += configSettings(run.config);
    if (!run.changes.isEmpty())
        rows.append({"changes", "Changed on Continue", run.changes.join("\n")});
    return rows;
}

QList<RunRow> runResults(const Run& run)
{
    const QLocale l;
    const QString steps = l.toString(static_cast<qlonglong>(run.lastStep));
    QList<RunRow> rows{{"steps", "Steps",
                        run.firstStep > 0
                            ? l.toString(static_cast<qlonglong>(run.firstStep)) + " → " + steps
                            : steps},
                       {"time", "Training time",
                        run.seconds < 0.1  ? QString("under 0.1 s")
                        : run.seconds < 60 ? QString::number(run.seconds, 'f', 1) + " s"
                                           : tasks::formatDuration(run.seconds)},
                       {"ending", "Ended", run.running ? "still training" : run.ending},
                       {"train_loss", "Training loss", number(run.trainLoss)},
                       {"val_loss", "Validation loss", number(run.valLoss)}};
    for (const MetricLabel& m : kMetricLabels)
        if (run.metrics.contains(QLatin1String(m.key)))
            rows.append({QString("metric/") + m.key, m.label,
                         metricText(m, metricValue(run.metrics, m.key))});
    return rows;
}

std::vector<RowPair> pairRows(const QList<RunRow>& a, const QList<RunRow>& b)
{
    std::vector<RowPair> out;
    auto find = [](const QList<RunRow>& rows, const QString& key) -> const RunRow* {
        for (const RunRow& r : rows)
            if (r.key == key) return &r;
        return nullptr;
    };
    for (const RunRow& r : a) {
        const RunRow* other = find(b, r.key);
        out.push_back({r.key, r.label, r.value, other ? other->value : kNone, false});
    }
    for (const RunRow& r : b)
        if (!find(a, r.key)) out.push_back({r.key, r.label, kNone, r.value, false});
    for (RowPair& p : out)
        p.differs = p.a != p.b;
    return out;
}

QString runHeadline(const Run& run)
{
    for (const Label& headline : kHeadlines)
        for (const MetricLabel& m : kMetricLabels)
            if (QLatin1String(m.key) == QLatin1String(headline.key) &&
                run.metrics.contains(QLatin1String(m.key))) {
                QString text =
                    QString(headline.label) + ' ' + metricText(m, metricValue(run.metrics, m.key));
                const double innovation = metricValue(run.metrics, "innovation_rate");
                if (!std::isnan(innovation))
                    text += QString(" · %1 % new").arg(100 * innovation, 0, 'f', 0);
                return text;
            }
    if (!std::isnan(run.valLoss)) return "val. loss " + number(run.valLoss);
    if (!std::isnan(run.trainLoss)) return "loss " + number(run.trainLoss);
    return {};
}

QString runSummary(const Run& run)
{
    const TrainerConfig& c = run.config;
    QStringList parts{c.optimizer.type().label, "lr " + number(c.schedule.lrMax),
                      QString::fromStdString(scheduleName(c.schedule.kind)),
                      c.batchSize > 0 ? "batch " + QString::number(c.batchSize) : "full batch",
                      "seed " + QString::number(c.seed)};
    return parts.join(" · ");
}

QString runTitle(const Run& run)
{
    return QString("Run %1").arg(run.number);
}

} // namespace il::app
