// The main window: its panels wired to the session, the run bar and the status bar (opening and
// saving files: MainWindowFiles.cpp).
#include "MainWindow.h"
#include "ui_MainWindow.h"

#include "BestWeightsControl.h"
#include "Counting.h"
#include "DatasetPanel.h"
#include "Dialogs.h"
#include "Duration.h"
#include "ImageOutputPage.h"
#include "LayerStackModel.h"
#include "ModelExporter.h"
#include "ModelPanel.h"
#include "RaceWindow.h"
#include "RunList.h"
#include "Samples.h"
#include "ScreenFit.h"
#include "Session.h"
#include "StudioHelp.h"
#include "StudioKind.h"
#include "StudioSettings.h"
#include "StudioTabs.h"
#include "UnsavedModelGuard.h"

#include <QDir>
#include <QFontMetrics>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QScreen>
#include <QUndoStack>

namespace il::app {

namespace {

const char* kStartTip = "Train the network: show it the data batch by batch and nudge every "
                        "weight against its gradient.";

} // namespace

// Long: the window's wiring in one place: panels to the session, then the menus' actions and
// the run bar's buttons, mostly one connect a line.
MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), m_ui(std::make_unique<Ui::MainWindow>()), m_session(new Session(this)),
      m_deviceLabel(new QLabel),
      m_guard(new UnsavedModelGuard(m_session, this, [this] { return saveModel(); })),
      m_exporter(new ModelExporter(this, m_session, [this] { return saveModel(); }))
{
    m_ui->setupUi(this);
    m_ui->mainSplitter->setStretchFactor(0, 0);
    m_ui->mainSplitter->setStretchFactor(1, 1);
    m_ui->mainSplitter->setSizes({420, 860});
    m_ui->workSplitter->setStretchFactor(0, 2);
    m_ui->workSplitter->setStretchFactor(1, 3);
    m_ui->chartsPanel->setSession(m_session);
    m_ui->outputPanel->setSession(m_session);
    auto* runs = new RunList(this); // the Runs tab and the loss chart's earlier runs
    runs->setSession(m_session);
    m_ui->chartsPanel->setRuns(runs);
    addSetupTabs({m_session, runs});

    m_deviceLabel->setObjectName("deviceStatusLabel");
    statusBar()->addPermanentWidget(m_deviceLabel);
    updateDeviceLabel();
    connect(m_session, &Session::deviceChanged, this, &MainWindow::updateDeviceLabel);
    connect(m_session, &Session::devicesChanged, this, &MainWindow::updateDeviceLabel);

    // Edit: the layer stack's undo history.
    QAction* undo = m_modelPanel->undoStack()->createUndoAction(this, "&Undo");
    QAction* redo = m_modelPanel->undoStack()->createRedoAction(this, "&Redo");
    undo->setShortcut(QKeySequence::Undo);
    redo->setShortcut(QKeySequence::Redo);
    undo->setObjectName("actionUndo");
    redo->setObjectName("actionRedo");
    m_ui->editMenu->addAction(undo);
    m_ui->editMenu->addAction(redo);

    connect(m_ui->actionOpenDataset, &QAction::triggered, this, &MainWindow::openDatasetDialog);
    connect(m_ui->actionOpenModel, &QAction::triggered, this, &MainWindow::openModelDialog);
    connect(m_ui->actionSaveModel, &QAction::triggered, this, &MainWindow::saveModel);
    connect(m_ui->actionSaveModelAs, &QAction::triggered, this, &MainWindow::saveModelAs);
    connect(m_ui->actionExportPyTorch, &QAction::triggered, this,
            [this] { m_exporter->start(ModelExporter::Format::PyTorch); });
    connect(m_ui->actionExportOnnx, &QAction::triggered, this,
            [this] { m_exporter->start(ModelExporter::Format::Onnx); });
    // Offered only when the export would take the model (the reason on the action otherwise).
    m_exporter->offer(m_ui->actionExportPyTorch, ModelExporter::Format::PyTorch);
    m_exporter->offer(m_ui->actionExportOnnx, ModelExporter::Format::Onnx);
    connect(m_ui->actionExportReconstruction, &QAction::triggered, this,
            [this] { m_ui->outputPanel->page<ImageOutputPage>()->exportPng(); });
    connect(m_ui->actionQuit, &QAction::triggered, this, &QWidget::close);
    connect(m_ui->actionAbout, &QAction::triggered, this, [this] {
        QMessageBox::about(this, "About Iron Learn Studio",
                           "<b>Iron Learn Studio " IRONLEARN_VERSION "</b><br>Train real neural "
                           "networks by pointing and clicking, and watch them learn.<br><br>"
                           "Training on: " +
                               m_session->deviceDescription().toHtmlEscaped() + "<br>" +
                               cudaLine().toHtmlEscaped() + "<br><br>MIT license.");
    });
    connect(m_dataPanel, &DatasetPanel::openRequested, this, &MainWindow::openDatasetDialog);
    connect(m_dataPanel, &DatasetPanel::missingChoiceMade, this,
            [this](const QString& path, const QString& missing) { openFile(path, missing); });

    connect(m_ui->startButton, &QPushButton::clicked, this, &MainWindow::start);
    connect(m_ui->actionStart, &QAction::triggered, this, &MainWindow::start);
    connect(m_ui->pauseButton, &QPushButton::toggled, m_session, &Session::setPaused);
    connect(m_ui->actionPause, &QAction::triggered, m_ui->pauseButton, &QPushButton::click);
    connect(m_ui->stopButton, &QPushButton::clicked, m_session, &Session::stop);
    connect(m_ui->actionStop, &QAction::triggered, m_session, &Session::stop);
    connect(m_ui->resetButton, &QPushButton::clicked, this,
            [this] { m_guard->run("Reset weights", [this] { m_session->resetWeights(); }); });
    connect(m_ui->actionRacePresets, &QAction::triggered, this, &MainWindow::showRace);
    new BestWeightsControl(m_session, m_ui->trainMenu, m_ui->actionResetWeights, m_ui->workLayout,
                           m_ui->runFrame, this);
    connectKeyboardActions();
    connect(m_ui->outputPanel->page<ImageOutputPage>(), &ImageOutputPage::raceRequested, this,
            &MainWindow::showRace);

    connectSession();
    connect(m_ui->chartsPanel, &ChartsPanel::stepClicked,
            m_ui->outputPanel->page<ImageOutputPage>(), &ImageOutputPage::showStep);

    buildSamplesMenu();
    rebuildRecentMenu();
    m_help = new StudioHelp(this, m_session, m_ui->helpMenu);
    readSettings();
    updateRunBar();
    updateTitle();
}

