// Element-wise activation layers. The maths is in ActivationMath.h (shared with the CUDA
// kernels); this file describes each activation to the layer language and the studio. A new
// activation is a struct in ActivationMath.h plus one entry in kActivations below.
#include "Layer.h"

#include <optional>

namespace il {

namespace {

struct ActivationEntry {
    Activation activation;
    std::vector<std::string> aliases;
    const char* label;    // for the studio
    const char* synopsis; // for the help
    const char* help;
    std::optional<LayerArg> argument; // the one argument, if it takes one
    Init denseInit;                   // what it asks of the dense layer before it
};

const std::vector<ActivationEntry>& activationEntries()
{
    static const std::vector<ActivationEntry> entries = {
        {Activation::ReLU, {}, "ReLU", "relu", "max(0, x)", std::nullopt, Init::He},
        {Activation::Tanh,
         {},
         "Tanh",
         "tanh",
         "tanh(x), between -1 and 1",
         std::nullopt,
         Init::Xavier},
        {Activation::Sigmoid,
         {},
         "Sigmoid",
         "sigmoid",
         "1 / (1 + e^-x), between 0 and 1",
         std::nullopt,
         Init::Xavier},
        {Activation::LeakyReLU,
         {"leaky"},
         "Leaky ReLU",
         "leakyrelu[:slope]",
         "x for x > 0, slope * x otherwise (slope default 0.01)",
         realArgument("slope", 0.01, false, "The slope for negative inputs."),
         Init::He},
        {Activation::Sine,
         {"sin", "siren"},
         "Sine (SIREN)",
         "sine[:w0]",
         "SIREN activation sin(w0 * x), w0 default 30; higher w0 fits finer detail",
         realArgument("w0", 30, true, "w0 in sin(w0 x): higher w0 fits finer detail."),
         Init::Siren},
        {Activation::Gelu,
         {},
         "GELU",
         "gelu",
         "GELU, tanh approximation: x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as in GPT-2",
         std::nullopt,
         Init::He},
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
        if (e.argument) t.args = {*e.argument};
        t.activation = true;
        t.positionWise = true;
        t.make = [](const LayerItem& item) -> std::unique_ptr<Layer> {
            return std::make_unique<ActivationLayer>(item, entryFor(*item.type));
        };
        types.push_back(std::move(t));
    }
    return types;
}

} // namespace il
