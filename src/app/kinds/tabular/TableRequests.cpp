// The requests only table models answer: the decision boundary of a table model, computed on
// the training worker and answered on the GUI thread, and the features a plane can span.
#include "TableRequests.h"

#include "TabularTask.h"

namespace il::app {

namespace {

struct BoundaryAnswer {
    qint64 step = 0;
    tasks::BoundaryGrid grid;
    QString error;
};

BoundaryAnswer boundaryOf(ModelState& m, const tasks::BoundaryPlane& plane)
{
    BoundaryAnswer a;
    a.step = m.state.step;
    const auto* table = dynamic_cast<const tasks::TabularTask*>(m.task.get());
    // No network yet: the table was just opened, or opened again with other options (the
    // Data or Training tab), and the worker holds an empty model until Start builds one. The
    // panel only asks when the session has a table, so this is the answer whatever m.task is.
    if (!m.network) {
        a.error = "Press Start: the network's prediction over two features appears here and "
                  "changes as it learns.";
        return a;
    }
    if (!table) {
        a.error = "Open the data this model was trained on to see its decision boundary (File > "
                  "Open Dataset).";
        return a;
    }
    // A reply must come even when the backend fails, or no request would follow this one.
    try {
        tasks::boundaryGrid(*m.network, table->schema(), table->data(), plane, a.grid, &a.error);
    } catch (const std::exception& e) {
        a.error = QString("no decision boundary: ") + e.what();
    }
    return a;
}

} // namespace

void TableRequests::requestBoundary(const tasks::BoundaryPlane& plane)
{
    m_boundary.want(plane, [this](const tasks::BoundaryPlane& p) { sendBoundary(p); });
}

void TableRequests::sendBoundary(const tasks::BoundaryPlane& plane)
{
    m_session.ask(
        this, [plane](ModelState& m) { return boundaryOf(m, plane); },
        [this, weights = m_session.weightsGeneration()](const BoundaryAnswer& a) {
            // Weights replaced since (other data, a new model): the panel asks again.
            if (weights == m_session.weightsGeneration())
                emit boundaryReady(a.step, a.grid, a.error);
            m_boundary.answered([this](const tasks::BoundaryPlane& p) { sendBoundary(p); });
        });
}

} // namespace il::app
