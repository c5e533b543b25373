// ironlearn-cli evaluate | info | devices | samples
#include "Cli.h"

#include "CsvTable.h"
#include "ModelFile.h"
#include "TabularTask.h"

#include <QDir>
#include <QDirIterator>
#include <QFileInfo>
#include <QJsonDocument>

#include <cmath>
#include <cstdio>

namespace il::cli {

int runEvaluate(const QStringList& args)
{
    QCommandLineParser p;
    p.addPositionalArgument("MODEL", "A model file saved by train.");
    p.addPositionalArgument("DATA", "A CSV table with the model's feature columns and its target.");
    p.addOptions({
        {"metrics-json", "Write the metrics as JSON to this file.", "FILE"},
        {"threads", "CPU threads (default: all cores).", "N"},
        {"backend", "cpu or cuda (default cpu).", "NAME"},
    });
    if (!parseOrHelp(p, args, "evaluate", "MODEL DATA [options]",
                     "Measure a saved model on a data file (every row is used).", 2, 2))
        return ExitOk;
    const QString modelPath = p.positionalArguments()[0];
    const QString given = p.positionalArguments()[1];
    const QString dataPath = resolveDataPath(given);
    auto backend =
        makeBackend(p.value("backend"), static_cast<int>(intOption(p, "threads", 0, 0, 1024)));

    QString error;
    auto model = io::openModel(modelPath, *backend, &error);
    if (!model) throw DataError(error.toStdString());
    tasks::TabularSchema schema;
    if (!tasks::TabularSchema::fromJson(model->info.task, schema, &error))
        throw DataError((modelPath + ": " + error).toStdString());
    const io::CsvReadResult csv = readDataTable(given, dataPath);
    if (!csv.ok) throw DataError(csv.error.toStdString());
    tasks::TabularSplit rows;
    if (!tasks::encodeTabular(csv.table, schema, rows, &error))
        throw DataError(error.toStdString());
    if (rows.rawTarget.empty())
        throw DataError(
            (given + ": no target column \"" + schema.target + "\" to compare with").toStdString());

    const auto outputs = predictHost(*model->network, rows.x, rows.rows);
    const auto metrics = tasks::tabularMetrics(schema, outputs, rows);

    // Loss on this file, in the units the model trained in.
    const LossKind loss = model->info.config.loss;
    const int64_t yCols = loss == LossKind::CrossEntropy ? 1 : model->network->outputWidth();
    Buffer x(backend.get(), rows.x.size()), y(backend.get(), rows.y.size()), scratch;
    backend->upload(x.view(rows.rows, schema.inputWidth()), rows.x.data());
    backend->upload(y.view(rows.rows, yCols), rows.y.data());
    const double fileLoss =
        Trainer::evaluateLoss(*model->network, loss, x.view(rows.rows, schema.inputWidth()),
                              y.view(rows.rows, yCols), scratch);

    // Small files: show every row, as Iron Learn did.
    if (rows.rows <= 20) {
        const auto pred = tasks::tabularPredictions(schema, outputs);
        const auto probs = tasks::tabularProbabilities(schema, outputs);
        for (int64_t i = 0; i < rows.rows; ++i) {
            const auto r = static_cast<size_t>(i);
            if (schema.kind == tasks::TabularKind::Binary && !schema.textClasses) {
                // As Iron Learn printed it: the probability of the second class vs the label.
                const double p1 = probs[r * 2 + 1];
                const bool right = static_cast<size_t>(pred[r]) == static_cast<size_t>(rows.y[r]);
                std::printf("Predicted: %.4f, Actual: %.4f, %s\n", p1,
                            static_cast<double>(rows.rawTarget[r]), right ? "\u2713" : "\u2717");
            } else if (schema.isClassification()) {
                const auto k = static_cast<size_t>(schema.classes.size());
                const auto cls = static_cast<size_t>(pred[r]);
                const auto actual = static_cast<size_t>(rows.y[r]);
                std::printf("Predicted: %s (p=%.4f), Actual: %s, %s\n",
                            schema.classes[static_cast<int>(cls)].toUtf8().constData(),
                            probs[r * k + cls],
                            schema.classes[static_cast<int>(actual)].toUtf8().constData(),
                            cls == actual ? "\u2713" : "\u2717");
            } else {
                const double actual = rows.rawTarget[r];
                const double err = std::fabs(pred[r] - actual);
                const bool close = err <= 0.05 * std::max(1.0, std::fabs(actual));
                std::printf("Predicted: %.4f, Actual: %.4f, %s\n", pred[r], actual,
                            close ? "\u2713" : "\u2717");
            }
        }
    }
    std::printf("loss %s\n%s\n", formatLoss(fileLoss).toUtf8().constData(),
                describeMetrics(metrics, QFileInfo(given).fileName()).toUtf8().constData());

    if (p.isSet("metrics-json")) {
        QJsonObject j = metricsJson(metrics);
        const TrainingState& st = model->info.state;
        j["task"] = "tabular";
        j["steps"] = static_cast<qint64>(st.step);
        j["epochs"] = static_cast<double>(st.epoch);
        j["seconds"] = st.seconds;
        j["train_loss"] = io::doubleToJson(st.history.empty() ? NAN : st.history.back().trainLoss);
        j["val_loss"] = io::doubleToJson(fileLoss);
        j["metrics_on"] = given;
        writeTextFileAtomically(p.value("metrics-json"), QJsonDocument(j).toJson());
    }
    return ExitOk;
}

int runInfo(const QStringList& args)
{
    QCommandLineParser p;
    p.addPositionalArgument("MODEL", "A model file.");
    if (!parseOrHelp(p, args, "info", "MODEL", "Describe a saved model without loading its data.",
                     1, 1))
        return ExitOk;
    const QString path = p.positionalArguments()[0];
    auto backend = createCpuBackend(1);
    QString error;
    auto model = io::openModel(path, *backend, &error); // full open: also validates the tensors
    if (!model) throw DataError(error.toStdString());
    const io::ModelInfo& info = model->info;
    const Network& net = *model->network;
    std::printf("model      %s\n", QFileInfo(path).fileName().toUtf8().constData());
    std::printf("written by %s (format %d)\n", info.createdBy.toUtf8().constData(),
                info.formatVersion);
    const QJsonObject& task = info.task;
    QString taskLine = task["task"].toString();
    if (taskLine == "tabular") {
        tasks::TabularSchema s;
        if (tasks::TabularSchema::fromJson(task, s, nullptr)) {
            taskLine += ": " + s.kindName() + ", " + QString::number(s.features.size()) +
                        " features -> " + s.target;
            if (s.isClassification()) taskLine += " (classes: " + s.classes.join(", ") + ")";
        }
    }
    std::printf("task       %s\n\n", taskLine.toUtf8().constData());
    std::printf("  #  layer                 output     parameters\n");
    std::printf("     input                 %-10s\n",
                QString("n x %1").arg(net.inputWidth()).toUtf8().constData());
    for (const auto& l : net.summary())
        std::printf("%3d  %-20s  %-10s %10lld\n", l.index + 1, l.spec.c_str(),
                    QString("n x %1").arg(l.outputWidth).toUtf8().constData(),
                    static_cast<long long>(l.parameters));
    std::printf("     total                            %10lld\n\n",
                static_cast<long long>(net.parameterCount()));
    const TrainerConfig& c = info.config;
    std::printf("loss       %s%s\n", lossName(c.loss).c_str(),
                c.labelSmoothing > 0
                    ? QString(" (label smoothing %1)").arg(c.labelSmoothing).toUtf8().constData()
                    : "");
    std::printf(
        "optimizer  %s, lr %g, %s schedule, batch %s\n", optimizerName(c.optimizer.kind).c_str(),
        c.schedule.lrMax, scheduleName(c.schedule.kind).c_str(),
        c.batchSize > 0 ? QByteArray::number(static_cast<qlonglong>(c.batchSize)).constData()
                        : "full");
    const TrainingState& st = info.state;
    std::printf("trained    %lld epochs, %lld steps, %s\n", static_cast<long long>(st.epoch),
                static_cast<long long>(st.step), formatDuration(st.seconds).toUtf8().constData());
    const size_t n = st.history.size();
    if (n > 0) {
        std::printf("last losses (step: train / validation)\n");
        for (size_t i = n > 5 ? n - 5 : 0; i < n; ++i)
            std::printf("  %8lld: %s / %s\n", static_cast<long long>(st.history[i].step),
                        formatLoss(st.history[i].trainLoss).toUtf8().constData(),
                        formatLoss(st.history[i].valLoss).toUtf8().constData());
    }
    return ExitOk;
}

int runDevices(const QStringList& args)
{
    QCommandLineParser p;
    if (!parseOrHelp(p, args, "devices", "", "List the devices this build can train on.", 0, 0))
        return ExitOk;
    auto cpu = createCpuBackend(0);
    const DeviceInfo d = cpu->info();
    std::printf("cpu   available    %s\n      %s\n", d.name.c_str(), d.details.c_str());
    std::printf("cuda  unavailable  this build has no CUDA backend module\n");
    return ExitOk;
}

int runSamples(const QStringList& args)
{
    QCommandLineParser p;
    if (!parseOrHelp(p, args, "samples", "", "List the bundled sample datasets.", 0, 0))
        return ExitOk;
    QDirIterator it(":/samples", QDir::Files);
    QStringList names;
    while (it.hasNext())
        names << it.next().mid(QString(":/samples/").size());
    names.sort();
    for (const QString& n : names)
        std::printf(":sample/%s\n", n.toUtf8().constData());
    return ExitOk;
}

} // namespace il::cli