MainWindow::~MainWindow() = default;

void MainWindow::connectSession()
{
    connect(m_session, &Session::runStateChanged, this, &MainWindow::updateRunBar);
    connect(m_session, &Session::racingChanged, this, &MainWindow::updateRunBar);
    connect(m_session, &Session::modelChanged, this, &MainWindow::updateRunBar);
    connect(m_session, &Session::historyReset, this, &MainWindow::updateRunBar);
    // A stack or seed edit decides whether Start continues the trained weights.
    connect(m_session, &Session::specChanged, this, &MainWindow::updateRunBar);
    connect(m_session, &Session::specChanged, this, &MainWindow::clearStackFailure);
    // Start waits while the layer text cannot be read.
    connect(m_modelPanel, &ModelPanel::textErrorChanged, this, &MainWindow::updateRunBar);
    // A new model (new data, a model opened, fresh weights) has no run that ended yet.
    connect(m_session, &Session::modelChanged, this, &MainWindow::clearRunMessage);
    connect(m_session, &Session::historyReset, this, &MainWindow::clearRunMessage);
    connect(m_session, &Session::configChanged, this, &MainWindow::updateRunBar);
    connect(m_session, &Session::datasetOpened, this, [this] {
        updateRunBar(); // data attached to a model opened without it: Continue, its budget
        addRecent(m_session->dataPath());
        m_ui->setupTabWidget->setCurrentWidget(m_dataPanel);
    });
    connect(m_session, &Session::progressed, this, &MainWindow::onProgress);
    // The folds of a cross-validated table before its run: the bar counts the fold's steps.
    connect(m_session, &Session::crossValidationProgressed, this,
            [this](int fold, int folds, qint64 step, qint64 planned) {
                showProgress(step, planned);
                m_ui->rateLabel->setText(
                    QString("Cross-validation: fold %1 of %2").arg(fold + 1).arg(folds));
            });
    connect(m_session, &Session::trainingFinished, this, &MainWindow::onFinished);
    connect(m_session, &Session::modifiedChanged, this, &MainWindow::updateTitle);
    connect(m_session, &Session::message, this,
            [this](const QString& text) { statusBar()->showMessage(text, 15000); });
    connect(m_session, &Session::modelSaved, this, [this](const QString& path) {
        addRecent(path);
        updateTitle();
        statusBar()->showMessage("Saved the model to " + QDir::toNativeSeparators(path), 10000);
        if (m_closing == Closing::Saving) {
            m_closing = Closing::Saved;
            close();
        }
    });
    connect(m_session, &Session::saveFailed, this, [this](const QString& error) {
        if (m_closing == Closing::Saving) m_closing = Closing::No;
        Dialogs::warning(this, "Save Model", "The model was not saved: " + error);
    });
    connect(m_session, &Session::modelOpened, this, [this](const QString& path) {
        addRecent(path);
        settings::rememberFolderOf(settings::Folder::Models, path);
        updateTitle();
    });
    connect(m_session, &Session::modelFailed, this, [this](const QString& error) {
        m_dataPanel->showError(error, "Could not open the model.");
        m_ui->setupTabWidget->setCurrentWidget(m_dataPanel);
    });
}

