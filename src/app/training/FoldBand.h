// The folds of a cross-validation (CrossValidation.h) on the loss chart: at each step, the range
// of the folds' validation losses, from the lowest to the highest fold, as a shaded band. The run
// that follows trains on every row and so has no validation curve of its own; the band shows
// what the folds saw, and where the length they chose (the refit's last step) sits in it.
#pragma once

#include <QList>
#include <QPointF>
#include <QString>

#include <vector>

class QAbstractAxis;
class QAreaSeries;
class QChart;
class QLineSeries;

namespace il::app {

class FoldBand {
public:
    // Adds its series to chart, on axis x (hidden until it has curves); setAxis gives its y.
    FoldBand(QChart* chart, QAbstractAxis* x);

    // One curve per fold: (step, validation loss). positiveOnly: a log axis (points <= 0 left
    // out). At most maxPoints steps are drawn, evenly spread.
    void setCurves(const std::vector<QList<QPointF>>& curves, bool positiveOnly, int maxPoints);
    // The loss axis was replaced (a log scale toggled): either may be null.
    void setAxis(QAbstractAxis* oldY, QAbstractAxis* newY);

    bool isEmpty() const;
    // The band's lowest and highest loss and its last step (for the axes); NaN when empty.
    double low() const { return m_low; }
    double high() const { return m_high; }
    double lastStep() const { return m_lastStep; }
    int folds() const { return m_folds; }
    // Its edges, for tests: lower and upper losses at each step drawn.
    QList<QPointF> lowerPoints() const;
    QList<QPointF> upperPoints() const;
    QString name() const;

private:
    QLineSeries* m_lower;
    QLineSeries* m_upper;
    QAreaSeries* m_area;
    double m_low, m_high, m_lastStep;
    int m_folds = 0;
};

} // namespace il::app
