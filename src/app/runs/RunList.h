// The runs of a studio session, so a learner can change one thing and see what it did. A run
// begins when Start trains a new model (after opening data, a stack or seed change, Reset
// weights) and grows with every Continue of that model: its curve goes on, and a setting
// changed for the Continue is noted in the run (Run::changes) rather than starting another.
// Each run keeps what the session had when it ended: the settings it began with, its stack, its
// loss curves (decimated copies of the session's LossHistory), the final losses and the last
// evaluation's metrics, and its output (the reconstruction for images, sample names for names).
//
// RunList is the table model the Runs tab shows (one row a run, its check box: whether its
// curve is drawn faintly on the loss chart) and listens to the Session for everything it
// records; it does no maths of its own. The run the session is training or has just trained is
// the current run: the charts draw it live, the others are "earlier runs".
#pragma once

#include "Trainer.h"

#include <QAbstractTableModel>
#include <QColor>
#include <QImage>
#include <QJsonObject>
#include <QList>
#include <QPointF>
#include <QStringList>

#include <cmath>
#include <vector>

namespace il::app {

class Session;
struct TrainingOutcome;
struct TrainingUpdate;
struct Evaluation;

struct Run {
    int number = 0;        // 1, 2, 3… in the order the runs began
    QString dataKey;       // the data and the options that make its task: ghosts stay on it
    QString dataName;      // "iris.csv"
    QString dataSummary;   // the task's description line
    QString spec;          // the layer stack
    TrainerConfig config;  // the settings as it began (the budget: its last Continue's)
    QString device;        // what it trained on
    int64_t firstStep = 0; // the model's step when the run began (0: a new model)
    int64_t lastStep = 0;
    double seconds = 0; // training time, pauses excluded
    bool running = false;
    QString ending; // "finished", "stopped", "stopped early"… ("" while it runs)
    // Settings changed for a Continue: "at step 200: Learning rate 0.01 → 0.005".
    QStringList changes;
    QList<QPointF> train;      // the smoothed training loss (as the chart draws it), by step
    QList<QPointF> validation; // the validation loss, by step
    double trainLoss = NAN, valLoss = NAN; // at the end
    QJsonObject metrics;                   // the last evaluation (Task::evaluate's keys)
    QString metricsSummary;                // its text for people
    QImage picture;    // images: the reconstruction at the end, at most kPictureSide
    QStringList names; // names: sample names from the last evaluation
    bool ghost = true; // drawn faintly on the loss chart while it is an earlier run
    QColor colour;     // its ghost's colour (and its swatch in the list)
};

class RunList : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { NumberColumn, StepsColumn, ResultColumn, SettingsColumn, ColumnCount };
    static constexpr int kCurvePoints = 1000; // per curve kept
    static constexpr int kPictureSide = 160;  // longest side of a kept reconstruction

    explicit RunList(QObject* parent = nullptr);
    // Records the runs of this session from now on.
    void setSession(Session* session);

    int count() const { return static_cast<int>(m_runs.size()); }
    const Run& run(int row) const { return m_runs.at(static_cast<size_t>(row)); }
    // The row of the run the session trains or just trained; -1 when the next Start begins a
    // new run (new data, a new model, Reset weights).
    int currentRow() const { return m_current; }
    // The session's data, as Run::dataKey says it ("" when none is open).
    QString currentDataKey() const;
    // Copies the current run's curves from the session now (they are also copied at its end).
    void captureCurrent();
    // Earlier runs of the open data whose curves the loss chart draws now: each one's row.
    std::vector<int> ghostRows() const;
    // The Runs tab's "Show earlier runs" switch (each run also has its own check box).
    bool ghostsShown() const { return m_ghostsShown; }
    void setGhostsShown(bool shown);
    void setGhost(int row, bool shown);
    void removeRun(int row);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role) override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

signals:
    // Which curves the loss chart should draw changed (a run added, ended, ticked, removed).
    void ghostsChanged();
    // A run's record changed (its metrics, output or curves): row.
    void runChanged(int row);

private:
    void onRunState();
    void onProgress(const TrainingUpdate& update);
    void onFinished(const TrainingOutcome& outcome);
    void onEvaluated(const Evaluation& evaluation);
    void onFrame();
    void beginRun();
    void continueRun();
    void copyCurves(Run& run) const;
    void keepPicture(Run& run) const;
    void rowChanged(int row);

    Session* m_session = nullptr;
    std::vector<Run> m_runs;
    int m_current = -1;
    int m_nextNumber = 1;
    bool m_wasIdle = true;
    TrainerConfig m_lastConfig; // the current run's settings at its last Start or Continue
    double m_lastElapsed = 0;   // seconds of the current Start or Continue so far
    bool m_begunNow = false;    // the current run began with this Start (not a Continue)
    bool m_ghostsShown = true;
};

} // namespace il::app