RaceWindow* MainWindow::showRace()
{
    if (!m_race) {
        m_race = new RaceWindow(m_session, this);
        fitToScreen(m_race); // its form's 1200x820 on a smaller screen
        fitToScreenWhenShown(m_race);
    }
    m_race->show();
    m_race->raise();
    m_race->activateWindow();
    return m_race;
}

void MainWindow::start()
{
    if (m_session->runState() != Session::RunState::Idle) return;
    // What runs is what the layer text says: typed text not yet taken is taken now, and text
    // that cannot be read stops here (every way to start comes through here).
    if (!m_modelPanel->applyText()) {
        m_ui->setupTabWidget->setCurrentWidget(m_modelPanel);
        return;
    }
    if (m_session->needsNewModel())
        m_guard->run("Starting a new model", [this] { m_session->start(); });
    else
        m_session->start();
}

void MainWindow::updateStartText()
{
    const bool idle = m_session->runState() == Session::RunState::Idle;
    const int64_t trained = m_session->trainedSteps();
    const QString steps = QLocale().toString(static_cast<qlonglong>(trained));
    QString text = "&Start", tip = kStartTip;
    if (idle && trained > 0 && m_session->needsNewModel()) {
        text = "&Start new model";
        tip = "The layer stack no longer fits the trained weights: this starts a new model from "
              "fresh weights and replaces the trained one (" +
              steps + " steps).";
    } else if (idle && trained > 0) {
        text = "&Continue";
        tip = "Continue training the model from step " + steps + ", with the weights it has.";
        if (m_session->budgetSpent())
            tip += " The planned steps are done: it trains for as many again (the budget in "
                   "the Training panel grows; a cosine schedule then starts from a higher rate "
                   "again).";
    }
    const QString textError = m_modelPanel->textError();
    if (idle && !textError.isEmpty())
        tip = "Waits until the layer text in the Model tab can be read: " + textError;
    m_ui->actionStart->setText(text);
    m_ui->actionStart->setToolTip(tip);
    m_ui->actionStart->setStatusTip(tip);
    m_ui->startButton->setText(text);
    m_ui->startButton->setToolTip(tip);
}

