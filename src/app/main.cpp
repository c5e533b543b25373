// ironlearn-studio [FILE] [--train-steps N [--runs JSON] | --race S] [--screenshot PNG]
//                  [--save MODEL] [--quit]
// The thin executable: the window, plus a scripted mode for screenshots and demos.
#include "CpuKernels.h"
#include "CpuThreading.h"
#include "Errors.h"
#include "MainWindow.h"
#include "RaceWindow.h"
#include "Samples.h"
#include "ScriptedRuns.h"
#include "Session.h"
#include "StudioHelp.h"
#include "StudioKind.h"
#include "StudioTabs.h"
#include "ThreadGuard.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QCommandLineParser>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QIcon>
#include <QJsonObject>
#include <QMessageBox>
#include <QPalette>
#include <QStyleFactory>
#include <QTabWidget>
#include <QTimer>
#include <QUrl>

#include <clocale>
#include <cstdio>
#include <memory>
#include <string>

namespace {

// A bad IRONLEARN_SIMD (an unknown target, or one this CPU lacks) is not a reason to refuse to
// start: the studio says so and uses the best target (the CLI and the bench stop instead).
void checkSimdTarget()
{
    try {
        il::simd::applyTargetFromEnvironment();
    } catch (const il::BackendError& e) {
        qunsetenv("IRONLEARN_SIMD"); // the engine then uses the best target, as do child processes
        QMessageBox::warning(nullptr, QApplication::applicationName(),
                             QString::fromStdString(e.what()) +
                                 QStringLiteral("\n\nThe studio uses the best SIMD target (%1) "
                                                "instead.")
                                     .arg(QString::fromStdString(il::simd::activeTarget().name)));
    }
}

// Opens FILE, trains N steps, waits for the outputs, saves a screenshot, quits.
// The Model tab's preset, chosen as a user chooses it; false, with a message, when the open
// data has no preset of that name.
bool choosePreset(il::app::MainWindow& window, const QString& name)
{
    auto* box = window.findChild<QComboBox*>("presetComboBox");
    const int i = box ? box->findData(name) : -1;
    if (i < 0) {
        QStringList names;
        for (int k = 0; box && k < box->count(); ++k)
            if (!box->itemData(k).toString().isEmpty()) names << box->itemData(k).toString();
        std::fprintf(stderr, "ironlearn-studio: --preset: no preset \"%s\" for this data (%s)\n",
                     name.toUtf8().constData(),
                     names.isEmpty() ? "open a data file first"
                                     : names.join(", ").toUtf8().constData());
        return false;
    }
    box->setCurrentIndex(i);
    emit box->activated(i);
    return true;
}

// The table output's tab whose title holds name ("boundary"), or -1.
int tableOutputTab(const il::app::MainWindow& window, const QString& name)
{
    if (auto* tabs = window.findChild<QTabWidget*>("tableOutputTabWidget"))
        for (int i = 0; i < tabs->count(); ++i)
            if (tabs->tabText(i).contains(name, Qt::CaseInsensitive)) return i;
    return -1;
}

// Long: the script's timers and signal handlers (train, save, screenshot, quit) in the order
// they fire; the lambdas capture one another.
void runScript(il::app::MainWindow& window, qint64 steps, const QString& screenshot, bool quit,
               const QString& tab, const QString& save)
{
    using il::app::Session;
    Session* session = window.session();
    // Gives the last signals (evaluation, preview, names) time to arrive and draw, then takes
    // the screenshot and quits.
    // The tab is on screen while it trains too (what it draws live costs the run what it costs
    // a learner: packaging/bench/network_view_cost.sh compares), and again for the screenshot.
    auto showTab = [&window, tab] {
        if (const il::app::StudioTab* setup = il::app::studioTab(tab)) {
            if (auto* show = window.findChild<QAction*>(il::app::studioTabActionName(*setup)))
                show->trigger();
        } else if (const int i = tableOutputTab(window, tab); i >= 0) {
            window.findChild<QTabWidget*>("tableOutputTabWidget")->setCurrentIndex(i);
        }
    };
    showTab();
    auto wrapUp = [&window, screenshot, quit, showTab] {
        QTimer::singleShot(1500, &window, [&window, screenshot, quit, showTab] {
            showTab();
            QTimer::singleShot(300, &window, [&window, screenshot, quit] {
                if (!screenshot.isEmpty() && !window.grab().save(screenshot))
                    std::fprintf(stderr, "ironlearn-studio: cannot write %s\n",
                                 screenshot.toUtf8().constData());
                if (quit) {
                    window.session()->stop(); // the worker finishes when the window goes
                    QApplication::exit(0);
                }
            });
        });
    };
    auto finish = [&window, save, wrapUp] {
        if (save.isEmpty()) return wrapUp();
        Session* session = window.session();
        // Saved on the worker: wrap up once it answers, either way.
        auto answered = std::make_shared<QMetaObject::Connection>();
        auto failed = std::make_shared<QMetaObject::Connection>();
        auto done = [answered, failed, wrapUp] {
            QObject::disconnect(*answered);
            QObject::disconnect(*failed);
            wrapUp();
        };
        *answered = QObject::connect(session, &Session::modelSaved, &window, done);
        *failed =
            QObject::connect(session, &Session::saveFailed, &window, [done](const QString& error) {
                std::fprintf(stderr, "ironlearn-studio: %s\n", error.toUtf8().constData());
                done();
            });
        session->saveModel(save);
    };
    if (steps <= 0) return finish();
    // A budget shorter than the steps asked for is raised to them (early stopping may still
    // end the run sooner).
    if (session->plannedSteps() > 0 && session->plannedSteps() < session->trainedSteps() + steps) {
        il::TrainerConfig config = session->config();
        config.epochs = 0;
        config.steps = session->trainedSteps() + steps;
        session->setConfig(config);
    }
    auto clock = std::make_shared<QElapsedTimer>();
    auto first = std::make_shared<qint64>(-1);
    // N steps more than the model had: a reopened model continues for N steps.
    const qint64 target = session->trainedSteps() + steps;
    QObject::connect(session, &Session::progressed, &window,
                     [clock, first](const il::app::TrainingUpdate& u) {
                         if (*first < 0) {
                             // Time from the first report, as the CLI's own steps/s does.
                             *first = u.step;
                             clock->start();
                         }
                     });
    QObject::connect(
        session, &Session::trainingFinished, &window,
        [&window, session, finish, clock, first](const il::app::TrainingOutcome& outcome) {
            const double seconds = clock->isValid() ? clock->elapsed() / 1000.0 : 0;
            const qint64 done = session->trainedSteps() - std::max<qint64>(*first, 0);
            if (seconds >= 1) // shorter runs end before the first timed report
                std::fprintf(stderr,
                             "ironlearn-studio: trained %lld steps in %.2f s (%.2f steps/s); "
                             "best weights copied %d times in %.3f s\n",
                             static_cast<long long>(done), seconds, done / seconds,
                             outcome.best.copies, outcome.best.copySeconds);
            const il::app::StudioKind* kind = il::app::studioKindOf(session->taskType());
            if (kind && kind->extras().afterScriptedRun) kind->extras().afterScriptedRun(&window);
            finish();
        });
    QTimer::singleShot(200, session, [session, finish, target] {
        // Start can refuse without a run (a model opened without its data, a race going): say
        // why and go on to the screenshot, instead of waiting for a run that never comes.
        QString refusal;
        const auto said = QObject::connect(session, &Session::message, session,
                                           [&refusal](const QString& text) { refusal = text; });
        session->start();
        QObject::disconnect(said);
        if (session->runState() != Session::RunState::Idle) {
            session->stopAfterStep(target); // exactly N steps, not N and what the reports miss
            return;
        }
        if (!refusal.isEmpty()) { // a failed build reports through trainingFinished instead
            std::fprintf(stderr, "ironlearn-studio: --train-steps: nothing trained: %s\n",
                         refusal.toUtf8().constData());
            finish();
        }
    });
}

// Opens the race view, races every preset for `seconds`, then saves a screenshot of the race
// view and quits when asked.
void runRace(il::app::MainWindow& window, double seconds, const QString& screenshot, bool quit)
{
    il::app::RaceWindow* race = window.showRace();
    if (auto* spin = race->findChild<QDoubleSpinBox*>("secondsSpinBox")) spin->setValue(seconds);
    QTimer::singleShot(300, race, [race, screenshot, quit] {
        if (!race->startRace()) return;
        auto* timer = new QTimer(race);
        QObject::connect(timer, &QTimer::timeout, race, [race, timer, screenshot, quit] {
            if (race->isRacing()) return;
            timer->stop();
            QTimer::singleShot(500, race, [race, screenshot, quit] {
                if (!screenshot.isEmpty() && !race->grab().save(screenshot))
                    std::fprintf(stderr, "ironlearn-studio: cannot write %s\n",
                                 screenshot.toUtf8().constData());
                if (quit) QApplication::exit(0);
            });
        });
        timer->start(200);
    });
}

// What the command line (or a file manager, through the .desktop file's %f) names: a path, a
// file:// URL, or :sample/NAME for a bundled sample (left as it is when there is no such sample,
// so that opening it says so).
QString commandLineFile(const QString& given)
{
    if (given.startsWith(QStringLiteral("file:"))) return QUrl(given).toLocalFile();
    const QString sample = il::io::resolveSampleReference(given);
    return sample.isEmpty() ? given : sample;
}

void useDarkPalette()
{
    QApplication::setStyle(QStyleFactory::create("Fusion"));
    QPalette p;
    p.setColor(QPalette::Window, QColor(45, 45, 48));
    p.setColor(QPalette::WindowText, QColor(225, 225, 225));
    p.setColor(QPalette::Base, QColor(30, 30, 32));
    p.setColor(QPalette::AlternateBase, QColor(40, 40, 44));
    p.setColor(QPalette::Text, QColor(225, 225, 225));
    p.setColor(QPalette::Button, QColor(55, 55, 60));
    p.setColor(QPalette::ButtonText, QColor(225, 225, 225));
    p.setColor(QPalette::Highlight, QColor(60, 130, 220));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::ToolTipBase, QColor(60, 60, 64));
    p.setColor(QPalette::ToolTipText, QColor(225, 225, 225));
    p.setColor(QPalette::PlaceholderText, QColor(160, 160, 160));
    p.setColor(QPalette::Disabled, QPalette::Text, QColor(120, 120, 120));
    p.setColor(QPalette::Disabled, QPalette::WindowText, QColor(120, 120, 120));
    p.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(120, 120, 120));
    QApplication::setPalette(p);
}

