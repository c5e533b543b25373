// ironlearn-cli train: the header before a run and the report after it.
#include "TrainReport.h"
#include "Cli.h"
#include "DataFileRecord.h"

#include "CrossValidation.h"
#include "Errors.h"
#include "HostCopy.h"
#include "LayerSpec.h"
#include "Model.h"
#include "ModelFile.h"
#include "ModelJson.h"
#include "PresetRecipe.h"
#include "PrintableText.h"
#include "RunDriver.h"
#include "TabularTask.h"
#include "Task.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

namespace il::cli {

namespace {

// --metrics-json's "cross_validation": the folds' figures and what they decided.
QJsonObject crossValidationJson(const tasks::CrossValidation& cv)
{
    QJsonArray steps, kept, network, simpler, metric;
    for (const tasks::FoldRun& r : cv.runs) {
        steps.append(static_cast<qint64>(r.steps));
        kept.append(static_cast<qint64>(r.keptStep));
        network.append(io::doubleToJson(r.networkLoss));
        simpler.append(io::doubleToJson(r.simplerLoss));
        metric.append(io::doubleToJson(r.metric));
    }
    return QJsonObject{
        {"folds", cv.folds},
        {"rows", static_cast<qint64>(cv.rows)},
        {"complete", cv.complete()},
        {"network_loss", io::doubleToJson(cv.networkLoss)},
        {"network_loss_se", io::doubleToJson(cv.networkError)},
        {"simpler_model", cv.simplerName},
        {"simpler_loss", io::doubleToJson(cv.simplerLoss)},
        {"simpler_loss_se", io::doubleToJson(cv.simplerError)},
        {"difference", io::doubleToJson(cv.difference)},
        {"difference_se", io::doubleToJson(cv.differenceError)},
        {"margin_se", io::doubleToJson(cv.margin)},
        {"metric", io::doubleToJson(cv.metric)},
        {"metric_se", io::doubleToJson(cv.metricError)},
        {"kept",
         cv.complete() ? (cv.keepNetwork ? QString("network") : cv.simplerName) : QString()},
        {"refit_steps", static_cast<qint64>(cv.refitSteps)},
        {"seconds", cv.seconds},
        {"fold_steps", steps},
        {"fold_kept_steps", kept},
        {"fold_network_loss", network},
        {"fold_simpler_loss", simpler},
        {"fold_metric", metric},
        {"averaged", cv.averaged},
        {"averaged_layers", QString::fromStdString(cv.averagedSpec)},
        {"share", io::doubleToJson(cv.share)},
        {"blend_loss", io::doubleToJson(cv.blendLoss)},
        {"blend_loss_se", io::doubleToJson(cv.blendError)},
    };
}

} // namespace

// The run's summary on stdout (a failure on stderr), and --metrics-json.
// Long: the printed summary and --metrics-json give the same figures from the same metrics
// and trace; side by side, they stay in step.
void report(const QCommandLineParser& p, const tasks::Model& model, const TrainResult& result,
            const RunTrace& trace, const QString& given, const QString& out)
{
    tasks::Task& task = *model.task;
    const TrainingState& state = model.state;
    const tasks::TaskMetrics metrics = task.evaluate(*model.network);
    const bool failed =
        result.reason == StopReason::NonFinite || result.reason == StopReason::DeviceFailure;
    std::fprintf(failed ? stderr : stdout, "%s%s\n", failed ? "error: " : "",
                 result.message.c_str());
    if (result.reason == StopReason::DeviceFailure)
        std::fprintf(stderr,
                     "continue on the CPU: ironlearn-cli train %s --resume %s --backend cpu\n",
                     given.toUtf8().constData(), out.toUtf8().constData());
    const TrainerConfig& cfg = model.config;
    if (!trace.cv || !trace.cv->averaged) { // averaged folds: nothing trained on every row
        std::printf("trained %lld steps in %s (%.1f steps/s); %lld epochs in total\n",
                    static_cast<long long>(result.steps),
                    formatDuration(result.seconds).toUtf8().constData(),
                    result.seconds > 0 ? static_cast<double>(result.steps) / result.seconds : 0.0,
                    static_cast<long long>(state.epoch));
        if (!std::isnan(result.trainLoss) || !trace.cv)
            std::printf("train loss %s", formatLoss(result.trainLoss).toUtf8().constData());
        if (task.data().valRows > 0)
            std::printf(", validation loss %s", formatLoss(result.valLoss).toUtf8().constData());
        if (cfg.classWeighting != ClassWeighting::None) // both losses are the weighted ones
            std::printf(" (class-weighted, %s)", classWeightingName(cfg.classWeighting).c_str());
        std::printf("\n");
    }
    if (!trace.settled.note.isEmpty())
        std::printf("%s\n", printableLines(trace.settled.note).toUtf8().constData());
    if (trace.cv && trace.cv->complete()) {
        const tasks::CrossValidation& cv = *trace.cv;
        const bool cls = metrics.values.contains("accuracy");
        if (!std::isnan(cv.metric))
            std::printf("cross-validated %s over the %d folds: %s ± %s\n",
                        cls ? "accuracy" : "RMSE (the file's units)", cv.folds,
                        QString::number(cls ? 100 * cv.metric : cv.metric, 'g', 4)
                            .append(cls ? "%" : "")
                            .toUtf8()
                            .constData(),
                        QString::number(cls ? 100 * cv.metricError : cv.metricError, 'g', 2)
                            .append(cls ? "%" : "")
                            .toUtf8()
                            .constData());
        std::printf("cross-validation took %s s (%d folds); the figures below are on the rows "
                    "the final model trained on\n",
                    QString::number(cv.seconds, 'f', cv.seconds < 10 ? 2 : 1).toUtf8().constData(),
                    cv.folds);
    }
    std::printf("%s\n", printableLines(metrics.summary).toUtf8().constData()); // labels: escaped
    if (trace.key == "innovation_rate" && trace.points.size() >= 2) {
        // Up to 8 evaluations, evenly spread, the last included: a falling rate is memorising.
        QStringList at;
        const size_t n = trace.points.size(), shown = std::min<size_t>(n, 8);
        for (size_t i = 0; i < shown; ++i) {
            const auto& [step, v] = trace.points[(n - 1) * i / (shown - 1)];
            at << QString("step %1 %2%").arg(step).arg(100 * v, 0, 'f', 1);
        }
        std::printf("innovation rate during training (200 names at T = 1): %s\n",
                    at.join(", ").toUtf8().constData());
    }
    std::printf("saved model to %s\n", out.toUtf8().constData());

    if (p.isSet("metrics-json")) {
        QJsonObject j = metrics.values;
        j["task"] = task.kind();
        j["steps"] = static_cast<qint64>(state.step);
        j["epochs"] = static_cast<double>(state.epoch);
        j["seconds"] = state.seconds;
        j["train_loss"] = io::doubleToJson(result.trainLoss);
        j["val_loss"] = io::doubleToJson(result.valLoss);
        j["stop_reason"] = QString::fromStdString(stopReasonName(result.reason));
        j["class_weight"] = QString::fromStdString(classWeightingName(cfg.classWeighting));
        QJsonArray weights;
        for (float w : cfg.classWeights)
            weights.append(io::doubleToJson(static_cast<double>(w)));
        if (!weights.isEmpty()) j["class_weights"] = weights;
        // The validation loss rising while the training loss fell (OverfitWatch.h), or null.
        const OverfitSighting& o = result.overfitting;
        j["overfitting"] = o.valid() ? QJsonValue(QJsonObject{
                                           {"since_step", static_cast<qint64>(o.bestStep)},
                                           {"noticed_step", static_cast<qint64>(o.noticedStep)},
                                           {"best_val_loss", io::doubleToJson(o.bestLoss)},
                                           {"val_loss", io::doubleToJson(o.valLoss)},
                                       })
                                     : QJsonValue(QJsonValue::Null);
        if (!trace.key.isEmpty()) {
            QJsonArray points;
            for (const auto& [step, v] : trace.points)
                points.append(QJsonObject{{"step", static_cast<qint64>(step)},
                                          {trace.key, io::doubleToJson(v)}});
            j[trace.key + "_history"] = points;
        }
        // Task::settle: whether a wide-and-deep table went back to its linear start, and why.
        if (!trace.settled.note.isEmpty())
            j["settled"] = QJsonObject{{"linear_start_kept", trace.settled.replaced},
                                       {"note", trace.settled.note}};
        if (trace.cv) j["cross_validation"] = crossValidationJson(*trace.cv);
        j["model"] = out;
        writeTextFileAtomically(p.value("metrics-json"), QJsonDocument(j).toJson());
    }
}

// What is about to train, on stderr: the data, its notes, the network and where it runs.
void printHeader(const tasks::Model& model)
{
    // Both may quote the data (column names, labels): shown escaped.
    std::fprintf(stderr, "%s\n", io::printable(model.task->description()).toUtf8().constData());
    for (const QString& note : model.task->notes())
        std::fprintf(stderr, "note: %s\n", io::printable(note).toUtf8().constData());
    if (const QString note = model.task->runNote(model.config); !note.isEmpty())
        std::fprintf(stderr, "note: %s\n", io::printable(note).toUtf8().constData());
    std::fprintf(
        stderr, "network: %s (%lld parameters), %s, lr %g %s, on %s\n",
        model.network->spec().c_str(), static_cast<long long>(model.network->parameterCount()),
        model.config.optimizer.name().c_str(), model.config.schedule.lrMax,
        scheduleName(model.config.schedule.kind).c_str(), model.backend->info().details.c_str());
    const TrainerConfig& c = model.config;
    if (c.classWeighting != ClassWeighting::None) {
        // Named by the table's class labels where the task has them (escaped: from the file).
        const QStringList labels = model.task->classLabels();
        QStringList weights;
        for (size_t i = 0; i < c.classWeights.size(); ++i)
            weights << QString("%1: %2")
                           .arg(i < size_t(labels.size()) ? io::printable(labels[int(i)])
                                                          : QString::number(i))
                           .arg(c.classWeights[i], 0, 'g', 3);
        std::fprintf(stderr, "loss: class-weighted, %s, from the training rows: %s\n",
                     classWeightingName(c.classWeighting).c_str(),
                     weights.join(", ").toUtf8().constData());
    }
}

} // namespace il::cli
