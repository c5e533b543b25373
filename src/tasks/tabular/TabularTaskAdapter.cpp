// TabularTask: tables behind the Task interface.
// The task's type (its presets, metric, help) is TabularTaskType.cpp; the row helpers
// TabularRows.{h,cpp}.
#include "TabularTask.h"

#include "Counting.h"
#include "TabularBaselines.h"
#include "TabularColumns.h"
#include "TabularLosses.h"
#include "TabularRows.h"

#include "Random.h"

#include <QFileInfo>
#include <QJsonArray>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <numeric>

namespace il::tasks {

namespace {

// A run of more epochs than this, without validation rows, gets a runNote.
constexpr int64_t kLongRunEpochs = 200;

// The table defaults (applyDefaults).
constexpr float kTableLr = 0.003f;
constexpr float kTableWeightDecay = 0.3f; // AdamW: each step shrinks every weight by lr * 0.3
constexpr int64_t kTableSteps = 3000;
constexpr int64_t kFullBatchRows = 16384; // training rows up to which a step sees them all
constexpr int64_t kLargeTableBatch = 1024;

class TabularTaskImpl final : public TabularTask {
public:
    // savedBaselines: for evaluation, the baselines the model file holds (null: none; then
    // baselinesMissing says why).
    TabularTaskImpl(QString path, TabularDataset ds, io::CsvTable head, bool forEvaluation,
                    QString evaluatedPart, const TabularBaselines* savedBaselines,
                    QString baselinesMissing)
        : m_path(std::move(path)), m_ds(std::move(ds)), m_head(std::move(head)),
          m_forEvaluation(forEvaluation), m_evaluatedPart(std::move(evaluatedPart)),
          m_baselinesMissing(std::move(baselinesMissing))
    {
        if (savedBaselines) m_baselines = *savedBaselines;
        const TabularSchema& s = m_ds.schema;
        m_data.inputWidth = s.inputWidth();
        m_data.outputWidth = s.outputWidth();
        m_data.targetWidth = s.targetWidth();
        m_data.trainRows = m_ds.train.rows;
        m_data.valRows = m_ds.val.rows;
        // The inputs move to the engine's side (they are most of the memory); the splits
        // keep their targets for the metrics.
        m_data.trainX = std::move(m_ds.train.x);
        m_data.valX = std::move(m_ds.val.x);
        m_data.trainY = m_ds.train.y;
        m_data.valY = m_ds.val.y;
    }

