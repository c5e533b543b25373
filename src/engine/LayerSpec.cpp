#include "LayerSpec.h"
#include "Errors.h"

#include <charconv>
#include <cmath>
#include <sstream>

namespace il {

namespace {

std::vector<std::string> split(const std::string& s, char sep)
{
    std::vector<std::string> out;
    std::string cur;
    for (char c : s) {
        if (c == sep) {
            out.push_back(cur);
            cur.clear();
        } else if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
            cur += c;
        }
    }
    out.push_back(cur);
    return out;
}

std::string lower(std::string s)
{
    for (auto& c : s)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return s;
}

[[noreturn]] void fail(size_t item, const std::string& text, const std::string& why)
{
    throw EngineError("layer " + std::to_string(item) + " \"" + text + "\": " + why);
}

int64_t parseInt(size_t item, const std::string& text, const std::string& field,
                 const std::string& v)
{
    int64_t out = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
    if (ec != std::errc() || p != v.data() + v.size() || v.empty())
        fail(item, text, field + " \"" + v + "\" is not a whole number");
    if (out <= 0) fail(item, text, field + " must be positive");
    if (out > 1'000'000) fail(item, text, field + " " + v + " is too large (at most 1000000)");
    return out;
}

float parseFloat(size_t item, const std::string& text, const std::string& field,
                 const std::string& v)
{
    try {
        size_t used = 0;
        const float f = std::stof(v, &used);
        if (used != v.size() || !std::isfinite(f)) throw std::invalid_argument(v);
        return f;
    } catch (const std::exception&) {
        fail(item, text, field + " \"" + v + "\" is not a number");
    }
}

} // namespace

