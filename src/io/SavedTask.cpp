#include "SavedTask.h"

#include <QJsonArray>

namespace il::io {

QJsonObject savedTaskInCurrentForm(const QJsonObject& task)
{
    if (task.value(QLatin1String("task")).toString() != QLatin1String("tabular")) return task;
    QJsonObject o = task;
    if (!o.contains(QLatin1String("input_offset"))) {
        // Inserting an undefined value removes the key: a file without the old names reads as
        // one without statistics, which its reader refuses.
        o.insert(QLatin1String("input_offset"), o.value(QLatin1String("feature_mean")));
        o.insert(QLatin1String("input_scale"), o.value(QLatin1String("feature_std")));
        const bool regression = o.value(QLatin1String("kind")).toString() == "regression";
        o.insert(QLatin1String("target_offset"),
                 regression ? QJsonArray{o.value(QLatin1String("target_mean")).toDouble(0)}
                            : QJsonArray{});
        o.insert(QLatin1String("target_scale"),
                 regression ? QJsonArray{o.value(QLatin1String("target_std")).toDouble(1)}
                            : QJsonArray{});
        for (const char* old : {"feature_mean", "feature_std", "target_mean", "target_std"})
            o.remove(QLatin1String(old));
    }
    if (!o.contains(QLatin1String("targets")))
        o.insert(QLatin1String("targets"), QJsonArray{o.value(QLatin1String("target"))});
    const qsizetype features = o.value(QLatin1String("features")).toArray().size();
    QJsonArray categories = o.value(QLatin1String("feature_categories")).toArray();
    if (categories.size() < features) {
        while (categories.size() < features)
            categories.append(QJsonArray{});
        o.insert(QLatin1String("feature_categories"), categories);
    }
    return o;
}

} // namespace il::io
