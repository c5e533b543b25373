// Layers: each has an explicit forward and backward, next to each other in its own file
// (DenseLayer.cpp, ActivationLayers.cpp, FourierLayer.cpp, EmbeddingLayer.cpp), together with
// the LayerType that describes it to the rest of the program (LayerRegistry.h).
//
// A layer does not own memory. The Network gives it views into one arena holding every
// trainable parameter (contiguous, so an optimizer updates them in one pass), their gradients
// in the same order, and fixed tensors (the Fourier projection) that are saved but not trained.
// Public forward/backward are non-virtual: they check shapes, then call the *Impl hooks.
#pragma once

#include "Backend.h"
#include "LayerRegistry.h"
#include "Random.h"

#include <memory>
#include <string>
#include <vector>

namespace il {

// Weight initialisation schemes. The first five, in this order, are the choices of dense's init
// argument (DenseLayer.cpp); SirenFirst is what Siren resolves to for a stack's first layer.
enum class Init { Auto, Xavier, He, Siren, Zero, SirenFirst };

struct ParamSpec {
    ParamSpec(std::string name, Shape shape, bool trainable = true, std::string group = {})
        : name(std::move(name)), shape(shape), trainable(trainable), group(std::move(group))
    {
    }

    std::string name; // "weight", "bias", "table", "projection"
    Shape shape;
    bool trainable = true;
    // The optimizer group it trains in (ParameterGroupType, Optimizer.h); "": the run's settings.
    std::string group;
};

// What a layer asks of the dense layer that feeds it: ReLU-like activations He, a sine SIREN's
// scheme with its w0, everything else Xavier. See Network::initialize.
struct InitHint {
    Init init = Init::Xavier;
    float w0 = 0.f;
};

// How a row of activations is laid out. Most stacks see one row per sample (positions 1). After a
// merge (makemore's FlattenConsecutive) a row is `positions` groups of width / positions numbers,
// and the layers that work per position (dense, layernorm, batchnorm) treat each group as a row
// of its own, with shared weights: a tree over the characters of a names context. Nothing moves
// in memory: a rows x width buffer is read as (rows * positions) x (width / positions).
struct RowLayout {
    int64_t width = 0;
    int64_t positions = 1; // > 1 only after a merge
    // The width of one position a merge may group: an embedding's dimension (its row is one
    // position per context character), a per-position dense layer's units; 0 when the row is not
    // made of positions (after a dense that reads the whole row).
    int64_t positionWidth = 0;
    int64_t channels() const { return positions > 0 ? width / positions : width; }
};

// What a layer may look at when it initialises its parameters.
struct InitContext {
    const Layer* next = nullptr; // the layer after this one, if any
    bool afterSiren = false;     // a layer asking for SIREN's scheme came before this one
    float sirenW0 = 0.f;         // ... and the w0 of the last such layer
};

// A rows x width tensor read as (rows * positions) x (width / positions): each position of a row
// as a row of its own (RowLayout). The same memory; positions must divide the width.
Tensor perPosition(Tensor t, int64_t positions);
ConstTensor perPosition(ConstTensor t, int64_t positions);

class Layer;
// Lays a layer out on its input in a network of networkInputWidth inputs (setNetworkInputWidth,
// setInputLayout; then its parameters() can be asked) and returns its output's layout. Every
// walk over a stack (Network, planLayers, the model file's size check) goes through here.
RowLayout layOut(Layer& layer, int64_t networkInputWidth, const RowLayout& in);

// A stack must end with one position per row (the outputs of a sample): throws EngineError
// naming the last layer and the merge it needs otherwise.
void checkOutputLayout(const RowLayout& out, const Layer& last);

class Layer {
public:
    explicit Layer(LayerItem item) : m_item(std::move(item)) {}
    virtual ~Layer() = default;

