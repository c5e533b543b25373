// Fully connected: y = x W^T + b. W: out x in (PyTorch's nn.Linear layout), b: 1 x out.
// After a merge (RowLayout) it works per position: each of a row's P positions of in numbers
// becomes `units` numbers with the same W and b, as nn.Linear does on a (batch, P, in) tensor.
#include "Layer.h"

#include <cmath>

namespace il {

namespace {

class Dense final : public Layer {
public:
    explicit Dense(const LayerItem& item)
        : Layer(item), m_units(static_cast<int64_t>(item.args[0])),
          m_init(static_cast<Init>(static_cast<int>(item.args[1])))
    {
    }
    int64_t outputWidth(int64_t) const override { return m_units * positions(); }
    std::vector<ParamSpec> parameters(int64_t in) const override
    {
        return {{"weight", {m_units, in / positions()}, true}, {"bias", {1, m_units}, true}};
    }
    RowLayout outputLayout(const RowLayout& in) const override
    {
        if (in.positions > 1) return {m_units * in.positions, in.positions, m_units};
        return {m_units, 1, 0};
    }

    void initialize(Backend& backend, Rng& rng, const InitContext& context) override
    {
        const auto [init, w0] = resolveInit(context);
        initializeWith(backend, rng, init, w0);
    }

private:
    // Init::Auto takes its scheme from the activation that follows: sine -> SIREN,
    // ReLU-like -> He, otherwise Xavier. After a sine layer every dense layer uses SIREN's
    // hidden-layer init with that layer's w0 (the final linear layer of a SIREN included).
    // w0: the sine frequency the weights feed (or, after a sine, come from).
    std::pair<Init, float> resolveInit(const InitContext& context) const
    {
        const InitHint next = context.next ? context.next->initHint() : InitHint{};
        float w0 = 30.f;
        if (next.init == Init::Siren)
            w0 = next.w0;
        else if (context.afterSiren)
            w0 = context.sirenW0;
        Init init = m_init;
        if (init == Init::Auto || init == Init::Siren) {
            if (next.init == Init::Siren)
                init = context.afterSiren ? Init::Siren : Init::SirenFirst;
            else if (init == Init::Siren || context.afterSiren)
                init = Init::Siren; // SIREN's final linear layer
            else if (next.init == Init::He)
                init = Init::He;
            else
                init = Init::Xavier;
        }
        return {init, w0};
    }

    void initializeWith(Backend& backend, Rng& rng, Init init, float w0)
    {
        const int64_t in = m_inputWidth / positions(), out = m_units;
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
        case Init::Zero: // a last layer: the network starts by predicting 0 everywhere
            break;
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
    // y = x W^T + b (Backend::linearForward). Per position, the same with every position a row
    // (perPosition: no copy).
    void forwardImpl(Backend& b, ConstTensor x, Tensor y, Tensor) override
    {
        const int64_t p = positions();
        b.linearForward(perPosition(x, p), m_params[0], m_params[1], perPosition(y, p));
    }
    // dW = dy^T x, db = sum_rows dy (Backend::linearBackward), dx = dy W. Transposes are read in
    // place by sgemm.
    void backwardImpl(Backend& b, ConstTensor x, ConstTensor, ConstTensor dy, Tensor dx,
                      Tensor) override
    {
        const int64_t p = positions();
        const ConstTensor dyp = perPosition(dy, p);
        b.linearBackward(perPosition(x, p), dyp, m_grads[0], m_grads[1]);
        if (dx.data) b.gemm(false, false, 1.f, dyp, m_params[0], 0.f, perPosition(dx, p));
    }

private:
    int64_t m_units;
    Init m_init; // as written: Auto unless the spec names a scheme
};

// ONNX: Gemm with W transposed; per position after a merge, each position a row of its own.
std::string denseGraph(OnnxBuilder& g, const Layer& layer, const std::string& x)
{
    const RowLayout in = layer.inputLayout();
    const ExportTensor& w = g.tensor("weight");
    const std::string wn = g.floats("weight", {w.rows, w.cols}, w.data);
    const std::string bn = g.floats("bias", {w.rows}, g.tensor("bias").data);
    if (in.positions == 1) {
        const std::string y = g.node("Gemm", {x, wn, bn});
        g.attr("transB", int64_t{1});
        return y;
    }
    const std::string rows = g.node("Reshape", {x, g.ints("shape", {-1, in.channels()})});
    const std::string y = g.node("Gemm", {rows, wn, bn});
    g.attr("transB", int64_t{1});
    return g.node("Reshape", {y, g.ints("shape", {-1, layer.outputLayout(in).width})});
}

// PyTorch: the module model.py rebuilds the layer with (ExportForms.h).
const char* const kDenseModule = R"py(
class Dense(nn.Module):
    """y = x W^T + b, per position (nn.Linear)."""

    @staticmethod
    def build(args, out, shape):
        layer = Dense(out // shape.positions, shape.channels, shape.positions)
        shape.width = out
        shape.position_width = out // shape.positions if shape.positions > 1 else 0
        return layer

    def __init__(self, units, inputs, positions):
        super().__init__()
        self.positions = positions
        self.weight = nn.Parameter(torch.zeros(units, inputs))
        self.bias = nn.Parameter(torch.zeros(units))

    def extra_repr(self):
        per = f", per position of {self.positions}" if self.positions > 1 else ""
        return f"{self.weight.shape[1]} -> {self.weight.shape[0]}{per}"

    def forward(self, x, inputs):
        n = x.shape[0]
        y = F.linear(_per_position(x, self.positions), self.weight, self.bias)
        return y.reshape(n, -1)
)py";

} // namespace

LayerType denseLayerType()
{
    LayerType t;
    t.name = "dense";
    t.aliases = {"linear"};
    t.label = "Dense";
    t.synopsis = "dense:N[:init]";
    t.help = "Fully connected layer with N units: y = x W^T + b. init: xavier, he, siren or "
             "zero (default: from the activation that follows: He before ReLU-like ones, SIREN "
             "before sine, Xavier otherwise; zero is for a last layer). The last dense layer may "
             "leave N out: it gets the output width.";
    LayerArg units;
    units.name = "units";
    units.fromData = DataValue::OutputWidth;
    units.suggested = 32;
    units.column = EditorColumn::Size;
    units.tooltip = "The number of units (outputs).";
    LayerArg init;
    init.name = "initialisation";
    init.kind = LayerArg::Kind::Choice;
    init.choices = {"auto", "xavier", "he", "siren", "zero"}; // the order of enum Init
    init.choiceAliases = {{"glorot", "xavier"}, {"kaiming", "he"}};
    init.column = EditorColumn::Init;
    init.tooltip = "How the weights start. Automatic picks from the next activation: He before "
                   "ReLU, SIREN before sine, Xavier otherwise. Zero, for a last layer: the "
                   "network starts out predicting 0 and adds detail as it learns (a Fourier-"
                   "feature network would otherwise start from loud random stripes).";
    t.args = {units, init};
    t.outputLayer = true;
    t.exports.onnx = denseGraph;
    t.exports.pytorch = kDenseModule;
    t.make = [](const LayerItem& item) -> std::unique_ptr<Layer> {
        return std::make_unique<Dense>(item);
    };
    return t;
}

} // namespace il