    const TaskType& type() const override { return tabularTaskType(); }
    const TabularSchema& schema() const override { return m_ds.schema; }
    const io::CsvTable& head() const override { return m_head; }
    QString description() const override
    {
        const TabularSchema& s = m_ds.schema;
        const int64_t rows = m_ds.train.rows + m_ds.val.rows + m_ds.test.rows;
        QString d = QString("%1: %2, %3")
                        .arg(m_path, countOf(rows, "row"), countOf(s.features.size(), "feature"));
        if (s.inputWidth() != s.features.size())
            d += QString(" (%1 after one-hot encoding)").arg(countOf(s.inputWidth(), "input"));
        d += " -> " + s.targets.join(", ") + " (" + s.kindName();
        if (s.isClassification()) d += ", " + countOf(s.classes.size(), "class");
        d += ")";
        if (m_ds.val.rows > 0) d += QString(", %1 held out for validation").arg(m_ds.val.rows);
        if (folds() > 0)
            d += QString(", %1-fold cross-validation (each row held out once)").arg(folds());
        if (m_ds.test.rows > 0) d += QString(", %1 for testing").arg(m_ds.test.rows);
        return d;
    }
    QStringList notes() const override { return m_ds.notes; }
    QString outputsMeaning() const override
    {
        const TabularSchema& s = m_ds.schema;
        if (!s.isClassification())
            return s.targets.size() == 1 ? "the predicted " + s.target
                                         : "one prediction for each of " + s.targets.join(", ");
        if (s.loss() == LossKind::BinaryCrossEntropy && s.classes.size() == 2)
            return QString("the probability that %1 is %2 rather than %3")
                .arg(s.target, s.classes[1], s.classes[0]);
        return QString("one score for each class of %1").arg(s.target);
    }
    const TaskData& data() const override { return m_data; }
    LossKind loss() const override { return m_ds.schema.loss(); }
    bool classWeights(ClassWeighting w, std::vector<float>& out, QString* why) const override
    {
        const TabularSchema& s = m_ds.schema;
        if (w == ClassWeighting::None) return Task::classWeights(w, out, why);
        if (!s.isClassification()) {
            if (why)
                *why = "class weighting is for classification tables, and \"" + s.target +
                       "\" is a regression target";
            return false;
        }
        // Rows per class among the training rows: y is 0/1 (binary) or the class id.
        const bool binary = s.loss() == LossKind::BinaryCrossEntropy;
        std::vector<int64_t> counts(binary ? 2 : static_cast<size_t>(m_data.outputWidth), 0);
        for (float y : m_ds.train.y) {
            const auto c = static_cast<size_t>(binary ? (y > 0.5f ? 1 : 0) : y);
            if (c < counts.size()) ++counts[c];
        }
        out = balancedClassWeights(counts);
        return true;
    }
    void applyDefaults(TrainerConfig& cfg) const override
    {
        // Chosen on a corpus of 12 public tables of 150 to 20,190 rows, none of them our
        // samples (packaging/bench/table_corpus.sh; docs/table-corpus.md): full-batch
        // AdamW with a strong decoupled weight decay, 3000 steps of a cosine schedule and a
        // patience of a tenth of them had the lowest test error relative to scikit-learn's
        // best MLP (geometric mean 0.94x; minibatches of 32 with Adam, the earlier default,
        // 1.07x) and lost to the linear model on the fewest tables. Minibatches of 32 overfit
        // small tables within a few hundred epochs, and every epoch of a full batch is one
        // step, so early stopping counts steps.
        cfg.loss = loss();
        cfg.schedule.kind = ScheduleKind::Cosine;
        cfg.schedule.lrMax = kTableLr;
        cfg.optimizer = OptimizerConfig::named("adamw");
        cfg.optimizer.set("weight_decay", kTableWeightDecay);
        const int64_t rows = std::max<int64_t>(m_ds.train.rows, 1);
        // Cross-validated: the folds hold rows out (the task itself validates on none).
        const bool hasVal = m_ds.val.rows > 0 || m_ds.schema.folds > 0;
        if (rows <= kFullBatchRows) {
            cfg.batchSize = 0; // every training row in each step
            cfg.epochs = kTableSteps;
            cfg.evalEvery = 0; // each epoch: each step
            cfg.patience = hasVal ? kTableSteps / 10 : 0;
        } else {
            // Larger tables (beyond the corpus): minibatches, the same steps and patience.
            cfg.batchSize = kLargeTableBatch;
            const int64_t spe = Trainer::stepsPerEpoch(rows, kLargeTableBatch);
            cfg.epochs = std::max<int64_t>(1, (kTableSteps + spe - 1) / spe);
            cfg.evalEvery = 10;
            cfg.patience = hasVal ? kTableSteps / 10 / 10 : 0;
        }
    }
    // A stack ending in dense, skip starts as the linear baseline fitted on the training rows:
    // the run begins where least squares or logistic regression ends, and early stopping keeps
    // it there unless the hidden layers improve on it on the validation rows.
    void warmStart(Network& net) const override
    {
        LinearPart linear; // (none for evaluation: simplerLinear)
        if (!net.layers().empty() && net.layers().back()->kind() == "skip" &&
            simplerLinear(net.inputWidth(), net.outputWidth(), linear))
            net.startAsLinearMap(linear.weights, linear.bias);
    }
    bool simplerLinear(int64_t inputs, int64_t outputs, LinearPart& out) const override
    {
        return !m_forEvaluation && linearPartOf(baselines().linear, inputs, outputs, out);
    }
    bool rowErrors(Network& net, std::vector<double>& network,
                   std::vector<double>& simpler) override
    {
        const int64_t rows = m_ds.val.rows;
        const bool regression = !m_forEvaluation && m_ds.schema.kind == TabularKind::Regression;
        LinearPart fits;
        network = regression ? tabularErrors(predictRows(net, m_data.valX, rows), m_ds.val.y)
                             : std::vector<double>{};
        simpler = regression && simplerLinear(net.inputWidth(), net.outputWidth(), fits)
                      ? tabularErrors(baselines().linear.apply(m_data.valX, rows), m_ds.val.y)
                      : std::vector<double>{};
        return regression && network.size() == m_ds.val.y.size();
    }
    bool canSettle(const Network& net) const override
    {
        if (m_forEvaluation || net.layers().empty() || net.layers().back()->kind() != "skip")
            return false;
        const LinearMap& linear = baselines().linear;
        return linear.fitted() && linear.inputs == net.inputWidth() &&
               linear.outputs == net.outputWidth();
    }
    void rowLosses(Network& net, const std::vector<float>& classWeights,
                   std::vector<double>& network, std::vector<double>& simpler,
                   QString* simplerName) override
    {
        const TabularSchema& s = m_ds.schema;
        const int64_t rows = m_ds.val.rows;
        network = tabularRowLosses(s, predictRows(net, m_data.valX, rows), m_ds.val.y, rows,
                                   classWeights);
        simpler.clear();
        if (simplerName) simplerName->clear();
        const LinearMap& linear = baselines().linear;
        if (m_forEvaluation || !linear.fitted() || linear.inputs != net.inputWidth() ||
            linear.outputs != net.outputWidth())
            return;
        simpler =
            tabularRowLosses(s, linear.apply(m_data.valX, rows), m_ds.val.y, rows, classWeights);
        if (simplerName)
            *simplerName = s.isClassification() ? "logistic regression" : "least squares";
    }
    int folds() const override { return m_forEvaluation ? 0 : m_ds.schema.folds; }
    bool averagesFolds() const override
    {
        return folds() > 0 && m_ds.schema.kind == TabularKind::Regression;
    }
    // A cross-validated regression table (by default one under kCrossValidateBelowRows rows):
    // the folds' networks averaged (docs/cross-validation.md); otherwise the wide stack.
    QString defaultPreset() const override { return averagesFolds() ? "ensemble" : "wide"; }
    std::unique_ptr<Task> foldTask(int fold) const override
    {
        const int k = folds();
        if (k < 2 || fold < 0 || fold >= k) return nullptr;
        const TabularSchema& s = m_ds.schema;
        const auto xw = static_cast<size_t>(s.inputWidth());
        const auto yw = static_cast<size_t>(s.targetWidth());
        const std::vector<int> which = tabular::assignFolds(s, m_ds.train.y, m_ds.train.rows, k);
        std::vector<size_t> trainRows, heldOut;
        for (size_t i = 0; i < which.size(); ++i)
            (which[i] == fold ? heldOut : trainRows).push_back(i);
        TabularDataset ds;
        ds.schema = s;
        ds.schema.folds = 0;
        ds.train = tabular::pickRows(m_ds.train, m_data.trainX, trainRows, xw, yw);
        ds.val = tabular::pickRows(m_ds.train, m_data.trainX, heldOut, xw, yw);
        return std::make_unique<TabularTaskImpl>(m_path, std::move(ds), m_head, false, QString(),
                                                 nullptr, QString());
    }
    Settled settle(Network& net, const TrainerConfig& cfg) override
    {
        const int64_t rows = m_ds.val.rows;
        if (rows < kMinSettleRows || !canSettle(net)) return {};
        const TabularSchema& s = m_ds.schema;
        const std::vector<float>& w = cfg.classWeights;
        std::vector<double> networkLosses, linearLosses;
        QString model;
        rowLosses(net, w, networkLosses, linearLosses, &model);
        const PairedLosses p = comparePaired(networkLosses, linearLosses);
        // "on the 88 validation rows (loss 0.5567 vs 0.5572 for least squares: -0.0005, with a
        // standard error of 0.0014)"
        const QString numbers =
            QString("on the %1 validation rows (loss %2 vs %3 for %4: %5, with a standard error "
                    "of %6)")
                .arg(rows)
                .arg(p.meanA, 0, 'g', 4)
                .arg(p.meanB, 0, 'g', 4)
                .arg(model)
                .arg(p.meanDiff, 0, 'g', 2)
                .arg(p.stdError, 0, 'g', 2);
        Settled out;
        out.judged = true;
        out.networkLoss = p.meanA;
        out.simplerLoss = p.meanB;
        out.stdError = p.stdError;
        out.margin = kSettleMargin;
        out.rows = rows;
        out.simplerName = model;
        if (p.meanDiff < -kSettleMargin * p.stdError) {
            out.note = "the network beats its linear start " + numbers + ", so it is kept";
            return out;
        }
        warmStart(net);
        out.replaced = true;
        out.valLoss = p.meanB;
        const LinearMap& linear = baselines().linear;
        const std::vector<double> train = tabularRowLosses(
            s, linear.apply(m_data.trainX, m_ds.train.rows), m_ds.train.y, m_ds.train.rows, w);
        out.trainLoss = train.empty() ? NAN
                                      : std::accumulate(train.begin(), train.end(), 0.0) /
                                            static_cast<double>(train.size());
        out.note = "the network does not beat its linear start by more than " +
                   QString::number(kSettleMargin, 'g', 2) + " standard errors " + numbers +
                   ": the linear model is kept (the hidden layers' output weights are zero); "
                   "nothing here shows a network learns more than " +
                   model;
        return out;
    }
    // The schema, and the baselines' coefficients so `evaluate` can measure them on other rows.
    QJsonObject toJson() const override
    {
        QJsonObject o = m_ds.schema.toJson();
        if (baselines().available()) o["baselines"] = baselines().toJson();
        return o;
    }

