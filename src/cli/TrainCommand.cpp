// ironlearn-cli train DATA [options]
#include "Cli.h"

#include "CsvTable.h"
#include "Errors.h"
#include "LayerSpec.h"
#include "ModelFile.h"
#include "TabularTask.h"

#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>

#include <csignal>
#include <cstdio>

namespace il::cli {

namespace {

Trainer* g_activeTrainer = nullptr;

extern "C" void onInterrupt(int)
{
    // First Ctrl+C: stop after the current step and save. Second: default action.
    if (g_activeTrainer) g_activeTrainer->requestCancel();
    std::signal(SIGINT, SIG_DFL);
}

const char* kPresetHelp =
    "Presets for tables (--preset):\n"
    "  linear    dense             linear / logistic regression, as Iron Learn began\n"
    "  mlp       dense:32,tanh,dense:32,tanh,dense      (default)\n"
    "  deep      dense:64,relu,dense:64,relu,dense:64,relu,dense\n";

QString presetSpec(const QString& name)
{
    if (name == "linear") return "dense";
    if (name == "mlp") return "dense:32,tanh,dense:32,tanh,dense";
    if (name == "deep") return "dense:64,relu,dense:64,relu,dense:64,relu,dense";
    throw UsageError("--preset: unknown preset \"" + name.toStdString() + "\" (linear, mlp, deep)");
}

QString taskFromPath(const QString& path)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == "csv" || suffix == "tsv" || suffix == "json") return "tabular";
    if (QStringList{"png", "jpg", "jpeg", "bmp", "gif", "webp"}.contains(suffix)) return "image";
    if (suffix == "txt") return "names";
    return "tabular";
}

} // namespace

