// The ONNX export's layer stack (OnnxGraph.h): one group of ONNX nodes per engine layer, built
// from the network the engine runs (the layer items it parsed from the model's spec, the row
// layouts it laid out, the weights it holds), never from the file's description of them. Each
// layer type carries its own ONNX form (LayerType::exports, ExportForms.h); here they are run
// layer after layer, with ids cast for the layers that read them and floats for the others.
#include "OnnxGraph.h"

#include "Layer.h"
#include "Network.h"

#include <functional>
#include <map>

namespace il::io::onnxexport {

namespace {

// Every tensor of the network, host side, by name ("layers.0.weight").
std::map<std::string, ExportTensor> hostTensors(const Network& net)
{
    std::map<std::string, ExportTensor> out;
    for (const NamedTensor& nt : net.namedTensors()) {
        ExportTensor t{nt.tensor.shape.rows, nt.tensor.shape.cols,
                       std::vector<float>(static_cast<size_t>(nt.tensor.size()))};
        net.backend().download(t.data.data(), nt.tensor);
        out.emplace(nt.name, std::move(t));
    }
    return out;
}

// The graph as one layer's export form sees it (ExportForms.h): its nodes are named after the
// layer ("layer3_dense"), its constants after its tensors ("layers.3.weight").
class LayerGraph final : public OnnxBuilder {
public:
    LayerGraph(Graph& g, const std::string& hint, const std::string& prefix,
               const std::map<std::string, ExportTensor>& tensors,
               const std::function<std::string()>& networkInputs)
        : m_g(g), m_hint(hint), m_prefix(prefix), m_tensors(tensors), m_inputs(networkInputs)
    {
    }
    std::string node(const std::string& op, const std::vector<std::string>& inputs) override
    {
        return m_g.node(op, inputs, m_hint);
    }
    void attr(const std::string& name, float value) override { m_g.attr(name, value); }
    void attr(const std::string& name, int64_t value) override { m_g.attr(name, value); }
    void attr(const std::string& name, const std::vector<int64_t>& values) override
    {
        m_g.attr(name, values);
    }
    std::string floats(const std::string& hint, const std::vector<int64_t>& shape,
                       const std::vector<float>& data) override
    {
        return m_g.floats(m_prefix + hint, shape, data);
    }
    std::string ints(const std::string& hint, const std::vector<int64_t>& data) override
    {
        return m_g.ints(hint, data);
    }
    std::string intScalar(const std::string& hint, int64_t value) override
    {
        return m_g.intScalar(hint, value);
    }
    const ExportTensor& tensor(const std::string& name) override
    {
        return m_tensors.at(m_prefix + name); // the network made them: always there
    }
    std::string networkInputs() override { return m_inputs(); }

private:
    Graph& m_g;
    const std::string& m_hint;
    const std::string m_prefix;
    const std::map<std::string, ExportTensor>& m_tensors;
    const std::function<std::string()>& m_inputs;
};

} // namespace

Built network(Graph& g, const Network& net, const std::string& input, bool integerInput)
{
    const std::map<std::string, ExportTensor> tensors = hostTensors(net);
    // The network's inputs as the engine holds them (floats; a names model's ids too), made
    // when a layer needs them.
    std::string floatInput = integerInput ? std::string() : input;
    const std::function<std::string()> inputsAsFloats = [&] {
        if (floatInput.empty()) {
            floatInput = g.node("Cast", {input}, "inputs_float");
            g.attr("to", int64_t{onnx::TensorProto::FLOAT});
        }
        return floatInput;
    };
    std::string x = input;
    bool xIsInteger = integerInput;
    const auto& layers = net.layers();
    for (size_t i = 0; i < layers.size(); ++i) {
        const Layer& layer = *layers[i];
        const ExportForms& forms = layer.item().type->exports;
        const std::string hint = "layer" + std::to_string(i) + "_" + layer.kind();
        if (!forms.onnx)
            return {{},
                    QStringLiteral("layer %1, %2: the ONNX export has no %3 layer")
                        .arg(QString::number(i + 1), QString::fromStdString(layer.spec()),
                             QString::fromStdString(layer.kind()))};
        if (forms.readsIds && !xIsInteger) {
            x = g.node("Cast", {x}, hint + "_ids");
            g.attr("to", int64_t{onnx::TensorProto::INT64});
        } else if (!forms.readsIds && xIsInteger) {
            x = inputsAsFloats();
        }
        LayerGraph view(g, hint, "layers." + std::to_string(i) + ".", tensors, inputsAsFloats);
        x = forms.onnx(view, layer, x);
        xIsInteger = false;
    }
    if (xIsInteger) x = inputsAsFloats(); // a stack of no layer at all: never
    return {x, {}};
}

} // namespace il::io::onnxexport
