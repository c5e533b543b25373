// How the model exports write a layer type, carried by the type itself (LayerType::exports), so
// that a layer is described in one place: its maths, its help, and its ONNX and PyTorch forms.
//
// The engine knows neither ONNX nor Python. An ONNX form is written against OnnxBuilder, which
// names ONNX operators (opset 17) and values by their names; the io layer's ONNX export
// (src/io/OnnxLayers.cpp) implements it over an onnx::GraphProto and runs the forms layer after
// layer. A PyTorch form is text for the model.py the PyTorch export ships
// (resources/export/model.py).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace il {

class Layer;

// A tensor of the layer's, as the model file holds it: row-major, rows x cols.
struct ExportTensor {
    int64_t rows = 0;
    int64_t cols = 0;
    std::vector<float> data;
};

// One layer's view of the ONNX graph being built. Values are named by strings; every node and
// constant a layer makes is named after the layer.
class OnnxBuilder {
public:
    // ONNX's element types (TensorProto.DataType), for Cast's "to".
    static constexpr int64_t kFloat = 1, kInt64 = 7;

    virtual ~OnnxBuilder() = default;
    // A node running the ONNX operator `op` on the named values; returns its output's name.
    virtual std::string node(const std::string& op, const std::vector<std::string>& inputs) = 0;
    // An attribute of the node made last.
    virtual void attr(const std::string& name, float value) = 0;
    virtual void attr(const std::string& name, int64_t value) = 0;
    virtual void attr(const std::string& name, const std::vector<int64_t>& values) = 0;
    // Constants: floats of any shape ([] broadcasts), a 1-D int64 list, an int64 of shape [].
    virtual std::string floats(const std::string& hint, const std::vector<int64_t>& shape,
                               const std::vector<float>& data) = 0;
    virtual std::string ints(const std::string& hint, const std::vector<int64_t>& data) = 0;
    virtual std::string intScalar(const std::string& hint, int64_t value) = 0;
    std::string scalar(const std::string& hint, float value) { return floats(hint, {}, {value}); }
    // The layer's tensor `name` ("weight", "bias", "running_mean"), with its values.
    virtual const ExportTensor& tensor(const std::string& name) = 0;
    // The network's inputs as floats [N, inputs] (a skip layer reads them).
    virtual std::string networkInputs() = 0;
};

struct ExportForms {
    // The ONNX form: the name of the layer's output [N, width] for its input x, which is float
    // [N, width] (int64 ids for a layer that readsIds). Null: the ONNX export refuses the layer.
    std::string (*onnx)(OnnxBuilder& g, const Layer& layer, const std::string& x) = nullptr;
    // Its input is ids (an embedding): the ONNX export gives it x as int64.
    bool readsIds = false;
    // The PyTorch form. An element-wise layer: a Python expression of the tensor `x` and the
    // layer's argument `a` ("torch.sin(a * x)"), evaluated by model.py's Activation module.
    // Another layer: the Python source of its nn.Module class, which the export writes into
    // model.py (resources/export/model.py, at LAYERS): a static build(args, out, shape) makes
    // the module from the item's arguments (strings), its output width and the Shape before it,
    // and moves the shape past it; forward(x, inputs) also gets the network's inputs. Empty: the
    // PyTorch export refuses the layer.
    std::string pytorch;
};

} // namespace il
