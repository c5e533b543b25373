// A 1-D convolution over positions (nn.Conv1d with no padding and stride 1): each window of K
// consecutive positions of C numbers becomes N numbers, y[q] = W [x[q], ..., x[q + K - 1]] + b,
// with the same W and b at every q, so P positions become P - K + 1. After an embedding the
// positions are the context's characters: conv:64:3 reads every three characters in a row, each
// window with the same weights (a WaveNet layer without the dilation); a merge or a last dense
// then reads what the windows found. The windows are copied side by side (Backend::windows, the
// im2col of a convolution) and a dense layer's products run on them.
#include "Errors.h"
#include "Layer.h"

#include <cmath>

namespace il {

namespace {

class Conv final : public Layer {
public:
    explicit Conv(const LayerItem& item)
        : Layer(item), m_units(static_cast<int64_t>(item.args[0])),
          m_window(static_cast<int64_t>(item.args[1]))
    {
    }
    int64_t outputWidth(int64_t in) const override { return m_units * windowsIn(in); }
    RowLayout outputLayout(const RowLayout& in) const override
    {
        const int64_t q = windowsIn(in.width);
        if (q > 1) return {m_units * q, q, m_units};
        return {m_units, 1, 0};
    }
    std::vector<ParamSpec> parameters(int64_t) const override
    {
        return {{"weight", {m_units, m_window * channels()}, true}, {"bias", {1, m_units}, true}};
    }
    // The windows side by side: Q rows of K C numbers for each input row (and their gradient in
    // backward, once the weights' gradient no longer needs them).
    int64_t workspaceCols(int64_t in) const override
    {
        return windowsIn(in) * m_window * channels();
    }

    void initialize(Backend& backend, Rng& rng, const InitContext& context) override
    {
        // As a dense layer over a window: He before ReLU-like activations, Glorot otherwise;
        // the bias starts at 0.
        const double fanIn = static_cast<double>(m_window * channels());
        const double fanOut = static_cast<double>(m_units);
        const bool he = context.next && context.next->initHint().init == Init::He;
        std::vector<float> w(static_cast<size_t>(m_params[0].size()));
        std::vector<float> bias(static_cast<size_t>(m_units), 0.f);
        const double bound = std::sqrt(6.0 / (fanIn + fanOut)), sd = std::sqrt(2.0 / fanIn);
        for (auto& v : w)
            v = static_cast<float>(he ? sd * rng.normal() : rng.uniform(-bound, bound));
        backend.upload(m_params[0], w.data());
        backend.upload(m_params[1], bias.data());
    }

protected:
    void forwardImpl(Backend& b, ConstTensor x, Tensor y, Tensor workspace) override
    {
        const int64_t q = windowsIn(x.cols());
        const Tensor windows = perPosition(workspace, q);
        b.windows(x, channels(), windows);
        b.linearForward(windows, m_params[0], m_params[1], perPosition(y, q));
    }
    void backwardImpl(Backend& b, ConstTensor x, ConstTensor, ConstTensor dy, Tensor dx,
                      Tensor workspace) override
    {
        const int64_t q = windowsIn(x.cols());
        const Tensor windows = perPosition(workspace, q);
        const ConstTensor dyq = perPosition(dy, q);
        b.linearBackward(windows, dyq, m_grads[0], m_grads[1]);
        if (!dx.data) return;
        b.gemm(false, false, 1.f, dyq, m_params[0], 0.f, windows); // the windows' gradient
        b.windowsBackward(windows, channels(), dx);
    }

private:
    // C: the numbers of one position of the input (an embedding's dimension, a per-position
    // layer's width); 0 when the input is not made of positions.
    int64_t channels() const { return m_in.positions > 1 ? m_in.channels() : m_in.positionWidth; }
    // Q = P - K + 1 windows in a row of `width` numbers; throws EngineError when the input has
    // no positions or fewer than K.
    int64_t windowsIn(int64_t width) const
    {
        const int64_t c = channels();
        if (c <= 0)
            throw EngineError(spec() + ": a convolution reads positions; put it after an "
                                       "embedding (or a merge, or another conv)");
        const int64_t p = width / c;
        if (p < m_window)
            throw EngineError(spec() + ": a window of " + std::to_string(m_window) +
                              " positions does not fit in the " + std::to_string(p) +
                              " positions it gets (a longer context, or a smaller window)");
        return p - m_window + 1;
    }

