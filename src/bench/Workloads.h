// The three workloads of ironlearn-bench, run through the public engine API exactly as the
// CLI and the GUI run them. packaging/bench/torch_bench.py mirrors each one in PyTorch.
#pragma once

#include "Backend.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace il::bench {

// Summary of repeated timings (milliseconds).
struct Stats {
    double median = 0;
    double min = 0;
    double max = 0;
    int samples = 0;
};
Stats statsOf(std::vector<double> values);

struct GemmResult {
    int64_t n = 0;
    Stats ms;          // one C = A B of n x n matrices
    double gflops = 0; // 2 n^3 / median
    int64_t inner = 1; // products timed together in one sample
};

// Square sgemm through Backend::gemm at each size: warm-up, then `repeat` samples.
std::vector<GemmResult> benchGemm(Backend& backend, const std::vector<int64_t>& sizes, int repeat);

struct TrainingResult {
    std::string name;
    std::string spec;
    std::string unit;   // "step" or "epoch"
    Stats ms;           // per unit, warm-up excluded
    std::string timing; // "callbacks" or "total" (fallback: the run's mean, warm-up included)
    int64_t rows = 0;
    int64_t batchSize = 0;
    int64_t stepsPerEpoch = 0;
    int64_t parameters = 0;
    int64_t warmup = 0;     // units run before timing
    double firstLoss = NAN; // train loss reported first and last (a sanity check only)
    double lastLoss = NAN;
};

// 2->256->256->256->1 SIREN (w0 = 30), 40,000 random coordinates, full batch, MSE, Adam 1e-4.
// Times `repeat` steps after `warmup` steps.
TrainingResult benchSiren(Backend& backend, int repeat, int warmup);

// 135->216->216->216->108->54->54->27 tanh MLP, softmax cross-entropy over 27 classes,
// 10,000 samples, minibatches of 256, shuffled each epoch, Adam 1e-3.
// Times `repeat` epochs after `warmup` epochs.
TrainingResult benchTanh(Backend& backend, int repeat, int warmup);

} // namespace il::bench
