// ironlearn-cli train DATA [options]
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
#include "Task.h"
#include "TrainReport.h"

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

// "weight_decay" -> "weight-decay"
QString optionName(const char* key)
{
    return QString::fromLatin1(key).replace('_', '-');
}

// Every optimizer setting key once, in the order the optimizers list them.
std::vector<const OptimizerSetting*> settingKeys()
{
    std::vector<const OptimizerSetting*> keys;
    for (const OptimizerType& type : optimizerTypes())
        for (const OptimizerSetting& s : type.settings)
            if (std::none_of(keys.begin(), keys.end(), [&](const OptimizerSetting* k) {
                    return std::string_view(k->key) == s.key;
                }))
                keys.push_back(&s);
    return keys;
}

// --optimizer, and one option per setting key (each optimizer that has the setting reads it).
void addOptimizerOptions(QCommandLineParser& p)
{
    p.addOption({"optimizer",
                 QString::fromStdString(optimizerNameList() + " (default: from the task; " +
                                        OptimizerConfig().name() +
                                        ", adamw with weight decay 0.3 for tables; see "
                                        "Optimizers below)."),
                 "NAME"});
    for (const OptimizerSetting* s : settingKeys()) {
        QStringList users;
        for (const OptimizerType& t : optimizerTypes())
            if (t.setting(s->key)) users << t.name;
        p.addOption({optionName(s->key),
                     QString("%1 for %2 (see Optimizers below).").arg(s->label, users.join(", ")),
                     "F"});
    }
    for (const ParameterGroupType& g : parameterGroupTypes())
        p.addOption({g.lrOption,
                     QString("%1 Default %2; 0: the same as --lr (see Optimizers below).")
                         .arg(g.help)
                         .arg(g.lr),
                     "RATE"});
}

// --grid-lr and the like: a group's own peak learning rate, 0 for the run's.
void applyGroupOptions(const QCommandLineParser& p, OptimizerConfig& optimizer)
{
    for (const ParameterGroupType& g : parameterGroupTypes()) {
        if (!p.isSet(g.lrOption)) continue;
        const std::string name = std::string("--") + g.lrOption;
        bool ok = false;
        const double v = p.value(g.lrOption).toDouble(&ok);
        if (!ok || !(v >= 0 && v <= 1e6))
            throw UsageError(name +
                             " must be a learning rate from 0 (the same as --lr) to 1e6, "
                             "got \"" +
                             p.value(g.lrOption).toStdString() + "\"");
        optimizer.setGroupLr(g.name, static_cast<float>(v));
    }
}

// The Optimizers section of train --help: each optimizer, its update and its settings.
QString optimizerHelp()
{
    QString text = "Optimizers (--optimizer) and their settings:\n";
    for (const OptimizerType& type : optimizerTypes()) {
        text += QString("  %1%2\n").arg(QString(type.name).leftJustified(10), type.description);
        for (const OptimizerSetting& s : type.settings)
            text += QString("            --%1: %2 Default %3, from %4 to %5.\n")
                        .arg(optionName(s.key), s.help)
                        .arg(s.defaultValue)
                        .arg(s.min)
                        .arg(s.max);
    }
    text += "Parameter groups train with settings of their own (saved with the model):\n";
    for (const ParameterGroupType& g : parameterGroupTypes()) {
        QStringList settings;
        for (const auto& [key, value] : g.settings)
            settings << QString("%1 %2").arg(key).arg(value);
        text += QString("  %1 --%2 (default %3), %4 where the optimizer has them.\n")
                    .arg(g.label, g.lrOption)
                    .arg(g.lr)
                    .arg(settings.join(", "));
    }
    return text;
}

