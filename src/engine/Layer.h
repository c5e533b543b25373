// Layers: each has an explicit forward and backward, next to each other in Layers.cpp.
//
// A layer does not own memory. The Network gives it views into one arena holding every
// trainable parameter (contiguous, so an optimizer updates them in one pass), their gradients
// in the same order, and fixed tensors (the Fourier projection) that are saved but not trained.
// Public forward/backward are non-virtual: they check shapes, then call the *Impl hooks.
#pragma once

#include "Backend.h"
#include "Random.h"

#include <memory>
#include <string>
#include <vector>

namespace il {

enum class Init { Auto, Xavier, He, Siren, SirenFirst };

struct ParamSpec {
    std::string name; // "weight", "bias", "table", "projection"
    Shape shape;
    bool trainable = true;
};

class Layer {
public:
    virtual ~Layer() = default;

    // "dense", "relu", "leakyrelu", "tanh", "sigmoid", "sine", "fourier", "embedding"
    virtual std::string kind() const = 0;
    // The layer as written in a layer spec, e.g. "dense:16" or "fourier:256:10".
    virtual std::string spec() const = 0;
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
    // The activation this layer applies, if it is an activation layer.
    virtual bool isActivation() const { return false; }
    virtual Activation activation() const { return Activation::Identity; }
    virtual float activationParam() const { return 0.f; }

    // Called by Network once the arena exists: views in the order of parameters().
    void bind(int64_t inputWidth, std::vector<Tensor> params, std::vector<Tensor> grads);
    // Fill parameters with their initial values (host-side RNG, then one upload).
    virtual void initialize(Backend& backend, Rng& rng, Init init)
    {
        (void)backend;
        (void)rng;
        (void)init;
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

    int64_t m_inputWidth = 0;
    std::vector<Tensor> m_params; // views into the network's arena
    std::vector<Tensor> m_grads;
};

// Fully connected: y = x W^T + b. W: out x in (PyTorch's nn.Linear layout), b: 1 x out.
// Initialisation Auto picks from the activation that follows (see Network::initialize).
std::unique_ptr<Layer> makeDense(int64_t units, Init init = Init::Auto);
// Element-wise activations. param: LeakyReLU slope (default 0.01), Sine w0 (default 30).
std::unique_ptr<Layer> makeActivation(Activation act, float param);
// Fourier features (Tancik et al. 2020): y = [sin(2 pi x B^T) | cos(2 pi x B^T)], B: count x in
// drawn from N(0, scale^2) with the run's seed and never trained. Output width 2 * count.
std::unique_ptr<Layer> makeFourier(int64_t count, float scale);
// Embedding: each input column is a token id in [0, vocab); y concatenates the id rows of the
// table (vocab x dim). Equivalent to one-hot(id) x dense without materialising the one-hot.
std::unique_ptr<Layer> makeEmbedding(int64_t vocab, int64_t dim);

std::string activationName(Activation act);

} // namespace il
