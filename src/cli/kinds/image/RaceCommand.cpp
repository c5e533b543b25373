// ironlearn-cli race IMAGE [--seconds S] [--presets a,b,c]: the image presets learn the same
// picture one after the other, each for the same wall-clock budget on the same threads from the
// same seed, and a table compares their PSNR over time. The race itself (training, checkpoint
// copies, measuring) is tasks::ImageRace, which the studio's race view runs too; this file
// reads the options and writes the table, the JSON and the pictures.
#include "Cli.h"

#include "Errors.h"
#include "ImageRace.h"
#include "ImageTask.h"
#include "Model.h"
#include "ModelJson.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>

#include <cmath>
#include <cstdio>

namespace il::cli {

namespace {

struct RaceOptions {
    double seconds = 10;
    QStringList presets;
    std::vector<double> checkpoints; // ascending, each in (0, seconds]
    int threads = 0;
    uint64_t seed = 1;
    QString outDir, json;
    bool quiet = false;
};

using tasks::RaceEntry;

QString secondsLabel(double s)
{
    return QString::number(s, 'g', 4) + " s";
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
                                           : tasks::sparseRaceCheckpoints(o.seconds);
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
    readKindSettings(p, topt, &images);
    const QByteArray bytes = readDataFile(given);
    QString error;
    std::unique_ptr<tasks::ImageTask> task =
        tasks::openImageTask(given, bytes, topt, nullptr, false, &error);
    if (!task) throw DataError(error.toStdString());
    return task;
}

QString dB(double v, int width)
{
    return (std::isnan(v) ? QString("-") : QString::number(v, 'f', 2)).rightJustified(width);
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
    const int best = tasks::raceWinner(entries);
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
    for (const RaceEntry& e : entries)
        if (e.unmeasured > 0)
            table += QString("%1: %2 not measured (-): a pass over the picture took %3, and "
                             "checkpoints are measured only within the budget again\n")
                         .arg(e.preset,
                              e.unmeasured == 1 ? QString("1 checkpoint")
                                                : QString("%1 checkpoints").arg(e.unmeasured),
                              secondsLabel(e.passSeconds));
    return table;
}

// --out-dir: target.png (the picture trained on), PRESET.png per preset, psnr.csv (one row per
// checkpoint, one PSNR column per preset).
void writeOutDir(const std::vector<RaceEntry>& entries, const tasks::ImageTask& task,
                 const RaceOptions& o)
{
    const QDir dir(o.outDir);
    writePngFile(dir.filePath("target.png"), task.trainingImage());
    QByteArray csv = "seconds";
    for (const RaceEntry& e : entries) {
        writePngFile(dir.filePath(e.preset + ".png"), e.reconstruction);
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
        QJsonArray psnrAt, ssimAt, stepsAt, secondsAt;
        for (size_t i = 0; i < e.psnrAt.size(); ++i) {
            psnrAt.append(io::doubleToJson(e.psnrAt[i]));
            ssimAt.append(io::doubleToJson(e.ssimAt[i]));
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
            {"measure_seconds", e.measureSeconds},
            {"measure_pass_seconds", e.passSeconds},
            {"unmeasured_checkpoints", e.unmeasured},
            {"stop_reason", QString::fromStdString(stopReasonName(e.reason))},
            {"psnr_db_at", psnrAt},
            {"ssim_at", ssimAt},
            {"steps_at", stepsAt},
            {"seconds_at", secondsAt},
            {"psnr_db", io::doubleToJson(e.psnr)},
            {"ssim", io::doubleToJson(e.ssim)},
        });
    }
    const int best = tasks::raceWinner(entries);
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

// Every file the race will write, checked as train checks its outputs (checkOutputPaths) before
// any work: none may be the picture raced on (race DIR/x.png --out-dir DIR with a preset or
// target.png named x), a special file, or another output (--json DIR/psnr.csv). A folder that
// does not exist yet holds none of them; --json inside it is refused as a missing folder.
std::vector<OutputPath> raceOutputs(const RaceOptions& o, const QString& given)
{
    std::vector<OutputPath> out{{"--json", o.json, {given}}};
    const QFileInfo dir(o.outDir);
    if (o.outDir.isEmpty() || !dir.exists()) return out;
    if (!dir.isDir())
        throw UsageError(("--out-dir " + o.outDir + ": is a file, not a folder").toStdString());
    const QDir d(o.outDir);
    QStringList names{"target.png", "psnr.csv"};
    for (const QString& preset : o.presets)
        names << preset + ".png";
    for (const QString& name : names)
        out.push_back({"--out-dir", d.filePath(name), {given}});
    return out;
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
    "Measuring has a budget too: each preset's final weights take one pass over the picture\n"
    "(the reconstruction is drawn in the same pass); its checkpoints are then measured in time\n"
    "order only while their passes fit in --seconds again (the others show as -, with a note).\n"
    "So a preset takes at most about 2 x S plus one pass, and a large picture costs passes, not\n"
    "memory: a pass holds one band of rows. Memory: the picture's rows for training (its\n"
    "coordinates and intensities, (2 + channels) x 4 bytes a pixel, on the host and on the\n"
    "backend), the picture, and one band.\n"
    "\n"
    "The CPU is shared with whatever else runs: on a busy machine every preset loses steps,\n"
    "not always equally. Run it on a quiet machine to compare speeds.\n"
    "\n"
    "--out-dir writes target.png (the picture trained on), PRESET.png (each preset's final\n"
    "reconstruction at the training size) and psnr.csv (seconds, then one PSNR column in dB\n"
    "per preset, one row per checkpoint). Files of those names already there are replaced;\n"
    "none may be the picture raced on or the --json file (refused before the race starts).\n";

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
        {"threads", "CPU threads (default: all cores).", "N"},
        {"seed", "Seed of every preset's initial weights and batches (default 1).", "N"},
        {"out-dir", "Write each preset's reconstruction and psnr.csv here (see below).", "DIR"},
        {"json", "Write the results as JSON to this file.", "FILE"},
        {"quiet", "No progress lines on stderr."},
    });
    addKindSettings(p, &tasks::imageTaskType());
    if (!parseOrHelp(p, args, "race", "IMAGE [--seconds S] [--presets a,b,c] [options]",
                     "Race the image presets: each learns the picture for the same time; a table "
                     "compares their PSNR.",
                     1, 1,
                     QString::fromLatin1(kRaceHelp) + "\n" +
                         tasks::imageTaskType().presetHelp(2).prepend("Presets:\n")))
        return ExitOk;
    const RaceOptions o = raceOptions(p);
    const QString given = p.positionalArguments().first();
    checkOutputPaths(raceOutputs(o, given));
    const std::shared_ptr<tasks::ImageTask> task = openRaceImage(given, p);
    task->releaseRows(); // each preset uploads the picture's rows itself (ImageRace)
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
    tasks::ImageRace race(task, {o.seconds, o.checkpoints, o.threads, o.seed, !o.outDir.isEmpty()});
    std::vector<RaceEntry> entries;
    for (const QString& preset : o.presets) {
        try {
            entries.push_back(race.run(preset));
        } catch (const EngineError& e) {
            throw DataError(std::string("race: ") + e.what());
        }
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

namespace {

const CommandRegistration kRaceCommand(
    {60, "race", " IMAGE        race the image presets on one picture for equal time (--seconds S)",
     "", runRace});

} // namespace

} // namespace il::cli