void addTrainingOptions(QCommandLineParser& p)
{
    p.addOptions({
        {"task", tasks::taskTypeNames() + " (default: from the file type).", "KIND"},
        {"layers", "Layer list, e.g. dense:16,tanh,dense:1 (see below).", "SPEC"},
        {"preset", "Named layer list (see below).", "NAME"},
        {"loss", "mse, mae, bce or cross-entropy (default: from the task).", "LOSS"},
    });
    addOptimizerOptions(p);
    p.addOptions({
        {"lr", "Learning rate (default: from the task; 0.003 for tables).", "RATE"},
        {"lr-min", "Final learning rate of the cosine schedule (default 0).", "RATE"},
        {"schedule", "constant, step or cosine (default cosine).", "NAME"},
        {"step-every", "Step decay: multiply the rate by --gamma every N steps.", "N"},
        {"gamma", "Step decay factor (default 0.5).", "F"},
        {"warmup", "Linear warm-up steps (default 0).", "N"},
        {"clip", "Clip gradients to this global L2 norm (default off).", "NORM"},
        {"label-smoothing", "Cross-entropy label smoothing, 0 to 0.5.", "S"},
        {"class-weight",
         "Classification tables: none, or balanced: each class weighs n / (k n_c) in the loss "
         "(n training rows, k classes, n_c rows of the class), for a rare class (default none; "
         "kept by --resume).",
         "HOW"},
        {"epochs", "Epochs in total (default: from the task).", "N"},
        {"steps", "Optimizer steps in total.", "N"},
        {"max-seconds", "Stop after this many seconds of training.", "S"},
        {"batch", "Minibatch size; 0 = all training rows (default: from the task).", "N"},
        {"val-split", "Fraction held out for validation (tables: 0.2; none under 20 rows).", "F"},
        {"folds",
         "Tables: K-fold cross-validation instead of a validation split: each candidate (the "
         "network, the linear model) is scored on every row once, and the one chosen is trained "
         "again on every row (default 0 = off: a validation split).",
         "K"},
        {"average-folds",
         "Tables with --folds, regression: keep the folds' own networks, averaged as one and "
         "blended with least squares fitted on every row (the share that fits their out-of-fold "
         "predictions best), instead of training one again on every row. Dense layers and "
         "element-wise activations only."},
        {"patience", "Early stopping after N evaluations without improvement; 0 = off.", "N"},
        {"target-loss", "Stop once the validation (or training) loss reaches this value.", "L"},
        {"seed", "Seed for every random choice (default 1).", "N"},
        {"backend", "cpu or cuda (default cpu).", "NAME"},
        {"threads", "CPU threads (default: all cores).", "N"},
        {"tf32", "CUDA: let matrix products use TF32 tensor cores (faster, about 3 "
                 "significant digits per product; off by default)."},
        {"no-graphs", "CUDA: launch every op of a step instead of replaying a recorded CUDA "
                      "graph (for debugging)."},
        {"target", "Tables: target column, by name or 1-based number (default: the last).",
         "COLUMN"},
        {"kind", "Tables: auto, regression or classification (default auto).", "KIND"},
        {"features", "Tables: feature columns by name, number or range (2-5), comma-separated.",
         "COLUMNS"},
        {"ignore", "Tables: columns to leave out, comma-separated.", "COLUMNS"},
        {"normalise", "Tables: zscore or minmax, fitted on the training rows (default zscore).",
         "HOW"},
        {"missing",
         "Tables: fail on missing values (default), drop their rows, ignore the feature "
         "columns that have them, or fill numeric features with the training rows' mean "
         "(fail, drop, ignore, mean).",
         "HOW"},
        {"test-split",
         "Tables and names: fraction held out for testing, reported apart (default 0).", "F"},
        {"split",
         "TRAIN/VAL/TEST percentages, e.g. 80/10/10: --val-split and --test-split at once.",
         "T/V/T"},
        {"split-seed", "Seed of the validation and test splits (default: --seed).", "S"},
        {"resume", "Continue training this model file.", "MODEL"},
        {"out", "Where to save the model (default: DATA's name + .safetensors).", "MODEL"},
        {"metrics-json", "Write the final metrics as JSON to this file.", "FILE"},
        {"snapshots", "Images: write the reconstruction every --snapshot-every steps here.", "DIR"},
        {"snapshot-every", "Steps between snapshots (default 100).", "N"},
    });
    addKindSettings(p);
    p.addOption({"quiet", "No progress output (notes about a stall or divergence still print)."});
}

