#include "HostCopy.h"
#include "Errors.h"

#include <map>

namespace il {

namespace {

std::vector<float> download(Backend& b, ConstTensor t)
{
    return t.size() > 0 ? b.toHost(t) : std::vector<float>();
}

void uploadNamed(Backend& b, const std::vector<std::pair<std::string, std::vector<float>>>& from,
                 const std::vector<std::pair<std::string, Tensor>>& to, const char* what)
{
    std::map<std::string, const std::vector<float>*> byName;
    for (const auto& [name, values] : from)
        byName[name] = &values;
    for (const auto& [name, tensor] : to) {
        const auto it = byName.find(name);
        if (it == byName.end())
            throw EngineError(std::string("the host copy has no ") + what + " tensor " + name);
        if (static_cast<int64_t>(it->second->size()) != tensor.size())
            throw EngineError(std::string("the host copy's ") + what + " tensor " + name + " has " +
                              std::to_string(it->second->size()) + " values, the model needs " +
                              std::to_string(tensor.size()));
        if (tensor.size() > 0) b.upload(tensor, it->second->data());
    }
}

} // namespace

HostCopy takeHostCopy(const Network& network, const Optimizer& optimizer,
                      const TrainingState& state)
{
    Backend& b = network.backend();
    HostCopy s;
    s.state = state;
    for (const NamedTensor& nt : network.namedTensors())
        s.tensors.emplace_back(nt.name, download(b, nt.tensor));
    for (const auto& [name, tensor] : optimizer.state())
        s.optimizer.emplace_back(name, download(b, tensor));
    return s;
}

void restoreHostCopy(const HostCopy& copy, Network& network, Optimizer& optimizer)
{
    std::vector<std::pair<std::string, Tensor>> tensors;
    for (const NamedTensor& nt : network.namedTensors())
        tensors.emplace_back(nt.name, nt.tensor);
    uploadNamed(network.backend(), copy.tensors, tensors, "network");
    uploadNamed(network.backend(), copy.optimizer, optimizer.state(), "optimizer");
}

MovedModel moveModel(const Network& network, const OptimizerConfig& optimizerConfig,
                     const HostCopy& copy, Backend& target)
{
    MovedModel m;
    // The spec names every layer with its sizes (embedding:V:D included), so the vocabulary
    // need not be passed again.
    m.network = std::make_unique<Network>(target, network.inputWidth(), network.spec(),
                                          network.outputWidth());
    m.optimizer =
        std::make_unique<Optimizer>(target, optimizerConfig, m.network->parameterRanges());
    restoreHostCopy(copy, *m.network, *m.optimizer);
    m.state = copy.state;
    return m;
}

} // namespace il
