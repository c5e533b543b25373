// How the model exports write a layer type, carried by the type itself (LayerType::exports), so
// that an element-wise layer is described in one place: its maths, its help, and its ONNX and
// PyTorch forms.
//
// The engine knows neither ONNX nor Python. An ONNX form is written against OnnxBuilder, which
// names ONNX operators (opset 17) and values by their names; the io layer's ONNX export
// (src/io/OnnxLayers.cpp) implements it over an onnx::GraphProto. A PyTorch form is the text of a
// Python expression that the PyTorch export writes into the model.py it ships
// (resources/export/model.py, its ACTIVATIONS table).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace il {

class Layer;

// One layer's view of the ONNX graph being built.
class OnnxBuilder {
public:
    virtual ~OnnxBuilder() = default;
    // A node running the ONNX operator `op` on the named values; returns its output's name.
    virtual std::string node(const std::string& op, const std::vector<std::string>& inputs) = 0;
    // An attribute of the node made last.
    virtual void attr(const std::string& name, float value) = 0;
    virtual void attr(const std::string& name, int64_t value) = 0;
    // A float constant of shape [] (it broadcasts); `hint` names it in the graph.
    virtual std::string scalar(const std::string& hint, float value) = 0;
};

struct ExportForms {
    // The ONNX form of an element-wise layer: the name of its output for the input value x.
    // Null for a layer whose form the ONNX export writes itself (one with weights or a layout
    // of its own: src/io/OnnxLayers.cpp).
    std::string (*onnx)(OnnxBuilder& g, const Layer& layer, const std::string& x) = nullptr;
    // The PyTorch form. An element-wise layer: a Python expression of the tensor `x` and the
    // layer's argument `a` ("torch.sin(a * x)"), evaluated by model.py's Activation module.
    // Another layer: the name of the module class in resources/export/model.py that rebuilds
    // it. Empty: neither export knows the layer, and both refuse a model that has one.
    std::string pytorch;
};

} // namespace il
