#include "Cli.h"
#include "AtomicFile.h"
#include "BackendRegistry.h"
#include "DataFileRecord.h"
#include "Errors.h"
#include "ImageFile.h"
#include "PrintableText.h"
#include "Samples.h"

#include <QFile>
#include <QFileInfo>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <unistd.h>

namespace il::cli {

bool parseOrHelp(QCommandLineParser& parser, const QStringList& args, const QString& command,
                 const QString& synopsis, const QString& description, int minPositional,
                 int maxPositional, const QString& extraHelp)
{
    parser.setApplicationDescription(description);
    const QCommandLineOption help({"h", "help"}, "Show this help.");
    parser.addOption(help);
    QStringList full = args;
    full.prepend("ironlearn-cli " + command);
    if (!parser.parse(full))
        throw UsageError(parser.errorText().toStdString() + " (see: ironlearn-cli " +
                         command.toStdString() + " --help)");
    if (parser.isSet(help)) {
        QString text = parser.helpText();
        // QCommandLineParser prints "Usage: <program> [options]"; show the real synopsis.
        const auto firstNewline = text.indexOf('\n');
        text = "Usage: ironlearn-cli " + command + " " + synopsis + text.mid(firstNewline);
        if (!extraHelp.isEmpty()) text += "\n" + extraHelp;
        std::fputs(text.toUtf8().constData(), stdout);
        return false;
    }
    const auto n = parser.positionalArguments().size();
    if (n < minPositional || n > maxPositional)
        throw UsageError("usage: ironlearn-cli " + command.toStdString() + " " +
                         synopsis.toStdString() + " (see --help)");
    return true;
}

namespace {

// "must be a learning rate from 1e-12 to 1000000" or, for a range without a name, "must be
// between 1 and 8".
std::string mustBe(const QString& name, const ValueRange& range)
{
    return "--" + name.toStdString() + " must be " +
           (range.what ? range.describe()
                       : "between " + ValueRange::formatBound(range.min) + " and " +
                             ValueRange::formatBound(range.max));
}

} // namespace

double doubleOption(const QCommandLineParser& p, const QString& name, double fallback,
                    const ValueRange& range)
{
    if (!p.isSet(name)) return fallback;
    bool ok = false;
    const double v = p.value(name).toDouble(&ok);
    if (!ok || !std::isfinite(v))
        throw UsageError("--" + name.toStdString() + ": " +
                         io::quoted(p.value(name)).toStdString() + " is not a number");
    if (!range.contains(v))
        throw UsageError(mustBe(name, range) + ", got " +
                         io::printable(p.value(name)).toStdString());
    return v;
}

double doubleOption(const QCommandLineParser& p, const QString& name, double fallback, double min,
                    double max)
{
    return doubleOption(p, name, fallback, ValueRange{min, max, nullptr});
}

int64_t intOption(const QCommandLineParser& p, const QString& name, int64_t fallback,
                  const ValueRange& range)
{
    if (!p.isSet(name)) return fallback;
    bool ok = false;
    const qlonglong v = p.value(name).toLongLong(&ok);
    if (!ok)
        throw UsageError("--" + name.toStdString() + ": " +
                         io::quoted(p.value(name)).toStdString() + " is not a whole number");
    if (!range.contains(static_cast<double>(v)))
        throw UsageError(mustBe(name, range) + ", got " + std::to_string(v));
    return v;
}

int64_t intOption(const QCommandLineParser& p, const QString& name, int64_t fallback, int64_t min,
                  int64_t max)
{
    return intOption(p, name, fallback,
                     ValueRange{static_cast<double>(min), static_cast<double>(max), nullptr});
}

namespace {

// Every kind's settings, or type's; a name two kinds share is listed once (the first kind's).
std::vector<tasks::KindSetting> kindSettings(const tasks::TaskType* type)
{
    std::vector<tasks::KindSetting> out;
    QStringList seen;
    for (const tasks::TaskType* t : tasks::taskTypes()) {
        if (type && t != type) continue;
        for (const tasks::KindSetting& s : t->settings()) {
            if (seen.contains(s.name)) continue;
            seen << s.name;
            out.push_back(s);
        }
    }
    return out;
}

} // namespace

void addKindSettings(QCommandLineParser& p, const tasks::TaskType* type)
{
    for (const tasks::KindSetting& s : kindSettings(type))
        p.addOption(s.isFlag() ? QCommandLineOption(s.name, s.help)
                               : QCommandLineOption(s.name, s.help, s.valueName));
}

void readKindSettings(const QCommandLineParser& p, tasks::TaskOptions& options,
                      const tasks::TaskType* type)
{
    for (const tasks::KindSetting& s : kindSettings(type)) {
        if (!p.isSet(s.name)) continue;
        options.settings[s.name] =
            s.isFlag() ? 1 : static_cast<int>(intOption(p, s.name, s.defaultValue, s.min, s.max));
    }
}

// An option only other kinds of task read ("--context" for a table) is refused, saying which
// kinds read it (TaskType::readsOption), instead of training with it ignored. One set to 0
// asks for nothing ("--folds 0", "--test-split 0": off) and passes, so a script may give it for
// every kind of data.
void refuseOtherKindsOptions(const QCommandLineParser& p, const tasks::TaskType& type,
                             const QString& given)
{
    for (const tasks::TaskType* other : tasks::taskTypes()) {
        for (const QString& option : other->optionNames()) {
            if (!p.isSet(option) || type.readsOption(option)) continue;
            bool number = false;
            if (p.value(option).toDouble(&number) == 0 && number) continue;
            QStringList readers;
            for (const tasks::TaskType* t : tasks::taskTypes())
                if (t->readsOption(option)) readers << t->title().toLower();
            throw UsageError(("--" + option + " applies to " + readers.join(" and ") + ", not to " +
                              type.title().toLower() + " (" + given + ")")
                                 .toStdString());
        }
    }
}

// A kind's setting given with --resume that differs from the model's: the model continues on the
// data read as it was trained (its saved task), so the value would be ignored; it is refused,
// naming the model's own. A setting that only changes how much of the data trains (the image
// size, an upper bound) is left to the saved task.
void refuseChangedSettings(const QCommandLineParser& p, const tasks::Task& task,
                           const tasks::TaskOptions& given, const QString& modelPath)
{
    tasks::TaskOptions saved;
    task.describeOptions(saved);
    const tasks::TaskType& type = task.type();
    for (const tasks::KindSetting& s : type.settings()) {
        if (!p.isSet(s.name) || s.amountOnly) continue;
        const int own = type.setting(saved, s.name);
        if (type.setting(given, s.name) == own) continue;
        const std::string trained =
            s.isFlag() ? (own ? "with --" : "without --") + s.name.toStdString()
                       : "with a " + s.label.toStdString() + " of " + std::to_string(own);
        throw UsageError("--" + s.name.toStdString() + ": " + modelPath.toStdString() +
                         " was trained " + trained + ", and --resume continues it so (leave --" +
                         s.name.toStdString() + " out)");
    }
}

QString printableLines(const QString& text)
{
    QStringList lines = text.split('\n');
    for (QString& line : lines)
        line = io::printable(line);
    return lines.join('\n');
}

QString formatLoss(double v)
{
    if (std::isnan(v)) return "-";
    return QString::number(v, 'g', 5);
}

ProgressPrinter::ProgressPrinter(bool quiet) : m_quiet(quiet), m_tty(isatty(fileno(stderr)) != 0) {}

void ProgressPrinter::operator()(const Progress& p)
{
    // A notice (a stall, a divergence, a recovery) is a warning, not progress: even --quiet
    // prints it, on a line of its own.
    if (!p.notice.empty()) {
        finish();
        std::fprintf(stderr, "note: %s\n", p.notice.c_str());
    }
    if (m_quiet) return;
    const QString loss = "loss " + formatLoss(p.trainLoss) +
                         (std::isnan(p.valLoss) ? QString() : "  val " + formatLoss(p.valLoss));
    const QString rate =
        QString::number(p.stepsPerSecond, 'f', p.stepsPerSecond < 10 ? 2 : 0) + " steps/s";
    if (m_tty) {
        const double frac = p.plannedSteps > 0 ? static_cast<double>(p.step) / p.plannedSteps : 0;
        const int width = 24;
        const int filled = std::clamp(static_cast<int>(frac * width), 0, width);
        const QString bar = QString(filled, QChar(0x2588)) + QString(width - filled, QChar(0x2591));
        const QString line = QString("\r%1 %2% step %3  %4  %5  ETA %6\x1b[K")
                                 .arg(bar)
                                 .arg(static_cast<int>(frac * 100), 3)
                                 .arg(p.step)
                                 .arg(loss, rate, formatDuration(p.eta));
        std::fputs(line.toUtf8().constData(), stderr);
        std::fflush(stderr);
        m_drawn = true;
        return;
    }
    // Plain lines for logs and pipes: at most one per second, plus every evaluation.
    const bool last = p.plannedSteps > 0 && p.step >= p.plannedSteps;
    if (p.elapsed - m_lastLine < 1.0 && !last && m_lastLine > -1e8) return;
    m_lastLine = p.elapsed;
    const QString line =
        QString("step %1%2  epoch %3  %4  lr %5  %6  ETA %7\n")
            .arg(p.step)
            .arg(p.plannedSteps > 0 ? "/" + QString::number(p.plannedSteps) : QString())
            .arg(p.epoch, 0, 'f', 2)
            .arg(loss)
            .arg(p.lr, 0, 'g', 3)
            .arg(rate, formatDuration(p.eta));
    std::fputs(line.toUtf8().constData(), stderr);
}

void ProgressPrinter::finish()
{
    if (m_tty && m_drawn) std::fputs("\n", stderr);
    m_drawn = false;
}

namespace {

std::atomic<Trainer*> g_activeTrainer{nullptr};
std::atomic<bool> g_stopRequested{false};

extern "C" void onStopSignal(int sig)
{
    Trainer* trainer = g_activeTrainer.load();
    if (trainer && !g_stopRequested.exchange(true)) {
        trainer->requestCancel();
        return;
    }
    io::removeTemporaryFilesNow();
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

} // namespace

void installSignalHandlers()
{
    for (const int sig : {SIGINT, SIGTERM, SIGHUP})
        std::signal(sig, onStopSignal);
}

void setActiveTrainer(Trainer* trainer)
{
    g_stopRequested = false;
    g_activeTrainer = trainer;
}

void writeTextFileAtomically(const QString& path, const QByteArray& text)
{
    const io::IoResult r = io::writeFileAtomically(path, text);
    if (!r) throw DataError(r.error.toStdString());
}

void writePngFile(const QString& path, const QImage& image)
{
    const io::IoResult r = io::writePng(path, image);
    if (!r) throw DataError(r.error.toStdString());
}

void checkOutputPaths(const std::vector<OutputPath>& outputs)
{
    for (size_t i = 0; i < outputs.size(); ++i) {
        const OutputPath& o = outputs[i];
        if (o.path.isEmpty()) continue;
        const QString problem = io::outputPathProblem(o.path, o.inputs);
        if (!problem.isEmpty())
            throw UsageError((o.option + " " + o.path + ": " + problem).toStdString());
        for (size_t j = 0; j < i; ++j) {
            const OutputPath& other = outputs[j];
            if (other.path.isEmpty()) continue;
            const QFileInfo a(o.path), b(other.path);
            const bool same = a.exists() && b.exists()
                                  ? a.canonicalFilePath() == b.canonicalFilePath()
                                  : a.absoluteFilePath() == b.absoluteFilePath();
            if (same)
                throw UsageError((other.option + " and " + o.option + " name the same file, " +
                                  o.path + "; each output needs its own")
                                     .toStdString());
        }
    }
}

namespace {
QString g_subject;
} // namespace

void setCommandSubject(const QString& path)
{
    g_subject = path;
}

QString commandSubject()
{
    return g_subject;
}

void checkSavedTask(const QString& modelPath, const QJsonObject& task)
{
    const tasks::TaskType* type = tasks::taskTypeOf(task);
    QString why;
    if (type && !type->checkSaved(task, &why))
        throw DataError((modelPath + ": " + why).toStdString());
}

QString resolveDataPath(const QString& path)
{
    if (path.startsWith(":sample/")) {
        const QString file = io::resolveSampleReference(path);
        if (!file.isEmpty()) return file;
        const QString dir = io::samplesDirectory();
        throw DataError(("no bundled sample \"" + path.mid(8) + "\" " +
                         (dir.isEmpty() ? "(" + io::samplesDirectoryProblem() + ")"
                                        : "in " + dir + " (see: ironlearn-cli samples)"))
                            .toStdString());
    }
    if (!QFileInfo::exists(path)) throw DataError((path + ": no such file").toStdString());
    if (QFileInfo(path).isDir())
        throw DataError((path + ": is a directory, not a data file").toStdString());
    return path;
}

QByteArray readDataFile(const QString& given)
{
    QByteArray bytes;
    if (const io::IoResult r = io::readDataFile(resolveDataPath(given), bytes, given); !r)
        throw DataError(r.error.toStdString());
    return bytes;
}

std::unique_ptr<Backend> makeBackend(const QString& name, int threads, bool tf32)
{
    if (name.isEmpty() || name == "cpu") return createCpuBackend(threads);
    if (name != "cuda")
        throw UsageError("--backend must be cpu or cuda, not \"" + name.toStdString() + "\"");
    BackendOptions options;
    options.threads = threads;
    options.tf32 = tf32;
    try {
        return createBackend("cuda", options);
    } catch (const BackendError& e) {
        throw DataError(std::string(e.what()) + "; use --backend cpu (see: ironlearn-cli devices)");
    }
}

namespace {

std::vector<Command>& registeredCommands()
{
    static std::vector<Command> all;
    return all;
}

} // namespace

CommandRegistration::CommandRegistration(const Command& command)
{
    registeredCommands().push_back(command);
}

std::vector<Command> commands()
{
    std::vector<Command> all = registeredCommands();
    std::sort(all.begin(), all.end(),
              [](const Command& a, const Command& b) { return a.order < b.order; });
    return all;
}

} // namespace il::cli