// The command line the studio reads.
void addOptions(QCommandLineParser& parser)
{
    parser.setApplicationDescription(
        "Train neural networks by pointing and clicking.\n\n"
        "FILE is a table (CSV, TSV or JSON), a picture (PNG, JPEG, BMP, GIF, WebP), a list of "
        "names (a text file, one per line), a model saved by the studio or ironlearn-cli "
        "(.safetensors), or :sample/NAME for a bundled sample (ironlearn-cli samples lists "
        "them). Without FILE the studio opens on its welcome page.");
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument("FILE", "A data file (table, image, names) or a model to open.");
    parser.addOptions({
        {"race",
         "Race the image presets on FILE for S seconds each (Train > Race presets…); "
         "--screenshot then shows the race view.",
         "S"},
        {"train-steps", "Train this many steps after opening FILE (more, for a model), then stop.",
         "N"},
        {"runs",
         "With FILE and --train-steps N: train a new model for N steps for each entry of "
         "this JSON array of settings (the model file's keys, e.g. "
         "'[{\"schedule\":{\"lr_max\":0.01}},{\"schedule\":{\"lr_max\":0.03}}]'), "
         "then compare the last two (--screenshot shows the comparison).",
         "JSON"},
        {"screenshot", "Save a picture of the window here when done (with --train-steps).", "PNG"},
        {"tab",
         "Show this setup tab in the screenshot (" + il::app::studioTabIds() +
             "), or this tab of a table's output (predictions or boundary).",
         "NAME"},
        {"list-tabs", "Print the setup tabs' names for --tab, one a line, and quit."},
        {"preset",
         "Start FILE's model from this layer preset (the Model tab's list, e.g. linear) before "
         "--train-steps.",
         "NAME"},
        {"size", "Window size, e.g. 1280x800.", "WxH"},
        {"palette", "dark: a dark Fusion palette (to check how the studio looks in dark themes).",
         "NAME"},
        {"save", "Save the model here when the script is done.", "MODEL"},
        {"quit", "Quit when the script is done."},
    });
}