int runTrain(const QStringList& args)
{
    QCommandLineParser p;
    p.addPositionalArgument("DATA", "A CSV table (header row; the last column is the target), or "
                                    ":sample/NAME for a bundled sample.");
    p.addOptions({
        {"task", "tabular, image or names (default: from the file type).", "KIND"},
        {"layers", "Layer list, e.g. dense:16,tanh,dense:1 (see below).", "SPEC"},
        {"preset", "Named layer list (see below).", "NAME"},
        {"loss", "mse, mae, bce or cross-entropy (default: from the task).", "LOSS"},
        {"optimizer", "sgd, momentum, adam or adamw (default adam).", "NAME"},
        {"lr", "Learning rate (default 0.003 for tables).", "RATE"},
        {"lr-min", "Final learning rate of the cosine schedule (default 0).", "RATE"},
        {"schedule", "constant, step or cosine (default cosine).", "NAME"},
        {"step-every", "Step decay: multiply the rate by --gamma every N steps.", "N"},
        {"gamma", "Step decay factor (default 0.5).", "F"},
        {"warmup", "Linear warm-up steps (default 0).", "N"},
        {"weight-decay", "L2 (sgd/momentum/adam) or decoupled decay (adamw).", "F"},
        {"momentum", "Momentum for --optimizer momentum (default 0.9).", "F"},
        {"clip", "Clip gradients to this global L2 norm (default off).", "NORM"},
        {"epochs", "Epochs in total (default: 200, or enough for 2000 steps).", "N"},
        {"steps", "Optimizer steps in total.", "N"},
        {"max-seconds", "Stop after this many seconds of training.", "S"},
        {"batch", "Minibatch size; 0 = the whole training set (default 32).", "N"},
        {"val-split", "Fraction of rows held out for validation (default 0.2; 0 under 20 rows).",
         "F"},
        {"patience",
         "Early stopping after N epochs without improvement; 0 = off (default 20 with a validation "
         "split).",
         "N"},
        {"target-loss", "Stop once the validation (or training) loss reaches this value.", "L"},
        {"seed", "Seed for every random choice (default 1).", "N"},
        {"backend", "cpu or cuda (default cpu).", "NAME"},
        {"threads", "CPU threads (default: all cores).", "N"},
        {"target", "Target column, by name or 1-based number (default: the last).", "COLUMN"},
        {"kind", "auto, regression or classification (default auto).", "KIND"},
        {"resume", "Continue training this model file.", "MODEL"},
        {"out", "Where to save the model (default: DATA's name + .safetensors).", "MODEL"},
        {"metrics-json", "Write the final metrics as JSON to this file.", "FILE"},
        {"quiet", "No progress output."},
    });
    if (!parseOrHelp(p, args, "train", "DATA [options]",
                     "Train a network on a data file and save it as a model.", 1, 1,
                     QString::fromStdString(layerSpecHelp()) + "\n" + kPresetHelp))
        return ExitOk;

    const QString given = p.positionalArguments().first();
    const QString dataPath = resolveDataPath(given);
    const QString task = p.isSet("task") ? p.value("task") : taskFromPath(given);
    if (task != "tabular" && task != "image" && task != "names")
        throw UsageError("--task must be tabular, image or names, not \"" + task.toStdString() +
                         "\"");
    if (task != "tabular")
        throw DataError(("the " + task +
                         " task is not available in this build yet; "
                         "ironlearn-cli trains tables (CSV) for now")
                            .toStdString());
    if (p.isSet("layers") && p.isSet("preset"))
        throw UsageError("give --layers or --preset, not both");

    auto backend =
        makeBackend(p.value("backend"), static_cast<int>(intOption(p, "threads", 0, 0, 1024)));

    // ---- resume: the model brings its architecture, schema, hyperparameters and state --------
    std::unique_ptr<io::LoadedModel> resumed;
    tasks::TabularSchema resumedSchema;
    if (p.isSet("resume")) {
        QString error;
        resumed = io::openModel(p.value("resume"), *backend, &error);
        if (!resumed) throw DataError(error.toStdString());
        if (!tasks::TabularSchema::fromJson(resumed->info.task, resumedSchema, &error))
            throw DataError((p.value("resume") + ": " + error).toStdString());
        if (p.isSet("layers") || p.isSet("preset"))
            throw UsageError("--layers/--preset cannot change a resumed model's architecture");
    }

    // ---- data -----------------------------------------------------------------------------
    const io::CsvReadResult csv = readDataTable(given, dataPath);
    if (!csv.ok) throw DataError(csv.error.toStdString());
    tasks::TabularOptions topt;
    topt.target = p.value("target");
    topt.kind = p.isSet("kind") ? p.value("kind") : "auto";
    topt.valSplit = doubleOption(p, "val-split", -1, 0, 0.95);
    topt.seed = static_cast<uint64_t>(intOption(p, "seed", 1, 0, INT64_MAX));
    if (resumed) {
        topt.fixedSchema = &resumedSchema;
        topt.target = resumedSchema.target;
        if (!p.isSet("val-split")) topt.valSplit = resumedSchema.valSplit;
        if (!p.isSet("seed")) topt.seed = resumedSchema.splitSeed;
    }
    tasks::TabularDataset ds;
    QString error;
    if (!tasks::prepareTabular(csv.table, topt, ds, &error)) throw DataError(error.toStdString());

    // ---- configuration: defaults, then the model's, then the options --------------------------
    TrainerConfig cfg;
    if (resumed) {
        cfg = resumed->info.config;
    } else {
        cfg.loss = ds.schema.loss();
        cfg.schedule.lrMax = 0.003f;
        cfg.schedule.kind = ScheduleKind::Cosine;
        cfg.batchSize = 32;
        // At least 200 epochs and 2000 steps; with a validation split, early stopping after
        // 20 epochs without improvement keeps the best weights (small tables overfit fast).
        cfg.epochs = std::max<int64_t>(200, (2000 + Trainer::stepsPerEpoch(ds.train.rows, 32) - 1) /
                                                Trainer::stepsPerEpoch(ds.train.rows, 32));
        cfg.patience = ds.val.rows > 0 ? 20 : 0;
        cfg.seed = topt.seed;
    }
    if (p.isSet("loss") && !parseLoss(p.value("loss").toStdString(), cfg.loss))
        throw UsageError("--loss must be mse, mae, bce or cross-entropy");
    if (p.isSet("optimizer") &&
        !parseOptimizer(p.value("optimizer").toStdString(), cfg.optimizer.kind))
        throw UsageError("--optimizer must be sgd, momentum, adam or adamw");
    if (p.isSet("schedule") && !parseSchedule(p.value("schedule").toStdString(), cfg.schedule.kind))
        throw UsageError("--schedule must be constant, step or cosine");
    if (!resumed && cfg.optimizer.kind == OptimizerKind::AdamW && !p.isSet("weight-decay"))
        cfg.optimizer.weightDecay = 0.01f;
    cfg.schedule.lrMax = static_cast<float>(doubleOption(p, "lr", cfg.schedule.lrMax, 1e-12, 1e6));
    cfg.schedule.lrMin = static_cast<float>(doubleOption(p, "lr-min", cfg.schedule.lrMin, 0, 1e6));
    cfg.schedule.stepEvery = intOption(p, "step-every", cfg.schedule.stepEvery, 1, INT64_MAX);
    cfg.schedule.gamma = static_cast<float>(doubleOption(p, "gamma", cfg.schedule.gamma, 0, 1));
    cfg.schedule.warmupSteps = intOption(p, "warmup", cfg.schedule.warmupSteps, 0, INT64_MAX);
    cfg.optimizer.weightDecay =
        static_cast<float>(doubleOption(p, "weight-decay", cfg.optimizer.weightDecay, 0, 10));
    cfg.optimizer.momentum =
        static_cast<float>(doubleOption(p, "momentum", cfg.optimizer.momentum, 0, 0.9999));
    cfg.clipNorm = static_cast<float>(doubleOption(p, "clip", cfg.clipNorm, 0, 1e12));
    cfg.batchSize = intOption(p, "batch", cfg.batchSize, 0, INT32_MAX);
    cfg.patience = static_cast<int>(intOption(p, "patience", cfg.patience, 0, 1'000'000));
    cfg.targetLoss = doubleOption(p, "target-loss", cfg.targetLoss, -1e300, 1e300);
    if (p.isSet("seed")) cfg.seed = topt.seed;
    const bool budgetGiven = p.isSet("epochs") || p.isSet("steps") || p.isSet("max-seconds");
    if (budgetGiven) {
        cfg.epochs = intOption(p, "epochs", 0, 1, 100'000'000);
        cfg.steps = intOption(p, "steps", 0, 1, INT64_MAX);
    }
    cfg.maxSeconds = doubleOption(p, "max-seconds", 0, 0.001, 1e9);
    if (cfg.loss != ds.schema.loss() && ds.schema.kind != tasks::TabularKind::Regression)
        throw UsageError(("--loss " + lossName(cfg.loss) + " does not fit " +
                          ds.schema.kindName().toStdString() + " (use " +
                          lossName(ds.schema.loss()) + ")"));
    if (ds.schema.kind == tasks::TabularKind::Regression && cfg.loss != LossKind::MSE &&
        cfg.loss != LossKind::MAE)
        throw UsageError("--loss " + lossName(cfg.loss) +
                         " does not fit regression (use mse or mae)");

    // ---- network -------------------------------------------------------------------------
    std::unique_ptr<Network> net;
    TrainingState state;
    if (resumed) {
        net = std::move(resumed->network);
        state = resumed->info.state;
    } else {
        const QString spec = p.isSet("layers")   ? p.value("layers")
                             : p.isSet("preset") ? presetSpec(p.value("preset"))
                                                 : tasks::defaultTabularSpec(ds.schema);
        try {
            net = std::make_unique<Network>(*backend, ds.schema.inputWidth(), spec.toStdString(),
                                            ds.schema.outputWidth());
        } catch (const EngineError& e) {
            throw UsageError(std::string("--layers: ") + e.what());
        }
        net->initialize(cfg.seed);
    }
    Optimizer optimizer(*backend, cfg.optimizer, net->parameterCount());
    if (resumed && !resumed->optimizerState.empty()) {
        if (!io::restoreOptimizer(*resumed, *backend, optimizer, &error))
            std::fprintf(stderr, "note: %s; continuing with a fresh optimizer state\n",
                         error.toUtf8().constData());
    }

    // Upload the data once; the trainer keeps it on the backend for the whole run.
    const int64_t yCols = cfg.loss == LossKind::CrossEntropy ? 1 : net->outputWidth();
    auto upload = [&](const std::vector<float>& host, int64_t rows, int64_t cols) {
        Buffer buf(backend.get(), static_cast<size_t>(rows * cols));
        if (rows * cols > 0) backend->upload(buf.view(rows, cols), host.data());
        return buf;
    };
    const int64_t inW = ds.schema.inputWidth();
    Buffer trainX = upload(ds.train.x, ds.train.rows, inW);
    Buffer trainY = upload(ds.train.y, ds.train.rows, yCols);
    Buffer valX = upload(ds.val.x, ds.val.rows, inW);
    Buffer valY = upload(ds.val.y, ds.val.rows, yCols);
    TrainingData data;
    data.trainX = trainX.view(ds.train.rows, inW);
    data.trainY = trainY.view(ds.train.rows, yCols);
    if (ds.val.rows > 0) {
        data.valX = valX.view(ds.val.rows, inW);
        data.valY = valY.view(ds.val.rows, yCols);
    }

    const bool quiet = p.isSet("quiet");
    if (!quiet) {
        std::fprintf(
            stderr, "%s: %lld rows, %lld features -> %s (%s)%s\n", given.toUtf8().constData(),
            static_cast<long long>(ds.train.rows + ds.val.rows), static_cast<long long>(inW),
            ds.schema.target.toUtf8().constData(), ds.schema.kindName().toUtf8().constData(),
            ds.val.rows > 0
                ? QString(", %1 held out for validation").arg(ds.val.rows).toUtf8().constData()
                : "");
        if (!ds.note.isEmpty()) std::fprintf(stderr, "note: %s\n", ds.note.toUtf8().constData());
        std::fprintf(stderr, "network: %s (%lld parameters), %s, lr %g %s, on %s\n",
                     net->spec().c_str(), static_cast<long long>(net->parameterCount()),
                     optimizerName(cfg.optimizer.kind).c_str(), cfg.schedule.lrMax,
                     scheduleName(cfg.schedule.kind).c_str(), backend->info().details.c_str());
    }

    Trainer trainer(*net, optimizer, cfg, state);
    ProgressPrinter printer(quiet);
    trainer.setProgressCallback([&printer](const Progress& pr) { printer(pr); });
    g_activeTrainer = &trainer;
    std::signal(SIGINT, onInterrupt);
    TrainResult result;
    try {
        result = trainer.run(data);
    } catch (const EngineError& e) {
        g_activeTrainer = nullptr;
        printer.finish();
        throw DataError(std::string("training failed: ") + e.what());
    }
    g_activeTrainer = nullptr;
    std::signal(SIGINT, SIG_DFL);
    printer.finish();

    // ---- save, then report -------------------------------------------------------------------
    const QString out =
        p.isSet("out") ? p.value("out")
        : resumed
            ? p.value("resume")
            : QFileInfo(given.startsWith(":sample/") ? given.mid(8) : given).completeBaseName() +
                  ".safetensors";
    QString saveError;
    if (!io::saveModel(out, *net, &optimizer, cfg, state, ds.schema.toJson(), &saveError))
        throw DataError(saveError.toStdString());

    // Metrics on the validation split, or on the training rows when there is none.
    const bool onVal = ds.val.rows > 0;
    const tasks::TabularSplit& split = onVal ? ds.val : ds.train;
    const auto outputs = predictHost(*net, split.x, split.rows);
    const auto metrics = tasks::tabularMetrics(ds.schema, outputs, split);

    const bool failed = result.reason == StopReason::NonFinite;
    std::fprintf(failed ? stderr : stdout, "%s%s\n", failed ? "error: " : "",
                 result.message.c_str());
    std::printf("trained %lld steps in %s (%.1f steps/s); %lld epochs in total\n",
                static_cast<long long>(result.steps),
                formatDuration(result.seconds).toUtf8().constData(),
                result.seconds > 0 ? static_cast<double>(result.steps) / result.seconds : 0.0,
                static_cast<long long>(state.epoch));
    std::printf("train loss %s", formatLoss(result.trainLoss).toUtf8().constData());
    if (onVal) std::printf(", validation loss %s", formatLoss(result.valLoss).toUtf8().constData());
    std::printf("\n%s\n",
                describeMetrics(metrics, onVal ? "validation" : "training").toUtf8().constData());
    std::printf("saved model to %s\n", out.toUtf8().constData());

    if (p.isSet("metrics-json")) {
        QJsonObject j = metricsJson(metrics);
        j["task"] = "tabular";
        j["steps"] = static_cast<qint64>(state.step);
        j["epochs"] = static_cast<double>(state.epoch);
        j["seconds"] = state.seconds;
        j["train_loss"] = io::doubleToJson(result.trainLoss);
        j["val_loss"] = io::doubleToJson(result.valLoss);
        j["metrics_on"] = onVal ? "validation" : "train";
        j["stop_reason"] = QString::fromStdString(stopReasonName(result.reason));
        j["model"] = out;
        writeTextFileAtomically(p.value("metrics-json"), QJsonDocument(j).toJson());
    }
    return failed ? ExitDataError : ExitOk;
}

} // namespace il::cli