    TaskMetrics evaluate(Network& net) override
    {
        const bool onVal = m_ds.val.rows > 0;
        const TabularSplit& split = onVal ? m_ds.val : m_ds.train;
        const auto outputs = predictRows(net, inputsOf(split), split.rows);
        const TabularMetrics m = tabularMetrics(m_ds.schema, outputs, split);
        TaskMetrics out;
        out.values = tabularMetricsJson(m_ds.schema, m, outputs, split);
        out.values["metrics_on"] = m_forEvaluation ? m_path : onVal ? "validation" : "train";
        const QString where = m_forEvaluation ? QFileInfo(m_path).fileName() + m_evaluatedPart
                              : onVal         ? "validation"
                                              : "training";
        out.summary = describeTabularMetrics(m, where);
        const bool linearModel = atLinearStart(net);
        addBaselines(out.values, out.summary, inputsOf(split), split, m, where, linearModel);
        if (m_ds.test.rows > 0) { // reported apart: the test rows never steer training
            const auto testOut = predictRows(net, m_ds.test.x, m_ds.test.rows);
            const TabularMetrics t = tabularMetrics(m_ds.schema, testOut, m_ds.test);
            QJsonObject test = tabularMetricsJson(m_ds.schema, t, testOut, m_ds.test);
            out.summary += "\n" + describeTabularMetrics(t, "test");
            addBaselines(test, out.summary, m_ds.test.x, m_ds.test, t, "test", linearModel);
            out.values["test"] = test;
        }
        return out;
    }
    // Classification: the accuracy; regression: the RMSE in the file's units (the loss is on
    // normalised targets), both on the validation rows (the training rows without any).
    double trainingMetric(Network& net) override
    {
        const TabularSplit& split = m_ds.val.rows > 0 ? m_ds.val : m_ds.train;
        const TabularMetrics m =
            tabularMetrics(m_ds.schema, predictRows(net, inputsOf(split), split.rows), split);
        return m_ds.schema.isClassification() ? m.accuracy : m.rmse;
    }
    bool metricLowerIsBetter() const override { return !m_ds.schema.isClassification(); }
    // Without validation rows the overfit watch (OverfitWatch.h) has nothing to watch, and a
    // small table trained for long is the run most likely to memorise its rows.
    QString runNote(const TrainerConfig& cfg) const override
    {
        // A table too small for the default split (xor's 4 rows) has nothing to hold out.
        if (m_ds.val.rows > 0 || m_ds.schema.folds > 0 || m_ds.train.rows < kMinRowsForValidation)
            return {};
        const int64_t spe = Trainer::stepsPerEpoch(m_ds.train.rows, cfg.batchSize);
        const int64_t epochs =
            cfg.epochs > 0 ? cfg.epochs : (cfg.steps > 0 && spe > 0 ? cfg.steps / spe : 0);
        if (epochs <= kLongRunEpochs) return {};
        return QString("no validation rows, so nothing can tell whether %1 epochs over %2 "
                       "overfit; a validation split (0.2, say) would show it, and early stopping "
                       "would keep the best weights")
            .arg(epochs)
            .arg(countOf(m_ds.train.rows, "row"));
    }

