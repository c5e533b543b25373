// The studio's scripted runs (ironlearn-studio FILE --train-steps N --runs JSON): a JSON array of
// setting overrides, each trained as a new model, then the last two runs compared. Each entry
// holds trainer-config keys as model files write them (io::trainerConfigToJson), read with
// io::trainerConfigFromJson over the settings FILE opened with and a budget of N steps; so
// `[{"schedule":{"lr_max":0.01}},{"schedule":{"lr_max":0.03}}]` trains two runs that differ
// in their learning rate only. Each run is what a user does: the settings set on the session
// (the panels follow), Reset weights when a model has trained, Start, the end and its
// evaluation awaited; then the Runs tab's Compare on the last two.
#pragma once

#include "RunCompareDialog.h"
#include "Trainer.h"

#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QSize>

namespace il::app {

class MainWindow;
class RunCompareDialog;

// Reads --runs: a JSON array of objects. Each is checked over base (TrainerConfig as FILE opens
// it): a key trainerConfigToJson does not write (at any depth), a wrong type or value fails
// with one line naming the run ("run 2: unknown setting schedule.lr_mxa").
bool parseRunOverrides(const QByteArray& json, const TrainerConfig& base,
                       QList<QJsonObject>& entries, QString* error);
// One entry over config (left unchanged on failure).
bool applyRunOverride(const QJsonObject& entry, TrainerConfig& config, QString* error);

class ScriptedRuns : public QObject {
    Q_OBJECT
public:
    // steps: each run's budget and its stop (more than its schedule plans is not trained).
    ScriptedRuns(MainWindow& window, QList<QJsonObject> entries, qint64 steps);

    // Trains the runs one after the other, on the data the window has open.
    void start();
    // The comparison of the last two runs once done (null before, or with fewer than two).
    RunCompareDialog* comparison() const { return m_comparison; }

signals:
    // Every run trained and evaluated, the comparison open (comparison() says which).
    void finished();
    // A run could not be set up or start: why. Nothing more is trained.
    void failed(const QString& error);

private:
    void startNext();
    void onProgress();
    void onTrainingFinished();
    void onEvaluated();
    void compareLastTwo();

    MainWindow& m_window;
    QList<QJsonObject> m_entries;
    qint64 m_steps = 0;
    TrainerConfig m_base; // the settings FILE opened with, the budget N steps
    int m_next = 0;       // the entry the next run trains
    bool m_training = false;
    bool m_awaitingEvaluation = false;
    QPointer<RunCompareDialog> m_comparison;
};

// Runs the script and, once done, saves a picture of the comparison (at size, if valid) to
// screenshot ("" for none) and quits when asked; exit status 1 if a run cannot start.
void runScriptedRuns(MainWindow& window, QList<QJsonObject> entries, qint64 steps,
                     const QString& screenshot, QSize size, bool quit);

} // namespace il::app
