// The Charts panel (Qt Charts): the training and validation loss streaming live, on a linear or
// logarithmic axis; the learning rate, with the planned curve of the chosen schedule drawn
// before training starts; and the task's metric (PSNR, accuracy or validation cross-entropy).
// Each redraw hands every series a decimated point list with one QXYSeries::replace() call, so
// a run of 100,000 steps draws as fast as a short one (and the history is bounded: a longer
// run keeps merged points, LossHistory.h). Colours follow the system palette.
#pragma once

#include "TaskType.h"

#include <QList>
#include <QPointF>
#include <QWidget>

#include <cmath>
#include <memory>
#include <vector>

class QChart;
class QLineSeries;
class QAbstractAxis;
class QValueAxis;
class QTimer;

namespace Ui {
class ChartsPanel;
}

namespace il::app {

class RunList;
class Session;

class ChartsPanel : public QWidget {
    Q_OBJECT
public:
    explicit ChartsPanel(QWidget* parent = nullptr);
    ~ChartsPanel() override;

    void setSession(Session* session);
    // Earlier runs of the open data are drawn faintly behind the live curves ("ghosts"): the
    // ones runs->ghostRows() names (the Runs tab ticks them, and switches them all off).
    void setRuns(RunList* runs);
    // Points drawn per series at most (the history keeps up to LossHistory::kMaxKept).
    static constexpr int kMaxPoints = 2000;

    // Tests: the points on screen now.
    int trainPointCount() const;
    int validationPointCount() const;
    int plannedLearningRatePointCount() const;
    // The metric chart's points (step, value) as drawn.
    QList<QPointF> metricPoints() const;
    // The ghost series on the loss chart: each one's name ("Run 2 training").
    QStringList ghostSeriesNames() const;

signals:
    // The user clicked the loss chart at this step.
    void stepClicked(qint64 step);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    void scheduleRedraw();
    void redraw();
    void updatePlannedRate();
    void setLogScale(bool on);
    void applyPalette();
    void reset();
    // Makes the ghost series again from the run list (runs, ticks or the axis changed).
    void rebuildGhosts();
    // The validation series only for data with validation; the loss title says when the
    // training loss includes label smoothing (then the validation loss, without it, can lie
    // below it).
    void updateLegend();

    std::unique_ptr<Ui::ChartsPanel> m_ui;
    Session* m_session = nullptr;
    QChart* m_lossChart;
    QChart* m_rateChart;
    QChart* m_metricChart;
    QLineSeries* m_train = nullptr;
    QLineSeries* m_trainSmooth = nullptr;
    QLineSeries* m_validation = nullptr;
    QLineSeries* m_plannedRate = nullptr;
    QLineSeries* m_rate = nullptr;
    QLineSeries* m_metric = nullptr;
    RunList* m_runs = nullptr;
    std::vector<QLineSeries*> m_ghosts;
    double m_ghostXMax = 0, m_ghostLo = INFINITY, m_ghostHi = -INFINITY; // their extent
    QValueAxis* m_lossX = nullptr;
    QAbstractAxis* m_lossY = nullptr;
    QValueAxis* m_rateX = nullptr;
    QValueAxis* m_rateY = nullptr;
    QValueAxis* m_metricX = nullptr;
    QValueAxis* m_metricY = nullptr;
    QTimer* m_redrawTimer;
    tasks::MetricInfo m_metricInfo;     // of the open task: the metric chart's titles
    QString m_lossTitle, m_lossToolTip; // the form's generic loss title and tooltip
};

} // namespace il::app
