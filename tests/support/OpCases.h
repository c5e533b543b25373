// One table of backend op cases, run on every backend present (tests/engine/TestBackendOps.cpp
// on the CPU backend, tests/engine/TestCudaParity.cpp on CUDA when a device exists).
//
// A case makes its inputs from a fixed seed, runs one op (or a forward/backward pair) on a
// backend and returns the outputs as host vectors. Each output carries two judgements:
//  - the double-precision reference computed here and a tolerance against it: this is how the
//    CPU backend is checked;
//  - a bound against the CPU backend's own output: this is how every other backend is checked
//    (the CPU being right, agreeing with it means being right; the bounds follow the kind of
//    arithmetic, see the tolerances in OpCases.cpp).
#pragma once

#include "Backend.h"

#include <QString>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

namespace opcases {

// ---- tolerances against the CPU backend --------------------------------------------------------
// |other - cpu| <= atol + rtol * |cpu| per element, unless a case builds its own bound.
struct Tolerance {
    double atol;
    double rtol;
    const char* name;
};

constexpr double kUlp1 = 1.1920929e-7; // spacing of f32 just above 1.0

// Copies, fill, broadcast, (leaky) ReLU, identity, embedding lookup, gather, guard flags: no
// rounding happens, so the results must be bit-identical.
constexpr Tolerance kExact{0.0, 0.0, "exact"};
// One or two roundings of O(1) values (axpby, MSE/MAE gradients, SGD updates). nvcc contracts
// a * x + b * y into a fused multiply-add and the CPU compiler may not, so the backends can
// differ by an ulp or two of the largest term: ulp(4) = 4.8e-7 for inputs in [-2, 2].
constexpr Tolerance kElementwise{1e-6, 1e-6, "element-wise"};
// sin, cos, tanh, exp, log with results of magnitude <= 1. The CPU backend's vectorised
// polynomials are within 1.1e-7 of the exact value (measured over 2^20 inputs per function);
// CUDA's sinf, cosf, tanhf, expf and logf are within 2 ulp (2.4e-7 near 1) by the CUDA
// programming guide. 1e-6 is about three times the sum of both; a kernel that used the fast
// intrinsics (__sinf...) outside their accurate range would not pass.
constexpr Tolerance kTranscendental{1e-6, 2e-6, "transcendental"};
// Sums of k terms (gemm, sumRows, sumSquares, loss means, softmax denominators, embedding
// gradients). Each backend adds in its own order (cuBLAS tiles, tree reductions, the CPU's
// fixed chunks); for random data the rounding error of such a sum grows like
// sqrt(k) * u * sum|terms| with u = 6e-8. The bound is 1e-6 * sqrt(k) * sum|terms|, about 16 times
// that, so it holds with margin for every size here, and it scales with the sum's magnitude,
// not its value (a sum that cancels to ~0 is still compared fairly).
constexpr double kReductionPerSqrtTerm = 1e-6;

inline double reductionBound(double terms, double magnitude)
{
    return kReductionPerSqrtTerm * std::sqrt(std::max(terms, 1.0)) * magnitude + 1e-30;
}

// exp(a) where the backends may form the argument a differently (z / T - max / T against
// (z - max) / T, say): each rounding of a moves exp(a) by a relative ulp(a) / 2, so the two can
// differ by up to 2^-23 |a| relative. maxArgument: the largest |a| of the case's data.
inline double expArgumentError(double maxArgument)
{
    return 2 * kUlp1 * std::max(1.0, maxArgument);
}

// ---- the table ---------------------------------------------------------------------------------

// |got - want| allowed for element `index` whose wanted value is `want`.
using Bound = std::function<double(size_t index, double want)>;

struct Output {
    QString name;              // "y", "dx", "loss" ...
    std::vector<float> values; // as the backend left them
};

// How one output is judged (outputs and checks are matched by position).
struct Check {
    QString name;
    std::vector<double> reference; // double precision; empty: no reference check
    double atol = 0, rtol = 0;     // against the reference: |got - ref| <= atol + rtol |ref|
    Bound parity;                  // against the CPU backend's output
    bool parityExact = false;      // identical bits required instead of parity
    int sameAs = -1;               // >= 0: on every backend, within parity of that output too
};

struct OpCase {
    std::function<std::vector<Output>(il::Backend&)> run;
    std::vector<Check> checks;
};

// A row of the table: its name and how to build the case (inputs are made when it runs).
struct Row {
    QString name;
    std::function<OpCase()> make;
};

// Double-precision references, also for the tests that check one backend by hand.
double refActivation(il::Activation a, double param, double x);
double refDerivative(il::Activation a, double param, double x);
// The mean loss, and its gradient into *grad. weights: the class weights of
// Backend::lossForwardBackward (empty: unweighted); the mean still divides by the term count.
double refLoss(il::LossKind kind, double smoothing, const std::vector<float>& pred,
               const std::vector<float>& target, int64_t rows, int64_t k, std::vector<double>* grad,
               const std::vector<float>& weights = {});

// Every row, in a fixed order.
const std::vector<Row>& table();

// The outputs of `run` on the CPU backend against the references. false + *why on failure.
bool matchesReference(const OpCase& c, const std::vector<Output>& got, QString* why);
// Another backend's outputs against the CPU backend's. false + *why on failure.
bool matchesCpu(const OpCase& c, const std::vector<Output>& got, const std::vector<Output>& cpu,
                QString* why);

} // namespace opcases
