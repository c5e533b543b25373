// ironlearn-cli: the training engine, headless.
#include "Cli.h"
#include "CpuKernels.h"
#include "CpuThreading.h"
#include "Errors.h"
#include "PrintableText.h"

#include <QCoreApplication>

#include <clocale>
#include <cstdio>

namespace {

// The usage: its commands and their examples come from the commands themselves (Cli.h).
QString usage()
{
    QString commands, examples;
    for (const il::cli::Command& c : il::cli::commands()) {
        commands += QString("  %1%2\n").arg(QLatin1String(c.name), QLatin1String(c.usage));
        examples += QLatin1String(c.examples);
    }
    return "Usage: ironlearn-cli COMMAND [options]\n"
           "\n"
           "Train small neural networks from the command line (the engine of Iron Learn Studio).\n"
           "\n"
           "Commands:\n" +
           commands +
           "\n"
           "  ironlearn-cli COMMAND --help    options of a command\n"
           "  ironlearn-cli --version\n"
           "\n"
           "Examples:\n" +
           examples +
           "\n"
           "Environment:\n"
           "  IRONLEARN_SIMD          SIMD target of the CPU kernels: ssse3, sse4, avx2 or avx512\n"
           "                          (default: the best this CPU runs; see devices)\n"
           "  IRONLEARN_CUDA_MODULE   the CUDA module to load (libironlearn-cuda.so), instead of\n"
           "                          looking in <prefix>/" IRONLEARN_INSTALL_MODULEDIR "\n"
           "  IRONLEARN_DISABLE_CUDA  when set (and not 0), CUDA is not used\n"
           "  IRONLEARN_SAMPLES_DIR   the directory of the samples, instead of\n"
           "                          <prefix>/share/ironlearn/samples\n"
           "\n"
           "Files:\n"
           "  <prefix>/share/ironlearn/samples  the bundled samples (:sample/NAME); <prefix> is "
           "the\n"
           "                          directory above the program's, /usr for the Debian "
           "packages\n"
           "  <prefix>/" IRONLEARN_INSTALL_MODULEDIR "/libironlearn-cuda.so\n"
           "                          the CUDA backend (package ironlearn-cuda)\n"
           "\n"
           "Exit status: 0 success, 1 data or model error, 2 usage error.\n";
}

// One line on stderr: prefix, then the message with anything a file put in it (a newline, an
// escape sequence, a bidirectional override) shown escaped (io::printable).
void printError(const QString& prefix, const char* message)
{
    const QString line = prefix + il::io::printable(QString::fromUtf8(message));
    std::fprintf(stderr, "%s\n", line.toUtf8().constData());
}

// "error: m.safetensors: " for errors whose message names no file.
QString subjectPrefix()
{
    const QString subject = il::cli::commandSubject();
    return "error: " + (subject.isEmpty() ? QString() : il::io::printable(subject) + ": ");
}

} // namespace

int main(int argc, char** argv)
{
    il::applyCpuThreadingDefaults(argv); // may re-execute the program: first
    QCoreApplication app(argc, argv);
    // QCoreApplication set the C library's locale from the environment; numbers printed with
    // printf stay in the C form ("0.5", never "0,5") whatever LC_ALL says. (What the program
    // reads never depends on it: NumberText.h.)
    std::setlocale(LC_NUMERIC, "C");
    QCoreApplication::setApplicationName("ironlearn-cli");
    QCoreApplication::setApplicationVersion(IRONLEARN_VERSION);
    il::cli::installSignalHandlers();
    QStringList args = QCoreApplication::arguments().mid(1);
    if (args.isEmpty()) {
        std::fputs(usage().toUtf8().constData(), stderr);
        return il::cli::ExitUsage;
    }
    const QString command = args.takeFirst();
    try {
        if (command == "--help" || command == "-h" || command == "help") {
            std::fputs(usage().toUtf8().constData(), stdout);
            return il::cli::ExitOk;
        }
        if (command == "--version" || command == "-v") {
            std::printf("ironlearn-cli %s\n", IRONLEARN_VERSION);
            return il::cli::ExitOk;
        }
        // The environment's SIMD choice is the program's, not a data file's: a bad one is
        // reported before any command names its file.
        il::simd::applyTargetFromEnvironment();
        for (const il::cli::Command& c : il::cli::commands())
            if (command == QLatin1String(c.name)) return c.run(args);
        printError("ironlearn-cli: unknown command " + il::io::quoted(command, 40),
                   " (see: ironlearn-cli --help)");
        return il::cli::ExitUsage;
    } catch (const il::cli::UsageError& e) {
        printError("ironlearn-cli " + il::io::printable(command, 40) + ": ", e.what());
        return il::cli::ExitUsage;
    } catch (const il::cli::DataError& e) {
        printError("error: ", e.what());
        return il::cli::ExitDataError;
    } catch (const il::EngineError& e) {
        printError(subjectPrefix(), e.what());
        return il::cli::ExitDataError;
    } catch (const std::bad_alloc&) {
        printError(subjectPrefix(), "out of memory");
        return il::cli::ExitDataError;
    } catch (const std::exception& e) {
        // The last resort: a library's exception no command turned into one of ours. Still one
        // line naming the file, and exit 1 like every failure that is not the options' fault.
        printError(subjectPrefix() + "internal error: ", e.what());
        return il::cli::ExitDataError;
    }
}
