#include "LayerStack.h"

#include "Errors.h"

namespace il::app {

QStringList layerTypeNames()
{
    QStringList names;
    for (const LayerType& t : layerTypes())
        names << QString::fromStdString(t.name);
    return names;
}

bool parseLayerRows(const QString& spec, LayerRows& rows, QString* error)
{
    try {
        rows = parseLayerItems(spec.toStdString());
        return true;
    } catch (const EngineError& e) {
        if (error) *error = QString::fromUtf8(e.what());
        return false;
    }
}

QString formatLayerRows(const LayerRows& rows)
{
    LayerRows written = rows;
    normaliseLayerRows(written);
    return QString::fromStdString(formatLayerItems(written));
}

void normaliseLayerRows(LayerRows& rows)
{
    const int output = outputLayerIndex(rows);
    for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
        LayerRow& r = rows[static_cast<size_t>(i)];
        for (size_t k = 0; k < r.args.size(); ++k) {
            const LayerArg& a = r.type->args[k];
            if (a.fromData != DataValue::OutputWidth) continue;
            if (i == output)
                r.args[k] = 0;
            else if (r.args[k] <= 0)
                r.args[k] = a.suggested;
        }
    }
}

QString canonicalSpec(const QString& spec)
{
    LayerRows rows;
    if (!parseLayerRows(spec, rows, nullptr)) return spec;
    normaliseLayerRows(rows);
    return formatLayerRows(rows);
}

int argumentIndex(const LayerRow& row, EditorColumn column)
{
    for (size_t k = 0; k < row.type->args.size(); ++k)
        if (row.type->args[k].column == column) return static_cast<int>(k);
    return -1;
}

} // namespace il::app
