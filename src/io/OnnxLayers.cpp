// The ONNX export's layer stack (OnnxGraph.h): one group of ONNX nodes per engine layer, built
// from the network the engine runs (the layer items it parsed from the model's spec, the row
// layouts it laid out, the weights it holds), never from the file's description of them. An
// element-wise layer carries its own ONNX form (LayerType::exports, ExportForms.h); the layers
// with weights or layouts of their own are written here.
#include "OnnxGraph.h"

#include "HashGridMath.h"
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

// The graph as one layer's export form sees it (ExportForms.h): its nodes and constants are
// named after the layer.
class LayerGraph final : public OnnxBuilder {
public:
    LayerGraph(Graph& g, const std::string& hint) : m_g(g), m_hint(hint) {}
    std::string node(const std::string& op, const std::vector<std::string>& inputs) override
    {
        return m_g.node(op, inputs, m_hint);
    }
    void attr(const std::string& name, float value) override { m_g.attr(name, value); }
    void attr(const std::string& name, int64_t value) override { m_g.attr(name, value); }
    std::string scalar(const std::string& hint, float value) override
    {
        return m_g.scalar(hint, value);
    }

private:
    Graph& m_g;
    const std::string& m_hint;
};

// Column `index` of x [N, 2] as [N, 1].
std::string column(Graph& g, const std::string& x, int64_t index, const std::string& hint)
{
    const std::string c = g.node("Gather", {x, g.intScalar("column", index)}, hint);
    g.attr("axis", int64_t{1});
    return g.node("Unsqueeze", {c, g.ints("axes", {1})}, hint);
}

// a xor b for integers 0 <= a, b < 2^bits (int64 [N, 4]), without ONNX's BitwiseXor (opset 18):
// bit j of each is floor(v / 2^j) mod 2, and a xor b = sum_j 2^j ((a_j + b_j) mod 2).
std::string xorBits(Graph& g, const std::string& a, const std::string& b, int bits,
                    const std::string& hint)
{
    std::vector<int64_t> powers;
    for (int j = 0; j < bits; ++j)
        powers.push_back(int64_t{1} << j);
    const std::string p = g.ints("powers", powers);
    const std::string axis = g.ints("axes", {2});
    auto shifted = [&](const std::string& v) { // [N, 4, bits]: floor(v / 2^j)
        return g.node("Div", {g.node("Unsqueeze", {v, axis}, hint), p}, hint);
    };
    const std::string sum = g.node("Add", {shifted(a), shifted(b)}, hint);
    const std::string odd = g.node("Mod", {sum, g.intScalar("two", 2)}, hint);
    const std::string y =
        g.node("ReduceSum", {g.node("Mul", {odd, p}, hint), g.ints("axes", {2})}, hint);
    g.attr("keepdims", int64_t{0});
    return y;
}

// The multiresolution hash encoding (HashGridMath.h) on x [N, 2], level by level with the
// engine's arithmetic: cell and position in float as hashgrid::cell orders it, each corner's
// row in int64 (the spatial hash's uint32 product mod T taken as (iy (prime mod T)) mod T, the
// same number since T divides 2^32), the four corners gathered from the table and weighted
// bilinearly. Output [N, levels * features], level-major.
std::string hashGrid(Graph& g, const HashGrid& grid, const std::string& table, const std::string& x,
                     const std::string& hint)
{
    const int64_t rows = grid.tableRows();
    const std::string unit = g.node(
        "Mul", {g.node("Add", {x, g.scalar("one", 1.f)}, hint), g.scalar("half", 0.5f)}, hint);
    const std::string dx = g.ints("corner_dx", {0, 1, 0, 1});
    const std::string dy = g.ints("corner_dy", {0, 0, 1, 1});
    std::vector<std::string> levels;
    for (int l = 0; l < grid.levels; ++l) {
        const float n = grid.resolution[l];
        const std::string p = g.node(
            "Clip",
            {g.node("Mul", {unit, g.scalar("n", n)}, hint), g.scalar("low", 0.f), g.scalar("n", n)},
            hint);
        const std::string c =
            g.node("Min", {g.node("Floor", {p}, hint), g.scalar("last", n - 1.f)}, hint);
        const std::string f = g.node("Sub", {p, c}, hint); // [N, 2], inside the cell
        const std::string ci = g.node("Cast", {c}, hint);
        g.attr("to", int64_t{onnx::TensorProto::INT64});
        const std::string vx = g.node("Add", {column(g, ci, 0, hint), dx}, hint); // [N, 4]
        const std::string vy = g.node("Add", {column(g, ci, 1, hint), dy}, hint);
        std::string row;
        if (grid.direct(l)) {
            row = g.node(
                "Add",
                {vx, g.node("Mul", {vy, g.intScalar("side", static_cast<int64_t>(n) + 1)}, hint)},
                hint);
        } else {
            const std::string t = g.intScalar("rows", rows);
            const std::string a = g.node("Mod", {vx, t}, hint);
            const std::string b = g.node(
                "Mod",
                {g.node("Mul", {vy, g.intScalar("prime", int64_t{2654435761} % rows)}, hint), t},
                hint);
            row = xorBits(g, a, b, grid.log2Table, hint);
        }
        row = g.node("Add", {row, g.intScalar("level_offset", l * rows)}, hint);
        const std::string corners = g.node("Gather", {table, row}, hint); // [N, 4, features]
        const std::string fx = column(g, f, 0, hint), fy = column(g, f, 1, hint);
        const std::string one = g.scalar("one", 1.f);
        const std::string gx = g.node("Sub", {one, fx}, hint), gy = g.node("Sub", {one, fy}, hint);
        const std::string w = g.node("Concat",
                                     {g.node("Mul", {gx, gy}, hint), g.node("Mul", {fx, gy}, hint),
                                      g.node("Mul", {gx, fy}, hint), g.node("Mul", {fx, fy}, hint)},
                                     hint); // [N, 4]
        g.attr("axis", int64_t{1});
        const std::string weighted =
            g.node("Mul", {corners, g.node("Unsqueeze", {w, g.ints("axes", {2})}, hint)}, hint);
        levels.push_back(g.node("ReduceSum", {weighted, g.ints("axes", {1})}, hint));
        g.attr("keepdims", int64_t{0});
    }
    if (levels.size() == 1) return levels[0];
    const std::string y = g.node("Concat", levels, hint);
    g.attr("axis", int64_t{1});
    return y;
}

} // namespace

// Long: one branch per layer kind; each reads and rewrites x, xIsInteger and the lazily cast
// float inputs, which helpers would have to take by reference.
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
        if (const auto form = layer.item().type->exports.onnx) { // the layer's own (activations)
            LayerGraph lg(g, hint);
            x = form(lg, layer, x);
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
        } else if (kind == "hashgrid") { // a first layer: x is the coordinates
            const LayerItem& item = layer.item();
            const HashGrid grid =
                hashgrid::make(static_cast<int>(item.args[0]), static_cast<int>(item.args[1]),
                               static_cast<int>(item.args[2]), item.args[3], item.args[4]);
            const HostTensor& t = weight("table");
            x = hashGrid(g, grid, g.floats(prefix + "table", {t.shape.rows, t.shape.cols}, t.data),
                         x, hint);
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