// Options override the task's defaults (or, when resuming, the model's settings).
void applyOptions(const QCommandLineParser& p, TrainerConfig& cfg)
{
    if (p.isSet("loss") && !parseLoss(p.value("loss").toStdString(), cfg.loss))
        throw UsageError("--loss must be mse, mae, bce or cross-entropy");
    if (p.isSet("optimizer")) {
        const OptimizerType* type = findOptimizer(p.value("optimizer").toStdString());
        if (!type) throw UsageError("--optimizer must be " + optimizerNameList());
        if (type != &cfg.optimizer.type()) cfg.optimizer = cfg.optimizer.switchedTo(*type);
    }
    if (p.isSet("schedule") && !parseSchedule(p.value("schedule").toStdString(), cfg.schedule.kind))
        throw UsageError("--schedule must be constant, step or cosine");
    if (p.isSet("class-weight") &&
        !parseClassWeighting(p.value("class-weight").toStdString(), cfg.classWeighting))
        throw UsageError("--class-weight must be none or balanced, not \"" +
                         p.value("class-weight").toStdString() + "\"");
    for (const OptimizerSetting* s : settingKeys()) {
        const QString name = optionName(s->key);
        if (!p.isSet(name)) continue;
        const OptimizerSetting* own = cfg.optimizer.type().setting(s->key);
        if (!own)
            throw UsageError("--" + name.toStdString() + " is not a setting of " +
                             cfg.optimizer.name());
        // The range is checked as float, the type the setting has (0.9999f < 0.9999).
        const auto v = static_cast<float>(doubleOption(p, name, 0, -HUGE_VAL, HUGE_VAL));
        if (!(v >= own->min && v <= own->max))
            throw UsageError("--" + name.toStdString() + " must be between " +
                             QString::number(own->min).toStdString() + " and " +
                             QString::number(own->max).toStdString() + " for " +
                             cfg.optimizer.name() + ", got " + p.value(name).toStdString());
        cfg.optimizer.set(own->key, v);
    }
    applyGroupOptions(p, cfg.optimizer);
    // The ranges are the model files' too (configRange): what an option refuses, a resumed
    // model cannot bring in.
    namespace range = configRange;
    auto f = [](double v) { return static_cast<float>(v); };
    cfg.schedule.lrMax = f(doubleOption(p, "lr", cfg.schedule.lrMax, range::lrMax));
    cfg.schedule.lrMin = f(doubleOption(p, "lr-min", cfg.schedule.lrMin, range::lrMin));
    cfg.schedule.stepEvery = intOption(p, "step-every", cfg.schedule.stepEvery, range::stepEvery);
    cfg.schedule.gamma = f(doubleOption(p, "gamma", cfg.schedule.gamma, range::gamma));
    cfg.schedule.warmupSteps = intOption(p, "warmup", cfg.schedule.warmupSteps, range::warmupSteps);
    cfg.clipNorm = f(doubleOption(p, "clip", cfg.clipNorm, range::clipNorm));
    cfg.labelSmoothing =
        f(doubleOption(p, "label-smoothing", cfg.labelSmoothing, range::labelSmoothing));
    cfg.batchSize = intOption(p, "batch", cfg.batchSize, range::batchSize);
    cfg.patience = static_cast<int>(intOption(p, "patience", cfg.patience, range::patience));
    cfg.targetLoss = doubleOption(p, "target-loss", cfg.targetLoss, range::targetLoss);
    if (p.isSet("seed")) cfg.seed = static_cast<uint64_t>(intOption(p, "seed", 1, 0, INT64_MAX));
    // A budget given is 1 or more (0 in a file: unused).
    auto given = [](const ValueRange& r, double min) { return ValueRange{min, r.max, r.what}; };
    if (p.isSet("epochs") || p.isSet("steps") || p.isSet("max-seconds")) {
        cfg.epochs = intOption(p, "epochs", 0, given(range::epochs, 1));
        cfg.steps = intOption(p, "steps", 0, given(range::steps, 1));
    }
    cfg.maxSeconds = doubleOption(p, "max-seconds", 0, given(range::maxSeconds, 0.001));
}

