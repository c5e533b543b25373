#include "LayerSpec.h"
#include "Errors.h"
#include "Limits.h"

#include <algorithm>

namespace il {

namespace {

std::vector<std::string> splitItems(const std::string& s)
{
    std::vector<std::string> out(1);
    for (char c : s) {
        if (c == ',')
            out.emplace_back();
        else if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            out.back() += c;
    }
    return out;
}

[[noreturn]] void fail(size_t index, const LayerItem& item, const std::string& why)
{
    throw EngineError("layer " + std::to_string(index + 1) + " \"" + item.text() + "\": " + why);
}

std::string plural(int64_t n, const char* word)
{
    return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

// Fills the values the data supplies into item i (see DataValue).
void resolveDataValues(std::vector<LayerItem>& items, size_t i, int output, int64_t outputWidth,
                       int64_t vocab)
{
    LayerItem& item = items[i];
    for (size_t k = 0; k < item.args.size(); ++k) {
        const LayerArg& a = item.type->args[k];
        double& v = item.args[k];
        if (a.fromData == DataValue::OutputWidth && v == 0) {
            if (static_cast<int>(i) != output || outputWidth <= 0)
                fail(i, item,
                     "needs " + a.name + ", e.g. " + item.type->name + ":16 (only the last " +
                         item.type->name + " layer may leave it out and take the output width)");
            v = static_cast<double>(outputWidth);
        } else if (a.fromData == DataValue::Vocabulary) {
            if (v == 0 && vocab <= 0)
                fail(i, item,
                     "the " + a.name + " size is unknown here; write it (" + item.type->synopsis +
                         ")");
            if (v == 0) v = static_cast<double>(vocab);
            if (vocab > 0 && v != static_cast<double>(vocab))
                fail(i, item,
                     a.name + " " + std::to_string(static_cast<int64_t>(v)) +
                         " does not match the data's " + std::to_string(vocab));
        }
    }
}

// With the data's output width known: the output layer gives it and nothing squashes it.
void checkOutput(const std::vector<LayerItem>& items, int output, int64_t outputWidth)
{
    if (output < 0)
        throw EngineError("the layer list has no dense layer, so it cannot produce the " +
                          plural(outputWidth, "output") +
                          " this data needs (end with dense:" + std::to_string(outputWidth) + ")");
    const LayerItem& out = items[static_cast<size_t>(output)];
    int64_t units = 0;
    for (size_t k = 0; k < out.args.size(); ++k)
        if (out.type->args[k].fromData == DataValue::OutputWidth)
            units = static_cast<int64_t>(out.args[k]);
    if (units != outputWidth)
        fail(static_cast<size_t>(output), out,
             "the last dense layer has " + plural(units, "unit") + " but the data needs " +
                 plural(outputWidth, "output"));
    for (size_t i = static_cast<size_t>(output) + 1; i < items.size(); ++i)
        if (items[i].type->activation) // it would squash the logits the loss expects
            fail(i, items[i],
                 "the output layer must be a dense layer; the loss applies sigmoid/softmax "
                 "itself (remove the trailing activation)");
}

// Appends text wrapped at 78 columns, continuation lines indented by indent.
void appendWrapped(std::string& out, const std::string& text, size_t indent)
{
    size_t column = indent;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find(' ', start);
        if (end == std::string::npos) end = text.size();
        const std::string word = text.substr(start, end - start);
        if (column > indent && column + 1 + word.size() > 78) {
            out += "\n" + std::string(indent, ' ');
            column = indent;
        } else if (column > indent) {
            out += ' ';
            ++column;
        }
        out += word;
        column += word.size();
        start = end + 1;
    }
    out += '\n';
}

} // namespace

std::vector<LayerItem> parseLayerItems(const std::string& spec)
{
    // Counted before splitting, so a hostile list of a million items allocates nothing.
    const auto count = static_cast<size_t>(std::count(spec.begin(), spec.end(), ',')) + 1;
    if (count > kMaxLayers)
        throw EngineError("the layer list has " + std::to_string(count) + " items; at most " +
                          std::to_string(kMaxLayers) + " are allowed");
    const auto texts = splitItems(spec);
    if (texts.size() == 1 && texts[0].empty())
        throw EngineError("the layer list is empty (example: dense:16,tanh,dense:1)");
    std::vector<LayerItem> items;
    for (size_t i = 0; i < texts.size(); ++i) {
        const std::string prefix = "layer " + std::to_string(i + 1) + " \"" + texts[i] + "\": ";
        if (texts[i].empty()) throw EngineError(prefix + "empty item (two commas in a row?)");
        try {
            items.push_back(parseLayerItem(texts[i]));
        } catch (const EngineError& e) {
            throw EngineError(prefix + e.what());
        }
    }
    return items;
}

std::string formatLayerItems(const std::vector<LayerItem>& items)
{
    std::string s;
    for (const LayerItem& item : items) {
        if (!s.empty()) s += ',';
        s += item.text();
    }
    return s;
}

int outputLayerIndex(const std::vector<LayerItem>& items)
{
    for (int i = static_cast<int>(items.size()) - 1; i >= 0; --i)
        if (items[static_cast<size_t>(i)].type->outputLayer) return i;
    return -1;
}

std::vector<LayerItem> resolveLayerItems(std::vector<LayerItem> items, int64_t outputWidth,
                                         int64_t vocab)
{
    const int output = outputLayerIndex(items);
    for (size_t i = 0; i < items.size(); ++i) {
        if (i != 0 && !items[i].type->firstOnly.empty())
            fail(i, items[i], items[i].type->firstOnly);
        resolveDataValues(items, i, output, outputWidth, vocab);
    }
    if (outputWidth > 0) checkOutput(items, output, outputWidth);
    return items;
}

std::vector<std::unique_ptr<Layer>> parseLayerSpec(const std::string& spec, int64_t outputWidth,
                                                   int64_t vocab)
{
    std::vector<std::unique_ptr<Layer>> layers;
    for (const LayerItem& item : resolveLayerItems(parseLayerItems(spec), outputWidth, vocab))
        layers.push_back(makeLayer(item));
    return layers;
}

std::vector<LayerPlan> planLayers(const std::vector<std::unique_ptr<Layer>>& layers,
                                  int64_t inputWidth)
{
    if (inputWidth <= 0) throw EngineError("the network needs at least one input column");
    if (layers.empty()) throw EngineError("the network has no layers");
    // Counts in double, capped: a typo like dense:1000000,dense:1000000 must be reported, not
    // overflow.
    constexpr double kCap = 9007199254740992.0; // 2^53
    const auto capped = [&](double v) { return static_cast<int64_t>(std::min(v, kCap)); };
    std::vector<LayerPlan> plans;
    RowLayout layout{inputWidth, 1, 0};
    for (const auto& layer : layers) {
        double trainable = 0, fixed = 0;
        LayerPlan p;
        const RowLayout out = layOut(*layer, inputWidth, layout);
        for (const ParamSpec& s : layer->parameters(layout.width)) {
            (s.trainable ? trainable : fixed) +=
                static_cast<double>(s.shape.rows) * static_cast<double>(s.shape.cols);
            if (s.trainable && !s.group.empty()) p.groups.push_back(s.group);
        }
        p.parameters = capped(trainable);
        p.fixedFloats = capped(fixed);
        layout = out;
        p.outputWidth = layout.width;
        plans.push_back(p);
    }
    checkOutputLayout(layout, *layers.back());
    return plans;
}

std::vector<LayerPlan> planLayerSpec(const std::string& spec, int64_t inputWidth,
                                     int64_t outputWidth, int64_t vocab)
{
    return planLayers(parseLayerSpec(spec, outputWidth, vocab), inputWidth);
}

std::string layerSpecHelp()
{
    std::string s = "Layer list: comma-separated items, applied left to right.\n";
    for (const LayerType& t : layerTypes()) {
        std::string head = "  " + t.synopsis;
        head += head.size() < 22 ? std::string(22 - head.size(), ' ') : std::string(" ");
        s += head;
        appendWrapped(s, t.help, 22);
    }
    s += "Examples:\n"
         "  dense:16,tanh,dense:1\n"
         "  fourier:256:10,dense:256,relu,dense:256,relu,dense:1\n"
         "  dense:256,sine:30,dense:256,sine:30,dense:256,sine:30,dense:1\n";
    return s;
}

} // namespace il