// --help, --version and --list-tabs answer without a window, so they run before any QApplication:
// one cannot start where there is no display (a terminal over ssh, a build machine).
bool answersWithoutWindow(int argc, char* argv[])
{
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--help" || arg == "-h" || arg == "-?" || arg == "--version" || arg == "-v" ||
            arg == "--list-tabs")
            return true;
    }
    return false;
}

// Whether Qt would find no window system to show the studio on: no platform chosen
// (QT_QPA_PLATFORM, -platform) and no X11 or Wayland display. QApplication aborts the process
// there, with Qt's own message and a core dump.
bool noDisplay(int argc, char* argv[])
{
    for (const char* name : {"QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"})
        if (qEnvironmentVariableIsSet(name)) return false;
    for (int i = 1; i < argc; ++i)
        if (std::string(argv[i]) == "-platform" || std::string(argv[i]) == "--platform")
            return false;
    return true;
}

// Answers them without a window: the help and version as QCommandLineParser gives them (an
// unknown option is refused the same way), the tabs' ids; anything else, where there is no
// display, is refused with what to do (exit 1).
int answerWithoutWindow(int argc, char* argv[])
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setOrganizationName("IronLearn");
    QCoreApplication::setApplicationName("Iron Learn Studio");
    QCoreApplication::setApplicationVersion(IRONLEARN_VERSION);
    QCommandLineParser parser;
    addOptions(parser);
    parser.process(app); // --help and --version print and exit here
    if (parser.isSet("list-tabs")) {
        for (const il::app::StudioTab& tab : il::app::studioTabs())
            std::printf("%s\n", tab.id.toUtf8().constData());
        return 0;
    }
    std::fprintf(stderr,
                 "ironlearn-studio: no display to show the window on (DISPLAY and "
                 "WAYLAND_DISPLAY are not set); ironlearn-cli trains without one, and a scripted "
                 "run (--train-steps, --screenshot) runs with QT_QPA_PLATFORM=offscreen\n");
    return 1;
}

} // namespace