// The loss comes from --loss, the task's default or, when resuming, the model file: a misfit
// is a usage error only when --loss asked for it.
void checkLossFits(const QCommandLineParser& p, const tasks::Task& task, LossKind loss)
{
    const LossKind natural = task.loss();
    const bool regression = natural == LossKind::MSE || natural == LossKind::MAE;
    const bool ok = regression ? (loss == LossKind::MSE || loss == LossKind::MAE) : loss == natural;
    if (ok) return;
    const std::string fits = "this " + task.kind().toStdString() + " task (use " +
                             lossName(natural) + (regression ? " or mae" : "") + ")";
    if (p.isSet("loss")) throw UsageError("--loss " + lossName(loss) + " does not fit " + fits);
    throw DataError(p.value("resume").toStdString() + ": its loss " + lossName(loss) +
                    " (hyperparameters.loss, or the default when the file has none) does not "
                    "fit " +
                    fits + "; give --loss to resume it with another");
}

// The class weights of --class-weight (or of the resumed model's setting) from the task's
// training rows: a table that has no classes is a usage error when the option asked for it.
void applyClassWeighting(const QCommandLineParser& p, const tasks::Task& task, TrainerConfig& cfg)
{
    QString why;
    if (tasks::applyClassWeights(task, cfg, &why)) return;
    const std::string setting = classWeightingName(cfg.classWeighting);
    if (p.isSet("class-weight"))
        throw UsageError("--class-weight " + setting + ": " + why.toStdString());
    throw DataError(p.value("resume").toStdString() + ": its class weighting " + setting +
                    " (hyperparameters.class_weight) does not fit this data: " + why.toStdString() +
                    "; give --class-weight none to resume it without");
}

// The data options (--target, --features, --image-size...) as the task loaders take them.
tasks::TaskOptions taskOptions(const QCommandLineParser& p)
{
    tasks::TaskOptions topt;
    topt.task = p.value("task");
    topt.target = p.value("target");
    topt.kind = p.isSet("kind") ? p.value("kind") : "auto";
    topt.valSplit = doubleOption(p, "val-split", -1, tasks::kSplitRange);
    if (p.isSet("folds")) {
        topt.folds = static_cast<int>(intOption(p, "folds", 0, 0, tasks::kMaxFolds));
        if (topt.folds == 1)
            throw UsageError("--folds 1: cross-validation takes 2 to " +
                             std::to_string(tasks::kMaxFolds) + " folds (0: off)");
        if (topt.folds > 0 && (p.isSet("val-split") || p.isSet("split")))
            throw UsageError("give --folds or a validation split (--val-split, --split), not "
                             "both: the folds hold out every row in turn");
    }
    topt.seed = static_cast<uint64_t>(intOption(p, "seed", 1, 0, INT64_MAX));
    topt.features = p.values("features").join(',').split(',', Qt::SkipEmptyParts);
    topt.ignore = p.values("ignore").join(',').split(',', Qt::SkipEmptyParts);
    topt.normalisation = p.isSet("normalise") ? p.value("normalise") : "zscore";
    topt.missing = p.isSet("missing") ? p.value("missing") : "fail";
    topt.testSplit = doubleOption(p, "test-split", 0, tasks::kSplitRange);
    if (p.isSet("split")) {
        if (p.isSet("val-split") || p.isSet("test-split"))
            throw UsageError("--split sets both splits: leave --val-split and --test-split out");
        const QStringList parts = p.value("split").split('/');
        double v[3] = {0, 0, 0};
        bool ok = parts.size() == 3;
        for (int i = 0; ok && i < 3; ++i) {
            v[i] = parts[i].trimmed().toDouble(&ok);
            ok = ok && std::isfinite(v[i]); // "nan" and "inf" are numbers to toDouble
        }
        // The training share must leave room: 100/0/0 is fine, 0/50/50 is not.
        if (!ok || !(v[0] > 0) || !(v[1] >= 0) || !(v[2] >= 0) || v[0] > 100 ||
            !(std::fabs(v[0] + v[1] + v[2] - 100) <= 1e-6))
            throw UsageError("--split \"" + p.value("split").toStdString() +
                             "\" must be three percentages that add up to 100, e.g. 80/10/10");
        topt.valSplit = v[1] / 100;
        topt.testSplit = v[2] / 100;
    }
    if (p.isSet("split-seed")) topt.splitSeed = intOption(p, "split-seed", 1, 0, INT64_MAX);
    if (topt.valSplit + topt.testSplit >= 1)
        throw UsageError("--val-split and --test-split must add up to less than 1 (got " +
                         QString::number(topt.valSplit + topt.testSplit).toStdString() + ")");
    readKindSettings(p, topt);
    return topt;
}

