#include "LayerRegistry.h"
#include "Errors.h"
#include "Layer.h"
#include "NumberText.h"

#include <charconv>
#include <cmath>

namespace il {

// Each type is described in the file of its Layer class.
LayerType denseLayerType();                    // DenseLayer.cpp
std::vector<LayerType> activationLayerTypes(); // ActivationLayers.cpp
LayerType fourierLayerType();                  // FourierLayer.cpp
LayerType embeddingLayerType();                // EmbeddingLayer.cpp
LayerType convLayerType();                     // ConvLayer.cpp
LayerType hashGridLayerType();                 // HashGridLayer.cpp
LayerType skipLayerType();                     // SkipLayer.cpp
LayerType layerNormLayerType();                // NormLayers.cpp
LayerType batchNormLayerType();                // NormLayers.cpp
LayerType mergeLayerType();                    // NormLayers.cpp
LayerType dropoutLayerType();                  // NormLayers.cpp

namespace {

constexpr int64_t kMaxCount = 1'000'000;

std::string lower(std::string s)
{
    for (auto& c : s)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return s;
}

// Splits at sep, dropping whitespace.
std::vector<std::string> splitCompact(const std::string& s, char sep)
{
    std::vector<std::string> out(1);
    for (char c : s) {
        if (c == sep)
            out.emplace_back();
        else if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            out.back() += c;
    }
    return out;
}

std::string joined(const std::vector<std::string>& names, size_t from = 0)
{
    std::string s;
    for (size_t i = from; i < names.size(); ++i) {
        if (!s.empty()) s += ", ";
        s += names[i];
    }
    return s;
}

double parseCount(const LayerArg& a, const std::string& v)
{
    int64_t out = 0;
    const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
    if (ec != std::errc() || p != v.data() + v.size() || v.empty())
        throw EngineError(a.name + " \"" + v + "\" is not a whole number");
    if (out <= 0) throw EngineError(a.name + " must be positive");
    if (out > kMaxCount)
        throw EngineError(a.name + " " + v + " is too large (at most " + std::to_string(kMaxCount) +
                          ")");
    return static_cast<double>(out);
}

double parseReal(const LayerArg& a, const std::string& v)
{
    float f = 0;
    switch (readFloat(v, f)) {
    case NumberRead::Ok:
        if (std::isfinite(f)) break;
        [[fallthrough]];
    case NumberRead::NotANumber:
        throw EngineError(a.name + " \"" + v + "\" is not a number");
    case NumberRead::TooLarge:
        throw EngineError(a.name + " " + v + " is too large (at most about 3.4e38)");
    case NumberRead::TooSmall:
        break; // rounds to zero, like any other tiny value; "positive" below still applies
    }
    if (a.positive && !(f > 0.f)) throw EngineError(a.name + " must be positive");
    return static_cast<double>(f);
}

double parseChoice(const LayerArg& a, const std::string& v)
{
    std::string name = lower(v);
    for (const auto& [alias, choice] : a.choiceAliases)
        if (name == alias) name = choice;
    for (size_t i = 0; i < a.choices.size(); ++i)
        if (name == a.choices[i]) return static_cast<double>(i);
    throw EngineError("unknown " + a.name + " \"" + v + "\" (" + joined(a.choices) + ")");
}

// One argument's value; present: the item wrote something in its place.
double parseArg(const LayerType& type, const LayerArg& a, const std::string& v, bool present)
{
    const bool leftOut =
        !present ||
        (v.empty() && (a.fromData != DataValue::None || a.kind == LayerArg::Kind::Choice));
    if (leftOut || (a.fromData == DataValue::OutputWidth && lower(v) == "out")) {
        if (a.fromData != DataValue::None) return 0;
        if (a.required) throw EngineError("needs " + a.name + " (" + type.synopsis + ")");
        return a.defaultValue;
    }
    switch (a.kind) {
    case LayerArg::Kind::Count:
        return parseCount(a, v);
    case LayerArg::Kind::Real:
        return parseReal(a, v);
    case LayerArg::Kind::Choice:
        return parseChoice(a, v);
    }
    return 0;
}

} // namespace

std::string formatFloat(float v)
{
    char buf[32];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
    return ec == std::errc() ? std::string(buf, end) : std::string("nan");
}

LayerArg realArgument(const char* name, double defaultValue, bool positive, const char* tooltip)
{
    LayerArg a;
    a.name = name;
    a.kind = LayerArg::Kind::Real;
    a.defaultValue = defaultValue;
    a.positive = positive;
    a.column = EditorColumn::Setting;
    a.tooltip = tooltip;
    return a;
}

const std::vector<LayerType>& layerTypes()
{
    static const std::vector<LayerType> types = [] {
        std::vector<LayerType> t{denseLayerType()};
        for (LayerType& a : activationLayerTypes())
            t.push_back(std::move(a));
        t.push_back(skipLayerType());
        t.push_back(fourierLayerType());
        t.push_back(hashGridLayerType());
        t.push_back(embeddingLayerType());
        t.push_back(mergeLayerType());
        t.push_back(convLayerType());
        t.push_back(layerNormLayerType());
        t.push_back(batchNormLayerType());
        t.push_back(dropoutLayerType());
        return t;
    }();
    return types;
}

const LayerType* findLayerType(std::string_view name)
{
    const std::string key = lower(std::string(name));
    for (const LayerType& t : layerTypes()) {
        if (t.name == key) return &t;
        for (const auto& alias : t.aliases)
            if (alias == key) return &t;
    }
    return nullptr;
}

LayerItem newLayerItem(const LayerType& type)
{
    LayerItem item{&type, {}};
    for (const LayerArg& a : type.args)
        item.args.push_back(a.suggested != 0 ? a.suggested : a.defaultValue);
    return item;
}

std::string LayerItem::text() const
{
    std::vector<std::string> fields;
    for (size_t k = 0; k < type->args.size(); ++k) {
        const LayerArg& a = type->args[k];
        const double v = k < args.size() ? args[k] : 0;
        if (a.fromData != DataValue::None && v == 0)
            fields.emplace_back();
        else if (a.kind == LayerArg::Kind::Choice)
            fields.push_back(v <= 0 || v >= static_cast<double>(a.choices.size())
                                 ? std::string()
                                 : a.choices[static_cast<size_t>(v)]);
        else if (a.kind == LayerArg::Kind::Count)
            fields.push_back(std::to_string(static_cast<int64_t>(v)));
        else
            fields.push_back(formatFloat(static_cast<float>(v)));
    }
    // Values left out are not written: trailing ones, or leading ones for argsFromRight.
    size_t first = 0, last = fields.size();
    if (type->argsFromRight)
        while (first < last && fields[first].empty())
            ++first;
    else
        while (last > first && fields[last - 1].empty())
            --last;
    std::string s = type->name;
    for (size_t k = first; k < last; ++k)
        s += ":" + fields[k];
    return s;
}

LayerItem parseLayerItem(const std::string& text)
{
    const auto parts = splitCompact(text, ':');
    const LayerType* type = findLayerType(parts[0]);
    if (!type) {
        std::vector<std::string> names;
        for (const LayerType& t : layerTypes())
            names.push_back(t.name);
        throw EngineError("unknown layer type \"" + parts[0] + "\" (" + joined(names) + ")");
    }
    const size_t given = parts.size() - 1, count = type->args.size();
    if (given > count)
        throw EngineError(count == 0 ? type->name + " takes no arguments"
                                     : type->name + " takes at most " + std::to_string(count) +
                                           " argument" + (count == 1 ? "" : "s"));
    LayerItem item{type, {}};
    const size_t skip = type->argsFromRight ? count - given : 0; // leading arguments left out
    for (size_t k = 0; k < count; ++k) {
        const bool present = k >= skip && k - skip < given;
        item.args.push_back(
            parseArg(*type, type->args[k], present ? parts[k - skip + 1] : std::string(), present));
    }
    return item;
}

std::unique_ptr<Layer> makeLayer(const LayerItem& item)
{
    const LayerType& type = *item.type;
    if (item.args.size() != type.args.size())
        throw EngineError(type.name + ": expected " + std::to_string(type.args.size()) +
                          " arguments, got " + std::to_string(item.args.size()));
    for (size_t k = 0; k < type.args.size(); ++k) {
        const LayerArg& a = type.args[k];
        const double v = item.args[k];
        if (a.fromData != DataValue::None && v == 0)
            throw EngineError(type.name + ": " + a.name + " comes from the data and is not known");
        const bool bad =
            (a.kind == LayerArg::Kind::Count && (v < 1 || v > kMaxCount || v != std::floor(v))) ||
            (a.kind == LayerArg::Kind::Real && (!std::isfinite(v) || (a.positive && !(v > 0)))) ||
            (a.kind == LayerArg::Kind::Choice &&
             (v < 0 || v >= static_cast<double>(a.choices.size())));
        if (bad)
            throw EngineError(type.name + ": " + a.name + " " + formatFloat(static_cast<float>(v)) +
                              " is out of range");
    }
    return type.make(item);
}

std::unique_ptr<Layer> makeLayer(const std::string& text)
{
    return makeLayer(parseLayerItem(text));
}

} // namespace il