    int64_t m_units;
    int64_t m_window;
};

// ONNX: the row as [N, C, P] (positions last), Conv with the weights as [units, C, K], back to
// [N, Q units] position-major.
std::string convGraph(OnnxBuilder& g, const Layer& layer, const std::string& x)
{
    const RowLayout in = layer.inputLayout();
    const int64_t c = in.positions > 1 ? in.channels() : in.positionWidth;
    const int64_t p = in.width / c;
    const ExportTensor& w = g.tensor("weight");
    const int64_t units = w.rows, window = w.cols / c;
    std::vector<float> kernel(w.data.size()); // [units, K, C] -> [units, C, K]
    for (int64_t u = 0; u < units; ++u)
        for (int64_t k = 0; k < window; ++k)
            for (int64_t ch = 0; ch < c; ++ch)
                kernel[static_cast<size_t>((u * c + ch) * window + k)] =
                    w.data[static_cast<size_t>(u * w.cols + k * c + ch)];
    const std::string positions = g.node("Reshape", {x, g.ints("shape", {-1, p, c})});
    const std::string channelsFirst = g.node("Transpose", {positions});
    g.attr("perm", std::vector<int64_t>{0, 2, 1});
    const std::string conv =
        g.node("Conv", {channelsFirst, g.floats("weight", {units, c, window}, kernel),
                        g.floats("bias", {units}, g.tensor("bias").data)});
    g.attr("kernel_shape", std::vector<int64_t>{window});
    const std::string back = g.node("Transpose", {conv});
    g.attr("perm", std::vector<int64_t>{0, 2, 1});
    return g.node("Reshape", {back, g.ints("shape", {-1, layer.outputLayout(in).width})});
}

// PyTorch: the module model.py rebuilds the layer with (ExportForms.h). Tensor.unfold makes the
// same windows as Backend::windows, and the weights keep the model file's [units, K C] layout.
const char* const kConvModule = R"py(
class Conv(nn.Module):
    """nn.Conv1d over positions, no padding, stride 1: every window of `window` positions of
    `channels` numbers becomes `units` numbers; the weights are [units, window x channels],
    position-major, as the model file keeps them."""

    @staticmethod
    def build(args, out, shape):
        channels = shape.channels if shape.positions > 1 else shape.position_width
        units, window = int(args[0]), int(args[1]) if len(args) > 1 and args[1] else 3
        count = shape.width // channels - window + 1
        shape.width = count * units
        shape.positions, shape.position_width = (count, units) if count > 1 else (1, 0)
        return Conv(units, window, channels)

    def __init__(self, units, window, channels):
        super().__init__()
        self.window, self.channels = window, channels
        self.weight = nn.Parameter(torch.zeros(units, window * channels))
        self.bias = nn.Parameter(torch.zeros(units))

    def extra_repr(self):
        return f"windows of {self.window} x {self.channels} -> {self.weight.shape[0]}"

    def forward(self, x, inputs):
        windows = x.unfold(1, self.window * self.channels, self.channels)
        return F.linear(windows, self.weight, self.bias).reshape(x.shape[0], -1)
)py";

} // namespace

LayerType convLayerType()
{
    LayerType t;
    t.name = "conv";
    t.aliases = {"conv1d"};
    t.label = "Convolution";
    t.synopsis = "conv:N[:K]";
    t.help = "A 1-D convolution over positions (nn.Conv1d, no padding): every window of K "
             "consecutive positions (default 3) becomes N numbers, with the same weights at "
             "every window, so P positions become P - K + 1. After an embedding it reads the "
             "context's characters K at a time; end with a merge or a dense layer that reads "
             "what the windows found.";
    LayerArg units;
    units.name = "units";
    units.required = true;
    units.suggested = 32;
    units.column = EditorColumn::Size;
    units.tooltip = "The numbers each window becomes (the convolution's output channels).";
    LayerArg window;
    window.name = "window";
    window.defaultValue = 3;
    window.column = EditorColumn::Setting;
    window.tooltip = "How many consecutive positions one window reads (the kernel size).";
    t.args = {units, window};
    t.formula = "a weighted sum of K consecutive positions, the same weights at every window";
    t.exports.onnx = convGraph;
    t.exports.pytorch = kConvModule;
    t.example = {"embedding:4,conv:6:2,tanh,conv:5:2,merge:2,dense", "names"};
    t.make = [](const LayerItem& item) -> std::unique_ptr<Layer> {
        return std::make_unique<Conv>(item);
    };
    return t;
}

} // namespace il
