#include "NetworkAverage.h"

#include "Errors.h"
#include "LayerRegistry.h"

#include <map>

namespace il {

HostTensors copyToHost(const Network& net)
{
    HostTensors out;
    for (const NamedTensor& t : net.namedTensors()) {
        std::vector<float> v(static_cast<size_t>(t.tensor.size()));
        net.backend().download(v.data(), t.tensor);
        out.push_back(std::move(v));
    }
    return out;
}

namespace {

// Indices of the first and the last dense layer; -1 when the stack cannot be averaged.
std::pair<int, int> denseEnds(const Network& net, std::string* why)
{
    const auto& layers = net.layers();
    int first = -1, last = -1;
    for (size_t i = 0; i < layers.size(); ++i) {
        const Layer& l = *layers[i];
        if (l.kind() == "dense") {
            if (first < 0) first = static_cast<int>(i);
            last = static_cast<int>(i);
            continue;
        }
        if (l.type().activation || (l.kind() == "skip" && i + 1 == layers.size())) continue;
        if (why)
            *why = l.spec() +
                   " is not a dense layer or an element-wise activation (only those and a final "
                   "skip can be averaged)";
        return {-1, -1};
    }
    if (last < 0 && why) *why = "it has no dense layer";
    return {first, last};
}

bool endsInSkip(const Network& net)
{
    return !net.layers().empty() && net.layers().back()->kind() == "skip";
}

} // namespace

std::string averagedSpec(const Network& net, int members, std::string* why)
{
    const auto [first, last] = denseEnds(net, why);
    if (members < 1 || last < 0) return {};
    const auto summary = net.summary();
    std::string spec;
    for (size_t i = 0; i < net.layers().size(); ++i) {
        std::string item = net.layers()[i]->spec();
        if (net.layers()[i]->kind() == "dense" && static_cast<int>(i) != last) {
            // "dense:100:xavier" -> "dense:500:xavier": the units of every member side by side.
            const size_t units = item.find(':');
            const size_t rest = units == std::string::npos ? units : item.find(':', units + 1);
            item = "dense:" + std::to_string(summary[i].outputWidth * members) +
                   (rest == std::string::npos ? "" : item.substr(rest));
        }
        spec += (spec.empty() ? "" : ",") + item;
    }
    return endsInSkip(net) ? spec : spec + ",skip";
}

// Long: one loop over the averaged network's tensors, each case (first, hidden and output dense
// layers' weights and biases, the skip) a few lines of index arithmetic that read best together.
void setAveraged(Network& avg, const Network& member, const std::vector<HostTensors>& weights,
                 double share, const LinearPart& linear)
{
    const auto [first, last] = denseEnds(member, nullptr);
    if (last < 0 || weights.empty())
        throw EngineError("setAveraged: " + member.spec() + " cannot be averaged");
    const auto k = static_cast<int64_t>(weights.size());
    const int64_t in = member.inputWidth(), out = member.outputWidth();
    const bool blend = !linear.weights.empty() && share < 1.0;
    if (blend && (linear.weights.size() != static_cast<size_t>(out * in) ||
                  linear.bias.size() != static_cast<size_t>(out)))
        throw EngineError("setAveraged: the linear part does not fit the network's widths");
    const double s = blend ? share : 1.0;

    std::map<std::string, size_t> index; // the members' tensors by name
    const auto memberTensors = member.namedTensors();
    for (size_t i = 0; i < memberTensors.size(); ++i)
        index[memberTensors[i].name] = i;
    for (const HostTensors& w : weights)
        if (w.size() != memberTensors.size())
            throw EngineError("setAveraged: a member has other tensors than the stack");
    auto of = [&](int64_t m, const std::string& name) -> const std::vector<float>& {
        const auto it = index.find(name);
        if (it == index.end()) throw EngineError("setAveraged: no tensor " + name);
        return weights[static_cast<size_t>(m)][it->second];
    };
    const auto summary = member.summary();
    const auto memberLayers = static_cast<int>(member.layers().size());

    for (const NamedTensor& t : avg.namedTensors()) {
        // "layers.3.weight" -> layer 3, "weight"
        const size_t dot = t.name.find('.', 7);
        const int layer = std::stoi(t.name.substr(7, dot - 7));
        const std::string what = t.name.substr(dot + 1);
        std::vector<float> v(static_cast<size_t>(t.tensor.size()), 0.f);
        auto put = [&](int64_t i, double value) {
            if (i < 0 || i >= static_cast<int64_t>(v.size()))
                throw EngineError("setAveraged: " + t.name + " does not fit the members");
            v[static_cast<size_t>(i)] = static_cast<float>(value);
        };
        if (layer < memberLayers &&
            member.layers()[static_cast<size_t>(layer)]->kind() == "dense") {
            const std::string name = t.name;
            const int64_t units = summary[static_cast<size_t>(layer)].outputWidth;
            const int64_t from =
                layer == 0 ? in : summary[static_cast<size_t>(layer) - 1].outputWidth;
            const bool isFirst = layer == first, isLast = layer == last;
            // The averaged layer's size: k blocks of the member's, in rows, columns or both.
            const int64_t rows = isLast ? units : k * units;
            const int64_t size = what == "bias" ? rows : rows * (isFirst ? from : k * from);
            if (static_cast<int64_t>(v.size()) != size)
                throw EngineError("setAveraged: " + t.name + " does not fit " + std::to_string(k) +
                                  " members");
            for (int64_t m = 0; m < k; ++m) {
                const std::vector<float>& w = of(m, name);
                if (what == "bias") {
                    for (int64_t r = 0; r < units; ++r)
                        if (isLast)
                            put(r, v[static_cast<size_t>(r)] + s * w[static_cast<size_t>(r)] / k);
                        else
                            put(m * units + r, w[static_cast<size_t>(r)]);
                    continue;
                }
                for (int64_t r = 0; r < units; ++r)
                    for (int64_t c = 0; c < from; ++c) {
                        const double x = w[static_cast<size_t>(r * from + c)];
                        if (isFirst && isLast) // a linear stack: the mean map
                            put(r * from + c, v[static_cast<size_t>(r * from + c)] + s * x / k);
                        else if (isFirst) // the members' units one after another
                            put((m * units + r) * from + c, x);
                        else if (isLast) // reads every block, the mean of their outputs
                            put(r * (k * from) + m * from + c, s * x / k);
                        else // block-diagonal: member m's units read member m's
                            put((m * units + r) * (k * from) + m * from + c, x);
                    }
            }
            if (isLast && what == "bias" && blend)
                for (int64_t r = 0; r < out; ++r)
                    put(r,
                        v[static_cast<size_t>(r)] + (1 - s) * linear.bias[static_cast<size_t>(r)]);
        } else if (what == "weight" && layer == static_cast<int>(avg.layers().size()) - 1 &&
                   avg.layers().back()->kind() == "skip") {
            if (static_cast<int64_t>(v.size()) != out * in)
                throw EngineError("setAveraged: " + t.name + " does not fit the members");
            if (endsInSkip(member))
                for (int64_t m = 0; m < k; ++m) {
                    const std::vector<float>& w = of(m, t.name);
                    for (size_t i = 0; i < v.size(); ++i)
                        v[i] += static_cast<float>(s * w[i] / k);
                }
            if (blend)
                for (size_t i = 0; i < v.size(); ++i)
                    v[i] += static_cast<float>((1 - s) * linear.weights[i]);
        } else {
            throw EngineError("setAveraged: " + avg.spec() + " is not the members' stack averaged");
        }
        avg.backend().upload(t.tensor, v.data());
    }
}

} // namespace il
