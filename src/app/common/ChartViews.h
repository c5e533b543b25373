// Putting a chart into a QChartView made by a .ui form (every studio chart goes through here),
// and round ticks for a value axis.
#pragma once

#include <QChart>
#include <QChartView>
#include <QValueAxis>

#include <cmath>

namespace il::app {

// view shows chart from now on and owns it. A QChartView starts with a chart of its own, and
// setChart hands that one back to the caller rather than deleting it: it is deleted here (found
// by LeakSanitizer: every window leaked one default chart per chart view).
inline void installChart(QChartView* view, QChart* chart)
{
    QChart* previous = view->chart();
    view->setChart(chart);
    if (previous != chart) delete previous;
    // A chart does nothing with keys: as a Tab stop it would take focus and show no sign of it.
    view->setFocusPolicy(Qt::NoFocus);
}

// [lo, hi] widened to round numbers, with ticks 1, 2 or 5 times a power of ten apart, about three
// intervals: labels that read well ("3000", not "2.77e+03") and never crowd a small chart.
// (QValueAxis::applyNiceNumbers() could pick eight ticks for a 120 px chart, and QtCharts then
// elided every label to "...".)
inline void setNiceTicks(QValueAxis* axis, double lo, double hi)
{
    if (!(hi > lo)) hi = lo + 1;
    const double raw = (hi - lo) / 3;
    const double power = std::pow(10.0, std::floor(std::log10(raw)));
    // The smallest round step (1, 2 or 5 times a power of ten) that gives at most three
    // intervals once the ends are rounded out to it: four labels fit the smallest charts
    // (110 px high at 1024x700), five did not (QtCharts elided them all to "...").
    double step = 10 * power;
    for (double m : {1.0, 2.0, 5.0, 10.0, 20.0}) {
        step = m * power;
        if (std::ceil(hi / step) - std::floor(lo / step) <= 3.0 + 1e-9) break;
    }
    lo = std::floor(lo / step) * step;
    hi = std::ceil(hi / step) * step;
    axis->setTickType(QValueAxis::TicksDynamic);
    axis->setTickAnchor(0);
    axis->setLabelFormat("%g"); // round ticks print short
    // The larger interval first, so no moment has a wide range and a fine interval: millions of
    // ticks.
    if (step < axis->tickInterval()) {
        axis->setRange(lo, hi);
        axis->setTickInterval(step);
    } else {
        axis->setTickInterval(step);
        axis->setRange(lo, hi);
    }
}

} // namespace il::app
