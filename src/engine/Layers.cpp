// Every layer's forward and backward, side by side.
#include "Errors.h"
#include "Layer.h"

#include <charconv>
#include <cmath>
#include <numbers>

namespace il {

namespace {

// Shortest text that reads back as the same float, so spec() round-trips through model files.
std::string formatFloat(float v)
{
    char buf[32];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
    return ec == std::errc() ? std::string(buf, end) : std::string("nan");
}

void checkRows(const char* what, int64_t a, int64_t b)
{
    if (a != b)
        throw ShapeError(std::string(what) + ": " + std::to_string(a) + " rows vs " +
                         std::to_string(b));
}

} // namespace

std::string activationName(Activation act)
{
    switch (act) {
    case Activation::Identity:
        return "identity";
    case Activation::ReLU:
        return "relu";
    case Activation::LeakyReLU:
        return "leakyrelu";
    case Activation::Tanh:
        return "tanh";
    case Activation::Sigmoid:
        return "sigmoid";
    case Activation::Sine:
        return "sine";
    }
    return "?";
}

void Layer::bind(int64_t inputWidth, std::vector<Tensor> params, std::vector<Tensor> grads)
{
    m_inputWidth = inputWidth;
    m_params = std::move(params);
    m_grads = std::move(grads);
}

void Layer::forward(Backend& b, ConstTensor x, Tensor y, Tensor workspace)
{
    if (x.cols() != m_inputWidth)
        throw ShapeError(spec() + ": input has " + std::to_string(x.cols()) +
                         " columns, expected " + std::to_string(m_inputWidth));
    checkRows(spec().c_str(), x.rows(), y.rows());
    if (y.cols() != outputWidth(m_inputWidth))
        throw ShapeError(spec() + ": output has " + std::to_string(y.cols()) +
                         " columns, expected " + std::to_string(outputWidth(m_inputWidth)));
    forwardImpl(b, x, y, workspace);
}

void Layer::backward(Backend& b, ConstTensor x, ConstTensor y, ConstTensor dy, Tensor dx,
                     Tensor workspace)
{
    if (!(dy.shape == y.shape))
        throw ShapeError(spec() + ": gradient " + dy.shape.toString() + " for output " +
                         y.shape.toString());
    if (dx.data && !(dx.shape == x.shape))
        throw ShapeError(spec() + ": input gradient " + dx.shape.toString() + " for input " +
                         x.shape.toString());
    backwardImpl(b, x, y, dy, dx, workspace);
}

namespace {

// ---- Dense ------------------------------------------------------------------------------------
class Dense final : public Layer {
public:
    Dense(int64_t units, Init init) : m_units(units), m_init(init) {}
    std::string kind() const override { return "dense"; }
    std::string spec() const override
    {
        std::string s = "dense:" + std::to_string(m_units);
        if (m_init == Init::Xavier) s += ":xavier";
        if (m_init == Init::He) s += ":he";
        if (m_init == Init::Siren || m_init == Init::SirenFirst) s += ":siren";
        return s;
    }
    int64_t outputWidth(int64_t) const override { return m_units; }
    std::vector<ParamSpec> parameters(int64_t in) const override
    {
        return {{"weight", {m_units, in}, true}, {"bias", {1, m_units}, true}};
    }
    Init requestedInit() const { return m_init; }

