// TabularTask: tables behind the Task interface.
#include "TabularTask.h"

#include <QFileInfo>

#include <cmath>

namespace il::tasks {

namespace {

class TabularTask final : public Task {
public:
    TabularTask(QString path, TabularDataset ds, bool forEvaluation)
        : m_path(std::move(path)), m_ds(std::move(ds)), m_forEvaluation(forEvaluation)
    {
        const TabularSchema& s = m_ds.schema;
        m_data.inputWidth = s.inputWidth();
        m_data.outputWidth = s.outputWidth();
        m_data.targetWidth = s.loss() == LossKind::CrossEntropy ? 1 : s.outputWidth();
        m_data.trainRows = m_ds.train.rows;
        m_data.valRows = m_ds.val.rows;
        m_data.trainX = m_ds.train.x;
        m_data.trainY = m_ds.train.y;
        m_data.valX = m_ds.val.x;
        m_data.valY = m_ds.val.y;
    }

    QString kind() const override { return "tabular"; }
    QString description() const override
    {
        const TabularSchema& s = m_ds.schema;
        QString d = QString("%1: %2 rows, %3 features -> %4 (%5")
                        .arg(m_path)
                        .arg(m_ds.train.rows + m_ds.val.rows)
                        .arg(s.inputWidth())
                        .arg(s.target, s.kindName());
        if (s.isClassification())
            d += QString(", %1 classes").arg(s.classes.size());
        d += ")";
        if (m_ds.val.rows > 0)
            d += QString(", %1 held out for validation").arg(m_ds.val.rows);
        return d;
    }
    QStringList notes() const override
    {
        return m_ds.note.isEmpty() ? QStringList{} : QStringList{m_ds.note};
    }
    const TaskData& data() const override { return m_data; }
    LossKind loss() const override { return m_ds.schema.loss(); }
    QStringList presets() const override { return {"mlp", "linear", "deep"}; }
    QString presetSpec(const QString& name) const override
    {
        if (name == "mlp") return "dense:32,tanh,dense:32,tanh,dense";
        if (name == "linear") return "dense";
        if (name == "deep") return "dense:64,relu,dense:64,relu,dense:64,relu,dense";
        return {};
    }
    void applyDefaults(TrainerConfig& cfg) const override
    {
        cfg.loss = loss();
        cfg.schedule.kind = ScheduleKind::Cosine;
        cfg.schedule.lrMax = 0.003f;
        cfg.batchSize = 32;
        // At least 200 epochs and 2000 steps; with a validation split, early stopping after
        // 20 epochs without improvement keeps the best weights (small tables overfit fast).
        const int64_t spe = Trainer::stepsPerEpoch(m_ds.train.rows, 32);
        cfg.epochs = std::max<int64_t>(200, (2000 + spe - 1) / std::max<int64_t>(spe, 1));
        cfg.patience = m_ds.val.rows > 0 ? 20 : 0;
    }
    QJsonObject toJson() const override { return m_ds.schema.toJson(); }

    TaskMetrics evaluate(Network& net) override
    {
        const bool onVal = m_ds.val.rows > 0;
        const TabularSplit& split = onVal ? m_ds.val : m_ds.train;
        const auto outputs = predictRows(net, split.x, split.rows);
        const TabularMetrics m = tabularMetrics(m_ds.schema, outputs, split);
        TaskMetrics out;
        out.values = tabularMetricsJson(m_ds.schema, m, outputs, split);
        out.values["metrics_on"] = m_forEvaluation ? m_path : onVal ? "validation" : "train";
        out.summary = describeTabularMetrics(m, m_forEvaluation ? QFileInfo(m_path).fileName()
                                                : onVal         ? "validation"
                                                                : "training");
        return out;
    }
    double trainingMetric(Network& net) override
    {
        if (!m_ds.schema.isClassification())
            return NAN;
        const TabularSplit& split = m_ds.val.rows > 0 ? m_ds.val : m_ds.train;
        return tabularMetrics(m_ds.schema, predictRows(net, split.x, split.rows), split).accuracy;
    }

