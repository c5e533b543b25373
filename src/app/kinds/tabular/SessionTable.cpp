// Session: what only a table has. The decision boundary of a table model, computed on the
// training worker (between two steps while training, so the grid sees one consistent set of
// weights) and answered on the GUI thread; the features a plane can span; the table's missing
// cells.
#include "Session.h"

#include "TabularTask.h"

#include <QFileInfo>

#include <algorithm>

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

void Session::findFailedMissingValues(const CheckedData& c)
{
    // A table that fails for its missing cells: what each choice would do, for the error bar.
    m_failedMissingPath.clear();
    m_failedMissing = {};
    tasks::MissingValues missing;
    if (c.options.missing == "fail" && !c.bytes.isEmpty() &&
        tasks::tabularTaskType().supportsFile(c.path) &&
        tasks::findMissingValues(QFileInfo(c.path).fileName(), c.bytes, c.options, missing,
                                 nullptr) &&
        missing.any()) {
        m_failedMissingPath = c.path;
        m_failedMissing = missing;
    }
}

void Session::updateMissingValues()
{
    m_missing = {};
    const auto* table = dynamic_cast<const tasks::TabularTask*>(m_task.get());
    if (!table) return;
    const auto& columns = table->head().columns;
    if (std::none_of(columns.begin(), columns.end(),
                     [](const io::CsvColumn& c) { return c.missingCount > 0; }))
        return;
    tasks::findMissingValues(QFileInfo(m_dataPath).fileName(), m_dataBytes, m_options, m_missing,
                             nullptr);
}

std::vector<std::pair<int, QString>> Session::planeAxes(int* featureCount) const
{
    if (featureCount) *featureCount = 0;
    const auto* table = dynamic_cast<const tasks::TabularTask*>(m_task.get());
    if (!table) return {};
    const tasks::TabularSchema& s = table->schema();
    if (featureCount) *featureCount = static_cast<int>(s.features.size());
    std::vector<std::pair<int, QString>> axes;
    for (int f : tasks::boundaryAxes(s))
        axes.emplace_back(f, s.features[f]);
    return axes;
}

void Session::requestBoundary(const tasks::BoundaryPlane& plane)
{
    m_boundaryWanted = plane;
    if (!m_boundaryBusy) sendBoundary();
}

void Session::sendBoundary()
{
    if (!m_boundaryWanted) return;
    const tasks::BoundaryPlane plane = *m_boundaryWanted;
    m_boundaryWanted.reset();
    m_boundaryBusy = true;
    m_worker->postAndReply(
        this, [plane](ModelState& m) { return boundaryOf(m, plane); },
        [this, weights = m_weightsGeneration](const BoundaryAnswer& a) {
            m_boundaryBusy = false;
            // Weights replaced since (other data, a new model): the panel asks again.
            if (weights == m_weightsGeneration) emit boundaryReady(a.step, a.grid, a.error);
            sendBoundary();
        });
}

} // namespace il::app
