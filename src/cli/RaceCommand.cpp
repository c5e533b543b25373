// ironlearn-cli race IMAGE [--seconds S] [--presets a,b,c]: the image presets learn the same
// picture one after the other, each for the same wall-clock budget on the same threads from the
// same seed, and a table compares their PSNR over time.
//
// Fair measuring: at the first step boundary at or past each checkpoint time the weights are
// copied to the host (a memory copy, counted in the budget like any bookkeeping); they are
// measured after the preset's run, so rendering the picture for PSNR costs no training time and
// does not bend the time-stretched learning-rate schedule. A checkpoint thus holds the weights
// of the steps started before it, as the time budget itself counts steps.
#include "Cli.h"

#include "Errors.h"
#include "ImageTask.h"
#include "Model.h"
#include "ModelJson.h"

#include <QBuffer>
#include <QDir>
#include <QFileInfo>
#include <QImageWriter>
#include <QJsonArray>
#include <QJsonDocument>

#include <chrono>
#include <cmath>
#include <cstdio>

namespace il::cli {

namespace {

using Clock = std::chrono::steady_clock;

struct RaceOptions {
    double seconds = 10;
    QStringList presets;
    std::vector<double> checkpoints; // ascending, each in (0, seconds]
    int threads = 0;
    uint64_t seed = 1;
    QString outDir, json;
    bool quiet = false;
};

// One preset's run and what it reached.
struct RaceEntry {
    QString preset;
    std::string layers;
    int64_t parameters = 0;
    int64_t steps = 0;
    double seconds = 0;     // training time, the trainer's clock
    double copySeconds = 0; // of which copying the weights at checkpoints
    StopReason reason = StopReason::TimeBudget;
    std::string message;
    std::vector<double> psnrAt;    // per checkpoint; NaN: the run stopped before it
    std::vector<int64_t> stepsAt;  // per checkpoint; -1 likewise
    std::vector<double> secondsAt; // per checkpoint: when its weights were copied; NaN likewise
    double psnr = NAN, ssim = NAN; // the final weights
    QImage reconstruction;         // the final weights at the training size (--out-dir)

