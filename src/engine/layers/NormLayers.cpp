// Layers for deeper names networks (makemore's lectures): layer and batch normalisation, dropout,
// and the merge of consecutive positions that makes a context window a tree (RowLayout, Layer.h).
// Each works per position after a merge: a row of P positions of C numbers is read as P rows of C.
#include "Errors.h"
#include "Layer.h"
#include "NormMath.h"

#include <string>
#include <vector>

namespace il {

namespace {

// gamma = 1, beta = 0 (and, for batch norm, running mean 0 and running variance 1).
void uploadConstant(Backend& backend, Tensor t, float value)
{
    backend.fill(t, value);
}

// y = (x - mean) / sqrt(var + eps) * gamma + beta over each position's C numbers (nn.LayerNorm
// over the last dimension). The workspace keeps each position's mean and 1 / sqrt(var + eps).
class LayerNorm final : public Layer {
public:
    explicit LayerNorm(const LayerItem& item) : Layer(item) {}
    int64_t outputWidth(int64_t in) const override { return in; }
    std::vector<ParamSpec> parameters(int64_t in) const override
    {
        const int64_t c = in / positions();
        return {{"weight", {1, c}, true}, {"bias", {1, c}, true}};
    }
    int64_t workspaceCols(int64_t) const override { return 2 * positions(); }
    void initialize(Backend& backend, Rng&, const InitContext&) override
    {
        uploadConstant(backend, m_params[0], 1.f);
        uploadConstant(backend, m_params[1], 0.f);
    }

protected:
    void forwardImpl(Backend& b, ConstTensor x, Tensor y, Tensor stats) override
    {
        const int64_t p = positions();
        b.layerNormForward(perPosition(x, p), m_params[0], m_params[1], normmath::kEps,
                           perPosition(y, p), {stats.data, {x.rows() * p, 2}});
    }
    void backwardImpl(Backend& b, ConstTensor x, ConstTensor, ConstTensor dy, Tensor dx,
                      Tensor stats) override
    {
        const int64_t p = positions();
        b.layerNormBackward(perPosition(x, p), m_params[0], {stats.data, {x.rows() * p, 2}},
                            perPosition(dy, p), dx.data ? perPosition(dx, p) : Tensor{}, m_grads[0],
                            m_grads[1]);
    }
};

// nn.BatchNorm1d: each of the C channels normalised over the batch (and, after a merge, over the
// positions too), with the batch's statistics while training and the running ones, kept in the
// model, at evaluation and generation.
class BatchNorm final : public Layer {
public:
    explicit BatchNorm(const LayerItem& item)
        : Layer(item), m_momentum(static_cast<float>(item.args[0]))
    {
    }
    int64_t outputWidth(int64_t in) const override { return in; }
    std::vector<ParamSpec> parameters(int64_t in) const override
    {
        const int64_t c = in / positions();
        return {{"weight", {1, c}, true},
                {"bias", {1, c}, true},
                {"running_mean", {1, c}, false},
                {"running_var", {1, c}, false}};
    }
    void initialize(Backend& backend, Rng&, const InitContext&) override
    {
        uploadConstant(backend, m_params[0], 1.f);
        uploadConstant(backend, m_params[1], 0.f);
        uploadConstant(backend, m_params[2], 0.f);
        uploadConstant(backend, m_params[3], 1.f);
    }

protected:
    void forwardImpl(Backend& b, ConstTensor x, Tensor y, Tensor) override
    {
        const int64_t p = positions();
        b.batchNormForward(perPosition(x, p), m_params[0], m_params[1], normmath::kEps, m_momentum,
                           m_training, m_params[2], m_params[3], perPosition(y, p));
    }
    void backwardImpl(Backend& b, ConstTensor x, ConstTensor, ConstTensor dy, Tensor dx,
                      Tensor) override
    {
        const int64_t p = positions();
        b.batchNormBackward(perPosition(x, p), m_params[0], normmath::kEps, perPosition(dy, p),
                            dx.data ? perPosition(dx, p) : Tensor{}, m_grads[0], m_grads[1]);
    }

private:
    float m_momentum;
};

// nn.Dropout(p): while training, each number is zeroed with probability p and the others scaled
// by 1 / (1 - p); at evaluation and generation it passes everything through. Its state (a seed
// drawn at initialisation and a counter the op advances) is saved with the model.
class Dropout final : public Layer {
public:
    explicit Dropout(const LayerItem& item) : Layer(item), m_p(static_cast<float>(item.args[0])) {}
    int64_t outputWidth(int64_t in) const override { return in; }
    std::vector<ParamSpec> parameters(int64_t) const override
    {
        return {{"rng_state", {1, 2}, false}};
    }
    int64_t workspaceCols(int64_t in) const override { return in; } // the mask
    void initialize(Backend& backend, Rng& rng, const InitContext&) override
    {
        const float state[2] = {static_cast<float>(rng.below(1u << 24)), 0.f};
        backend.upload(m_params[0], state);
    }

protected:
    void forwardImpl(Backend& b, ConstTensor x, Tensor y, Tensor mask) override
    {
        if (m_training && m_p > 0.f)
            b.dropoutForward(x, m_p, m_params[0], y, mask);
        else
            b.copy(y.data, x.data, static_cast<size_t>(x.size()) * sizeof(float));
        m_masked = m_training && m_p > 0.f;
    }
    void backwardImpl(Backend& b, ConstTensor, ConstTensor, ConstTensor dy, Tensor dx,
                      Tensor mask) override
    {
        if (!dx.data) return;
        if (m_masked)
            b.dropoutBackward(dy, mask, dx);
        else
            b.copy(dx.data, dy.data, static_cast<size_t>(dy.size()) * sizeof(float));
    }

private:
    float m_p;
    bool m_masked = false; // the last forward drew a mask
};

// makemore's FlattenConsecutive(n): every n consecutive positions become one of n times the
// width. The numbers stay where they are; the layers after it read the row as fewer, wider
// positions (RowLayout).
class Merge final : public Layer {
public:
    explicit Merge(const LayerItem& item) : Layer(item), m_count(static_cast<int64_t>(item.args[0]))
    {
    }
    int64_t outputWidth(int64_t in) const override { return in; }
    RowLayout outputLayout(const RowLayout& in) const override
    {
        const int64_t width = in.positions > 1 ? in.channels() : in.positionWidth;
        if (width <= 0 || in.width % width != 0)
            throw EngineError(spec() +
                              ": its input is not made of positions; put it after an embedding "
                              "(one position per context character) or after a merge");
        const int64_t count = in.width / width;
        if (count % m_count != 0)
            throw EngineError(spec() + ": " + std::to_string(count) +
                              " positions do not fall into groups of " + std::to_string(m_count));
        return {in.width, count / m_count, width * m_count};
    }

protected:
    void forwardImpl(Backend& b, ConstTensor x, Tensor y, Tensor) override
    {
        b.copy(y.data, x.data, static_cast<size_t>(x.size()) * sizeof(float));
    }
    void backwardImpl(Backend& b, ConstTensor, ConstTensor, ConstTensor dy, Tensor dx,
                      Tensor) override
    {
        if (dx.data) b.copy(dx.data, dy.data, static_cast<size_t>(dy.size()) * sizeof(float));
    }

private:
    int64_t m_count;
};

// ONNX: LayerNormalization over each position's channels, or BatchNormalization with the
// running statistics (inference), on the positions as rows.
std::string normGraph(OnnxBuilder& g, const Layer& layer, const std::string& x)
{
    const RowLayout in = layer.inputLayout();
    const int64_t c = in.channels();
    const std::string rows =
        in.positions > 1 ? g.node("Reshape", {x, g.ints("shape", {-1, c})}) : x;
    std::vector<std::string> inputs = {rows, g.floats("weight", {c}, g.tensor("weight").data),
                                       g.floats("bias", {c}, g.tensor("bias").data)};
    const bool layerNorm = layer.kind() == "layernorm";
    if (!layerNorm)
        for (const char* name : {"running_mean", "running_var"})
            inputs.push_back(g.floats(name, {c}, g.tensor(name).data));
    const std::string y = g.node(layerNorm ? "LayerNormalization" : "BatchNormalization", inputs);
    if (layerNorm) g.attr("axis", int64_t{-1});
    g.attr("epsilon", normmath::kEps);
    return in.positions > 1
               ? g.node("Reshape", {y, g.ints("shape", {-1, layer.outputLayout(in).width})})
               : y;
}

// ONNX: what inference does, nothing (dropout), or only the layout changes (merge).
std::string passThrough(OnnxBuilder&, const Layer&, const std::string& x)
{
    return x;
}

// PyTorch: the Merge module of model.py (ExportForms.h).
const char* const kMergeModule = R"py(
class Merge(nn.Module):
    """makemore's FlattenConsecutive: the numbers stay, the next layers see wider positions."""

