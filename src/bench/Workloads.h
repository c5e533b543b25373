// The workloads of ironlearn-bench, run through the public engine API exactly as the CLI and
// the GUI run them. packaging/bench/torch_bench.py mirrors sgemm, siren and tanh in PyTorch on
// the CPU; packaging/bench/torch_cuda_bench.py mirrors sgemm, siren262k and siren4k on CUDA.
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
    int64_t warmup = 0;         // samples run before timing (each unitsPerSample units)
    int64_t readEvery = 1;      // the trainer read the loss back every this many steps
    int64_t unitsPerSample = 1; // one timed sample covers this many units (then median per unit)
    double firstLoss = NAN;     // train loss reported first and last (a sanity check only)
    double lastLoss = NAN;
};

// 2->256->256->256->1 SIREN (w0 = 30), 40,000 random coordinates, full batch, MSE, Adam 1e-4.
// Times `repeat` steps after `warmup` steps.
TrainingResult benchSiren(Backend& backend, int repeat, int warmup);

// The floor under benchSiren: the same step's matrix products alone, on buffers of the same
// shapes (each dense layer's forward x W^T, its weight gradient dy^T x and, except the first,
// its input gradient dy W), `repeat` samples after one warm-up. The step can be no faster than
// this with the same BLAS; everything else a step does is element-wise work on top.
Stats benchSirenGemms(Backend& backend, int repeat);

// The GPU speed targets: the same SIREN (Adam 1e-4, MSE) on `rows` random coordinates, the
// whole set as one batch every step: 262,144 rows (a 512x512 image) and 4,096 (one default
// minibatch of the image task). Each timed sample is `stepsPerSample` steps, synchronised before
// the clock stops (backend.synchronize()), with the loss read back once per sample
// (TrainerConfig::readEvery), so a GPU is not timed waiting for downloads. `repeat` samples
// after `warmupSamples`; the median ms per step is reported.
TrainingResult benchSirenBatch(Backend& backend, int64_t rows, int64_t stepsPerSample, int repeat,
                               int warmupSamples);

// 135->216->216->216->108->54->54->27 tanh MLP, softmax cross-entropy over 27 classes,
// 10,000 samples, minibatches of 256, shuffled each epoch, Adam 1e-3.
// Times `repeat` epochs after `warmup` epochs.
TrainingResult benchTanh(Backend& backend, int repeat, int warmup);

// A names-like 1-D convolution stack: 8 character ids from 27, embedding:27:16, conv:64:3, tanh,
// conv:64:3, tanh, merge:4, dense:27 (two convolutions over the context, the four windows left
// side by side, a last dense), softmax cross-entropy, 20,000 samples, minibatches of 256,
// shuffled each epoch, Adam 1e-3. Times `repeat` epochs after `warmup` epochs.
TrainingResult benchConv(Backend& backend, int repeat, int warmup);

} // namespace il::bench
