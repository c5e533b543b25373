// The race's one chart: a PSNR-vs-seconds curve per preset. While a preset trains its curve is
// dashed, points of the PSNR its training batches suggest (RaceTickUpdate::psnrEstimate); once
// its checkpoints are measured on the whole picture, the curve is replaced by them and drawn
// solid. Each series keeps its point list and is redrawn with one replace() per update.
#pragma once

#include "ImageRace.h"

#include <QObject>
#include <QPointF>

#include <vector>

class QChart;
class QChartView;
class QLineSeries;
class QValueAxis;

namespace il::app {

class RaceChart : public QObject {
    Q_OBJECT
public:
    // Draws into view (which keeps the chart).
    explicit RaceChart(QChartView* view, QObject* parent = nullptr);

    // One empty series per preset, the x axis from 0 to seconds.
    void reset(const QStringList& presets, double seconds);
    // A live estimate of preset index at a time.
    void addEstimate(int index, double seconds, double psnr);
    // The measured checkpoints (NaN ones left out), and the final weights when they came later,
    // replace the estimates.
    void setMeasured(int index, const tasks::RaceEntry& entry);
    // Drops the estimates of a preset that ended without measurements.
    void clearEstimates(int index);

    QChart* chart() const { return m_chart; }
    int seriesCount() const { return static_cast<int>(m_series.size()); }
    QLineSeries* series(int index) const { return m_series[static_cast<size_t>(index)]; }

private:
    void setPoints(int index, std::vector<QPointF> points, bool measured);
    void fitY();

    QChart* m_chart;
    QValueAxis* m_x;
    QValueAxis* m_y;
    std::vector<QLineSeries*> m_series;
    std::vector<QList<QPointF>> m_points;
};

} // namespace il::app