    @staticmethod
    def build(args, out, shape):
        group = shape.channels if shape.positions > 1 else shape.position_width
        count = shape.width // group
        shape.positions, shape.position_width = count // int(args[0]), group * int(args[0])
        return Merge()

    def forward(self, x, inputs):
        return x
)py";

// PyTorch: the LayerNorm module of model.py (ExportForms.h).
const char* const kLayerNormModule = R"py(
class LayerNorm(nn.Module):
    @staticmethod
    def build(args, out, shape):
        return LayerNorm(shape.channels, shape.positions)

    def __init__(self, channels, positions):
        super().__init__()
        self.positions = positions
        self.weight = nn.Parameter(torch.ones(channels))
        self.bias = nn.Parameter(torch.zeros(channels))

    def forward(self, x, inputs):
        y = F.layer_norm(_per_position(x, self.positions), (self.weight.shape[0],), self.weight,
                         self.bias, 1e-5)
        return y.reshape(x.shape[0], -1)
)py";

// PyTorch: the BatchNorm module of model.py (ExportForms.h).
const char* const kBatchNormModule = R"py(
class BatchNorm(nn.Module):
    @staticmethod
    def build(args, out, shape):
        return BatchNorm(shape.channels, shape.positions,
                         _real(args[0] if args else "", _real("0.1", 0)))

    def __init__(self, channels, positions, momentum):
        super().__init__()
        self.positions, self.momentum = positions, momentum
        self.weight = nn.Parameter(torch.ones(channels))
        self.bias = nn.Parameter(torch.zeros(channels))
        self.register_buffer("running_mean", torch.zeros(channels))
        self.register_buffer("running_var", torch.ones(channels))

    def forward(self, x, inputs):
        y = F.batch_norm(_per_position(x, self.positions), self.running_mean, self.running_var,
                         self.weight, self.bias, self.training, self.momentum, 1e-5)
        return y.reshape(x.shape[0], -1)
)py";

