// The readable layer-stack language shared by the CLI, the GUI and model files:
//   dense:16,tanh,dense:1
//   fourier:256:10,dense:256,relu,dense:256,relu,dense:1
//   dense:256,sine:30,dense:256,sine,dense          (a bare final "dense" = the output width)
//   embedding:27:10,dense:200,tanh,dense            (vocab 27, 10 dims per context character)
// Items: dense[:units[:init]] (init: xavier|he|siren), relu, leakyrelu[:slope], tanh, sigmoid,
// sine[:w0], fourier[:count[:scale]], embedding[:vocab]:dim. Whitespace is ignored.
#pragma once

#include "Layer.h"

#include <memory>
#include <string>
#include <vector>

namespace il {

// Parses a spec. outputWidth > 0 resolves a bare final "dense" and is checked against the
// last dense layer; vocab > 0 fills a missing embedding vocabulary. Throws EngineError with
// a message naming the item (1-based) and what is wrong.
std::vector<std::unique_ptr<Layer>> parseLayerSpec(const std::string& spec, int64_t outputWidth = 0,
                                                   int64_t vocab = 0);

// The help text describing the language (for --help and the README).
std::string layerSpecHelp();

} // namespace il
