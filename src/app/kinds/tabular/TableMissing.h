// The studio's words for a table's missing cells: the policies it offers (in the order of its
// buttons and combo box) and what each would do to the rows.
#pragma once

#include <QString>
#include <QStringList>

namespace il::tasks {
struct MissingValues;
}

namespace il::app {

// tasks::TaskOptions::missing values: drop, ignore, mean.
const QStringList& missingPolicies();
// A choice for a table's missing cells, with the rows it affects ("" when it does not apply:
// no feature column to ignore, no number to fill).
QString missingChoiceText(const tasks::MissingValues& m, const QString& policy);

} // namespace il::app
