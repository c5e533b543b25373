// A stack of layers plus the memory it trains in.
//
// Memory (all backend memory, allocated once):
//   arena      [ trainable parameters ... | fixed tensors ... ]   one Buffer
//   gradients  [ same order and size as the trainable part ]       one Buffer
//   activations: one rows x width buffer per layer output, plus per-layer workspaces and two
//   gradient ping-pong buffers, sized by reserve(rows) and reused while the batch size fits.
// After the first step at a given batch size, forward and backward allocate nothing.
#pragma once

#include "Layer.h"
#include "Optimizer.h"

#include <memory>
#include <string>
#include <vector>

namespace il {

struct NamedTensor {
    std::string name; // "layers.0.weight" (the names PyTorch's nn.Sequential would use)
    Tensor tensor;
    bool trainable = true;
};

struct LayerSummary {
    int index = 0;
    std::string spec;
    int64_t outputWidth = 0;
    int64_t parameters = 0;
};

class Network {
public:
    // Builds the network and its arena; throws EngineError naming a layer that does not fit.
    Network(Backend& backend, int64_t inputWidth, std::vector<std::unique_ptr<Layer>> layers);
    Network(Backend& backend, int64_t inputWidth, const std::string& spec, int64_t outputWidth,
            int64_t vocab = 0);
    ~Network();
    Network(const Network&) = delete;
    Network& operator=(const Network&) = delete;

    Backend& backend() const { return m_backend; }
    int64_t inputWidth() const { return m_inputWidth; }
    int64_t outputWidth() const { return m_widths.back(); }
    std::string spec() const;
    const std::vector<std::unique_ptr<Layer>>& layers() const { return m_layers; }
    std::vector<LayerSummary> summary() const;

    // Initialise every parameter from the seed: layer i draws from Rng::derive(seed, its type's
    // rngStream, i) and sees its successor's InitHint (dense layers pick their scheme from it:
    // sine -> SIREN, ReLU-like -> He, otherwise Xavier; after a sine layer, SIREN's hidden-layer
    // init with that layer's w0).
    void initialize(uint64_t seed);

    // For a stack that ends in its output layer followed by a linear skip (a wide-and-deep
    // network): makes it compute the linear map outputs = inputs W^T + bias exactly (the skip
    // holds W, out x inputs; the output layer's weights are zeroed and its bias is bias), so
    // training starts from a linear model and the hidden layers learn only what it misses.
    // False (and nothing changed) for any other stack or wrong sizes.
    bool startAsLinearMap(const std::vector<float>& weights, const std::vector<float>& bias);

    // Flat views of all trainable parameters and of their gradients (same layout).
    Tensor parameters() const;
    Tensor gradients() const;
    int64_t parameterCount() const { return m_trainableFloats; }
    // Everything the network keeps: the trainable parameters, then the fixed tensors (a Fourier
    // projection, batch norms' running statistics), one flat view. What a copy of "the weights"
    // must hold to give the same outputs again (early stopping's best, a recovery's good ones).
    Tensor weights() const;
    // The trainable parameters as runs of one optimizer group each (ParamSpec::group), in arena
    // order: what an Optimizer for this network is made with.
    const std::vector<ParameterRange>& parameterRanges() const { return m_ranges; }
    // Every tensor with its name (trainable ones first), for saving and gradient norms.
    std::vector<NamedTensor> namedTensors() const;
    // Index of the layer that owns trainable tensor i of namedTensors().
    int layerOfTensor(int tensorIndex) const
    {
        return m_tensorLayer.at(static_cast<size_t>(tensorIndex));
    }
    std::vector<NamedTensor> namedGradients() const;

    // Make the activation buffers fit batches of up to `rows` rows.
    void reserve(int64_t rows);
    // Rows the activation buffers hold now. Changes (and the buffers move) when reserve grows.
    int64_t reservedRows() const { return m_reservedRows; }
    // Forward: keeps every layer's output for backward. Returns the output view. training: the
    // layers that differ at inference (batch normalisation) use the batch and update what they
    // keep; otherwise (predict, evaluation) they use what they kept and change nothing.
    Tensor forward(ConstTensor x, bool training = true);
    // Backward through the whole stack from dL/doutput; fills gradients().
    void backward(ConstTensor x, ConstTensor dOutput);
    // Output of layer i from the last forward (rows of the last batch).
    ConstTensor layerOutput(int i) const;

    // Inference on any number of rows, in chunks of at most chunkRows, fewer for a wide
    // network (inferenceChunkRows, Limits.h), into out (rows x out).
    void predict(ConstTensor x, Tensor out, int64_t chunkRows = 4096);

private:
    void build();

    Backend& m_backend;
    int64_t m_inputWidth;
    std::vector<std::unique_ptr<Layer>> m_layers;
    std::vector<int64_t> m_widths; // output width of each layer
    std::vector<int> m_tensorLayer;
    std::vector<ParameterRange> m_ranges;
    int64_t m_trainableFloats = 0;
    int64_t m_fixedFloats = 0;
    Buffer m_arena;
    Buffer m_grads;

    // Activation memory for the current reservation.
    int64_t m_reservedRows = 0;
    int64_t m_rows = 0; // rows of the last forward
    std::vector<Buffer> m_outputs;
    std::vector<Buffer> m_workspaces;
    Buffer m_gradA, m_gradB;
};

} // namespace il