void MainWindow::addSetupTabs(const StudioTabContext& context)
{
    // The tabs of studioTabs(), numbered in its order, each with its View action (Ctrl+1...).
    const std::vector<StudioTab>& tabs = studioTabs();
    for (size_t i = 0; i < tabs.size(); ++i) {
        QWidget* page = tabs[i].make(context);
        page->setObjectName(tabs[i].objectName);
        const int at = m_ui->setupTabWidget->addTab(page, studioTabTitle(i));
        m_ui->setupTabWidget->setTabToolTip(at, tabs[i].toolTip);
        QAction* show = m_ui->viewMenu->addAction("&" + studioTabTitle(i));
        show->setObjectName(studioTabActionName(tabs[i]));
        show->setToolTip(tabs[i].toolTip);
        if (i < 9) show->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + int(i))));
        connect(show, &QAction::triggered, this,
                [this, page] { m_ui->setupTabWidget->setCurrentWidget(page); });
    }
    // The two tabs the window itself talks to (the others only follow the session).
    m_dataPanel = m_ui->setupTabWidget->findChild<DatasetPanel*>();
    m_modelPanel = m_ui->setupTabWidget->findChild<ModelPanel*>();
    Q_ASSERT(m_dataPanel && m_modelPanel);
}

void MainWindow::connectKeyboardActions()
{
    // Train > Reset Weights: the run bar's button, with its question about unsaved training.
    connect(m_ui->actionResetWeights, &QAction::triggered, m_ui->resetButton, &QPushButton::click);
}

void MainWindow::updateRunBar()
{
    const auto state = m_session->runState();
    const bool idle = state == Session::RunState::Idle;
    const bool textRead = m_modelPanel->textError().isEmpty();
    m_ui->startButton->setEnabled(idle && m_session->task() && !m_session->isRacing() && textRead);
    updateStartText();
    {
        QSignalBlocker block(m_ui->pauseButton);
        m_ui->pauseButton->setChecked(state == Session::RunState::Paused);
    }
    m_ui->pauseButton->setEnabled(!idle);
    m_ui->pauseButton->setText(state == Session::RunState::Paused ? "&Resume" : "&Pause");
    m_ui->stopButton->setEnabled(!idle);
    m_ui->resetButton->setEnabled(idle && m_session->hasModel());
    m_ui->actionResetWeights->setEnabled(m_ui->resetButton->isEnabled());
    m_ui->actionStart->setEnabled(m_ui->startButton->isEnabled());
    m_ui->actionPause->setEnabled(!idle);
    m_ui->actionStop->setEnabled(!idle);
    m_ui->actionOpenDataset->setEnabled(idle);
    m_ui->actionOpenModel->setEnabled(idle);
    m_ui->samplesMenu->setEnabled(idle);
    m_ui->recentMenu->setEnabled(idle && !m_ui->recentMenu->isEmpty());
    m_ui->actionSaveModel->setEnabled(m_session->hasModel());
    m_ui->actionSaveModelAs->setEnabled(m_session->hasModel());
    m_ui->exportModelMenu->setEnabled(m_session->hasModel());
    const StudioKind* kind = studioKindOf(m_session->taskType());
    const bool pictures = kind && kind->extras().picture;
    m_ui->actionExportReconstruction->setEnabled(pictures);
    m_ui->actionRacePresets->setEnabled(pictures && m_session->task());
    if (idle) {
        // The steps the model has (a reopened model's too) of the steps its budget plans.
        const int64_t trained = m_session->trainedSteps();
        showProgress(trained, std::max(m_session->plannedSteps(), trained));
        m_ui->rateLabel->setText(trained > 0
                                     ? "Trained " + tasks::countOf(trained, "step", QLocale())
                                 : m_session->task() ? "Ready"
                                                     : "Open data to begin");
        if (!textRead && m_session->task())
            m_ui->rateLabel->setText("Waiting for layer text that can be read (Model tab)");
    }
    if (state == Session::RunState::Paused) m_ui->rateLabel->setText("Paused");
    updateTitle();
}