// PyTorch: the Dropout module of model.py (ExportForms.h).
const char* const kDropoutModule = R"py(
class Dropout(nn.Module):
    @staticmethod
    def build(args, out, shape):
        return Dropout(_real(args[0] if args else "", 0.5))

    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x, inputs):
        return F.dropout(x, self.p, self.training)
)py";

} // namespace

LayerType layerNormLayerType()
{
    LayerType t;
    t.name = "layernorm";
    t.aliases = {"ln"};
    t.label = "Layer norm";
    t.synopsis = "layernorm";
    t.help = "Normalises each row (each position, after a merge) to mean 0 and variance 1, then "
             "scales and shifts it by trained weights (nn.LayerNorm). Keeps deep stacks in the "
             "range where tanh still learns.";
    t.positionWise = true;
    t.exports.onnx = normGraph;
    t.exports.pytorch = kLayerNormModule;
    t.make = [](const LayerItem& item) -> std::unique_ptr<Layer> {
        return std::make_unique<LayerNorm>(item);
    };
    return t;
}

LayerType batchNormLayerType()
{
    LayerType t;
    t.name = "batchnorm";
    t.aliases = {"bn", "batchnorm1d"};
    t.label = "Batch norm";
    t.synopsis = "batchnorm[:momentum]";
    t.help = "Normalises each column over the batch (and the positions, after a merge), then "
             "scales and shifts it by trained weights (nn.BatchNorm1d). Running means and "
             "variances, updated at each step by the momentum (default 0.1), are kept in the "
             "model and used for evaluation and generation.";
    t.args = {realArgument("momentum", normmath::kMomentum, true,
                           "How far the running statistics move toward each batch's (0.1: a "
                           "tenth).")};
    t.positionWise = true;
    t.exports.onnx = normGraph;
    t.exports.pytorch = kBatchNormModule;
    t.make = [](const LayerItem& item) -> std::unique_ptr<Layer> {
        if (item.args[0] > 1) throw EngineError(item.text() + ": the momentum must be at most 1");
        return std::make_unique<BatchNorm>(item);
    };
    return t;
}

LayerType dropoutLayerType()
{
    LayerType t;
    t.name = "dropout";
    t.label = "Dropout";
    t.synopsis = "dropout[:p]";
    t.help = "While training, zeroes each number with probability p (default 0.5) and scales the "
             "others by 1 / (1 - p), so no unit can rely on any other (nn.Dropout); evaluation "
             "and generation pass everything through.";
    LayerArg p = realArgument("p", 0.5, false,
                              "The share of numbers dropped at each training step (0 to below 1).");
    p.suggested = 0.2;
    t.args = {p};
    t.positionWise = true;
    t.rngStream = "dropout";
    t.exports.onnx = passThrough;
    t.exports.pytorch = kDropoutModule;
    t.make = [](const LayerItem& item) -> std::unique_ptr<Layer> {
        if (!(item.args[0] >= 0 && item.args[0] < 1))
            throw EngineError(item.text() + ": p must be at least 0 and below 1");
        return std::make_unique<Dropout>(item);
    };
    return t;
}

LayerType mergeLayerType()
{
    LayerType t;
    t.name = "merge";
    t.aliases = {"flatten", "flattenconsecutive"};
    t.label = "Merge positions";
    t.synopsis = "merge:N";
    t.help = "Merges every N consecutive positions into one (makemore's FlattenConsecutive): "
             "after an embedding, merge:2 makes pairs of characters, which the next dense layer "
             "reads one pair at a time with shared weights; merge:2 again makes pairs of pairs, "
             "so the network sees its context as a tree.";
    LayerArg count;
    count.name = "count";
    count.required = true;
    count.suggested = 2;
    count.column = EditorColumn::Size;
    count.tooltip = "Positions merged into one (2: pairs).";
    t.args = {count};
    t.exports.onnx = passThrough;
    t.exports.pytorch = kMergeModule;
    t.make = [](const LayerItem& item) -> std::unique_ptr<Layer> {
        return std::make_unique<Merge>(item);
    };
    return t;
}

} // namespace il
