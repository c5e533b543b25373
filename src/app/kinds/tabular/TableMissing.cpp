#include "TableMissing.h"

#include "Counting.h"
#include "TabularTask.h"

#include <QLocale>

namespace il::app {

const QStringList& missingPolicies()
{
    static const QStringList policies = {"drop", "ignore", "mean"};
    return policies;
}

QString missingChoiceText(const tasks::MissingValues& m, const QString& policy)
{
    const QLocale locale;
    auto plural = [&locale](qint64 n, const QString& word) {
        return tasks::countOf(n, word, locale);
    };
    if (policy == "drop")
        return QString("Drop rows with missing values: drops %1 of %2")
            .arg(locale.toString(m.incompleteRows), plural(m.rows, "row"));
    if (policy == "ignore") {
        if (m.features.isEmpty()) return {};
        QStringList names;
        for (const QString& f : m.features)
            names << "“" + f + "”";
        const QString kept =
            m.targetRows == 0
                ? QString("keeps all %1").arg(plural(m.rows, "row"))
                : QString("drops %1 without a target").arg(plural(m.targetRows, "row"));
        return QString("%1 %2: %3")
            .arg(m.features.size() == 1 ? "Ignore this column" : "Ignore these columns",
                 names.join(", "), kept);
    }
    if (m.filledRows == 0) return {};
    QString text = QString("Fill with the column mean (train rows only): fills %1")
                       .arg(plural(m.filledRows, "row"));
    if (m.unfillableRows > 0)
        text += QString(", drops %1 with a missing target or text")
                    .arg(plural(m.unfillableRows, "row"));
    return text;
}

} // namespace il::app
