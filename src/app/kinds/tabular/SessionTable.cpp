// Session: the table's missing cells, for the Data tab and the error bar's choices.
#include "Session.h"

#include "TabularTask.h"

#include <QFileInfo>

#include <algorithm>

namespace il::app {

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

} // namespace il::app
