// The layer stack as the Model panel edits it: one row per item of the engine's layer language
// (LayerSpec.h), parsed from and written back to the same text by the engine, so a spec typed
// in the CLI, stored in a model file or chosen as a preset shows up row by row and round-trips.
// Rows are the engine's LayerItems: what a type takes, its defaults and ranges, come from the
// layer registry (LayerRegistry.h), not from here.
//
// The last dense layer is the output layer: its width always comes from the data (written as a
// bare "dense"), so the editor cannot make input and output sizes inconsistent.
#pragma once

#include "LayerSpec.h" // outputLayerIndex: the output layer (the last dense), or -1

#include <QString>
#include <QStringList>

#include <vector>

namespace il::app {

using LayerRow = il::LayerItem;
using LayerRows = std::vector<il::LayerItem>;

// Every type the editor offers (the registry's names), in menu order.
QStringList layerTypeNames();

// Splits a spec into rows (aliases such as "linear" or "sin" become their main names). Returns
// false with a message naming the item if an item is not in the language; where layers may
// stand and what the data supplies are checked when the stack is planned.
bool parseLayerRows(const QString& spec, LayerRows& rows, QString* error);
// Writes rows back: items joined with commas, the output layer as a bare "dense".
QString formatLayerRows(const LayerRows& rows);
// Keeps the invariants after an edit: the output layer takes the data's width (0) and every
// other layer whose width the data could supply has one.
void normaliseLayerRows(LayerRows& rows);
// The spec as the Model panel writes it (parsed, normalised, written back), so two spellings of
// one stack compare equal; a spec that does not parse comes back as it is.
QString canonicalSpec(const QString& spec);
// The argument of the row's type that the editor shows in a column, or -1.
int argumentIndex(const LayerRow& row, il::EditorColumn column);

} // namespace il::app
