// Fourier features (Tancik et al. 2020): y = [sin(2 pi x B^T) | cos(2 pi x B^T)], B: count x in
// drawn from N(0, scale^2) with the run's seed and never trained. Output width 2 * count.
#include "Layer.h"

#include <numbers>

namespace il {

namespace {

class Fourier final : public Layer {
public:
    explicit Fourier(const LayerItem& item)
        : Layer(item), m_count(static_cast<int64_t>(item.args[0])),
          m_scale(static_cast<float>(item.args[1]))
    {
    }
    int64_t outputWidth(int64_t) const override { return 2 * m_count; }
    std::vector<ParamSpec> parameters(int64_t in) const override
    {
        return {{"projection", {m_count, in}, false}}; // B, fixed
    }
    int64_t workspaceCols(int64_t) const override { return m_count; } // z = 2 pi x B^T

    void initialize(Backend& backend, Rng& rng, const InitContext&) override
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

// ONNX: z = 2 pi x B^T (Gemm's alpha), then [Sin(z) | Cos(z)].
std::string fourierGraph(OnnxBuilder& g, const Layer&, const std::string& x)
{
    const ExportTensor& b = g.tensor("projection");
    const std::string z = g.node("Gemm", {x, g.floats("projection", {b.rows, b.cols}, b.data)});
    g.attr("transB", int64_t{1});
    g.attr("alpha", static_cast<float>(2 * std::numbers::pi));
    const std::string y = g.node("Concat", {g.node("Sin", {z}), g.node("Cos", {z})});
    g.attr("axis", int64_t{1});
    return y;
}

// PyTorch: the module model.py rebuilds the layer with (ExportForms.h).
const char* const kFourierModule = R"py(
class Fourier(nn.Module):
    """[sin(2 pi x B^T), cos(2 pi x B^T)], B fixed (a buffer, never trained)."""

    @staticmethod
    def build(args, out, shape):
        layer = Fourier(out // 2, shape.width)
        shape.width, shape.positions, shape.position_width = out, 1, 0
        return layer

    def __init__(self, count, inputs):
        super().__init__()
        self.register_buffer("projection", torch.zeros(count, inputs))

    def extra_repr(self):
        return f"{self.projection.shape[1]} -> 2 x {self.projection.shape[0]}"

    def forward(self, x, inputs):
        z = F.linear(x, self.projection) * (2 * math.pi)
        return torch.cat([torch.sin(z), torch.cos(z)], dim=1)
)py";

} // namespace

LayerType fourierLayerType()
{
    LayerType t;
    t.name = "fourier";
    t.label = "Fourier features";
    t.synopsis = "fourier[:M[:S]]";
    t.help = "First layer only: [sin(2 pi x B^T), cos(2 pi x B^T)] with B ~ N(0, S^2), M x inputs, "
             "seeded and never trained (default M 256, S 10).";
    LayerArg count;
    count.name = "feature count";
    count.defaultValue = 256;
    count.column = EditorColumn::Size;
    count.tooltip = "How many random frequencies (the output has twice as many numbers).";
    LayerArg scale;
    scale.name = "scale";
    scale.kind = LayerArg::Kind::Real;
    scale.defaultValue = 10;
    scale.positive = true;
    scale.column = EditorColumn::Setting;
    scale.tooltip = "The scale S of the frequencies B ~ N(0, S\u00b2).";
    t.args = {count, scale};
    t.firstOnly = "Fourier features encode the raw input, so they must come first";
    t.rngStream = "fourier";
    t.formula = "sin or cos of a fixed random mix of the two coordinates (one frequency)";
    t.exports.onnx = fourierGraph;
    t.exports.pytorch = kFourierModule;
    t.make = [](const LayerItem& item) -> std::unique_ptr<Layer> {
        return std::make_unique<Fourier>(item);
    };
    return t;
}

} // namespace il