    Predictions predictions(Network& net, int maxRows) override;
    QStringList rowReport(Network& net, int maxRows) override
    {
        const TabularSchema& schema = m_ds.schema;
        const TabularSplit& rows = m_ds.val.rows > 0 ? m_ds.val : m_ds.train;
        QStringList lines;
        if (rows.rows > maxRows || rows.rawTarget.empty()) return lines;
        const auto outputs = predictRows(net, inputsOf(rows), rows.rows);
        const auto pred = tabularPredictions(schema, outputs);
        const auto probs = tabularProbabilities(schema, outputs);
        const QString yes = QString::fromUtf8("\u2713"), no = QString::fromUtf8("\u2717");
        const auto t = static_cast<size_t>(schema.targetWidth());
        for (size_t r = 0; r < static_cast<size_t>(rows.rows); ++r) {
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
                             .arg(schema.classes[static_cast<qsizetype>(cls)])
                             .arg(probs[r * k + cls], 0, 'f', 4)
                             .arg(schema.classes[static_cast<qsizetype>(actual)])
                             .arg(cls == actual ? yes : no);
            } else {
                QStringList p, a;
                bool close = true;
                for (size_t j = 0; j < t; ++j) {
                    const double actual = rows.rawTarget[r * t + j];
                    p << QString::number(pred[r * t + j], 'f', 4);
                    a << QString::number(actual, 'f', 4);
                    close = close && std::fabs(pred[r * t + j] - actual) <=
                                         0.05 * std::max(1.0, std::fabs(actual));
                }
                const bool several = t > 1;
                lines << QString("Predicted: %1, Actual: %2, %3")
                             .arg(several ? "(" + p.join(", ") + ")" : p.first())
                             .arg(several ? "(" + a.join(", ") + ")" : a.first())
                             .arg(close ? yes : no);
            }
        }
        return lines;
    }

private:
    // Fitted once, on first use (a table's first evaluation or save), on the training rows;
    // for evaluation, the model file's.
    const TabularBaselines& baselines() const
    {
        if (!m_forEvaluation)
            std::call_once(m_baselinesFitted, [this] {
                m_baselines =
                    fitTabularBaselines(m_ds.schema, m_data.trainX, m_ds.train.y, m_ds.train.rows);
            });
        return m_baselines;
    }
    // The "baselines" key of a metrics object and its lines in the summary.
    // linearModel: the network is its linear start (atLinearStart), said in the lines.
    void addBaselines(QJsonObject& values, QString& summary, const std::vector<float>& x,
                      const TabularSplit& rows, const TabularMetrics& network, const QString& where,
                      bool linearModel) const
    {
        const TabularBaselines& b = baselines();
        QJsonObject j = b.available() ? tabularBaselinesJson(m_ds.schema, b, x, rows, network)
                                      : QJsonObject{{"not_available", m_baselinesMissing}};
        if (!b.available() && m_baselinesMissing.isEmpty()) return;
        if (b.available()) j["network_is_linear_model"] = linearModel;
        values["baselines"] = j;
        for (const QString& line : describeTabularBaselines(j, values, where, false))
            summary += "\n" + line;
    }
    // A wide-and-deep network whose output layer's weights are all zero: what it computes is its
    // skip's linear map and the output bias, the linear baseline it started as (or went back to
    // at the end of a run: settle).
    static bool atLinearStart(Network& net)
    {
        const auto& layers = net.layers();
        const size_t n = layers.size();
        if (n < 2 || layers[n - 1]->kind() != "skip" || layers[n - 2]->kind() != "dense" ||
            layers[n - 2]->params().empty())
            return false;
        const std::vector<float> w = net.backend().toHost(layers[n - 2]->params()[0]);
        return std::all_of(w.begin(), w.end(), [](float v) { return v == 0.f; });
    }
    const std::vector<float>& inputsOf(const TabularSplit& split) const
    {
        return &split == &m_ds.train ? m_data.trainX : &split == &m_ds.val ? m_data.valX : split.x;
    }
    // Where row r of split is in the file: its CSV line, or its JSON example's number.
    int64_t lineOf(const TabularSplit& split, size_t r) const
    {
        if (r >= split.source.size()) return 0;
        const int64_t row = split.source[r];
        return m_head.jsonRows ? row + 1 : m_head.lineOf(row);
    }

