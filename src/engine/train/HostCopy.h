// Host copies of a model in training: every network tensor, the optimizer state and the
// training counters at one good step.
//
// A device backend's memory can become unreadable when the device fails (a kernel fault leaves
// a CUDA context unusable), so the trainer keeps a copy on the host every few seconds when
// it trains on a device. After a failure the copy rebuilds the model on another backend
// (the CPU), and training continues from that step.
#pragma once

#include "Network.h"
#include "Optimizer.h"
#include "Trainer.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace il {

struct HostCopy {
    TrainingState state;
    std::vector<std::pair<std::string, std::vector<float>>> tensors;   // network, by name
    std::vector<std::pair<std::string, std::vector<float>>> optimizer; // optimizer state, by name
    bool empty() const { return tensors.empty(); }
};

// Downloads everything (synchronises the backend).
HostCopy takeHostCopy(const Network& network, const Optimizer& optimizer,
                      const TrainingState& state);

// Uploads a host copy into a network and optimizer of the same architecture (any backend).
// Throws EngineError naming the first tensor that is missing or has another size.
void restoreHostCopy(const HostCopy& copy, Network& network, Optimizer& optimizer);

// A model rebuilt on another backend from a host copy: same layers, weights, optimizer state.
struct MovedModel {
    std::unique_ptr<Network> network;
    std::unique_ptr<Optimizer> optimizer;
    TrainingState state;
};
MovedModel moveModel(const Network& network, const OptimizerConfig& optimizerConfig,
                     const HostCopy& copy, Backend& target);

} // namespace il
