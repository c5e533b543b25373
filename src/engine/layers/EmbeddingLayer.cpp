// Embedding: each input column is a token id in [0, vocab); y concatenates the id rows of the
// table (vocab x dim). Equivalent to one-hot(id) x dense without materialising the one-hot.
#include "Layer.h"

namespace il {

namespace {

class Embedding final : public Layer {
public:
    explicit Embedding(const LayerItem& item)
        : Layer(item), m_vocab(static_cast<int64_t>(item.args[0])),
          m_dim(static_cast<int64_t>(item.args[1]))
    {
    }
    int64_t outputWidth(int64_t in) const override { return in * m_dim; }
    // One position of dim numbers per context character, which a merge may group.
    RowLayout outputLayout(const RowLayout& in) const override
    {
        return {in.width * m_dim, 1, m_dim};
    }
    std::vector<ParamSpec> parameters(int64_t) const override
    {
        return {{"weight", {m_vocab, m_dim}, true}};
    }
    void initialize(Backend& backend, Rng& rng, const InitContext&) override
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

// ONNX: the table's rows gathered by the ids [N, positions], one row per position, laid side by
// side.
std::string embeddingGraph(OnnxBuilder& g, const Layer& layer, const std::string& ids)
{
    const ExportTensor& w = g.tensor("weight");
    const std::string rows = g.node("Gather", {g.floats("weight", {w.rows, w.cols}, w.data), ids});
    return g.node("Reshape",
                  {rows, g.ints("shape", {-1, layer.outputLayout(layer.inputLayout()).width})});
}

// PyTorch: the module model.py rebuilds the layer with (ExportForms.h).
const char* const kEmbeddingModule = R"py(
class Embedding(nn.Module):
    """Each input column is a token id; D numbers per id, the positions side by side."""

    @staticmethod
    def build(args, out, shape):
        dim = int(args[-1])
        vocab = int(args[0]) if len(args) > 1 and args[0] else int(shape.vocab)
        shape.width, shape.positions, shape.position_width = shape.width * dim, 1, dim
        return Embedding(vocab, dim)

    def __init__(self, vocab, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(vocab, dim))

    def forward(self, x, inputs):
        return F.embedding(x.to(torch.int64), self.weight).reshape(x.shape[0], -1)
)py";

} // namespace

LayerType embeddingLayerType()
{
    LayerType t;
    t.name = "embedding";
    t.aliases = {"embed"};
    t.label = "Embedding";
    t.synopsis = "embedding[:V]:D";
    t.help = "First layer only: each input column is a token id; D numbers per id (the "
             "efficient form of one-hot x dense). V, the vocabulary, comes from the data if left "
             "out.";
    LayerArg vocab;
    vocab.name = "vocabulary";
    vocab.fromData = DataValue::Vocabulary;
    LayerArg dim;
    dim.name = "dimension";
    dim.required = true;
    dim.suggested = 10;
    dim.column = EditorColumn::Size;
    dim.tooltip = "Numbers per token (character).";
    t.args = {vocab, dim};
    t.argsFromRight = true;
    t.firstOnly = "an embedding reads token ids, so it must be the first layer";
    t.exports.onnx = embeddingGraph;
    t.exports.readsIds = true;
    t.exports.pytorch = kEmbeddingModule;
    t.make = [](const LayerItem& item) -> std::unique_ptr<Layer> {
        return std::make_unique<Embedding>(item);
    };
    return t;
}

} // namespace il