    QStringList rowReport(Network& net, int maxRows) override
    {
        const TabularSchema& schema = m_ds.schema;
        const TabularSplit& rows = m_ds.val.rows > 0 ? m_ds.val : m_ds.train;
        QStringList lines;
        if (rows.rows > maxRows || rows.rawTarget.empty())
            return lines;
        const auto outputs = predictRows(net, rows.x, rows.rows);
        const auto pred = tabularPredictions(schema, outputs);
        const auto probs = tabularProbabilities(schema, outputs);
        const QString yes = QString::fromUtf8("\u2713"), no = QString::fromUtf8("\u2717");
        for (int64_t i = 0; i < rows.rows; ++i) {
            const auto r = static_cast<size_t>(i);
            if (schema.kind == TabularKind::Binary && !schema.textClasses) {
                // As Iron Learn printed it: the probability of the second class vs the label.
                const bool right = static_cast<size_t>(pred[r]) == static_cast<size_t>(rows.y[r]);
                lines << QString("Predicted: %1, Actual: %2, %3")
                             .arg(probs[r * 2 + 1], 0, 'f', 4)
                             .arg(static_cast<double>(rows.rawTarget[r]), 0, 'f', 4)
                             .arg(right ? yes : no);
            } else if (schema.isClassification()) {
                const auto k = static_cast<size_t>(schema.classes.size());
                const auto cls = static_cast<size_t>(pred[r]);
                const auto actual = static_cast<size_t>(rows.y[r]);
                lines << QString("Predicted: %1 (p=%2), Actual: %3, %4")
                             .arg(schema.classes[static_cast<int>(cls)])
                             .arg(probs[r * k + cls], 0, 'f', 4)
                             .arg(schema.classes[static_cast<int>(actual)])
                             .arg(cls == actual ? yes : no);
            } else {
                const double actual = rows.rawTarget[r];
                const bool close = std::fabs(pred[r] - actual) <= 0.05 * std::max(1.0, std::fabs(actual));
                lines << QString("Predicted: %1, Actual: %2, %3")
                             .arg(pred[r], 0, 'f', 4)
                             .arg(actual, 0, 'f', 4)
                             .arg(close ? yes : no);
            }
        }
        return lines;
    }

private:
    QString m_path;
    TabularDataset m_ds;
    bool m_forEvaluation = false;
    TaskData m_data;
};

} // namespace

std::unique_ptr<Task> openTabularTask(const QString& path, const QByteArray& bytes,
                                      const TaskOptions& options, const QJsonObject* savedTask,
                                      bool forEvaluation, QString* error)
{
    const io::CsvReadResult csv = io::parseCsv(bytes, path);
    if (!csv.ok) {
        if (error)
            *error = csv.error;
        return nullptr;
    }
    TabularSchema saved;
    TabularOptions topt;
    topt.target = options.target;
    topt.kind = options.kind;
    topt.valSplit = options.valSplit;
    topt.seed = options.seed;
    if (savedTask) {
        if (!TabularSchema::fromJson(*savedTask, saved, error))
            return nullptr;
        topt.fixedSchema = &saved;
        topt.target = saved.target;
        topt.valSplit = forEvaluation ? 0.0 : (options.valSplit >= 0 ? options.valSplit : saved.valSplit);
        if (!forEvaluation && options.valSplit < 0)
            topt.seed = saved.splitSeed;
    }
    TabularDataset ds;
    if (savedTask && forEvaluation) {
        // Every row is measured: encode the whole file with the saved schema as "validation".
        ds.schema = saved;
        if (!encodeTabular(csv.table, saved, ds.val, error))
            return nullptr;
        if (ds.val.rawTarget.empty()) {
            if (error)
                *error = path + ": no target column \"" + saved.target + "\" to compare with";
            return nullptr;
        }
    } else if (!prepareTabular(csv.table, topt, ds, error)) {
        return nullptr;
    }
    return std::make_unique<TabularTask>(path, std::move(ds), forEvaluation);
}

} // namespace il::tasks
