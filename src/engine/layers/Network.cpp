#include "Network.h"
#include "Errors.h"
#include "LayerSpec.h"
#include "Limits.h"
#include "ThreadGuard.h"

namespace il {

Network::Network(Backend& backend, int64_t inputWidth, std::vector<std::unique_ptr<Layer>> layers)
    : m_backend(backend), m_inputWidth(inputWidth), m_layers(std::move(layers))
{
    build();
}

Network::Network(Backend& backend, int64_t inputWidth, const std::string& spec, int64_t outputWidth,
                 int64_t vocab)
    : m_backend(backend), m_inputWidth(inputWidth),
      m_layers(parseLayerSpec(spec, outputWidth, vocab))
{
    build();
}

Network::~Network() = default;

void Network::build()
{
    checkEngineThread("building a network");
    if (m_inputWidth <= 0) throw EngineError("the network needs at least one input column");
    if (m_layers.empty()) throw EngineError("the network has no layers");
    // Widths and arena layout: trainable tensors first (one flat vector for the optimizer),
    // then fixed tensors.
    struct Slot {
        size_t layer;
        ParamSpec spec;
    };
    std::vector<Slot> trainable, fixed;
    RowLayout layout{m_inputWidth, 1, 0};
    m_widths.clear();
    for (size_t i = 0; i < m_layers.size(); ++i) {
        const RowLayout out = layOut(*m_layers[i], m_inputWidth, layout);
        for (auto& p : m_layers[i]->parameters(layout.width))
            (p.trainable ? trainable : fixed).push_back({i, p});
        layout = out;
        m_widths.push_back(layout.width);
    }
    checkOutputLayout(layout, *m_layers.back());
    m_trainableFloats = 0;
    for (auto& s : trainable)
        m_trainableFloats += s.spec.shape.size();
    m_fixedFloats = 0;
    for (auto& s : fixed)
        m_fixedFloats += s.spec.shape.size();
    m_arena = Buffer(&m_backend, static_cast<size_t>(m_trainableFloats + m_fixedFloats));
    m_grads = Buffer(&m_backend, static_cast<size_t>(m_trainableFloats));

    std::vector<std::vector<Tensor>> params(m_layers.size()), grads(m_layers.size());
    size_t offset = 0;
    m_tensorLayer.clear();
    m_ranges.clear();
    for (auto& s : trainable) {
        if (!s.spec.group.empty() && !findParameterGroup(s.spec.group))
            throw EngineError("\"" + m_layers[s.layer]->spec() +
                              "\": no parameter group is called \"" + s.spec.group + "\"");
        const auto n = s.spec.shape.size();
        if (!m_ranges.empty() && m_ranges.back().group == s.spec.group)
            m_ranges.back().count += n;
        else
            m_ranges.push_back({s.spec.group, static_cast<int64_t>(offset), n});
        params[s.layer].push_back(m_arena.view(s.spec.shape, offset));
        grads[s.layer].push_back(m_grads.view(s.spec.shape, offset));
        m_tensorLayer.push_back(static_cast<int>(s.layer));
        offset += static_cast<size_t>(s.spec.shape.size());
    }
    for (auto& s : fixed) {
        params[s.layer].push_back(m_arena.view(s.spec.shape, offset));
        m_tensorLayer.push_back(static_cast<int>(s.layer));
        offset += static_cast<size_t>(s.spec.shape.size());
    }
    int64_t width = m_inputWidth;
    for (size_t i = 0; i < m_layers.size(); ++i) {
        // parameters() order within a layer is preserved because trainable and fixed tensors
        // never mix inside one layer.
        m_layers[i]->bind(width, std::move(params[i]), std::move(grads[i]));
        width = m_widths[i];
    }
    if (m_arena.floats() > 0)
        m_backend.fill(m_arena.view(1, static_cast<int64_t>(m_arena.floats())), 0.f);
    if (m_grads.floats() > 0)
        m_backend.fill(m_grads.view(1, static_cast<int64_t>(m_grads.floats())), 0.f);
}

std::string Network::spec() const
{
    std::string s;
    for (const auto& l : m_layers) {
        if (!s.empty()) s += ",";
        s += l->spec();
    }
    return s;
}

std::vector<LayerSummary> Network::summary() const
{
    const std::vector<LayerPlan> plans = planLayers(m_layers, m_inputWidth);
    std::vector<LayerSummary> out;
    for (size_t i = 0; i < m_layers.size(); ++i)
        out.push_back(
            {static_cast<int>(i), m_layers[i]->spec(), plans[i].outputWidth, plans[i].parameters});
    return out;
}

void Network::initialize(uint64_t seed)
{
    checkEngineThread("Network::initialize");
    InitContext context;
    for (size_t i = 0; i < m_layers.size(); ++i) {
        Layer& layer = *m_layers[i];
        Rng rng = Rng::derive(seed, layer.type().rngStream, i);
        context.next = i + 1 < m_layers.size() ? m_layers[i + 1].get() : nullptr;
        layer.initialize(m_backend, rng, context);
        if (const InitHint hint = layer.initHint(); hint.init == Init::Siren) {
            context.afterSiren = true;
            context.sirenW0 = hint.w0;
        }
    }
}

bool Network::startAsLinearMap(const std::vector<float>& weights, const std::vector<float>& bias)
{
    checkEngineThread("Network::startAsLinearMap");
    const size_t n = m_layers.size();
    if (n < 2 || m_layers[n - 1]->kind() != "skip" || !m_layers[n - 2]->type().outputLayer ||
        m_layers[n - 2]->kind() != "dense")
        return false;
    const auto& skip = m_layers[n - 1]->params();
    const auto& out = m_layers[n - 2]->params();
    const auto width = static_cast<size_t>(outputWidth());
    if (skip.size() != 1 || out.size() != 2 || weights.size() != width * size_t(m_inputWidth) ||
        bias.size() != width || static_cast<size_t>(out[1].size()) != width)
        return false;
    m_backend.upload(skip[0], weights.data());
    m_backend.fill(out[0], 0.f);
    m_backend.upload(out[1], bias.data());
    return true;
}

Tensor Network::parameters() const
{
    return m_arena.view(1, m_trainableFloats);
}
Tensor Network::weights() const
{
    return m_arena.view(1, m_trainableFloats + m_fixedFloats);
}
Tensor Network::gradients() const
{
    return m_grads.view(1, m_trainableFloats);
}

std::vector<NamedTensor> Network::namedTensors() const
{
    std::vector<NamedTensor> trainable, fixed;
    int64_t width = m_inputWidth;
    for (size_t i = 0; i < m_layers.size(); ++i) {
        const auto specs = m_layers[i]->parameters(width);
        const auto& views = m_layers[i]->params();
        for (size_t j = 0; j < specs.size(); ++j) {
            NamedTensor t{"layers." + std::to_string(i) + "." + specs[j].name, views[j],
                          specs[j].trainable};
            (specs[j].trainable ? trainable : fixed).push_back(t);
        }
        width = m_widths[i];
    }
    trainable.insert(trainable.end(), fixed.begin(), fixed.end());
    return trainable;
}

std::vector<NamedTensor> Network::namedGradients() const
{
    std::vector<NamedTensor> out;
    int64_t width = m_inputWidth;
    for (size_t i = 0; i < m_layers.size(); ++i) {
        const auto specs = m_layers[i]->parameters(width);
        const auto& grads = m_layers[i]->grads();
        size_t g = 0;
        for (const auto& s : specs)
            if (s.trainable)
                out.push_back({"layers." + std::to_string(i) + "." + s.name, grads[g++], true});
        width = m_widths[i];
    }
    return out;
}

void Network::reserve(int64_t rows)
{
    if (rows <= m_reservedRows) return;
    m_outputs.clear();
    m_workspaces.clear();
    int64_t width = m_inputWidth, maxWidth = m_inputWidth;
    for (size_t i = 0; i < m_layers.size(); ++i) {
        m_outputs.emplace_back(&m_backend, static_cast<size_t>(rows * m_widths[i]));
        m_workspaces.emplace_back(&m_backend,
                                  static_cast<size_t>(rows * m_layers[i]->workspaceCols(width)));
        width = m_widths[i];
        maxWidth = std::max(maxWidth, width);
    }
    m_gradA = Buffer(&m_backend, static_cast<size_t>(rows * maxWidth));
    m_gradB = Buffer(&m_backend, static_cast<size_t>(rows * maxWidth));
    m_reservedRows = rows;
}

Tensor Network::forward(ConstTensor x, bool training)
{
    checkEngineThread("Network::forward");
    if (x.cols() != m_inputWidth)
        throw ShapeError("the network expects " + std::to_string(m_inputWidth) +
                         " input columns, got " + std::to_string(x.cols()));
    reserve(x.rows());
    m_rows = x.rows();
    ConstTensor in = x;
    int64_t width = m_inputWidth;
    for (size_t i = 0; i < m_layers.size(); ++i) {
        Tensor out = m_outputs[i].view(m_rows, m_widths[i]);
        Tensor ws = m_workspaces[i].view(m_rows, m_layers[i]->workspaceCols(width));
        if (m_layers[i]->readsNetworkInput()) m_layers[i]->setNetworkInput(x);
        m_layers[i]->setTraining(training);
        m_layers[i]->forward(m_backend, in, out, ws);
        in = out;
        width = m_widths[i];
    }
    return m_outputs.back().view(m_rows, m_widths.back());
}

void Network::backward(ConstTensor x, ConstTensor dOutput)
{
    checkEngineThread("Network::backward");
    if (x.rows() != m_rows || dOutput.rows() != m_rows || dOutput.cols() != outputWidth())
        throw ShapeError("backward: gradient " + dOutput.shape.toString() +
                         " does not match the last forward (" + std::to_string(m_rows) + " rows)");
    ConstTensor dy = dOutput;
    bool useA = true;
    for (size_t k = m_layers.size(); k-- > 0;) {
        const int64_t inWidth = k == 0 ? m_inputWidth : m_widths[k - 1];
        ConstTensor in = k == 0 ? x : ConstTensor(m_outputs[k - 1].view(m_rows, inWidth));
        ConstTensor out = m_outputs[k].view(m_rows, m_widths[k]);
        // The first layer needs no input gradient (the data is not trained).
        Tensor dx = k == 0 ? Tensor{} : (useA ? m_gradA : m_gradB).view(m_rows, inWidth);
        Tensor ws = m_workspaces[k].view(m_rows, m_layers[k]->workspaceCols(inWidth));
        if (m_layers[k]->readsNetworkInput()) m_layers[k]->setNetworkInput(x);
        m_layers[k]->backward(m_backend, in, out, dy, dx, ws);
        dy = dx;
        useA = !useA;
    }
}

ConstTensor Network::layerOutput(int i) const
{
    return m_outputs.at(static_cast<size_t>(i)).view(m_rows, m_widths.at(static_cast<size_t>(i)));
}

void Network::predict(ConstTensor x, Tensor out, int64_t chunkRows)
{
    checkEngineThread("Network::predict");
    if (out.rows() != x.rows() || out.cols() != outputWidth())
        throw ShapeError("predict: output " + out.shape.toString() + " for " +
                         std::to_string(x.rows()) + " rows and " + std::to_string(outputWidth()) +
                         " outputs");
    chunkRows = inferenceChunkRows(*this, std::min(chunkRows, x.rows()));
    for (int64_t r = 0; r < x.rows(); r += chunkRows) {
        const int64_t n = std::min(chunkRows, x.rows() - r);
        Tensor y = forward(x.rowSlice(r, n), false);
        m_backend.copy(out.data + r * out.cols(), y.data, static_cast<size_t>(y.size()) * 4);
    }
}

} // namespace il
