// The readable layer-stack language shared by the CLI, the GUI and model files:
//   dense:16,tanh,dense:1
//   fourier:256:10,dense:256,relu,dense:256,relu,dense:1
//   dense:256,sine:30,dense:256,sine,dense          (a bare final "dense" = the output width)
//   embedding:27:10,dense:200,tanh,dense            (vocab 27, 10 dims per context character)
// The items and their arguments are the layer types of the registry (LayerRegistry.h);
// layerSpecHelp() lists them. Whitespace is ignored.
#pragma once

#include "Layer.h"
#include "LayerRegistry.h"

#include <memory>
#include <string>
#include <vector>

namespace il {

// Splits a spec into items and checks each one's arguments. Values the data supplies stay 0.
// Throws EngineError with a message naming the item (1-based) and what is wrong, or saying
// the list has more than kMaxLayers items (Limits.h).
std::vector<LayerItem> parseLayerItems(const std::string& spec);
// The items as the language writes them, joined with commas.
std::string formatLayerItems(const std::vector<LayerItem>& items);
// Index of the output layer (the last layer of an outputLayer type, e.g. the last dense), or -1.
int outputLayerIndex(const std::vector<LayerItem>& items);

// Checks the stack (first-only layers, the output layer, nothing squashing the output) and
// fills in what the data supplies: outputWidth > 0 resolves a bare final "dense" and is checked
// against the output layer; vocab > 0 fills a missing embedding vocabulary. Throws EngineError
// naming the item.
std::vector<LayerItem> resolveLayerItems(std::vector<LayerItem> items, int64_t outputWidth = 0,
                                         int64_t vocab = 0);

// parseLayerItems, resolveLayerItems, then the layers (no memory for parameters yet).
std::vector<std::unique_ptr<Layer>> parseLayerSpec(const std::string& spec, int64_t outputWidth = 0,
                                                   int64_t vocab = 0);

// Output width and parameter counts of each layer for a given input width, from shapes alone:
// nothing is allocated. Throws EngineError if the stack is empty or the input width is not
// positive.
std::vector<LayerPlan> planLayers(const std::vector<std::unique_ptr<Layer>>& layers,
                                  int64_t inputWidth);
std::vector<LayerPlan> planLayerSpec(const std::string& spec, int64_t inputWidth,
                                     int64_t outputWidth, int64_t vocab = 0);

// The help text describing the language (--help, docs/guide/layer-language.md), from the
// registry.
std::string layerSpecHelp();

} // namespace il
