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

class QAreaSeries;
class QChart;
class QGraphicsRectItem;
class QGraphicsSimpleTextItem;
class QLineSeries;
class QScatterSeries;
class QAbstractAxis;
class QValueAxis;
class QTimer;

namespace Ui {
class ChartsPanel;
}

namespace il::app {

class FoldBand;

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
    // The side metric's points as drawn (a names model's innovation rate, in percent); empty
    // when the chart shows none.
    QList<QPointF> sideMetricPoints() const;
    // The ghost series on the loss chart: each one's name ("Run 2 training").
    QStringList ghostSeriesNames() const;
    // The overfitting mark on the loss chart (LossHistory::overfitting): the step its band
    // starts at (NaN when none is shown), its label's full text (the label itself is cut short
    // to the plot's width, the tooltip has it all) and whether the label lies inside the plot.
    double overfitMarkStep() const;
    QString overfitMarkText() const;
    bool overfitLabelInsidePlot() const;
    // The loss axis's range as drawn (min, max) and the validation curve's points: a test checks
    // that the curve stays inside the plot.
    QPointF lossAxisRange() const;
    QList<QPointF> validationPoints() const;
    // Whether a drawn validation point (its marker included) lies outside the plot or under the
    // overfitting label.
    bool validationHidden() const;
    // The mark of the kept weights (Session::verdict): where a run went back to earlier weights
    // (early stopping's best, a table's linear start), a dashed line at that step and a point
    // on the curve, on the loss chart and on the metric chart, named in each chart's legend
    // ("kept: step 64") with the verdict as its tooltip. The step each chart marks (NaN: none),
    // the legend's name and the tooltip.
    double keptMarkStep() const;
    double metricKeptMarkStep() const;
    // The folds' band of a cross-validated table (for tests); null before the panel is built.
    const FoldBand* foldBand() const { return m_foldBand.get(); }
    QString keptMarkText() const;
    QString keptMarkToolTip() const;

signals:
    // The user clicked the loss chart at this step.
    void stepClicked(qint64 step);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    static constexpr double kLabelPad = 3; // around the overfitting label's text, above its box
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
    // The overfitting band from the step the validation loss rose from to the last step, over
    // the loss axis's range [lo, hi], and its label; hidden when there is nothing to mark.
    void updateOverfitMark(double lo, double hi);
    void placeOverfitLabel(); // at the band's left, in the plot (which moves on a resize)
    // The loss axis's top raised so that the curves' markers, and the overfitting label when
    // it shows, sit inside the plot and clear of each other.
    double withHeadroom(double lo, double hi, bool log);
    // The kept weights' mark on both charts over their axes' ranges; hidden without a verdict
    // that went back to earlier weights.
    void updateKeptMark(const QList<QPointF>& validation, const QList<QPointF>& metric, double lo,
                        double hi);

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
    QLineSeries* m_overfitEdge = nullptr; // the band's left edge: the step the rise started
    QLineSeries* m_overfitTop = nullptr;
    QLineSeries* m_overfitBottom = nullptr;
    QAreaSeries* m_overfitBand = nullptr;
    std::unique_ptr<FoldBand> m_foldBand;           // a cross-validation's folds (FoldBand.h)
    QGraphicsRectItem* m_overfitLabelBox = nullptr; // a backing under the text, over the curves
    QGraphicsSimpleTextItem* m_overfitLabel = nullptr;
    QString m_overfitText;             // the label's full text; empty: no mark
    QLineSeries* m_keptLine = nullptr; // the kept weights' step, on the loss chart
    QScatterSeries* m_keptPoint = nullptr;
    QLineSeries* m_metricKeptLine = nullptr; // and on the metric chart
    QScatterSeries* m_metricKeptPoint = nullptr;
    QString m_keptToolTip;           // the verdict; empty: no mark
    double m_headroomPlotHeight = 0; // the plot's height the loss axis's headroom was made for
    double m_overfitStep = NAN, m_overfitHi = NAN;
    std::vector<QLineSeries*> m_ghosts;
    double m_ghostXMax = 0, m_ghostLo = INFINITY, m_ghostHi = -INFINITY; // their extent
    QValueAxis* m_lossX = nullptr;
    QAbstractAxis* m_lossY = nullptr;
    QValueAxis* m_rateX = nullptr;
    QValueAxis* m_rateY = nullptr;
    QValueAxis* m_metricX = nullptr;
    QValueAxis* m_metricY = nullptr;
    QLineSeries* m_side = nullptr; // the task's side metric (names: the innovation rate)
    QValueAxis* m_sideY = nullptr;
    QTimer* m_redrawTimer;
    tasks::MetricInfo m_metricInfo;     // of the open task: the metric chart's titles
    QString m_lossTitle, m_lossToolTip; // the form's generic loss title and tooltip
};

} // namespace il::app
