// Shared pieces of ironlearn-cli: exit codes, errors, option parsing helpers, progress output.
#pragma once

#include "Duration.h"
#include "Task.h"
#include "Trainer.h"

#include <QJsonObject>

#include <QCommandLineParser>
#include <QString>
#include <QStringList>

#include <stdexcept>
#include <vector>

namespace il::cli {

// Exit codes: 0 success, 1 a data or model error, 2 a usage error.
enum ExitCode { ExitOk = 0, ExitDataError = 1, ExitUsage = 2 };

// Thrown for wrong options or arguments (exit 2).
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};
// Thrown for a bad file, model or training failure (exit 1).
class DataError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Parses args (arguments after the subcommand) and handles --help. Returns false if help was
// printed. Throws UsageError on unknown options or a wrong number of positional arguments.
bool parseOrHelp(QCommandLineParser& parser, const QStringList& args, const QString& command,
                 const QString& synopsis, const QString& description, int minPositional,
                 int maxPositional, const QString& extraHelp = {});

// Typed option values; throw UsageError naming the option and the range ("--lr must be a
// learning rate from 1e-12 to 1000000, got -1"; without a ValueRange "between 1 and 8").
double doubleOption(const QCommandLineParser& p, const QString& name, double fallback,
                    const ValueRange& range);
double doubleOption(const QCommandLineParser& p, const QString& name, double fallback, double min,
                    double max);
int64_t intOption(const QCommandLineParser& p, const QString& name, int64_t fallback,
                  const ValueRange& range);
int64_t intOption(const QCommandLineParser& p, const QString& name, int64_t fallback, int64_t min,
                  int64_t max);

// The settings only one kind of task reads (TaskType::settings: --image-size, --context...), as
// options of the parser: every kind's, or only `type`'s. Each is named once.
void addKindSettings(QCommandLineParser& p, const tasks::TaskType* type = nullptr);
// The kinds' settings given on the command line into options.settings, each checked against its
// range (a UsageError naming the option); every kind's, or only `type`'s.
void readKindSettings(const QCommandLineParser& p, tasks::TaskOptions& options,
                      const tasks::TaskType* type = nullptr);
// An option only other kinds read ("--context" for a table) is refused, naming the kinds that
// read it, instead of training with it ignored (one set to 0 passes: it asks for nothing). given:
// the data file as given, for the message.
void refuseOtherKindsOptions(const QCommandLineParser& p, const tasks::TaskType& type,
                             const QString& given);
// With --resume: a kind's setting other than the model's is refused, naming the model's own (the
// model continues on its data read as it was trained; amountOnly settings are left to it).
void refuseChangedSettings(const QCommandLineParser& p, const tasks::Task& task,
                           const tasks::TaskOptions& given, const QString& modelPath);

// Prints training progress: a bar redrawn in place on a terminal, plain lines otherwise; and the
// trainer's notices (Progress::notice), one line each, even when quiet.
class ProgressPrinter {
public:
    explicit ProgressPrinter(bool quiet);
    void operator()(const Progress& p);
    void finish();

private:
    bool m_quiet;
    bool m_tty;
    double m_lastLine = -1e9;
    bool m_drawn = false;
};

using tasks::formatDuration;
QString formatLoss(double v);
// Multi-line text that quotes a file (a metrics summary with class labels), each line through
// io::printable: a label's escape sequence is shown, not obeyed.
QString printableLines(const QString& text);

// Ctrl+C (SIGINT), SIGTERM (what `timeout`, `kill` and desktop sessions send) and SIGHUP (a
// closed terminal): while a training runs, the first one stops it after the current step and
// the model is saved as usual; otherwise, or the second time, the program ends at once, leaving
// no temporary file behind (io::removeTemporaryFilesNow).
void installSignalHandlers();
// The training the signals stop (nullptr: none).
void setActiveTrainer(Trainer* trainer);

// Write path atomically (io::AtomicFile); throw DataError naming the file on failure.
void writeTextFileAtomically(const QString& path, const QByteArray& text);
void writePngFile(const QString& path, const QImage& image);

// An output a command will write: the option that names it ("--out") and its path ("" if
// the option was not given), and the inputs it must not replace.
struct OutputPath {
    QString option;
    QString path;
    QStringList inputs;
};
// Refuses, before any work is done, an output that is a special file (a device, a FIFO, a
// directory), one of its inputs, or the same file as another output: UsageError naming the
// option, e.g. "--out data.csv: is the input file data.csv; choose another name for the output".
void checkOutputPaths(const std::vector<OutputPath>& outputs);

// The model file a command works on: main names it in the messages that would otherwise name
// no file (out of memory, an engine error). Set by each command once it knows the file.
void setCommandSubject(const QString& path);
QString commandSubject();

// A saved model's task metadata, checked (TaskType::checkSaved) before the data is opened, so a
// damaged one is refused as a DataError naming the model file. A model without a known task
// passes: each command says what kind of model it needs.
void checkSavedTask(const QString& modelPath, const QJsonObject& task);

// Resolves ":sample/NAME" (bundled samples) or a plain path; throws DataError if missing.
QString resolveDataPath(const QString& path);
// Reads a data file or a bundled sample (:sample/NAME); throws DataError naming it.
QByteArray readDataFile(const QString& given);

// The backend named by --backend ("" or "cpu": the CPU). Throws DataError with the reason if
// it is unavailable (no NVIDIA driver, no device...), UsageError for an unknown name.
std::unique_ptr<Backend> makeBackend(const QString& name, int threads, bool tf32 = false);

// ---- commands -----------------------------------------------------------------------------
// A command of ironlearn-cli. Each registers itself in its own file (a static CommandRegistration
// there), so a kind of task's commands live in its folder, src/cli/kinds/<kind>/ (predict for
// tables, render and race for images, generate for names), and no list elsewhere names them.
struct Command {
    int order;            // its place in the usage, lowest first
    const char* name;     // "predict"
    const char* usage;    // its line of the usage, after the name: " MODEL DATA  predict every..."
    const char* examples; // lines for the usage's examples, each ending in a newline; or ""
    int (*run)(const QStringList& args);
};
class CommandRegistration {
public:
    explicit CommandRegistration(const Command& command);
};
// Every registered command, in order.
std::vector<Command> commands();

} // namespace il::cli