// Long: start-up in order: the application, its options and the dispatch on them; the parser
// and the window are read throughout.
int main(int argc, char* argv[])
{
    il::applyCpuThreadingDefaults(argv); // may re-execute the program: first
    if (answersWithoutWindow(argc, argv) || noDisplay(argc, argv))
        return answerWithoutWindow(argc, argv);
    QApplication app(argc, argv);
    // QApplication set the C library's locale from the environment: keep its numbers in the C
    // form (the engine's messages); what the studio shows to the learner goes through QLocale.
    std::setlocale(LC_NUMERIC, "C");
    il::forbidEngineWorkOnThisThread(); // the GUI thread: the training worker runs the engine
    QApplication::setOrganizationName("IronLearn");
    QApplication::setApplicationName("Iron Learn Studio");
    QApplication::setApplicationVersion(IRONLEARN_VERSION);
    // The menu entry's id (packaging/linux): on Wayland the window is matched to it by this name.
    QGuiApplication::setDesktopFileName(QStringLiteral("io.github.ironlearn.studio"));
    QIcon icon;
    for (int size : {16, 32, 48, 64, 128, 256})
        icon.addFile(QStringLiteral(":/icons/ironlearn-studio-%1.png").arg(size),
                     QSize(size, size));
    QApplication::setWindowIcon(icon);

    QCommandLineParser parser;
    addOptions(parser);
    parser.process(app);
    checkSimdTarget();

    QList<QJsonObject> runs;
    if (parser.isSet("runs")) {
        QString error;
        if (parser.positionalArguments().isEmpty() || parser.value("train-steps").toLongLong() <= 0)
            error = "needs FILE and --train-steps N";
        else
            il::app::parseRunOverrides(parser.value("runs").toUtf8(), il::TrainerConfig{}, runs,
                                       &error);
        if (!error.isEmpty()) {
            std::fprintf(stderr, "ironlearn-studio: --runs: %s\n", error.toUtf8().constData());
            return 2;
        }
    }
    if (parser.value("palette") == "dark") useDarkPalette();
    il::app::MainWindow window;
    if (parser.isSet("size")) {
        const QStringList wh = parser.value("size").split('x');
        if (wh.size() == 2) window.resize(wh[0].toInt(), wh[1].toInt());
    }
    if (parser.isSet("tab") && !il::app::studioTab(parser.value("tab")) &&
        tableOutputTab(window, parser.value("tab")) < 0) {
        std::fprintf(stderr,
                     "ironlearn-studio: --tab %s: no such tab (%s; or a table's predictions or "
                     "boundary)\n",
                     parser.value("tab").toUtf8().constData(),
                     il::app::studioTabIds().toUtf8().constData());
        return 2;
    }
    window.show();
    if (parser.isSet("race")) {
        const QString path = commandLineFile(parser.positionalArguments().value(0));
        if (!path.isEmpty()) window.openFile(path);
        runRace(window, parser.value("race").toDouble(), parser.value("screenshot"),
                parser.isSet("quit"));
        return QApplication::exec();
    }
    const bool script = parser.isSet("train-steps") || parser.isSet("screenshot") ||
                        parser.isSet("quit") || parser.isSet("save");
    auto startScript = [&window, &parser, runs] {
        if (!runs.isEmpty())
            return il::app::runScriptedRuns(
                window, runs, parser.value("train-steps").toLongLong(), parser.value("screenshot"),
                parser.isSet("size") ? window.size() : QSize(), parser.isSet("quit"));
        runScript(window, parser.value("train-steps").toLongLong(), parser.value("screenshot"),
                  parser.isSet("quit"), parser.value("tab"), parser.value("save"));
    };
    const QStringList files = parser.positionalArguments();
    if (files.isEmpty()) window.help()->showWelcomeOnFirstStart();
    const QString path = commandLineFile(files.value(0));
    // A model opens on the worker thread: the script starts once it is open (or failed to).
    if (script && path.endsWith(".safetensors", Qt::CaseInsensitive)) {
        il::app::Session* session = window.session();
        auto opened = std::make_shared<QMetaObject::Connection>();
        auto failed = std::make_shared<QMetaObject::Connection>();
        auto once = [opened, failed, startScript] {
            QObject::disconnect(*opened);
            QObject::disconnect(*failed);
            startScript();
        };
        *opened = QObject::connect(session, &il::app::Session::modelOpened, &window, once);
        *failed = QObject::connect(session, &il::app::Session::modelFailed, &window, once);
        window.openFile(path);
    } else {
        if (!path.isEmpty()) window.openFile(path);
        if (parser.isSet("preset") && !choosePreset(window, parser.value("preset"))) return 2;
        if (script) startScript();
    }
    return QApplication::exec();
}
