// Putting a chart into a QChartView made by a .ui form (every studio chart goes through here).
#pragma once

#include <QChart>
#include <QChartView>

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

} // namespace il::app