// A new network for the task from --layers or --preset (the task's first preset by default).
void buildNetwork(const QCommandLineParser& p, tasks::Model& model,
                  std::shared_ptr<tasks::Task> task)
{
    QString spec = p.value("layers");
    if (spec.isEmpty()) {
        const QString preset = p.isSet("preset") ? p.value("preset") : task->defaultPreset();
        spec = task->presetSpec(preset);
        if (spec.isEmpty())
            throw UsageError("--preset: unknown preset \"" + preset.toStdString() + "\" for " +
                             task->kind().toStdString() + " (" +
                             task->presets().join(", ").toStdString() + ")");
    }
    model.task = std::move(task);
    try {
        model.build(spec.toStdString());
    } catch (const EngineError& e) {
        throw UsageError(std::string(p.isSet("layers") ? "--layers: " : "--preset: ") + e.what());
    }
}

// Each fold's line on stderr (the folds run first for a fresh model of a task with folds).
tasks::FoldHooks foldLines(bool quiet)
{
    tasks::FoldHooks hooks;
    hooks.active = [](int, Trainer* t) { setActiveTrainer(t); };
    hooks.foldDone = [quiet](int fold, const tasks::CrossValidation& cv) {
        if (quiet) return;
        const tasks::FoldRun& r = cv.runs.back();
        QString line = QString("fold %1 of %2: %3 steps on %4 rows, kept step %5; loss on its %6 "
                               "held-out rows %7")
                           .arg(fold + 1)
                           .arg(cv.folds)
                           .arg(r.steps)
                           .arg(r.trainRows)
                           .arg(r.keptStep)
                           .arg(r.heldOutRows)
                           .arg(formatLoss(r.networkLoss));
        if (!std::isnan(r.simplerLoss)) line += " (linear " + formatLoss(r.simplerLoss) + ")";
        std::fprintf(stderr, "%s\n", line.toUtf8().constData());
    };
    return hooks;
}