std::vector<std::unique_ptr<Layer>> parseLayerSpec(const std::string& spec, int64_t outputWidth,
                                                   int64_t vocab)
{
    const auto items = split(spec, ',');
    if (items.size() == 1 && items[0].empty())
        throw EngineError("the layer list is empty (example: dense:16,tanh,dense:1)");
    std::vector<std::unique_ptr<Layer>> layers;
    for (size_t i = 0; i < items.size(); ++i) {
        const size_t n = i + 1;
        const std::string& text = items[i];
        if (text.empty()) fail(n, text, "empty item (two commas in a row?)");
        const auto parts = split(text, ':');
        const std::string kind = lower(parts[0]);
        const size_t args = parts.size() - 1;
        auto maxArgs = [&](size_t k) {
            if (args > k)
                fail(n, text,
                     kind + " takes at most " + std::to_string(k) + " argument" +
                         (k == 1 ? "" : "s"));
        };
        const bool last = (i + 1 == items.size());
        if (kind == "dense" || kind == "linear") {
            maxArgs(2);
            int64_t units = 0;
            if (args >= 1 && !parts[1].empty() && lower(parts[1]) != "out")
                units = parseInt(n, text, "units", parts[1]);
            if (units == 0) {
                if (!last || outputWidth <= 0)
                    fail(n, text,
                         "needs a unit count, e.g. dense:16 (only the last dense layer "
                         "may leave it out and take the output width)");
                units = outputWidth;
            }
            Init init = Init::Auto;
            if (args == 2) {
                const std::string in = lower(parts[2]);
                if (in == "xavier" || in == "glorot")
                    init = Init::Xavier;
                else if (in == "he" || in == "kaiming")
                    init = Init::He;
                else if (in == "siren")
                    init = Init::Siren;
                else
                    fail(n, text,
                         "unknown initialisation \"" + parts[2] + "\" (xavier, he, siren)");
            }
            layers.push_back(makeDense(units, init));
        } else if (kind == "relu" || kind == "tanh" || kind == "sigmoid") {
            maxArgs(0);
            const Activation a = kind == "relu"   ? Activation::ReLU
                                 : kind == "tanh" ? Activation::Tanh
                                                  : Activation::Sigmoid;
            layers.push_back(makeActivation(a, 0.f));
        } else if (kind == "leakyrelu" || kind == "leaky") {
            maxArgs(1);
            const float slope = args == 1 ? parseFloat(n, text, "slope", parts[1]) : 0.01f;
            layers.push_back(makeActivation(Activation::LeakyReLU, slope));
        } else if (kind == "sine" || kind == "sin" || kind == "siren") {
            maxArgs(1);
            const float w0 = args == 1 ? parseFloat(n, text, "w0", parts[1]) : 30.f;
            if (!(w0 > 0.f)) fail(n, text, "w0 must be positive");
            layers.push_back(makeActivation(Activation::Sine, w0));
        } else if (kind == "fourier") {
            maxArgs(2);
            if (i != 0)
                fail(n, text, "Fourier features encode the raw input, so they must come first");
            const int64_t count = args >= 1 ? parseInt(n, text, "feature count", parts[1]) : 256;
            const float scale = args >= 2 ? parseFloat(n, text, "scale", parts[2]) : 10.f;
            if (!(scale > 0.f)) fail(n, text, "scale must be positive");
            layers.push_back(makeFourier(count, scale));
        } else if (kind == "embedding" || kind == "embed") {
            maxArgs(2);
            if (i != 0)
                fail(n, text, "an embedding reads token ids, so it must be the first layer");
            int64_t v = vocab, dim = 0;
            if (args == 2) {
                v = parseInt(n, text, "vocabulary", parts[1]);
                dim = parseInt(n, text, "dimension", parts[2]);
            } else if (args == 1) {
                dim = parseInt(n, text, "dimension", parts[1]);
            } else {
                fail(n, text, "needs a dimension, e.g. embedding:10");
            }
            if (v <= 0)
                fail(n, text, "the vocabulary size is unknown here; write embedding:VOCAB:DIM");
            if (vocab > 0 && v != vocab)
                fail(n, text,
                     "vocabulary " + std::to_string(v) + " does not match the data's " +
                         std::to_string(vocab));
            layers.push_back(makeEmbedding(v, dim));
        } else {
            fail(n, text,
                 "unknown layer type \"" + parts[0] +
                     "\" (dense, relu, leakyrelu, tanh, sigmoid, sine, fourier, embedding)");
        }
    }
    if (outputWidth > 0) {
        // The network's output is the last layer that changes the width.
        int64_t lastDense = -1;
        for (size_t i = 0; i < layers.size(); ++i)
            if (layers[i]->kind() == "dense") lastDense = static_cast<int64_t>(i);
        if (lastDense < 0)
            throw EngineError(
                "the layer list has no dense layer, so it cannot produce the " +
                std::to_string(outputWidth) + " output" + (outputWidth == 1 ? "" : "s") +
                " this data needs (end with dense:" + std::to_string(outputWidth) + ")");
        const int64_t units = layers[static_cast<size_t>(lastDense)]->outputWidth(0);
        if (units != outputWidth)
            throw EngineError(
                "layer " + std::to_string(lastDense + 1) + " \"" +
                items[static_cast<size_t>(lastDense)] + "\": the last dense layer has " +
                std::to_string(units) + " unit" + (units == 1 ? "" : "s") + " but the data needs " +
                std::to_string(outputWidth) + " output" + (outputWidth == 1 ? "" : "s"));
        for (size_t i = static_cast<size_t>(lastDense) + 1; i < layers.size(); ++i)
            if (layers[i]->kind() != "dense" && layers[i]->isActivation() &&
                layers[i]->activation() != Activation::Identity) {
                // An activation after the output layer squashes the logits the loss expects.
                throw EngineError("layer " + std::to_string(i + 1) + " \"" + items[i] +
                                  "\": the output layer must be a dense layer; the loss applies "
                                  "sigmoid/softmax itself (remove the trailing activation)");
            }
    }
    return layers;
}

std::string layerSpecHelp()
{
    return "Layer list: comma-separated items, applied left to right.\n"
           "  dense:N[:init]      fully connected layer with N units (init: xavier, he, siren;\n"
           "                      default: chosen from the activation that follows).\n"
           "                      The last dense may omit N: it gets the output width.\n"
           "  relu  tanh  sigmoid  leakyrelu[:slope]   activations (slope default 0.01)\n"
           "  sine[:w0]           SIREN activation sin(w0 * x), w0 default 30\n"
           "  fourier[:M[:S]]     first layer only: [sin(2 pi x B^T), cos(2 pi x B^T)],\n"
           "                      B ~ N(0, S^2), M x inputs (default M 256, S 10)\n"
           "  embedding[:V]:D     first layer only: token ids -> D numbers each (one-hot x dense)\n"
           "Examples:\n"
           "  dense:16,tanh,dense:1\n"
           "  fourier:256:10,dense:256,relu,dense:256,relu,dense:1\n"
           "  dense:256,sine:30,dense:256,sine:30,dense:256,sine:30,dense:1\n";
}

} // namespace il