    // init has been resolved by the Network (never Auto here). w0: the sine frequency the
    // weights feed (Siren) or come from (Siren hidden), used to scale SIREN's bounds.
    void initialize(Backend& backend, Rng& rng, Init init) override
    {
        initializeWith(backend, rng, init, 30.f);
    }
    void initializeWith(Backend& backend, Rng& rng, Init init, float w0)
    {
        const int64_t in = m_inputWidth, out = m_units;
        std::vector<float> w(static_cast<size_t>(in * out)), bias(static_cast<size_t>(out), 0.f);
        const double fanIn = static_cast<double>(in), fanOut = static_cast<double>(out);
        switch (init) {
        case Init::He: { // Kaiming normal, for ReLU-like activations: N(0, 2 / fan_in)
            const double sd = std::sqrt(2.0 / fanIn);
            for (auto& v : w)
                v = static_cast<float>(sd * rng.normal());
            break;
        }
        case Init::SirenFirst: { // U(-1/in, 1/in): the first layer's frequencies come from w0
            const double bound = 1.0 / fanIn;
            for (auto& v : w)
                v = static_cast<float>(rng.uniform(-bound, bound));
            const double bb = 1.0 / std::sqrt(fanIn);
            for (auto& v : bias)
                v = static_cast<float>(rng.uniform(-bb, bb));
            break;
        }
        case Init::Siren: { // U(-sqrt(6/in)/w0, sqrt(6/in)/w0): keeps sin(w0 z) inputs ~U(-pi, pi)
            const double bound = std::sqrt(6.0 / fanIn) / w0;
            for (auto& v : w)
                v = static_cast<float>(rng.uniform(-bound, bound));
            const double bb = 1.0 / std::sqrt(fanIn);
            for (auto& v : bias)
                v = static_cast<float>(rng.uniform(-bb, bb));
            break;
        }
        case Init::Xavier:
        case Init::Auto:
        default: { // Glorot uniform: U(-sqrt(6/(in+out)), +)
            const double bound = std::sqrt(6.0 / (fanIn + fanOut));
            for (auto& v : w)
                v = static_cast<float>(rng.uniform(-bound, bound));
            break;
        }
        }
        backend.upload(m_params[0], w.data());
        backend.upload(m_params[1], bias.data());
    }

protected:
    // y = x W^T + b: the bias is broadcast into y first, then sgemm adds x W^T with beta = 1.
    void forwardImpl(Backend& b, ConstTensor x, Tensor y, Tensor) override
    {
        b.broadcastRows(m_params[1], y);
        b.gemm(false, true, 1.f, x, m_params[0], 1.f, y);
    }
    // dW = dy^T x, db = sum_rows dy, dx = dy W. Transposes are read in place by sgemm.
    void backwardImpl(Backend& b, ConstTensor x, ConstTensor, ConstTensor dy, Tensor dx,
                      Tensor) override
    {
        b.gemm(true, false, 1.f, dy, x, 0.f, m_grads[0]);
        b.sumRows(dy, 0.f, m_grads[1]);
        if (dx.data) b.gemm(false, false, 1.f, dy, m_params[0], 0.f, dx);
    }

private:
    int64_t m_units;
    Init m_init;
};

// ---- Activations -------------------------------------------------------------------------------
class ActivationLayer final : public Layer {
public:
    ActivationLayer(Activation act, float param) : m_act(act), m_param(param) {}
    std::string kind() const override { return activationName(m_act); }
    std::string spec() const override
    {
        if (m_act == Activation::LeakyReLU || m_act == Activation::Sine)
            return kind() + ":" + formatFloat(m_param);
        return kind();
    }
    int64_t outputWidth(int64_t in) const override { return in; }
    bool isActivation() const override { return true; }
    Activation activation() const override { return m_act; }
    float activationParam() const override { return m_param; }

protected:
    void forwardImpl(Backend& b, ConstTensor x, Tensor y, Tensor) override
    {
        b.activationForward(m_act, m_param, x, y);
    }
    void backwardImpl(Backend& b, ConstTensor x, ConstTensor y, ConstTensor dy, Tensor dx,
                      Tensor) override
    {
        if (dx.data) b.activationBackward(m_act, m_param, x, y, dy, dx);
    }

private:
    Activation m_act;
    float m_param;
};

// ---- Fourier features ---------------------------------------------------------------------------
class Fourier final : public Layer {
public:
    Fourier(int64_t count, float scale) : m_count(count), m_scale(scale) {}
    std::string kind() const override { return "fourier"; }
    std::string spec() const override
    {
        return "fourier:" + std::to_string(m_count) + ":" + formatFloat(m_scale);
    }
    int64_t outputWidth(int64_t) const override { return 2 * m_count; }
    std::vector<ParamSpec> parameters(int64_t in) const override
    {
        return {{"projection", {m_count, in}, false}}; // B, fixed
    }
    int64_t workspaceCols(int64_t) const override { return m_count; } // z = 2 pi x B^T

