// The studio's main window: the Data, Model and Training panels as tabs on the left, the run
// bar (Start, Pause, Stop, Reset weights, progress), the Charts and the Output on the right.
// It owns the Session and wires panels, menus (File, Edit, Samples, Train, Help), drag and
// drop, recent files and the settings that persist (geometry, splitters, recent files, last
// folders). Closing while training, or with unsaved training, asks whether to save; so does
// every action that would replace unsaved training (UnsavedModelGuard), and the run button says
// "Start new model" when Start would not continue the trained weights. Questions go through
// Dialogs::question. A GPU that fails during a run brings up a warning
// (object name "deviceFailureBox") with Continue on CPU and Close.
#pragma once

#include <QMainWindow>

#include <memory>

namespace Ui {
class MainWindow;
}

class QLabel;

namespace il::app {

class DatasetPanel;
class ModelExporter;
class ModelPanel;
class RaceWindow;
class Session;
class StudioHelp;
class UnsavedModelGuard;
struct StudioTabContext;
struct TrainingOutcome;
struct TrainingUpdate;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // Opens a data file or a model (.safetensors), as the command line and drops do. The file
    // is read and checked first; only one that will open asks to save unsaved training. Errors
    // are shown inline in the Data panel; returns false then, or when the question was
    // cancelled (true when the file opens after a save). missing: how a table treats missing
    // cells (tasks::TaskOptions::missing; empty: the error bar offers the choices).
    bool openFile(const QString& path, const QString& missing = {});
    bool saveModel();
    bool saveModelAs();
    Session* session() const { return m_session; }
    // Opens the race view (Train > Race presets…), made on first use.
    RaceWindow* showRace();
    RaceWindow* raceWindow() const { return m_race; }
    // The welcome page, the Help menu's windows and the concept links.
    StudioHelp* help() const { return m_help; }

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    // A file's name as the title and menus show it ("iris.csv (sample)" for a bundled one).
    static QString displayName(const QString& path);
    // The window's answers to the session's signals (run state, files, saving, messages).
    void connectSession();
    bool openFileNow(const QString& path, const QString& missing = {});
    void openDatasetDialog();
    // Start or Continue; a Start that replaces unsaved training asks first.
    void start();
    // "Start", "Continue" or "Start new model", on the button and in the Train menu.
    void updateStartText();
    void openModelDialog();
    // Asks whether to save a modified model before closing; stops a run when closing.
    struct CloseAnswer {
        bool close = false;
        QString saveTo; // save here first ("" none)
    };
    CloseAnswer maybeSave();
    void addRecent(const QString& path);
    void rebuildRecentMenu();
    void buildSamplesMenu();
    // The setup tabs of studioTabs(), with their View actions.
    void addSetupTabs(const StudioTabContext& context);
    // Train > Reset Weights.
    void connectKeyboardActions();
    void updateRunBar();
    // The progress bar at step of planned (thousandths when it is over what an int holds).
    void showProgress(int64_t step, int64_t planned);
    void updateTitle();
    void onProgress(const TrainingUpdate& update);
    void onFinished(const TrainingOutcome& outcome);
    // Once the stack is valid again, "Fix the layer stack first" leaves the status bar and the
    // run bar.
    void clearStackFailure();
    // Other data, another model or a new model: the last run's end ("Finished 3008 steps…",
    // its verdict) leaves the status bar.
    void clearRunMessage();
    void readSettings();
    void writeSettings();
    // The device of the next run in the status bar, with why CUDA is unavailable in its tooltip.
    void updateDeviceLabel();
    QString cudaLine() const;
    // A device failure (or a GPU that would not start): a warning that does not block, with
    // Continue on CPU and Close.
    void showDeviceFailure(const TrainingOutcome& outcome);

    std::unique_ptr<Ui::MainWindow> m_ui;
    Session* m_session;
    QLabel* m_deviceLabel;
    DatasetPanel* m_dataPanel = nullptr; // the Data tab, made by addSetupTabs
    ModelPanel* m_modelPanel = nullptr;  // the Model tab
    UnsavedModelGuard* m_guard;          // a child
    ModelExporter* m_exporter;           // a child: File > Export Model
    RaceWindow* m_race = nullptr;        // a child window, made by showRace()
    StudioHelp* m_help = nullptr;        // a child, made in the constructor
    // Closing with a save: the window waits for the worker's modelSaved, then closes.
    enum class Closing { No, Saving, Saved };
    Closing m_closing = Closing::No;
    QString m_stackFailure; // the status bar's message since Start refused an invalid stack
    QString m_runMessage;   // the status bar's message since the last run ended
};

} // namespace il::app
