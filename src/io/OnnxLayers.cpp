// The ONNX export's layer stack (OnnxGraph.h): one group of ONNX nodes per engine layer, built
// from the network the engine runs (the layer items it parsed from the model's spec, the row
// layouts it laid out, the weights it holds), never from the file's description of them.
#include "OnnxGraph.h"

#include "ActivationMath.h"
#include "Layer.h"
#include "Network.h"
#include "NormMath.h"

#include <cmath>
#include <map>
#include <numbers>

namespace il::io::onnxexport {

namespace {

struct HostTensor {
    Shape shape;
    std::vector<float> data;
};

// Every tensor of the network, host side, by name ("layers.0.weight").
std::map<std::string, HostTensor> hostTensors(const Network& net)
{
    std::map<std::string, HostTensor> out;
    for (const NamedTensor& nt : net.namedTensors()) {
        HostTensor t{nt.tensor.shape, std::vector<float>(static_cast<size_t>(nt.tensor.size()))};
        net.backend().download(t.data.data(), nt.tensor);
        out.emplace(nt.name, std::move(t));
    }
    return out;
}

// rows x cols -> cols x rows
std::vector<float> transposed(const HostTensor& t)
{
    const int64_t rows = t.shape.rows, cols = t.shape.cols;
    std::vector<float> out(t.data.size());
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
            out[static_cast<size_t>(c * rows + r)] = t.data[static_cast<size_t>(r * cols + c)];
    return out;
}

// x / 2 (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), the engine's GELU (tanh approximation).
std::string gelu(Graph& g, const std::string& x, const std::string& hint)
{
    const std::string cube = g.node("Mul", {g.node("Mul", {x, x}, hint), x}, hint);
    const std::string inner =
        g.node("Add", {x, g.node("Mul", {cube, g.scalar("c", 0.044715f)}, hint)}, hint);
    const std::string t = g.node(
        "Tanh",
        {g.node("Mul",
                {inner, g.scalar("k", static_cast<float>(std::sqrt(2.0 / std::numbers::pi)))},
                hint)},
        hint);
    return g.node("Mul",
                  {g.node("Mul", {x, g.scalar("half", 0.5f)}, hint),
                   g.node("Add", {t, g.scalar("one", 1.f)}, hint)},
                  hint);
}

// The activation a layer applies, or "" if the graph has no form of it.
std::string activation(Graph& g, const Layer& layer, const std::string& x, const std::string& hint)
{
    switch (layer.activation()) {
    case Activation::Identity:
        return x;
    case Activation::ReLU:
        return g.node("Relu", {x}, hint);
    case Activation::LeakyReLU: {
        const std::string y = g.node("LeakyRelu", {x}, hint);
        g.attr("alpha", layer.activationParam());
        return y;
    }
    case Activation::Tanh:
        return g.node("Tanh", {x}, hint);
    case Activation::Sigmoid:
        return g.node("Sigmoid", {x}, hint);
    case Activation::Sine:
        return g.node("Sin", {g.node("Mul", {x, g.scalar("w0", layer.activationParam())}, hint)},
                      hint);
    case Activation::Gelu:
        return gelu(g, x, hint);
    }
    return {};
}

} // namespace

Built network(Graph& g, const Network& net, const std::string& input, bool integerInput)
{
    const std::map<std::string, HostTensor> tensors = hostTensors(net);
    // The network's inputs as the engine holds them (floats; a names model's ids too), made
    // when a layer needs them.
    std::string floatInput = integerInput ? std::string() : input;
    auto inputsAsFloats = [&] {
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
        const std::string kind = layer.kind();
        const RowLayout in = layer.inputLayout();
        const RowLayout out = layer.outputLayout(in);
        const std::string prefix = "layers." + std::to_string(i) + ".";
        const std::string hint = "layer" + std::to_string(i) + "_" + kind;
        const QString where =
            QStringLiteral("layer %1, %2")
                .arg(QString::number(i + 1), QString::fromStdString(layer.spec()));
        auto weight = [&](const char* name) -> const HostTensor& {
            return tensors.at(prefix + name); // the network made them: always there
        };
        if (kind == "embedding") { // ids -> rows of the table, one position per id
            if (!xIsInteger) {
                x = g.node("Cast", {x}, hint + "_ids");
                g.attr("to", int64_t{onnx::TensorProto::INT64});
            }
            const HostTensor& w = weight("weight");
            const std::string rows = g.node(
                "Gather", {g.floats(prefix + "weight", {w.shape.rows, w.shape.cols}, w.data), x},
                hint);
            x = g.node("Reshape", {rows, g.ints("shape", {-1, out.width})}, hint);
            xIsInteger = false;
            continue;
        }
        if (xIsInteger) x = inputsAsFloats();
        xIsInteger = false;
        if (layer.isActivation()) {
            x = activation(g, layer, x, hint);
            if (x.empty()) return {{}, where + ": the ONNX export has no form of this activation"};
        } else if (kind == "dense") { // per position after a merge: each group a row of its own
            const HostTensor& w = weight("weight");
            const HostTensor& b = weight("bias");
            const int64_t units = w.shape.rows;
            const std::string wn = g.floats(prefix + "weight", {units, w.shape.cols}, w.data);
            const std::string bn = g.floats(prefix + "bias", {units}, b.data);
            if (in.positions > 1) {
                const std::string rows =
                    g.node("Reshape", {x, g.ints("shape", {-1, in.channels()})}, hint + "_rows");
                const std::string y = g.node("Gemm", {rows, wn, bn}, hint);
                g.attr("transB", int64_t{1});
                x = g.node("Reshape", {y, g.ints("shape", {-1, out.width})}, hint);
            } else {
                x = g.node("Gemm", {x, wn, bn}, hint);
                g.attr("transB", int64_t{1});
            }
        } else if (kind == "skip") { // y = x + inputs S^T
            const HostTensor& s = weight("weight");
            const std::string st =
                g.floats(prefix + "weight_t", {s.shape.cols, s.shape.rows}, transposed(s));
            x = g.node("Add", {x, g.node("MatMul", {inputsAsFloats(), st}, hint)}, hint);
        } else if (kind == "fourier") { // [sin(2 pi x B^T) | cos(2 pi x B^T)]
            const HostTensor& b = weight("projection");
            const std::string z = g.node(
                "Gemm", {x, g.floats(prefix + "projection", {b.shape.rows, b.shape.cols}, b.data)},
                hint);
            g.attr("transB", int64_t{1});
            g.attr("alpha", static_cast<float>(2 * std::numbers::pi));
            x = g.node("Concat", {g.node("Sin", {z}, hint), g.node("Cos", {z}, hint)}, hint);
            g.attr("axis", int64_t{1});
        } else if (kind == "merge") {
            // Only the layout changes (RowLayout): the next per-position layer reads the groups.
        } else if (kind == "layernorm" || kind == "batchnorm") {
            const HostTensor& w = weight("weight");
            const HostTensor& b = weight("bias");
            const int64_t c = in.channels();
            const std::string rows =
                in.positions > 1 ? g.node("Reshape", {x, g.ints("shape", {-1, c})}, hint) : x;
            std::string y;
            if (kind == "layernorm") {
                y = g.node("LayerNormalization",
                           {rows, g.floats(prefix + "weight", {c}, w.data),
                            g.floats(prefix + "bias", {c}, b.data)},
                           hint);
                g.attr("axis", int64_t{-1});
            } else { // inference: the running statistics
                y = g.node("BatchNormalization",
                           {rows, g.floats(prefix + "weight", {c}, w.data),
                            g.floats(prefix + "bias", {c}, b.data),
                            g.floats(prefix + "running_mean", {c}, weight("running_mean").data),
                            g.floats(prefix + "running_var", {c}, weight("running_var").data)},
                           hint);
            }
            g.attr("epsilon", normmath::kEps);
            x = in.positions > 1 ? g.node("Reshape", {y, g.ints("shape", {-1, out.width})}, hint)
                                 : y;
        } else if (kind == "dropout") {
            // inference: everything passes through
        } else {
            return {{},
                    where + QStringLiteral(": the ONNX export has no %1 layer")
                                .arg(QString::fromStdString(kind))};
        }
    }
    if (xIsInteger) x = inputsAsFloats(); // a stack of no layer that reads them: never
    return {x, {}};
}

} // namespace il::io::onnxexport