    const LayerType& type() const { return *m_item.type; }
    const LayerItem& item() const { return m_item; }
    // The type's name: "dense", "relu", "fourier", ...
    std::string kind() const { return m_item.type->name; }
    // The layer as written in a layer spec, e.g. "dense:16" or "fourier:256:10".
    std::string spec() const { return m_item.text(); }
    // Output width for a given input width; throws EngineError naming the layer if the input
    // does not fit (e.g. an embedding that is not first).
    virtual int64_t outputWidth(int64_t inputWidth) const = 0;
    // Parameters (and fixed tensors) for the given input width, in arena order.
    virtual std::vector<ParamSpec> parameters(int64_t inputWidth) const
    {
        (void)inputWidth;
        return {};
    }
    // Extra per-row scratch columns needed between forward and backward (Fourier: z).
    virtual int64_t workspaceCols(int64_t inputWidth) const
    {
        (void)inputWidth;
        return 0;
    }
    // The network's input width, for a layer that reads the network's inputs as well as its own
    // (the linear skip, SkipLayer.cpp). Set before parameters() by whoever lays out a stack
    // (Network, planLayers, architectureFloats); 0 until then.
    void setNetworkInputWidth(int64_t width) { m_networkInputWidth = width; }
    // The layout of this layer's input, set before parameters() and outputWidth() by whoever lays
    // out a stack (like setNetworkInputWidth); outputLayout() gives the next layer's. The
    // default keeps the layout for a positionWise type and is one position of
    // outputWidth(in.width) otherwise. Throws EngineError naming the layer if the input's layout
    // does not fit (a merge after a layer that reads the whole row).
    void setInputLayout(const RowLayout& in) { m_in = in; }
    const RowLayout& inputLayout() const { return m_in; }
    // The input's positions (RowLayout::positions; 1 unless after a merge).
    int64_t positions() const { return m_in.positions > 0 ? m_in.positions : 1; }
    virtual RowLayout outputLayout(const RowLayout& in) const;
    // Training (the default) or inference: set by Network before each forward. Batch
    // normalisation uses the batch's statistics while training and its running ones otherwise.
    void setTraining(bool training) { m_training = training; }
    // True for a layer whose forward and backward read the network's inputs (networkInput()).
    virtual bool readsNetworkInput() const { return false; }
    // The network's inputs of the batch going through: set by Network before forward and
    // backward of a layer that readsNetworkInput().
    void setNetworkInput(ConstTensor x) { m_networkInput = x; }
    // The activation this layer applies, if it is an activation layer.
    virtual bool isActivation() const { return false; }
    virtual Activation activation() const { return Activation::Identity; }
    virtual float activationParam() const { return 0.f; }

    // Called by Network once the arena exists: views in the order of parameters().
    void bind(int64_t inputWidth, std::vector<Tensor> params, std::vector<Tensor> grads);
    // What this layer asks of the dense layer before it.
    virtual InitHint initHint() const { return {}; }
    // Fill parameters with their initial values (host-side RNG from the type's rngStream,
    // then one upload).
    virtual void initialize(Backend& backend, Rng& rng, const InitContext& context)
    {
        (void)backend;
        (void)rng;
        (void)context;
    }

    // y = layer(x). workspace: rows x workspaceCols(), kept until backward.
    void forward(Backend& b, ConstTensor x, Tensor y, Tensor workspace);
    // Given dy = dL/dy, accumulate parameter gradients (overwriting them) and, unless dx is
    // empty (the first layer needs no input gradient), write dx = dL/dx.
    void backward(Backend& b, ConstTensor x, ConstTensor y, ConstTensor dy, Tensor dx,
                  Tensor workspace);

    int64_t inputWidth() const { return m_inputWidth; }
    const std::vector<Tensor>& params() const { return m_params; }
    const std::vector<Tensor>& grads() const { return m_grads; }

protected:
    virtual void forwardImpl(Backend& b, ConstTensor x, Tensor y, Tensor workspace) = 0;
    virtual void backwardImpl(Backend& b, ConstTensor x, ConstTensor y, ConstTensor dy, Tensor dx,
                              Tensor workspace) = 0;

    LayerItem m_item;
    int64_t m_inputWidth = 0;
    int64_t m_networkInputWidth = 0;
    RowLayout m_in; // the input's layout (setInputLayout)
    bool m_training = true;
    ConstTensor m_networkInput;   // only for readsNetworkInput()
    std::vector<Tensor> m_params; // views into the network's arena
    std::vector<Tensor> m_grads;
};

} // namespace il
