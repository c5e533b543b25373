// ironlearn-cli evaluate | info | devices | samples
#include "BackendRegistry.h"
#include "Cli.h"

#include "CpuKernels.h"
#include "CsvTable.h"
#include "DataFileRecord.h"
#include "ModelFile.h"
#include "PrintableText.h"
#include "Samples.h"
#include "TabularTask.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

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
                     "Measure a saved model on a data file (every row is used).", 2, 2,
                     "An image is compared at the model's training size, reduced to it when "
                     "larger. A side\nwhere the picture is smaller is not enlarged: it stays "
                     "the picture's, and the network\nis drawn at that size over its whole "
                     "field of view (as render draws it). Memory: the\npicture as decoded and "
                     "as compared (at most twice its pixels), plus one band of rows\n(at most "
                     "65,536 pixels) and 11 rows for SSIM; nothing is sized by the model's "
                     "training size.\n"))
        return ExitOk;
    const QString modelPath = p.positionalArguments()[0];
    setCommandSubject(modelPath);
    const QString given = p.positionalArguments()[1];
    const QString dataPath = resolveDataPath(given);
    checkOutputPaths({{"--metrics-json", p.value("metrics-json"), {modelPath, dataPath}}});
    auto backend =
        makeBackend(p.value("backend"), static_cast<int>(intOption(p, "threads", 0, 0, 1024)));

    QString error;
    auto model = io::openModel(modelPath, *backend, &error);
    if (!model) throw DataError(error.toStdString());
    checkSavedTask(modelPath, model->info.task);
    tasks::TaskOptions topt;
    topt.modelPath = modelPath;
    const QByteArray bytes = readDataFile(given);
    auto task = tasks::openTaskForModel(given, bytes, model->info.task, true, topt, &error);
    if (!task) throw DataError(error.toStdString());
    const tasks::TaskData& data = task->data();
    Network& net = *model->network;
    if (net.inputWidth() != data.inputWidth || net.outputWidth() != data.outputWidth)
        throw DataError((given + ": the data does not fit the model").toStdString());

    // Loss over the whole file, in the units the model trained in (an image: a band at a time).
    const double fileLoss = task->validationLoss(net, model->info.config.loss);
    const tasks::TaskMetrics metrics = task->evaluate(net);

    // Small files: every row, as Iron Learn printed them.
    for (const QString& line : task->rowReport(net, 20)) // labels from the files: escaped
        std::printf("%s\n", io::printable(line).toUtf8().constData());
    // The training weights belong to the training rows: the file's loss is the plain one.
    const ClassWeighting weighting = model->info.config.classWeighting;
    const std::string unweighted = weighting == ClassWeighting::None
                                       ? std::string()
                                       : " (not class-weighted; the model trained with " +
                                             classWeightingName(weighting) + " class weights)";
    std::printf("loss %s%s\n%s\n", formatLoss(fileLoss).toUtf8().constData(), unweighted.c_str(),
                printableLines(metrics.summary).toUtf8().constData()); // labels: escaped

    if (p.isSet("metrics-json")) {
        QJsonObject j = metrics.values;
        const TrainingState& st = model->info.state;
        j["task"] = task->kind();
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

namespace {

// The last five evaluations (training and validation loss at the same step). A model the studio
// saved also keeps a training loss for every step between them: those are only shown when the
// run had no validation at all.
void printLastLosses(const TrainingHistory& history)
{
    std::vector<size_t> rows;
    for (size_t i = history.size(); i-- > 0 && rows.size() < 5;)
        if (!std::isnan(history[i].valLoss)) rows.push_back(i);
    const bool validation = !rows.empty();
    for (size_t i = history.size(); !validation && i-- > 0 && rows.size() < 5;)
        rows.push_back(i);
    if (rows.empty()) return;
    std::reverse(rows.begin(), rows.end());
    std::printf(validation ? "last evaluations (step: train / validation)\n"
                           : "last losses (step: train; no validation)\n");
    for (size_t i : rows) {
        // A long run's history holds buckets of evaluations (TrainingHistory.h): their means.
        const HistoryPoint& h = history[i];
        const QString steps =
            h.count > 1 ? QString("%1-%2").arg(h.firstStep).arg(h.step) : QString::number(h.step);
        const QString val = validation ? " / " + formatLoss(h.valLoss) : QString();
        std::printf("  %8s: %s%s%s\n", steps.toUtf8().constData(),
                    formatLoss(h.trainLoss).toUtf8().constData(), val.toUtf8().constData(),
                    h.count > 1 ? " (means)" : "");
    }
}

} // namespace

int runInfo(const QStringList& args)
{
    QCommandLineParser p;
    p.addPositionalArgument("MODEL", "A model file.");
    if (!parseOrHelp(p, args, "info", "MODEL", "Describe a saved model without loading its data.",
                     1, 1))
        return ExitOk;
    const QString path = p.positionalArguments()[0];
    setCommandSubject(path);
    auto backend = createCpuBackend(1);
    QString error;
    auto model = io::openModel(path, *backend, &error); // full open: also validates the tensors
    if (!model) throw DataError(error.toStdString());
    const io::ModelInfo& info = model->info;
    const Network& net = *model->network;
    // The file name and "created_by" are whatever the file's writer put there: printable.
    std::printf("model      %s\n", io::printable(QFileInfo(path).fileName()).toUtf8().constData());
    std::printf("written by %s (format %d)\n",
                io::printable(info.createdBy, 120).toUtf8().constData(), info.formatVersion);
    const QJsonObject& task = info.task;
    const tasks::TaskType* type = tasks::taskTypeOf(task);
    const QString taskLine = type ? type->describeSaved(task) : task["task"].toString();
    std::printf("task       %s\n", io::printable(taskLine).toUtf8().constData());
    if (const auto data = io::DataFileRecord::fromTask(task))
        std::printf("data       %s (%lld bytes, sha256 %s)\n",
                    io::printable(QDir::toNativeSeparators(data->path)).toUtf8().constData(),
                    static_cast<long long>(data->size), data->sha256.left(16).constData());
    std::printf("\n");
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
    std::printf("loss       %s%s%s\n", lossName(c.loss).c_str(),
                c.labelSmoothing > 0
                    ? QString(" (label smoothing %1)").arg(c.labelSmoothing).toUtf8().constData()
                    : "",
                c.classWeighting != ClassWeighting::None
                    ? (", class-weighted (" + classWeightingName(c.classWeighting) + ")").c_str()
                    : "");
    std::printf("optimizer  %s, lr %g, %s schedule, batch %s\n", c.optimizer.name().c_str(),
                c.schedule.lrMax, scheduleName(c.schedule.kind).c_str(),
                c.batchSize > 0
                    ? QByteArray::number(static_cast<qlonglong>(c.batchSize)).constData()
                    : "full");
    for (const ParameterRange& r : net.parameterRanges()) { // groups with their own settings
        const ParameterGroupType* group = findParameterGroup(r.group);
        if (!group) continue;
        const OptimizerConfig own = c.optimizer.forGroup(r.group);
        QStringList settings;
        for (const OptimizerSetting& s : own.type().settings)
            settings << QString("%1 %2").arg(s.key).arg(own.value(s.key));
        std::printf("           %s: lr %g, %s\n", group->label,
                    c.optimizer.groupLr(r.group, c.schedule.lrMax),
                    settings.join(", ").toUtf8().constData());
    }
    const TrainingState& st = info.state;
    std::printf("trained    %lld epochs, %lld steps, %s\n", static_cast<long long>(st.epoch),
                static_cast<long long>(st.step), formatDuration(st.seconds).toUtf8().constData());
    printLastLosses(st.history);
    return ExitOk;
}

int runDevices(const QStringList& args)
{
    QCommandLineParser p;
    p.addOption({"verbose", "Also show where the CUDA module is looked for."});
    p.addOption({"require",
                 "Exit with status 1, the reason on stderr, when this backend cannot be used "
                 "(cuda; cpu always can): for scripts that must not fall back.",
                 "BACKEND"});
    if (!parseOrHelp(p, args, "devices", "[--require cuda]",
                     "List the devices this build can train on, and why CUDA is unavailable "
                     "when it is.",
                     0, 0))
        return ExitOk;
    const QString required = p.value("require").toLower();
    if (p.isSet("require") && required != "cuda" && required != "cpu")
        throw UsageError("--require: unknown backend \"" + p.value("require").toStdString() +
                         "\" (cpu or cuda)");
    auto cpu = createCpuBackend(0);
    const DeviceInfo d = cpu->info();
    std::printf("cpu   available    %s\n      %s\n", d.name.c_str(), d.details.c_str());
    // What the binary needs and what it adds at run time (portable builds: x86-64-v2, i.e.
    // SSE4.2, with the wider kernels chosen when the CPU has them).
    QStringList targets;
    for (const simd::Target& t : simd::availableTargets())
        targets << QString::fromStdString(t.name);
    std::printf("      built for %s; SIMD kernels this CPU runs: %s (the first is used; "
                "IRONLEARN_SIMD picks another)\n",
                std::strlen(IRONLEARN_MARCH) ? IRONLEARN_MARCH : "the compiler's default CPU",
                targets.join(", ").toUtf8().constData());
    const BackendStatus cuda = cudaStatus();
    if (cuda.available)
        std::printf("cuda  available    %s\n", cuda.device.c_str());
    else
        std::printf("cuda  unavailable  %s\n", cuda.reason.c_str());
    if (p.isSet("verbose")) {
        std::printf("CUDA module search path:\n");
        const std::string found = cudaModuleFile();
        for (const std::string& path : cudaModuleSearchPaths())
            std::printf("  %s%s\n", path.c_str(), path == found ? " (found)" : "");
    }
    if (required == "cuda" && !cuda.available) {
        std::fflush(stdout);
        std::fprintf(stderr, "error: CUDA is required but unavailable: %s\n", cuda.reason.c_str());
        return ExitDataError;
    }
    return ExitOk;
}

int runSamples(const QStringList& args)
{
    QCommandLineParser p;
    if (!parseOrHelp(p, args, "samples", "", "List the bundled sample datasets.", 0, 0))
        return ExitOk;
    const QString dir = io::samplesDirectory();
    if (dir.isEmpty()) {
        std::fprintf(stderr, "error: %s\n", io::samplesDirectoryProblem().toUtf8().constData());
        return ExitDataError;
    }
    std::fprintf(stderr, "Samples in %s:\n", dir.toUtf8().constData());
    for (const QString& n : io::sampleFiles())
        std::printf(":sample/%s\n", n.toUtf8().constData());
    return ExitOk;
}

namespace {

const CommandRegistration kEvaluateCommand({20, "evaluate",
                                            " MODEL DATA  measure a saved model on a data file", "",
                                            runEvaluate});
const CommandRegistration
    kInfoCommand({40, "info", " MODEL        describe a saved model: task, layers, training so far",
                  "", runInfo});
const CommandRegistration kDevicesCommand(
    {90, "devices", "           list the CPU and CUDA devices, or why CUDA is unavailable", "",
     runDevices});
const CommandRegistration kSamplesCommand(
    {100, "samples", "           list the bundled sample datasets (use them as :sample/NAME)", "",
     runSamples});

} // namespace

} // namespace il::cli
