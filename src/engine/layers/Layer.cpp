// The checks every layer's forward and backward make before its own code runs. They build
// messages only when a check fails: a training step allocates nothing.
#include "Layer.h"
#include "Errors.h"

namespace il {

void Layer::bind(int64_t inputWidth, std::vector<Tensor> params, std::vector<Tensor> grads)
{
    m_inputWidth = inputWidth;
    m_params = std::move(params);
    m_grads = std::move(grads);
}

RowLayout layOut(Layer& layer, int64_t networkInputWidth, const RowLayout& in)
{
    layer.setNetworkInputWidth(networkInputWidth);
    layer.setInputLayout(in);
    return layer.outputLayout(in);
}

void checkOutputLayout(const RowLayout& out, const Layer& last)
{
    if (out.positions > 1)
        throw EngineError(last.spec() + ": the stack ends with " + std::to_string(out.positions) +
                          " positions per row; merge them into one before the output layer "
                          "(merge:" +
                          std::to_string(out.positions) + ")");
}

RowLayout Layer::outputLayout(const RowLayout& in) const
{
    const int64_t width = outputWidth(in.width);
    if (type().positionWise && width == in.width) return in;
    return {width, 1, 0};
}

// A rows x width tensor read as (rows * positions) x (width / positions), positions > 0.
Tensor perPosition(Tensor t, int64_t positions)
{
    return {t.data, {t.rows() * positions, t.cols() / positions}};
}
ConstTensor perPosition(ConstTensor t, int64_t positions)
{
    return {t.data, {t.rows() * positions, t.cols() / positions}};
}

void Layer::forward(Backend& b, ConstTensor x, Tensor y, Tensor workspace)
{
    if (x.cols() != m_inputWidth)
        throw ShapeError(spec() + ": input has " + std::to_string(x.cols()) +
                         " columns, expected " + std::to_string(m_inputWidth));
    if (x.rows() != y.rows())
        throw ShapeError(spec() + ": " + std::to_string(x.rows()) + " rows vs " +
                         std::to_string(y.rows()));
    if (y.cols() != outputWidth(m_inputWidth))
        throw ShapeError(spec() + ": output has " + std::to_string(y.cols()) +
                         " columns, expected " + std::to_string(outputWidth(m_inputWidth)));
    forwardImpl(b, x, y, workspace);
}

void Layer::backward(Backend& b, ConstTensor x, ConstTensor y, ConstTensor dy, Tensor dx,
                     Tensor workspace)
{
    if (!(dy.shape == y.shape))
        throw ShapeError(spec() + ": gradient " + dy.shape.toString() + " for output " +
                         y.shape.toString());
    if (dx.data && !(dx.shape == x.shape))
        throw ShapeError(spec() + ": input gradient " + dx.shape.toString() + " for input " +
                         x.shape.toString());
    backwardImpl(b, x, y, dy, dx, workspace);
}

} // namespace il
