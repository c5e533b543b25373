// Element-wise activation layers. The maths is in formulas/Activations.inc (shared with the CUDA
// kernels); this file describes each activation to the layer language, the studio and the two
// exports (its ONNX graph and its PyTorch expression). A new activation is a struct and a list
// entry in Activations.inc plus one entry in activationEntries() below.
#include "Layer.h"

#include <optional>

namespace il {

namespace {

// An activation's ONNX form (ExportForms.h) on x, with its argument p.
using OnnxForm = std::string (*)(OnnxBuilder& g, float p, const std::string& x);

struct ActivationEntry {
    Activation activation;
    std::vector<std::string> aliases;
    const char* label;    // for the studio
    const char* synopsis; // for the help
    const char* help;
    const char* formula;              // for the studio's network diagram, over the unit's input z
    std::optional<LayerArg> argument; // the one argument, if it takes one
    Init denseInit;                   // what it asks of the dense layer before it
    std::optional<std::pair<float, float>> range; // LayerType::outputRange
    OnnxForm onnx;
    const char* pytorch; // a Python expression of x and the argument a (ExportForms.h)
};

// An ONNX operator of one input and no attribute.
template <const char* Op> std::string unary(OnnxBuilder& g, float, const std::string& x)
{
    return g.node(Op, {x});
}
constexpr char kRelu[] = "Relu", kTanh[] = "Tanh", kSigmoid[] = "Sigmoid";

// x / 2 (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))): opset 17 has no Gelu operator.
std::string geluGraph(OnnxBuilder& g, float, const std::string& x)
{
    using G = activations::Gelu;
    const std::string cube = g.node("Mul", {g.node("Mul", {x, x}), x});
    const std::string inner = g.node("Add", {x, g.node("Mul", {cube, g.scalar("c", G::kCubic)})});
    const std::string t = g.node("Tanh", {g.node("Mul", {inner, g.scalar("k", G::kRoot2OverPi)})});
    return g.node("Mul", {g.node("Mul", {x, g.scalar("half", 0.5f)}),
                          g.node("Add", {t, g.scalar("one", 1.f)})});
}

std::string leakyReluGraph(OnnxBuilder& g, float slope, const std::string& x)
{
    const std::string y = g.node("LeakyRelu", {x});
    g.attr("alpha", slope);
    return y;
}

std::string sineGraph(OnnxBuilder& g, float w0, const std::string& x)
{
    return g.node("Sin", {g.node("Mul", {x, g.scalar("w0", w0)})});
}

// x sigmoid(x): opset 17 has no Silu operator.
std::string siluGraph(OnnxBuilder& g, float, const std::string& x)
{
    return g.node("Mul", {x, g.node("Sigmoid", {x})});
}

// Long: one entry per activation, a table rather than logic.
const std::vector<ActivationEntry>& activationEntries()
{
    static const std::vector<ActivationEntry> entries = {
        {Activation::ReLU,
         {},
         "ReLU",
         "relu",
         "max(0, x)",
         "max(0, z)",
         std::nullopt,
         Init::He,
         std::nullopt,
         unary<kRelu>,
         "torch.relu(x)"},
        {Activation::Tanh,
         {},
         "Tanh",
         "tanh",
         "tanh(x), between -1 and 1",
         "tanh(z)",
         std::nullopt,
         Init::Xavier,
         std::pair(-1.f, 1.f),
         unary<kTanh>,
         "torch.tanh(x)"},
        {Activation::Sigmoid,
         {},
         "Sigmoid",
         "sigmoid",
         "1 / (1 + e^-x), between 0 and 1",
         "1 / (1 + e^−z)",
         std::nullopt,
         Init::Xavier,
         std::pair(0.f, 1.f),
         unary<kSigmoid>,
         "torch.sigmoid(x)"},
        {Activation::LeakyReLU,
         {"leaky"},
         "Leaky ReLU",
         "leakyrelu[:slope]",
         "x for x > 0, slope * x otherwise (slope default 0.01)",
         "z, or slope·z below 0",
         realArgument("slope", 0.01, false, "The slope for negative inputs."),
         Init::He,
         std::nullopt,
         leakyReluGraph,
         "F.leaky_relu(x, a)"},
        {Activation::Sine,
         {"sin", "siren"},
         "Sine (SIREN)",
         "sine[:w0]",
         "SIREN activation sin(w0 * x), w0 default 30; higher w0 fits finer detail",
         "sin(ω·z)",
         realArgument("w0", 30, true, "w0 in sin(w0 x): higher w0 fits finer detail."),
         Init::Siren,
         std::nullopt,
         sineGraph,
         "torch.sin(a * x)"},
        {Activation::Gelu,
         {},
         "GELU",
         "gelu",
         "GELU, tanh approximation: x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as in GPT-2",
         "z·Φ(z)",
         std::nullopt,
         Init::He,
         std::nullopt,
         geluGraph,
         "F.gelu(x, approximate=\"tanh\")"},
        {Activation::Silu,
         {"swish"},
         "SiLU (swish)",
         "silu",
         "x * sigmoid(x): smooth like GELU, below 0 it dips to -0.28 and returns to 0",
         "z·σ(z)",
         std::nullopt,
         Init::He,
         std::nullopt,
         siluGraph,
         "F.silu(x)"},
    };
    return entries;
}

class ActivationLayer final : public Layer {
public:
    ActivationLayer(const LayerItem& item, const ActivationEntry& entry)
        : Layer(item), m_entry(entry),
          m_param(item.args.empty() ? 0.f : static_cast<float>(item.args[0]))
    {
    }
    int64_t outputWidth(int64_t in) const override { return in; }
    bool isActivation() const override { return true; }
    Activation activation() const override { return m_entry.activation; }
    float activationParam() const override { return m_param; }
    InitHint initHint() const override { return {m_entry.denseInit, m_param}; }

protected:
    void forwardImpl(Backend& b, ConstTensor x, Tensor y, Tensor) override
    {
        b.activationForward(m_entry.activation, m_param, x, y);
    }
    void backwardImpl(Backend& b, ConstTensor x, ConstTensor y, ConstTensor dy, Tensor dx,
                      Tensor) override
    {
        if (dx.data) b.activationBackward(m_entry.activation, m_param, x, y, dy, dx);
    }

private:
    const ActivationEntry& m_entry;
    float m_param;
};

const ActivationEntry& entryFor(const LayerType& type)
{
    for (const ActivationEntry& e : activationEntries())
        if (type.name == activationName(e.activation)) return e;
    return activationEntries().front(); // unreachable: every activation type has an entry
}

} // namespace

std::vector<LayerType> activationLayerTypes()
{
    std::vector<LayerType> types;
    for (const ActivationEntry& e : activationEntries()) {
        LayerType t;
        t.name = activationName(e.activation);
        t.aliases = e.aliases;
        t.label = e.label;
        t.synopsis = e.synopsis;
        t.help = e.help;
        t.formula = e.formula;
        t.outputRange = e.range;
        if (e.argument) t.args = {*e.argument};
        t.activation = true;
        t.positionWise = true;
        t.make = [](const LayerItem& item) -> std::unique_ptr<Layer> {
            return std::make_unique<ActivationLayer>(item, entryFor(*item.type));
        };
        t.exports.onnx = [](OnnxBuilder& g, const Layer& layer, const std::string& x) {
            return entryFor(*layer.item().type).onnx(g, layer.activationParam(), x);
        };
        t.exports.pytorch = e.pytorch;
        types.push_back(std::move(t));
    }
    return types;
}

} // namespace il