// Trains the model (tasks::runModel) with progress on stderr (Ctrl+C or SIGTERM stops after the
// step and saves), writing --snapshots on the way.
TrainResult trainModel(const QCommandLineParser& p, tasks::Model& model, bool quiet,
                       RunTrace& trace)
{
    tasks::Task& task = *model.task;
    // Snapshots are written at evaluations, so evaluate every --snapshot-every steps.
    const QString snapshotDir = p.value("snapshots");
    if (!snapshotDir.isEmpty()) {
        if (!task.supportsSnapshots())
            throw UsageError("--snapshots: " + task.kind().toStdString() +
                             " models have no snapshots (images do)");
        // Every option checked before the folder is made: a usage error leaves nothing behind.
        model.config.evalEvery = intOption(p, "snapshot-every", 100, 1, INT64_MAX);
        if (!QDir().mkpath(snapshotDir))
            throw DataError((snapshotDir + ": cannot create the directory").toStdString());
    }
    tasks::RunSetup setup;
    if (p.isSet("average-folds")) {
        if (task.folds() <= 0)
            throw UsageError("--average-folds averages the folds' networks: give --folds K too");
        if (model.state.step > 0)
            throw UsageError("--average-folds: a resumed model trains on, it has no folds");
        setup.foldModel = tasks::FoldModel::Averaged;
    } else if (!p.isSet("layers") && model.state.step == 0 &&
               task.averagesFoldsOf(p.isSet("preset") ? p.value("preset") : task.defaultPreset())) {
        setup.foldModel = tasks::FoldModel::Averaged; // the ensemble preset (by default)
    }
    setup.policy.recordSteps = !p.isSet("no-graphs");
    setup.policy.watch = task.watchSettings();
    setup.foldPolicy = setup.policy;
    setup.foldPolicy.progressInterval = 1e9; // epoch ends only: each fold has its line
    // A failed device: the trainer keeps the last good weights on the host, and the run driver
    // rebuilds the model from them on the CPU, to be saved and trained further there.
    const int threads = static_cast<int>(intOption(p, "threads", 0, 0, 1024));
    setup.cpuRescue = [threads] { return createCpuBackend(threads); };
    ProgressPrinter printer(quiet);
    tasks::RunHooks hooks;
    hooks.folds = foldLines(quiet);
    hooks.progress = [&printer](const Progress& pr, Trainer&) { printer(pr); };
    hooks.active = [](Trainer* t) { setActiveTrainer(t); }; // Ctrl+C: stop after this step
    // At each evaluation: the snapshot timeline and the side metric.
    QString snapshotError;
    const TrainingState& state = model.state;
    trace.key = task.sideMetricKey();
    if (!trace.key.isEmpty() || !snapshotDir.isEmpty())
        hooks.evaluation = [&](Network& n) {
            if (!snapshotDir.isEmpty() && snapshotError.isEmpty())
                task.writeSnapshot(n, state.step, snapshotDir, &snapshotError);
            if (!trace.key.isEmpty()) trace.points.emplace_back(state.step, task.sideMetric(n));
        };
    tasks::RunOutcome run = tasks::runModel(model, setup, hooks);
    setActiveTrainer(nullptr);
    trace.cv = std::move(run.cv);
    trace.settled = run.settled;
    if (!run.failure.empty()) {
        printer.finish();
        throw DataError(run.failure);
    }
    if (run.foldsStopped) run.result.message += "; the model is its untrained start";
    printer.finish();
    if (!snapshotError.isEmpty())
        std::fprintf(stderr, "warning: snapshots stopped: %s\n",
                     snapshotError.toUtf8().constData());
    return run.result;
}

// Options that cannot go together, and a --task that names no task.
void checkArguments(const QCommandLineParser& p)
{
    if (p.isSet("layers") && p.isSet("preset"))
        throw UsageError("give --layers or --preset, not both");
    if (p.isSet("resume") && (p.isSet("layers") || p.isSet("preset")))
        throw UsageError("--layers/--preset cannot change a resumed model's architecture");
    const QString taskKind = p.value("task");
    if (!taskKind.isEmpty() && !tasks::findTaskType(taskKind))
        throw UsageError("--task must be " + tasks::taskTypeNames().toStdString() + ", not \"" +
                         taskKind.toStdString() + "\"");
}

// --task with --resume: the model's task is the one it continues; another is refused, not
// silently ignored.
void checkResumedTask(const QCommandLineParser& p, const io::ModelInfo& resumed)
{
    const tasks::TaskType* saved = tasks::taskTypeOf(resumed.task);
    const tasks::TaskType* asked = tasks::findTaskType(p.value("task"));
    if (saved == asked) return;
    throw UsageError("--task " + p.value("task").toStdString() + ": " +
                     p.value("resume").toStdString() + " is " +
                     (saved ? "a " + saved->name().toStdString() + " model"
                            : std::string("a model without a known task")) +
                     ", and --resume continues it as one (leave --task out)");
}

} // namespace

