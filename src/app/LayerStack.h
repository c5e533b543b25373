// The layer stack as the Model panel edits it: one row per item of the engine's layer language
// (LayerSpec.h), parsed from and written back to the same text, so a spec typed in the CLI,
// stored in a model file or chosen as a preset shows up row by row and round-trips.
//
// The last dense layer is the output layer: its width always comes from the data (written as a
// bare "dense"), so the editor cannot make input and output sizes inconsistent.
#pragma once

#include <QString>
#include <QStringList>

#include <cstdint>
#include <vector>

namespace il::app {

struct LayerRow {
    QString type;      // dense, relu, leakyrelu, tanh, sigmoid, sine, fourier, embedding
    int64_t size = 0;  // dense units (0: the output width), fourier feature count, embedding dim
    double param = 0;  // sine w0, leakyrelu slope, fourier scale
    QString init;      // dense: "" (automatic), xavier, he, siren
    int64_t vocab = 0; // embedding vocabulary (0: from the data)

    bool operator==(const LayerRow&) const = default;

    bool hasSize() const { return type == "dense" || type == "fourier" || type == "embedding"; }
    bool hasParam() const { return type == "sine" || type == "leakyrelu" || type == "fourier"; }
    // The item as the layer language writes it ("dense:16", "sine:30", "fourier:256:10").
    QString spec() const;
    // A row of this type with the defaults of the layer language.
    static LayerRow defaults(const QString& type);
};

using LayerRows = std::vector<LayerRow>;

// Every type the editor offers, in menu order.
QStringList layerTypes();

// Splits a spec into rows (aliases such as "linear" or "sin" become their main names). Returns
// false with a message naming the item if an item is not in the language; the engine checks
// the rest (sizes, order) when the network is built.
bool parseLayerRows(const QString& spec, LayerRows& rows, QString* error);
// Writes rows back: items joined with commas, the output layer as a bare "dense".
QString formatLayerRows(const LayerRows& rows);
// Index of the output layer (the last dense), or -1.
int outputLayerIndex(const LayerRows& rows);
// Keeps the invariants after an edit: the output layer takes the data's width (size 0) and every
// other dense layer has a size.
void normaliseLayerRows(LayerRows& rows);

} // namespace il::app