    void initialize(Backend& backend, Rng& rng, Init) override
    {
        std::vector<float> proj(static_cast<size_t>(m_params[0].size()));
        for (auto& v : proj)
            v = static_cast<float>(m_scale * rng.normal());
        backend.upload(m_params[0], proj.data());
    }

protected:
    static constexpr float kTwoPi = 2.f * std::numbers::pi_v<float>;
    void forwardImpl(Backend& b, ConstTensor x, Tensor y, Tensor z) override
    {
        b.gemm(false, true, kTwoPi, x, m_params[0], 0.f, z);
        b.fourierForward(z, y);
    }
    // Input gradient only (B is not trained): dz from the sin/cos halves, then dx = 2 pi dz B.
    void backwardImpl(Backend& b, ConstTensor, ConstTensor, ConstTensor dy, Tensor dx,
                      Tensor z) override
    {
        if (!dx.data) return;
        b.fourierBackward(z, dy, z); // in place: z is not needed afterwards
        b.gemm(false, false, kTwoPi, z, m_params[0], 0.f, dx);
    }

private:
    int64_t m_count;
    float m_scale;
};

// ---- Embedding ----------------------------------------------------------------------------------
class Embedding final : public Layer {
public:
    Embedding(int64_t vocab, int64_t dim) : m_vocab(vocab), m_dim(dim) {}
    std::string kind() const override { return "embedding"; }
    std::string spec() const override
    {
        return "embedding:" + std::to_string(m_vocab) + ":" + std::to_string(m_dim);
    }
    int64_t outputWidth(int64_t in) const override { return in * m_dim; }
    std::vector<ParamSpec> parameters(int64_t) const override
    {
        return {{"weight", {m_vocab, m_dim}, true}};
    }
    void initialize(Backend& backend, Rng& rng, Init) override
    {
        // N(0, 1) like nn.Embedding: each row is the dense weights one-hot(id) would select.
        std::vector<float> t(static_cast<size_t>(m_params[0].size()));
        for (auto& v : t)
            v = static_cast<float>(rng.normal());
        backend.upload(m_params[0], t.data());
    }

protected:
    void forwardImpl(Backend& b, ConstTensor ids, Tensor y, Tensor) override
    {
        b.embeddingForward(ids, m_params[0], y);
    }
    void backwardImpl(Backend& b, ConstTensor ids, ConstTensor, ConstTensor dy, Tensor,
                      Tensor) override
    {
        b.embeddingBackward(ids, dy, m_grads[0]); // ids have no gradient
    }

private:
    int64_t m_vocab;
    int64_t m_dim;
};

} // namespace

std::unique_ptr<Layer> makeDense(int64_t units, Init init)
{
    if (units <= 0)
        throw EngineError("dense: units must be positive, got " + std::to_string(units));
    return std::make_unique<Dense>(units, init);
}

std::unique_ptr<Layer> makeActivation(Activation act, float param)
{
    if (act == Activation::Sine && !(param > 0.f))
        throw EngineError("sine: w0 must be positive, got " + formatFloat(param));
    return std::make_unique<ActivationLayer>(act, param);
}

std::unique_ptr<Layer> makeFourier(int64_t count, float scale)
{
    if (count <= 0)
        throw EngineError("fourier: feature count must be positive, got " + std::to_string(count));
    if (!(scale > 0.f))
        throw EngineError("fourier: scale must be positive, got " + formatFloat(scale));
    return std::make_unique<Fourier>(count, scale);
}

std::unique_ptr<Layer> makeEmbedding(int64_t vocab, int64_t dim)
{
    if (vocab <= 0 || dim <= 0)
        throw EngineError("embedding: vocabulary and dimension must be positive, got " +
                          std::to_string(vocab) + " and " + std::to_string(dim));
    return std::make_unique<Embedding>(vocab, dim);
}

// Used by Network::initialize to give SIREN layers their w0.
void initializeDense(Layer& layer, Backend& backend, Rng& rng, Init init, float w0)
{
    static_cast<Dense&>(layer).initializeWith(backend, rng, init, w0);
}

Init requestedDenseInit(const Layer& layer)
{
    return static_cast<const Dense&>(layer).requestedInit();
}

} // namespace il