// Long: the command's stages in order (resume, data, configuration, network, train, save)
// under their ---- headings; the model and its config run through all of them.
int runTrain(const QStringList& args)
{
    QCommandLineParser p;
    p.addPositionalArgument("DATA", "A data file (CSV table...), or :sample/NAME for a bundled "
                                    "sample (see: ironlearn-cli samples).");
    addTrainingOptions(p);
    if (!parseOrHelp(p, args, "train", "DATA [options]",
                     "Train a network on a data file and save it as a model.", 1, 1,
                     QString::fromStdString(layerSpecHelp()) + "\n" + tasks::presetHelp() + "\n" +
                         optimizerHelp()))
        return ExitOk;

    const QString given = p.positionalArguments().first();
    checkArguments(p);
    const bool resuming = p.isSet("resume");
    setCommandSubject(resuming ? p.value("resume") : given);
    // Checked before any work: a run must not end by refusing to save.
    const QString out =
        p.isSet("out") ? p.value("out")
        : resuming
            ? p.value("resume")
            : QFileInfo(given.startsWith(":sample/") ? given.mid(8) : given).completeBaseName() +
                  ".safetensors";
    checkOutputPaths({{"--out", out, {given}},
                      {"--metrics-json", p.value("metrics-json"), {given, p.value("resume")}}});
    const int threads = static_cast<int>(intOption(p, "threads", 0, 0, 1024));
    tasks::Model model;
    model.backend = makeBackend(p.value("backend"), threads, p.isSet("tf32"));

    // ---- resume: the model brings its architecture, task settings, hyperparameters, state ---
    io::ModelInfo resumed;
    QString error;
    if (resuming && !model.open(p.value("resume"), &resumed, &error))
        throw DataError(error.toStdString());
    if (resuming) checkSavedTask(p.value("resume"), resumed.task);
    if (resuming && p.isSet("task")) checkResumedTask(p, resumed);

    // ---- data ------------------------------------------------------------------------------
    tasks::TaskOptions topt = taskOptions(p);
    if (resuming) topt.modelPath = p.value("resume"); // named by a refusal of its saved task
    const QByteArray bytes = readDataFile(given);
    std::shared_ptr<tasks::Task> task =
        resuming ? tasks::openTaskForModel(given, bytes, resumed.task, false, topt, &error)
                 : tasks::openTask(given, bytes, topt, &error);
    if (!task) throw DataError(error.toStdString());
    refuseOtherKindsOptions(p, task->type(), given);
    if (resuming) refuseChangedSettings(p, *task, topt, p.value("resume"));

    // ---- configuration: the task's defaults (or the model's), then the options ------------
    TrainerConfig& cfg = model.config;
    if (!resuming) {
        task->applyDefaults(cfg);
        cfg.seed = topt.seed;
        // A preset's recipe replaces the defaults; the options given still win (applyOptions).
        const QString preset = p.isSet("preset")   ? p.value("preset")
                               : p.isSet("layers") ? QString()
                                                   : task->defaultPreset();
        if (const auto recipe = tasks::presetRecipe(task->type(), preset)) {
            recipe->applyTo(cfg);
            // Said for a preset asked for; the default's settings are in the network line.
            if (!p.isSet("quiet") && p.isSet("preset"))
                std::fprintf(stderr, "preset %s: %s (%s; an option given changes one)\n",
                             preset.toUtf8().constData(), recipe->flags().toUtf8().constData(),
                             recipe->why);
        }
    }
    applyOptions(p, cfg);
    checkLossFits(p, *task, cfg.loss);
    applyClassWeighting(p, *task, cfg);

    // ---- network ----------------------------------------------------------------------------
    if (resuming) {
        if (!model.attach(task, &error)) throw DataError((given + ": " + error).toStdString());
        if (!model.makeOptimizer(cfg.optimizer, &error))
            std::fprintf(stderr, "note: %s; continuing with a fresh optimizer state\n",
                         error.toUtf8().constData());
    } else {
        buildNetwork(p, model, task);
    }
    // Upload the data once; the trainer keeps it on the backend for the whole run.
    model.upload();

    const bool quiet = p.isSet("quiet");
    if (!quiet) printHeader(model);
    RunTrace trace;
    const TrainResult result = trainModel(p, model, quiet, trace);

    // ---- save, then report ---------------------------------------------------------------------
    // The data file (path, size, hash) goes with the model: the studio opens it with the model.
    const QJsonObject saved =
        io::DataFileRecord::of(resolveDataPath(given), bytes).addTo(task->toJson());
    if (!model.save(out, saved, &error)) throw DataError(error.toStdString());
    report(p, model, result, trace, given, out);
    const bool failed =
        result.reason == StopReason::NonFinite || result.reason == StopReason::DeviceFailure;
    return failed ? ExitDataError : ExitOk;
}

namespace {

const CommandRegistration kTrainCommand(
    {10, "train", " DATA        train a network on a data file (table, image, names) and save it",
     "", runTrain});

} // namespace

} // namespace il::cli
