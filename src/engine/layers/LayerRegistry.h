// The layer registry: every layer type described once.
//
// A LayerType says what the rest of the program needs to know about one kind of layer: its
// name and aliases in the layer language, its arguments (defaults, ranges, which ones the data
// fills in), how the studio labels and explains it, and how to build it. The layer language
// (LayerSpec.h) and its help, the CLI, the studio's layer editor and model files all read it.
// Each type is described next to its Layer class (DenseLayer.cpp, ActivationLayers.cpp,
// FourierLayer.cpp, EmbeddingLayer.cpp), its export forms included; layerTypes() lists them in
// menu order.
#pragma once

#include "ExportForms.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace il {

class Layer;
struct LayerItem;

// Where the studio's layer editor shows an argument.
enum class EditorColumn { None, Size, Setting, Init };

// What the data supplies for an argument left out (written as 0 in a LayerItem).
enum class DataValue { None, OutputWidth, Vocabulary };

struct LayerArg {
    enum class Kind { Count, Real, Choice };
    std::string name; // as messages and help name it: "units", "w0"
    Kind kind = Kind::Count;
    // The value when left out. Choice: an index into choices.
    double defaultValue = 0;
    bool required = false;                // no default: the item must give it
    DataValue fromData = DataValue::None; // left out: the data decides
    bool positive = false;                // Real: must be > 0 (a Count always is, up to 1e6)
    // Choice: the written names; choices[0] is the default and is not written.
    std::vector<std::string> choices;
    std::vector<std::pair<std::string, std::string>> choiceAliases; // {alias, choice}
    double suggested = 0; // what a new layer in the studio starts with (0: defaultValue)
    EditorColumn column = EditorColumn::None;
    std::string tooltip; // what the argument means, for the editor
};

// A shape-only view of one layer in a stack: no memory is allocated to compute it.
struct LayerPlan {
    int64_t outputWidth = 0;
    int64_t parameters = 0;          // trainable floats
    int64_t fixedFloats = 0;         // saved but not trained (the Fourier projection)
    std::vector<std::string> groups; // optimizer groups of its trainable parameters (ParamSpec)
};

struct LayerType {
    std::string name;                 // "dense"
    std::vector<std::string> aliases; // other spellings the language accepts: "linear"
    std::string label;                // for the studio: "Dense"
    std::string synopsis;             // for the help: "dense:N[:init]"
    std::string help;                 // what it computes, for the help and the editor's tooltip
    // What one of its units computes from its input z, short, for the studio's network diagram
    // ("max(0, z)"). Empty: the diagram writes "name(z)".
    std::string formula;
    // The interval its outputs stay in, for a bounded activation (tanh: -1 to 1); none for the
    // others. The studio's network view draws such a layer's histograms over it and marks a
    // unit saturated when nearly all its outputs lie within 0.01 of an end.
    std::optional<std::pair<float, float>> outputRange;
    std::vector<LayerArg> args;
    // With fewer arguments than listed, the first ones are left out: embedding[:V]:D.
    bool argsFromRight = false;
    // Must be the first layer; the text says why. Empty: anywhere.
    std::string firstOnly;
    // The last layer of this type is the network's output layer (its width is the data's).
    bool outputLayer = false;
    // An element-wise activation (the output layer must not be followed by one).
    bool activation = false;
    // Works on each position of a row on its own and keeps the row's layout (RowLayout,
    // Layer.h): activations, the normalisations, merge's successors read positions through it.
    bool positionWise = false;
    // Rng::derive purpose of its initialisation. Model files depend on it: never change it.
    const char* rngStream = "init";
    // Optional: a few lines on what the item's arguments make of the layer, for the studio's
    // tooltip on its parameter count (the hash grid: each grid's cells and whether its
    // vertices share table rows). Null: nothing beyond the help.
    std::string (*details)(const LayerItem& item) = nullptr;
    // Builds the layer from an item whose data values are resolved (no zeros left).
    std::unique_ptr<Layer> (*make)(const LayerItem& item) = nullptr;
    // How the ONNX and PyTorch exports write it (ExportForms.h).
    ExportForms exports;
    // A small stack that holds the type, for the registry-wide tests where the stacks they write
    // by hand hold none (the gradient check, ONNX Runtime and the PyTorch export against
    // predict): its layers and the data it runs on ("names", with a context of 4; "table";
    // "image"). A new type is checked by those tests with no change to them.
    struct Example {
        std::string layers;
        std::string data;
    } example;
};

// One item of the layer language: a type and its argument values (0 for a value the data
// supplies and that is not resolved yet).
struct LayerItem {
    const LayerType* type = nullptr;
    std::vector<double> args; // one per type->args

    // The item as the language writes it: "dense:16", "dense::he", "sine:30", "embedding:10".
    std::string text() const;
    bool operator==(const LayerItem&) const = default;
};

// A real-valued argument shown in the editor's Setting column: "slope", "w0", "momentum", "p".
LayerArg realArgument(const char* name, double defaultValue, bool positive, const char* tooltip);

// The registered types, in menu order.
const std::vector<LayerType>& layerTypes();
// The type named (or aliased) so, case-insensitively; nullptr if none.
const LayerType* findLayerType(std::string_view name);
// An item of this type as the studio adds it: defaults, suggested sizes.
LayerItem newLayerItem(const LayerType& type);
// Parses one item ("dense:16:he"). Throws EngineError saying what is wrong (without the item's
// position; parseLayerItems adds it). Checks the arguments, not the item's place in a stack.
LayerItem parseLayerItem(const std::string& text);
// Builds a layer; throws EngineError if a data value is still unresolved or an argument is
// out of range.
std::unique_ptr<Layer> makeLayer(const LayerItem& item);
// parseLayerItem then makeLayer, for items that need nothing from the data.
std::unique_ptr<Layer> makeLayer(const std::string& text);

// Shortest text that reads back as the same float, so specs round-trip through model files.
std::string formatFloat(float v);

} // namespace il
