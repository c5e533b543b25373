// Linear skip: y = x + inputs S^T, where inputs are the network's own inputs (not this layer's)
// and S: width x networkInputs, no bias (the layer before has one). Placed after the output
// layer it makes a wide-and-deep network: a linear model of the inputs plus what the hidden
// layers add, so the network is never worse placed than linear regression to start from and
// the hidden layers only have to learn what a linear model misses. S starts at zero: the
// network starts as the stack before it.
#include "Errors.h"
#include "Layer.h"

namespace il {

namespace {

class Skip final : public Layer {
public:
    explicit Skip(const LayerItem& item) : Layer(item) {}
    int64_t outputWidth(int64_t inputWidth) const override { return inputWidth; }
    std::vector<ParamSpec> parameters(int64_t in) const override
    {
        if (m_networkInputWidth <= 0)
            throw EngineError(spec() + ": the network's input width is not known");
        return {{"weight", {in, m_networkInputWidth}, true}};
    }
    bool readsNetworkInput() const override { return true; }
    void initialize(Backend& backend, Rng&, const InitContext&) override
    {
        backend.fill(m_params[0], 0.f);
    }

protected:
    void forwardImpl(Backend& b, ConstTensor x, Tensor y, Tensor) override
    {
        checkInputs(x);
        b.copy(y.data, x.data, static_cast<size_t>(x.size()) * sizeof(float));
        b.gemm(false, true, 1.f, m_networkInput, m_params[0], 1.f, y);
    }
    // dS = dy^T inputs; dx = dy. The network's inputs are data: no gradient for them.
    void backwardImpl(Backend& b, ConstTensor x, ConstTensor, ConstTensor dy, Tensor dx,
                      Tensor) override
    {
        checkInputs(x);
        b.gemm(true, false, 1.f, dy, m_networkInput, 0.f, m_grads[0]);
        if (dx.data) b.copy(dx.data, dy.data, static_cast<size_t>(dy.size()) * sizeof(float));
    }

private:
    void checkInputs(ConstTensor x) const
    {
        if (m_networkInput.rows() != x.rows() || m_networkInput.cols() != m_networkInputWidth)
            throw ShapeError(spec() + ": the network's inputs are " +
                             m_networkInput.shape.toString() + ", expected " +
                             std::to_string(x.rows()) + "x" + std::to_string(m_networkInputWidth));
    }
};

// ONNX: x + inputs S^T, with S^T a constant (MatMul takes no transpose).
std::string skipGraph(OnnxBuilder& g, const Layer&, const std::string& x)
{
    const ExportTensor& s = g.tensor("weight");
    std::vector<float> st(s.data.size());
    for (int64_t r = 0; r < s.rows; ++r)
        for (int64_t c = 0; c < s.cols; ++c)
            st[static_cast<size_t>(c * s.rows + r)] = s.data[static_cast<size_t>(r * s.cols + c)];
    return g.node("Add", {x, g.node("MatMul", {g.networkInputs(),
                                               g.floats("weight_t", {s.cols, s.rows}, st)})});
}

// PyTorch: the module model.py rebuilds the layer with (ExportForms.h).
const char* const kSkipModule = R"py(
class Skip(nn.Module):
    """y = x + inputs S^T: a linear map of the network's own inputs, no bias."""

    @staticmethod
    def build(args, out, shape):
        shape.positions, shape.position_width = 1, 0
        return Skip(shape.width, shape.input_width)

    def __init__(self, width, input_width):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(width, input_width))

    def forward(self, x, inputs):
        return x + F.linear(inputs, self.weight)
)py";

} // namespace

LayerType skipLayerType()
{
    LayerType t;
    t.name = "skip";
    t.aliases = {"wide"};
    t.label = "Linear skip";
    t.synopsis = "skip";
    t.help = "Adds a linear map of the network's inputs to its input: y = x + inputs S^T (no "
             "bias; S starts at zero). After the output layer it makes a wide-and-deep network: "
             "a linear model of the inputs plus what the hidden layers add, so the hidden layers "
             "only learn what a linear model misses.";
    t.exports.onnx = skipGraph;
    t.exports.pytorch = kSkipModule;
    t.make = [](const LayerItem& item) -> std::unique_ptr<Layer> {
        return std::make_unique<Skip>(item);
    };
    return t;
}

} // namespace il