    QString m_path;
    TabularDataset m_ds;
    io::CsvTable m_head;
    bool m_forEvaluation = false;
    QString m_evaluatedPart; // " (test examples)" when evaluating a JSON file's test rows
    TaskData m_data;
    mutable std::once_flag m_baselinesFitted;
    mutable TabularBaselines m_baselines;
    QString m_baselinesMissing; // evaluation without saved baselines: why
};

Predictions TabularTaskImpl::predictions(Network& net, int maxRows)
{
    const TabularSchema& schema = m_ds.schema;
    const bool onVal = m_ds.val.rows > 0;
    const TabularSplit& split = onVal ? m_ds.val : m_ds.train;
    const auto& y = split.y;
    const int64_t rows = std::min<int64_t>(split.rows, maxRows);
    const auto outputs = predictRows(net, inputsOf(split), rows);
    const auto predicted = tabularPredictions(schema, outputs);
    Predictions out;
    out.where = onVal ? "validation" : "training";
    out.classification = schema.isClassification();
    if (out.classification) {
        const auto probs = tabularProbabilities(schema, outputs);
        const auto k = static_cast<size_t>(schema.classes.size());
        for (size_t r = 0; r < static_cast<size_t>(rows); ++r) {
            const auto cls = static_cast<size_t>(predicted[r]);
            const auto actual = static_cast<size_t>(y[r]); // the class id
            PredictionRow row;
            row.actual = schema.classes.value(static_cast<int>(actual));
            row.predicted = schema.classes.value(static_cast<int>(cls));
            row.confidence = r * k + cls < probs.size() ? probs[r * k + cls] : NAN;
            row.correct = cls == actual ? 1 : 0;
            row.line = lineOf(split, r);
            out.rows.push_back(row);
        }
        return out;
    }
    // The first target; y is normalised: value = y * scale + offset.
    const auto targets = static_cast<size_t>(std::max<int64_t>(schema.targetWidth(), 1));
    const double scale = schema.targetScale.empty() ? 1.0 : schema.targetScale[0];
    const double offset = schema.targetOffset.empty() ? 0.0 : schema.targetOffset[0];
    for (size_t r = 0; r < static_cast<size_t>(rows); ++r) {
        const double actual = y[r * targets] * scale + offset;
        const double value = predicted[r * targets];
        PredictionRow row;
        row.actual = QString::number(actual, 'g', 6);
        row.predicted = QString::number(value, 'g', 6);
        row.error = value - actual;
        row.line = lineOf(split, r);
        out.rows.push_back(row);
    }
    return out;
}

} // namespace