    double stepsPerSecond() const { return seconds > 0 ? static_cast<double>(steps) / seconds : 0; }
};

// Weights copied at a step boundary.
struct Capture {
    int64_t step = 0;
    double seconds = 0; // the trainer's clock
    std::vector<float> weights;
};

QString secondsLabel(double s)
{
    return QString::number(s, 'g', 4) + " s";
}

// 1-2-5 steps below the budget (the last three), then the budget: 10 -> 1, 2, 5, 10.
std::vector<double> defaultCheckpoints(double seconds)
{
    std::vector<double> below;
    for (double decade = 0.01; decade < seconds; decade *= 10)
        for (const double m : {1.0, 2.0, 5.0})
            if (decade * m < seconds * (1 - 1e-9)) below.push_back(decade * m);
    std::vector<double> out(below.end() - std::min<size_t>(below.size(), 3), below.end());
    out.push_back(seconds);
    return out;
}

std::vector<double> parseCheckpoints(const QString& text, double seconds)
{
    std::vector<double> out;
    for (const QString& item : text.split(',')) {
        bool ok = false;
        const double v = item.trimmed().toDouble(&ok);
        if (!ok || !std::isfinite(v))
            throw UsageError("--checkpoints: \"" + item.toStdString() +
                             "\" is not a number of seconds (e.g. --checkpoints 1,2,5,10)");
        if (v <= 0 || v > seconds * (1 + 1e-9))
            throw UsageError("--checkpoints: " + item.trimmed().toStdString() +
                             " s is outside the race (0 to " +
                             QString::number(seconds).toStdString() + " s)");
        if (!out.empty() && v <= out.back())
            throw UsageError("--checkpoints must increase, got " + text.toStdString());
        out.push_back(v);
    }
    if (out.size() > 20) throw UsageError("--checkpoints: at most 20 times");
    return out;
}

QStringList parsePresets(const QString& text)
{
    QStringList valid;
    for (const tasks::LayerPreset& preset : tasks::imageTaskType().presets())
        valid << preset.name;
    if (text.isEmpty()) return valid;
    QStringList out;
    for (const QString& raw : text.split(',')) {
        const QString name = raw.trimmed();
        if (!valid.contains(name))
            throw UsageError("--presets: unknown image preset \"" + name.toStdString() + "\" (" +
                             valid.join(", ").toStdString() + ")");
        if (out.contains(name))
            throw UsageError("--presets: \"" + name.toStdString() + "\" is named twice");
        out << name;
    }
    return out;
}

RaceOptions raceOptions(const QCommandLineParser& p)
{
    RaceOptions o;
    o.seconds = doubleOption(p, "seconds", 10, 0.05, 86400);
    o.presets = parsePresets(p.value("presets"));
    o.checkpoints = p.isSet("checkpoints") ? parseCheckpoints(p.value("checkpoints"), o.seconds)
                                           : defaultCheckpoints(o.seconds);
    o.threads = static_cast<int>(intOption(p, "threads", 0, 0, 1024));
    o.seed = static_cast<uint64_t>(intOption(p, "seed", 1, 0, INT64_MAX));
    o.outDir = p.value("out-dir");
    o.json = p.value("json");
    o.quiet = p.isSet("quiet");
    return o;
}

// The picture, at --image-size; a table or names file is refused by its type, anything else
// that is not an image by the image reader.
std::shared_ptr<tasks::ImageTask> openRaceImage(const QString& given, const QCommandLineParser& p)
{
    const tasks::TaskType& images = tasks::imageTaskType();
    const tasks::TaskType* other = tasks::taskTypeForPath(given);
    if (other && other != &images)
        throw DataError((given + ": not an image (race reads " + images.fileSuffixes().join(", ") +
                         "); ." + QFileInfo(given).suffix().toLower() + " files are " +
                         other->title().toLower())
                            .toStdString());
    tasks::TaskOptions topt;
    topt.trainingSize = static_cast<int>(intOption(p, "image-size", 512, 8, 8192));
    topt.grayscale = p.isSet("grayscale");
    const QByteArray bytes = readDataFile(given);
    QString error;
    std::unique_ptr<tasks::Task> task = images.open(given, bytes, topt, nullptr, false, &error);
    if (!task) throw DataError(error.toStdString());
    auto* image = dynamic_cast<tasks::ImageTask*>(task.get());
    if (!image) throw DataError((given + ": not read as an image").toStdString());
    task.release();
    return std::shared_ptr<tasks::ImageTask>(image);
}

std::vector<float> downloadWeights(const Network& net)
{
    const Tensor params = net.parameters();
    std::vector<float> w(static_cast<size_t>(params.size()));
    net.backend().download(w.data(), params);
    return w;
}

// Trains model for the budget, copying the weights at the first step boundary at or past each
// checkpoint. at[i]: the capture of checkpoint i (-1: not reached during the run).
TrainResult trainWithCaptures(tasks::Model& model, const RaceOptions& o,
                              std::vector<Capture>& captures, std::vector<int>& at,
                              double& copySeconds)
{
    RunPolicy policy;
    // A callback after every step: a checkpoint's weights are those of the first step boundary
    // at or past it, not of a later report.
    policy.progressInterval = 0;
    Trainer trainer(*model.network, *model.optimizer, model.config, model.state, policy);
    at.assign(o.checkpoints.size(), -1);
    size_t next = 0;
    trainer.setProgressCallback([&](const Progress& pr) {
        if (next >= o.checkpoints.size() || pr.elapsed < o.checkpoints[next]) return;
        const auto start = Clock::now();
        captures.push_back({pr.step, pr.elapsed, downloadWeights(*model.network)});
        for (; next < o.checkpoints.size() && pr.elapsed >= o.checkpoints[next]; ++next)
            at[next] = static_cast<int>(captures.size()) - 1;
        copySeconds += std::chrono::duration<double>(Clock::now() - start).count();
    });
    try {
        return trainer.run(model.trainingData());
    } catch (const EngineError& e) {
        throw DataError("race: " + model.network->spec() + ": training failed: " + e.what());
    }
}

// Measures the captured weights and the final ones (left in the network).
void measure(tasks::Model& model, tasks::ImageTask& task, const std::vector<Capture>& captures,
             const std::vector<int>& at, const RaceOptions& o, RaceEntry& entry)
{
    Network& net = *model.network;
    const std::vector<float> final = downloadWeights(net);
    const bool ranOut = entry.reason == StopReason::TimeBudget;
    std::vector<double> capturePsnr(captures.size(), NAN);
    for (size_t c = 0; c < captures.size(); ++c) {
        net.backend().upload(net.parameters(), captures[c].weights.data());
        capturePsnr[c] = task.trainingMetric(net);
    }
    net.backend().upload(net.parameters(), final.data());
    const tasks::TaskMetrics metrics = task.evaluate(net);
    io::doubleFromJson(metrics.values["psnr_db"], entry.psnr);
    entry.ssim = metrics.values["ssim"].toDouble(NAN);
    for (size_t i = 0; i < at.size(); ++i) {
        if (at[i] >= 0) {
            entry.psnrAt.push_back(capturePsnr[static_cast<size_t>(at[i])]);
            entry.stepsAt.push_back(captures[static_cast<size_t>(at[i])].step);
            entry.secondsAt.push_back(captures[static_cast<size_t>(at[i])].seconds);
        } else { // the budget ended first: the final weights; another stop: not reached
            entry.psnrAt.push_back(ranOut ? entry.psnr : NAN);
            entry.stepsAt.push_back(ranOut ? entry.steps : -1);
            entry.secondsAt.push_back(ranOut ? entry.seconds : NAN);
        }
    }
    if (!o.outDir.isEmpty()) entry.reconstruction = task.reconstruct(net);
}

RaceEntry runPreset(const std::shared_ptr<tasks::ImageTask>& task, const QString& preset,
                    const RaceOptions& o)
{
    tasks::Model model;
    model.backend = createCpuBackend(o.threads);
    TrainerConfig& cfg = model.config;
    task->applyDefaults(cfg); // as train uses them
    cfg.seed = o.seed;
    cfg.epochs = 0;
    cfg.steps = 0;
    cfg.maxSeconds = o.seconds; // the cosine schedule stretches over the budget
    model.task = task;
    model.build(task->presetSpec(preset).toStdString());
    model.upload();

    RaceEntry entry;
    entry.preset = preset;
    entry.layers = model.network->spec();
    entry.parameters = model.network->parameterCount();
    std::vector<Capture> captures;
    std::vector<int> at;
    const TrainResult result = trainWithCaptures(model, o, captures, at, entry.copySeconds);
    entry.steps = result.steps;
    entry.seconds = result.seconds;
    entry.reason = result.reason;
    entry.message = result.message;
    measure(model, *task, captures, at, o, entry);
    return entry;
}

QString dB(double v, int width)
{
    return (std::isnan(v) ? QString("-") : QString::number(v, 'f', 2)).rightJustified(width);
}

// The winner: the highest final PSNR (-1: none measured).
int winner(const std::vector<RaceEntry>& entries)
{
    int best = -1;
    for (size_t i = 0; i < entries.size(); ++i)
        if (!std::isnan(entries[i].psnr) &&
            (best < 0 || entries[i].psnr > entries[static_cast<size_t>(best)].psnr))
            best = static_cast<int>(i);
    return best;
}

QString raceTable(const std::vector<RaceEntry>& entries, const RaceOptions& o)
{
    qsizetype nameWidth = 6;
    for (const RaceEntry& e : entries)
        nameWidth = std::max(nameWidth, e.preset.size());
    QString header = QString("preset").leftJustified(nameWidth) + "   steps  steps/s";
    for (const double c : o.checkpoints)
        header += secondsLabel(c).rightJustified(8);
    header += "  final dB    SSIM\n";
    QString table = header;
    const int best = winner(entries);
    for (size_t i = 0; i < entries.size(); ++i) {
        const RaceEntry& e = entries[i];
        QString row = e.preset.leftJustified(nameWidth) +
                      QString::number(e.steps).rightJustified(8) +
                      QString::number(e.stepsPerSecond(), 'f', 1).rightJustified(9);
        for (const double v : e.psnrAt)
            row += dB(v, 8);
        row +=
            dB(e.psnr, 10) +
            (std::isnan(e.ssim) ? QString("-") : QString::number(e.ssim, 'f', 4)).rightJustified(8);
        if (static_cast<int>(i) == best) row += "  <- winner";
        table += row + "\n";
    }
    table += "PSNR in dB of the weights at each time (the steps started before it).\n";
    for (const RaceEntry& e : entries)
        if (e.reason != StopReason::TimeBudget)
            table += QString("%1: %2\n").arg(e.preset, QString::fromStdString(e.message));
    return table;
}

void writePng(const QString& path, const QImage& image)
{
    QByteArray png;
    QBuffer buffer(&png);
    buffer.open(QIODevice::WriteOnly);
    QImageWriter writer(&buffer, "png");
    if (!writer.write(image))
        throw DataError((path + ": cannot encode the PNG: " + writer.errorString()).toStdString());
    writeTextFileAtomically(path, png);
}

// --out-dir: target.png (the picture trained on), PRESET.png per preset, psnr.csv (one row per
// checkpoint, one PSNR column per preset).
void writeOutDir(const std::vector<RaceEntry>& entries, const tasks::ImageTask& task,
                 const RaceOptions& o)
{
    const QDir dir(o.outDir);
    writePng(dir.filePath("target.png"), task.trainingImage());
    QByteArray csv = "seconds";
    for (const RaceEntry& e : entries) {
        writePng(dir.filePath(e.preset + ".png"), e.reconstruction);
        csv += "," + e.preset.toUtf8();
    }
    csv += "\n";
    for (size_t i = 0; i < o.checkpoints.size(); ++i) {
        csv += QByteArray::number(o.checkpoints[i], 'g', 6);
        for (const RaceEntry& e : entries)
            csv += "," + (std::isnan(e.psnrAt[i]) ? QByteArray()
                                                  : QByteArray::number(e.psnrAt[i], 'f', 4));
        csv += "\n";
    }
    writeTextFileAtomically(dir.filePath("psnr.csv"), csv);
}

void writeJson(const std::vector<RaceEntry>& entries, const tasks::ImageTask& task,
               const RaceOptions& o, const QString& device)
{
    QJsonArray checkpoints, presets;
    for (const double c : o.checkpoints)
        checkpoints.append(c);
    for (const RaceEntry& e : entries) {
        QJsonArray psnrAt, stepsAt, secondsAt;
        for (size_t i = 0; i < e.psnrAt.size(); ++i) {
            psnrAt.append(io::doubleToJson(e.psnrAt[i]));
            secondsAt.append(io::doubleToJson(e.secondsAt[i]));
            stepsAt.append(e.stepsAt[i] < 0 ? QJsonValue() : QJsonValue(qint64(e.stepsAt[i])));
        }
        presets.append(QJsonObject{
            {"preset", e.preset},
            {"layers", QString::fromStdString(e.layers)},
            {"parameters", qint64(e.parameters)},
            {"steps", qint64(e.steps)},
            {"seconds", e.seconds},
            {"steps_per_second", e.stepsPerSecond()},
            {"checkpoint_copy_seconds", e.copySeconds},
            {"stop_reason", QString::fromStdString(stopReasonName(e.reason))},
            {"psnr_db_at", psnrAt},
            {"steps_at", stepsAt},
            {"seconds_at", secondsAt},
            {"psnr_db", io::doubleToJson(e.psnr)},
            {"ssim", io::doubleToJson(e.ssim)},
        });
    }
    const int best = winner(entries);
    const tasks::ImageGeometry& g = task.geometry();
    const QJsonObject j{
        {"image", g.source},
        {"width", g.width},
        {"height", g.height},
        {"channels", g.channels},
        {"seconds", o.seconds},
        {"seed", qint64(o.seed)},
        {"device", device},
        {"checkpoints", checkpoints},
        {"presets", presets},
        {"winner", best < 0 ? QJsonValue() : QJsonValue(entries[static_cast<size_t>(best)].preset)},
    };
    writeTextFileAtomically(o.json, QJsonDocument(j).toJson());
}

const char* kRaceHelp =
    "Each preset trains on the same picture for the same wall-clock budget, one after the\n"
    "other, on the same CPU threads, from the same seed, with the image task's defaults (those\n"
    "train uses); the cosine learning-rate schedule stretches over the budget, as with train\n"
    "--max-seconds.\n"
    "\n"
    "Measuring takes no training time: at the first step boundary at or past each checkpoint\n"
    "the weights are copied (a memory copy, counted in the budget, reported in --json as\n"
    "checkpoint_copy_seconds), and the copies are measured after the preset's run. So a\n"
    "checkpoint's PSNR is that of the steps started before it, as the budget counts steps.\n"
    "Final PSNR and SSIM compare the last weights with the picture at the training size.\n"
    "\n"
    "The CPU is shared with whatever else runs: on a busy machine every preset loses steps,\n"
    "not always equally. Run it on a quiet machine to compare speeds.\n"
    "\n"
    "--out-dir writes target.png (the picture trained on), PRESET.png (each preset's final\n"
    "reconstruction at the training size) and psnr.csv (seconds, then one PSNR column in dB\n"
    "per preset, one row per checkpoint).\n";

} // namespace

int runRace(const QStringList& args)
{
    QCommandLineParser p;
    p.addPositionalArgument("IMAGE", "A picture (PNG, JPEG...), or :sample/NAME.");
    QStringList presets;
    for (const tasks::LayerPreset& preset : tasks::imageTaskType().presets())
        presets << preset.name;
    p.addOptions({
        {"seconds", "Training time per preset (default 10).", "S"},
        {"presets",
         "Image presets to race, comma-separated (default: all: " + presets.join(",") + ").",
         "A,B"},
        {"checkpoints",
         "Times in seconds at which PSNR is recorded, comma-separated (default: "
         "up to three of 1, 2, 5, 10, 20... below S, then S).",
         "T1,T2"},
        {"image-size", "Longest side used for training (default 512).", "PIXELS"},
        {"grayscale", "Train on the gray version of a colour image."},
        {"threads", "CPU threads (default: all cores).", "N"},
        {"seed", "Seed of every preset's initial weights and batches (default 1).", "N"},
        {"out-dir", "Write each preset's reconstruction and psnr.csv here (see below).", "DIR"},
        {"json", "Write the results as JSON to this file.", "FILE"},
        {"quiet", "No progress lines on stderr."},
    });
    if (!parseOrHelp(p, args, "race", "IMAGE [--seconds S] [--presets a,b,c] [options]",
                     "Race the image presets: each learns the picture for the same time; a table "
                     "compares their PSNR.",
                     1, 1,
                     QString::fromLatin1(kRaceHelp) + "\n" +
                         tasks::imageTaskType().presetHelp(2).prepend("Presets:\n")))
        return ExitOk;
    const RaceOptions o = raceOptions(p);
    const QString given = p.positionalArguments().first();
    const std::shared_ptr<tasks::ImageTask> task = openRaceImage(given, p);
    if (!o.outDir.isEmpty() && !QDir().mkpath(o.outDir))
        throw DataError((o.outDir + ": cannot create the directory").toStdString());
    const QString device = QString::fromStdString(createCpuBackend(o.threads)->info().details);
    if (!o.quiet) {
        std::fprintf(stderr, "%s\n", task->description().toUtf8().constData());
        for (const QString& note : task->notes())
            std::fprintf(stderr, "note: %s\n", note.toUtf8().constData());
        std::fprintf(stderr, "racing %lld presets for %s each on %s\n",
                     static_cast<long long>(o.presets.size()),
                     secondsLabel(o.seconds).toUtf8().constData(), device.toUtf8().constData());
    }
    std::vector<RaceEntry> entries;
    for (const QString& preset : o.presets) {
        entries.push_back(runPreset(task, preset, o));
        const RaceEntry& e = entries.back();
        if (!o.quiet)
            std::fprintf(stderr, "%s: %lld steps in %.1f s, PSNR %.2f dB (%s)\n",
                         e.preset.toUtf8().constData(), static_cast<long long>(e.steps), e.seconds,
                         e.psnr, e.layers.c_str());
    }
    const tasks::ImageGeometry& g = task->geometry();
    std::printf("Race on %s at %dx%d (%s), %s per preset:\n\n%s",
                QFileInfo(given).fileName().toUtf8().constData(), g.width, g.height,
                g.channels == 1 ? "gray" : "RGB", secondsLabel(o.seconds).toUtf8().constData(),
                raceTable(entries, o).toUtf8().constData());
    if (!o.outDir.isEmpty()) writeOutDir(entries, *task, o);
    if (!o.json.isEmpty()) writeJson(entries, *task, o, device);
    return ExitOk;
}

} // namespace il::cli
