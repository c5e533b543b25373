// K networks of one stack, averaged as one network of the same kind.
//
// When the stack is dense layers and element-wise activations (a final skip allowed), the mean
// of K such networks' outputs is exactly the output of one network K times as wide:
//   - the first dense layer stacks the K members' units (their weights row after row),
//   - each later hidden dense layer is block-diagonal (member k's units read only member k's),
//   - the output layer reads every block with its weights divided by K, and its bias is the
//     members' mean bias.
// A linear model can be blended in: the network then computes
//   share * mean_k member_k(x) + (1 - share) * (x L^T + l)
// with the linear part held by a final skip (y = x + inputs S^T), which the averaged stack always
// ends in. This is how cross-validation keeps its folds' networks as one model (the folds'
// ensemble; CrossValidation.h): no new layer and no new file format.
#pragma once

#include "Network.h"

#include <string>
#include <vector>

namespace il {

// A network's tensors (namedTensors(), in that order) copied to the host.
using HostTensors = std::vector<std::vector<float>>;
HostTensors copyToHost(const Network& net);

// The stack of `members` copies of net's averaged as one ("dense:100,relu,dense" with 5 ->
// "dense:500,relu,dense,skip"), or "" when net is not dense layers and element-wise activations
// with at most a final skip (why says which layer is not).
std::string averagedSpec(const Network& net, int members, std::string* why = nullptr);

// The linear part of a blend: outputs = inputs W^T + bias; W is outputs x inputs.
struct LinearPart {
    std::vector<float> weights, bias;
};

// Sets avg (built from averagedSpec(member, weights.size()) with member's widths) to compute
// share * mean of the members + (1 - share) * linear (share 1 or an empty linear: the mean
// alone). member gives the stack's layout; weights holds each member's copyToHost. Throws
// EngineError when the sizes do not fit.
void setAveraged(Network& avg, const Network& member, const std::vector<HostTensors>& weights,
                 double share, const LinearPart& linear);

} // namespace il