void MainWindow::showProgress(int64_t step, int64_t planned)
{
    planned = std::max<int64_t>(planned, 1); // (0, 0) would make the bar a busy indicator
    step = std::clamp<int64_t>(step, 0, planned);
    // A QProgressBar holds ints; very long runs are shown in thousandths.
    const bool scaled = planned > INT32_MAX;
    m_ui->progressBar->setRange(0, scaled ? 1000 : static_cast<int>(planned));
    // Wide enough for its text at the end ("3008 / 3008 steps", as QProgressBar writes numbers)
    // with a character's room at both ends: squeezed, the text ran off the bar and under the
    // chunk's edge. No more: the run bar's width is part of the window's minimum (1024 px).
    QLocale numbers = m_ui->progressBar->locale();
    numbers.setNumberOptions(numbers.numberOptions() | QLocale::OmitGroupSeparator);
    const QString end = numbers.toString(m_ui->progressBar->maximum());
    const QFontMetrics metrics(m_ui->progressBar->font());
    m_ui->progressBar->setMinimumWidth(
        std::max(110, metrics.horizontalAdvance(
                          m_ui->progressBar->format().replace("%v", end).replace("%m", end)) +
                          2 * metrics.averageCharWidth()));
    m_ui->progressBar->setValue(scaled ? static_cast<int>(1000 * step / planned)
                                       : static_cast<int>(step));
}

void MainWindow::updateTitle()
{
    QString name =
        m_session->modelPath().isEmpty() ? m_session->dataPath() : m_session->modelPath();
    setWindowTitle((name.isEmpty() ? QString() : displayName(name) + "[*] — ") +
                   "Iron Learn Studio");
    setWindowModified(m_session->isModified());
}

void MainWindow::onProgress(const TrainingUpdate& u)
{
    showProgress(u.step, u.plannedSteps);
    if (m_session->runState() == Session::RunState::Paused) return;
    m_ui->rateLabel->setText(
        QString("%1 steps/s · %2 left")
            .arg(QLocale().toString(u.stepsPerSecond, 'f', u.stepsPerSecond < 10 ? 1 : 0))
            .arg(tasks::formatDuration(u.eta, "–")));
}

void MainWindow::onFinished(const TrainingOutcome& outcome)
{
    updateRunBar();
    if (outcome.failed) {
        const bool gpuFailed = outcome.reason == StopReason::DeviceFailure;
        m_ui->rateLabel->setText(QString("<span style='color:#d33'>%1</span>")
                                     .arg(gpuFailed ? "Stopped: the GPU failed"
                                          : outcome.deviceUnavailable
                                              ? "The GPU is unavailable"
                                              : "Stopped: see the status bar"));
        statusBar()->showMessage(outcome.message);
        m_runMessage = outcome.message;
        // Start refused an invalid stack: the message holds until the stack is fixed.
        if (!m_modelPanel->stackModel()->isValid()) m_stackFailure = outcome.message;
        if (gpuFailed || outcome.deviceUnavailable) showDeviceFailure(outcome);
        return;
    }
    m_ui->rateLabel->setText(outcome.reason == StopReason::Cancelled ? "Stopped" : "Finished");
    QString message = outcome.message;
    if (!message.isEmpty()) message[0] = message[0].toUpper();
    statusBar()->showMessage(message, 20000);
    m_runMessage = message;
}

void MainWindow::clearRunMessage()
{
    // The session's verdict on a table follows as a message that begins with the run's end.
    if (!m_runMessage.isEmpty() && statusBar()->currentMessage().startsWith(m_runMessage))
        statusBar()->clearMessage();
    m_runMessage.clear();
}

