// Limits on the sizes a model may ask for. Model files come from anywhere: every size they give
// (layer count and widths, vocabulary, history length) is checked against these before
// anything is allocated, with a one-line refusal naming the file and the field. The "Limits" of
// docs/model-file.md state them for users.
#pragma once

#include <cstddef>
#include <cstdint>

namespace il {

class Network;

// Items in a layer list: deep enough for any real stack; 10^6 tanh layers in a 5 MB model
// would take gigabytes of bookkeeping and seconds to build.
inline constexpr size_t kMaxLayers = 1000;
// A network's input width, output width and vocabulary (a layer's units are capped alike,
// LayerRegistry.cpp).
inline constexpr int64_t kMaxWidth = 1'000'000;
// Inference runs in chunks of rows whose activations (every layer's output and workspace) fit
// in this many bytes, so evaluate, predict and render stay under it whatever the width: a
// dense:1000000 network predicts a few rows at a time instead of asking for gigabytes.
inline constexpr int64_t kInferenceActivationBytes = int64_t(256) << 20;

// Floats of memory one row of a batch takes in net: its input, every layer's output and
// workspace, and the two gradient buffers (Network::reserve).
int64_t activationFloatsPerRow(const Network& net);
// Rows whose activations fit in `bytes` (at least 1, at most maxRows): the chunk size for
// inference, so peak memory stays under kInferenceActivationBytes at any width.
int64_t inferenceChunkRows(const Network& net, int64_t maxRows,
                           int64_t bytes = kInferenceActivationBytes);

} // namespace il