namespace {

TabularOptions tabularOptionsOf(const TaskOptions& options)
{
    TabularOptions topt;
    topt.target = options.target;
    topt.features = options.features;
    topt.ignore = options.ignore;
    topt.kind = options.kind;
    topt.normalisation = options.normalisation;
    topt.missing = options.missing;
    topt.valSplit = options.valSplit;
    topt.folds = options.folds;
    topt.testSplit = options.testSplit;
    topt.seed = options.splitSeedOr(options.seed);
    topt.reader = options.reader;
    return topt;
}

} // namespace

bool findMissingValues(const QString& path, const QByteArray& bytes, const TaskOptions& options,
                       MissingValues& out, QString* error)
{
    io::CsvTable table;
    if (!readTable(path, bytes, table, error)) return false;
    TabularOptions topt = tabularOptionsOf(options);
    topt.missing = "fail"; // every feature the roles choose, before any is left out
    TabularSchema schema;
    tabular::Plan plan;
    if (!tabular::chooseRoles(table, topt, schema, plan, nullptr, error)) return false;
    tabular::countMissing(table, plan.featureCols, plan.fillableCols(schema), plan.targetCols, out);
    return true;
}

std::unique_ptr<Task> openTabularTask(const QString& path, const QByteArray& bytes,
                                      const TaskOptions& options, const QJsonObject* savedTask,
                                      bool forEvaluation, QString* error)
{
    io::CsvTable table;
    if (!readTable(path, bytes, table, error)) return nullptr;
    TabularSchema saved;
    TabularOptions topt = tabularOptionsOf(options);
    if (savedTask) {
        if (!TabularSchema::fromJson(*savedTask, saved, error)) {
            if (error && !options.modelPath.isEmpty()) *error = options.modelPath + ": " + *error;
            return nullptr;
        }
        // Resuming reproduces the saved rows and split unless a new split is asked for.
        topt.fixedSchema = &saved;
        topt.valSplit = options.valSplit >= 0 ? options.valSplit : saved.valSplit;
        topt.testSplit = saved.testSplit;
        if (options.valSplit < 0) topt.seed = saved.splitSeed;
    }
    TabularDataset ds;
    QString part;
    TabularBaselines savedBaselines;
    QString baselinesMissing;
    if (savedTask && forEvaluation) {
        // The baselines of the model's own training rows, saved with it (the rows are not).
        if (!savedTask->contains("baselines"))
            baselinesMissing = "not available: the model file has none (saved by an older "
                               "version); train it again to compare";
        else if (!TabularBaselines::fromJson((*savedTask)["baselines"].toObject(), saved,
                                             savedBaselines, &baselinesMissing))
            baselinesMissing = "not available: " + baselinesMissing;
        // Every row is measured: encode the whole file with the saved schema as "validation".
        ds.schema = saved;
        // The rows the model was trained on were chosen by its policy: filled ("mean") or
        // dropped ("drop", and "ignore" for the rows without a target).
        const QString missing = options.missing == "drop" ? QString("drop")
                                : saved.missing == "mean" ? QString("mean")
                                : saved.missing == "drop" || saved.missing == "ignore"
                                    ? QString("drop")
                                    : QString("fail");
        if (!encodeTabular(table, saved, missing, true, ds.val, &ds.notes, error, options.reader))
            return nullptr;
        if (ds.val.rawTarget.empty()) {
            if (error)
                *error = path + ": no target column \"" + saved.targets.join("\", \"") +
                         "\" to compare with";
            return nullptr;
        }
        if (table.testStart >= 0) { // a JSON dataset: its test rows are what evaluate is for
            ds.val =
                tabular::rowsFrom(ds.val, table.testStart, static_cast<size_t>(saved.inputWidth()),
                                  static_cast<size_t>(saved.targetWidth()));
            part = " (test examples)";
        }
    } else if (!prepareTabular(table, topt, ds, error)) {
        return nullptr;
    } else if (const QString rare =
                   classImbalanceNote(ds.schema, ds.train.y, ds.train.rows, options.reader);
               !rare.isEmpty()) {
        ds.notes << rare;
    }
    ds.notes = table.notes + ds.notes;
    return std::make_unique<TabularTaskImpl>(
        path, std::move(ds), tabular::headOf(std::move(table), kTablePreviewRows), forEvaluation,
        part, savedBaselines.available() ? &savedBaselines : nullptr, baselinesMissing);
}

} // namespace il::tasks