void MainWindow::clearStackFailure()
{
    if (m_stackFailure.isEmpty() || !m_modelPanel->stackModel()->isValid()) return;
    if (statusBar()->currentMessage() == m_stackFailure) statusBar()->clearMessage();
    m_stackFailure.clear();
    updateRunBar(); // the run bar's "Stopped: see the status bar" goes too
}

QString MainWindow::cudaLine() const
{
    const BackendStatus& cuda = m_session->cudaStatus();
    if (!m_session->cudaProbed()) return "CUDA: looking for an NVIDIA GPU\u2026";
    if (cuda.available) return "CUDA: " + QString::fromStdString(cuda.device);
    return "CUDA unavailable: " + QString::fromStdString(cuda.reason);
}

void MainWindow::updateDeviceLabel()
{
    const bool cuda = m_session->device().backend == "cuda";
    m_deviceLabel->setText(cuda ? "Device: NVIDIA GPU (CUDA)" : "Device: CPU");
    m_deviceLabel->setToolTip("Where the next run trains: " + m_session->deviceDescription() +
                              "\n" + cudaLine() + "\nChoose in the Training panel.");
}

void MainWindow::showDeviceFailure(const TrainingOutcome& outcome)
{
    const bool failed = outcome.reason == StopReason::DeviceFailure;
    QString text = outcome.message;
    if (!text.isEmpty()) text[0] = text[0].toUpper();
    if (!text.isEmpty() && !text.endsWith('.')) text += '.';
    auto* box = new QMessageBox(
        QMessageBox::Warning, failed ? "The GPU Failed" : "The GPU Is Unavailable",
        failed ? "Training stopped: the GPU failed." : "Training could not start on the GPU.",
        QMessageBox::NoButton, this);
    box->setObjectName("deviceFailureBox");
    box->setAttribute(Qt::WA_DeleteOnClose);
    // A failed device whose weights could not be rebuilt on the CPU (the message says why)
    // offers no way on; otherwise the model and the device choice are on the CPU now.
    const bool canContinue = !failed || outcome.movedToCpu;
    box->setInformativeText(text +
                            (canContinue ? "\n\nThe device is set to the CPU for now." : ""));
    QPushButton* cpu = nullptr;
    if (canContinue) {
        cpu = box->addButton(m_session->trainedSteps() > 0 ? "Continue on CPU" : "Train on CPU",
                             QMessageBox::AcceptRole);
        cpu->setObjectName("continueOnCpuButton");
        box->setDefaultButton(cpu);
    }
    QPushButton* close = box->addButton(QMessageBox::Close);
    close->setObjectName("closeButton");
    // Not modal in the event loop: training signals, the charts and the tests carry on.
    connect(box, &QMessageBox::buttonClicked, this, [this, cpu](QAbstractButton* button) {
        if (cpu && button == cpu && m_session->runState() == Session::RunState::Idle)
            m_session->start();
    });
    box->open();
}

void MainWindow::readSettings()
{
    const settings::WindowLayout layout = settings::windowLayout();
    if (!restoreGeometry(layout.geometry)) {
        const QRect screen =
            this->screen() ? this->screen()->availableGeometry() : QRect(0, 0, 1280, 800);
        resize(std::min(1280, screen.width()), std::min(800, screen.height()));
    }
    // A geometry saved on a bigger screen: inside this one, now and once framed.
    fitToScreen(this);
    fitToScreenWhenShown(this);
    restoreState(layout.state);
    m_ui->mainSplitter->restoreState(layout.mainSplitter);
    m_ui->workSplitter->restoreState(layout.workSplitter);
}

void MainWindow::writeSettings()
{
    settings::setWindowLayout({saveGeometry(), saveState(), m_ui->mainSplitter->saveState(),
                               m_ui->workSplitter->saveState()});
}

} // namespace il::app
