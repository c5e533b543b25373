#include "Workloads.h"

#include "Errors.h"
#include "Network.h"
#include "Optimizer.h"
#include "Random.h"
#include "Trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numbers>

namespace il::bench {

namespace {

using Clock = std::chrono::steady_clock;

double msBetween(Clock::time_point a, Clock::time_point b)
{
    return std::chrono::duration<double, std::milli>(b - a).count();
}

Buffer uploadHost(Backend& backend, const std::vector<float>& host, int64_t rows, int64_t cols)
{
    Buffer buffer(&backend, static_cast<size_t>(rows * cols));
    backend.upload(buffer.view(rows, cols), host.data());
    return buffer;
}

struct Mark {
    Clock::time_point time;
    int64_t step = 0;
    double epoch = 0;
    double loss = NAN;
};

// A run of `units` epochs or steps, reporting at each epoch end, or with stepsPerSample > 1
// (steps only) once per sample of that many steps.
void setLength(TrainerConfig& config, RunPolicy& policy, bool perEpoch, int64_t units,
               int64_t stepsPerSample)
{
    if (perEpoch)
        config.epochs = units;
    else
        config.steps = units;
    policy.progressInterval = 1e9; // epoch ends only
    if (stepsPerSample > 1 && !perEpoch) {
        config.steps = units * stepsPerSample;
        policy.readEvery = stepsPerSample;
        config.evalEvery = stepsPerSample; // reports (and reads) at sample boundaries only
        policy.progressInterval = 1e12;    // never by time, not even the first step
    }
}

// Milliseconds per unit of each sample: consecutive marks, both at or after the end of the
// warm-up (counted in samples).
std::vector<double> sampleTimes(const std::vector<Mark>& marks, const Mark& start, bool perEpoch,
                                int warmup, double perSample)
{
    auto unitOf = [perEpoch, perSample](const Mark& m) {
        return perEpoch ? std::round(m.epoch) : static_cast<double>(m.step) / perSample;
    };
    std::vector<double> samples;
    const Mark* previous = &start;
    for (const Mark& m : marks) {
        const bool atEpochEnd = std::abs(m.epoch - std::round(m.epoch)) < 1e-9;
        if (perEpoch && !atEpochEnd) continue;
        const double done = unitOf(m) - unitOf(*previous);
        if (unitOf(*previous) >= warmup && done > 0)
            samples.push_back(msBetween(previous->time, m.time) / (done * perSample));
        if (done > 0) previous = &m;
    }
    return samples;
}

// Trains `spec` on (x, y) for warmup + repeat units (steps or epochs) and times each unit
// from the trainer's progress callbacks, which fire at every epoch end. With stepsPerSample > 1
// (steps only) a sample is that many steps: the trainer then reads the loss back and reports
// once per sample (evalEvery = readEvery = stepsPerSample), and the callback synchronises the
// backend before it takes the time, so a device's queued work is inside the sample it belongs to.
TrainingResult timeTraining(Backend& backend, const std::string& spec, ConstTensor x, ConstTensor y,
                            int64_t outputWidth, TrainerConfig config, bool perEpoch, int warmup,
                            int repeat, int64_t stepsPerSample = 1)
{
    Network net(backend, x.cols(), spec, outputWidth);
    net.initialize(config.seed);
    Optimizer optimizer(backend, config.optimizer, net.parameterRanges());
    TrainingState state;

    const int64_t units = warmup + repeat;
    RunPolicy policy;
    setLength(config, policy, perEpoch, units, stepsPerSample);

    std::vector<Mark> marks;
    marks.reserve(static_cast<size_t>(units) + 8);
    Trainer trainer(net, optimizer, config, state, policy);
    trainer.setProgressCallback([&marks, &backend](const Progress& p) {
        backend.synchronize();
        marks.push_back({Clock::now(), p.step, p.epoch, p.trainLoss});
    });

    backend.synchronize();
    const Mark start{Clock::now(), 0, 0, NAN};
    const il::TrainResult run = trainer.run({x, y, {}, {}});
    backend.synchronize();
    const auto end = Clock::now();
    if (run.reason != StopReason::Finished)
        throw EngineError("training stopped early (" + stopReasonName(run.reason) +
                          "): " + run.message);

    TrainingResult result;
    result.spec = spec;
    result.unit = perEpoch ? "epoch" : "step";
    result.rows = x.rows();
    result.batchSize = config.batchSize > 0 ? std::min(config.batchSize, x.rows()) : x.rows();
    result.stepsPerEpoch = Trainer::stepsPerEpoch(x.rows(), config.batchSize);
    result.parameters = net.parameterCount();
    result.warmup = warmup;
    result.readEvery = std::max<int64_t>(1, policy.readEvery);
    result.unitsPerSample = perEpoch ? 1 : std::max<int64_t>(1, stepsPerSample);

    const double perSample = static_cast<double>(result.unitsPerSample);
    const std::vector<double> samples = sampleTimes(marks, start, perEpoch, warmup, perSample);
    if (static_cast<int>(samples.size()) * 2 >= repeat) {
        result.timing = "callbacks";
        result.ms = statsOf(samples);
    } else {
        result.timing = "total";
        result.ms =
            statsOf({msBetween(start.time, end) / (static_cast<double>(units) * perSample)});
    }
    for (const Mark& m : marks) {
        if (std::isfinite(m.loss)) {
            if (std::isnan(result.firstLoss)) result.firstLoss = m.loss;
            result.lastLoss = m.loss;
        }
    }
    if (std::isfinite(run.trainLoss)) result.lastLoss = run.trainLoss;
    return result;
}

} // namespace

Stats statsOf(std::vector<double> values)
{
    Stats s;
    if (values.empty()) return s;
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    s.median = n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
    s.min = values.front();
    s.max = values.back();
    s.samples = static_cast<int>(n);
    return s;
}

std::vector<GemmResult> benchGemm(Backend& backend, const std::vector<int64_t>& sizes, int repeat)
{
    std::vector<GemmResult> results;
    Rng rng(42);
    for (const int64_t n : sizes) {
        std::vector<float> host(static_cast<size_t>(n * n));
        for (float& v : host)
            v = static_cast<float>(rng.uniform(-1, 1));
        Buffer a = uploadHost(backend, host, n, n);
        Buffer b = uploadHost(backend, host, n, n);
        Buffer c(&backend, static_cast<size_t>(n * n));
        const Tensor ta = a.view(n, n), tb = b.view(n, n), tc = c.view(n, n);
        auto product = [&] { backend.gemm(false, false, 1.f, ta, tb, 0.f, tc); };

        // Warm-up (thread pool, page faults, OpenBLAS buffers), then size the inner loop so a
        // sample lasts at least ~20 ms and timer resolution does not matter.
        product();
        product();
        backend.synchronize();
        auto t0 = Clock::now();
        product();
        backend.synchronize();
        const double once = std::max(msBetween(t0, Clock::now()), 1e-3);
        const auto inner = static_cast<int64_t>(std::max(1.0, std::ceil(20.0 / once)));

        std::vector<double> samples;
        for (int r = 0; r < repeat; ++r) {
            t0 = Clock::now();
            for (int64_t i = 0; i < inner; ++i)
                product();
            backend.synchronize();
            samples.push_back(msBetween(t0, Clock::now()) / static_cast<double>(inner));
        }
        GemmResult g;
        g.n = n;
        g.ms = statsOf(samples);
        g.gflops = 2.0 * static_cast<double>(n * n * n) / (g.ms.median * 1e-3) / 1e9;
        g.inner = inner;
        results.push_back(g);
    }
    return results;
}

namespace {

const char* const kSirenSpec = "dense:256,sine:30,dense:256,sine:30,dense:256,sine:30,dense:1";
// torch_bench.py's bench_conv builds the same stack from nn.Embedding, nn.Conv1d and nn.Linear.
const char* const kConvSpec = "embedding:27:16,conv:64:3,tanh,conv:64:3,tanh,merge:4,dense:27";

// rows random coordinates in [-1, 1]^2 and a smooth target (the same formula as
// torch_common.py's siren_target), on the backend.
struct SirenData {
    Buffer x, y;
};

SirenData sirenData(Backend& backend, int64_t rows)
{
    Rng rng(7);
    std::vector<float> x(static_cast<size_t>(rows * 2)), y(static_cast<size_t>(rows));
    for (int64_t i = 0; i < rows; ++i) {
        const float u = static_cast<float>(rng.uniform(-1, 1));
        const float v = static_cast<float>(rng.uniform(-1, 1));
        x[static_cast<size_t>(2 * i)] = u;
        x[static_cast<size_t>(2 * i + 1)] = v;
        y[static_cast<size_t>(i)] =
            std::sin(3.f * u) * std::cos(2.f * v) + 0.5f * std::exp(-(u * u + v * v));
    }
    return {uploadHost(backend, x, rows, 2), uploadHost(backend, y, rows, 1)};
}

// Every workload trains with Adam at a constant rate; batch 0: every row, every step.
TrainerConfig adamConfig(int64_t batch, bool shuffle, LossKind loss, float lr)
{
    TrainerConfig config;
    config.batchSize = batch;
    config.shuffle = shuffle;
    config.loss = loss;
    config.optimizer = OptimizerConfig::named("adam");
    config.schedule.kind = ScheduleKind::Constant;
    config.schedule.lrMax = lr;
    return config;
}

// Full batch (every row, every step), MSE, Adam at a constant 1e-4.
TrainerConfig sirenConfig()
{
    return adamConfig(0, false, LossKind::MSE, 1e-4f);
}

} // namespace

TrainingResult benchSiren(Backend& backend, int repeat, int warmup)
{
    constexpr int64_t rows = 40000;
    const SirenData d = sirenData(backend, rows);
    TrainerConfig config = sirenConfig();
    TrainingResult r = timeTraining(backend, kSirenSpec, d.x.view(rows, 2), d.y.view(rows, 1), 1,
                                    config, false, warmup, repeat);
    r.name = "siren";
    return r;
}

Stats benchSirenGemms(Backend& backend, int repeat)
{
    constexpr int64_t rows = 40000;
    const std::vector<int64_t> widths = {2, 256, 256, 256, 1}; // kSirenSpec's dense layers
    struct Layer {
        Buffer x, w, y, dw, dx;
        int64_t in, out;
    };
    std::vector<Layer> layers;
    for (size_t l = 0; l + 1 < widths.size(); ++l) {
        const int64_t in = widths[l], out = widths[l + 1];
        Layer layer{Buffer(&backend, static_cast<size_t>(rows * in)),
                    Buffer(&backend, static_cast<size_t>(out * in)),
                    Buffer(&backend, static_cast<size_t>(rows * out)),
                    Buffer(&backend, static_cast<size_t>(out * in)),
                    Buffer(&backend, static_cast<size_t>(rows * in)),
                    in,
                    out};
        for (Buffer* b : {&layer.x, &layer.w, &layer.y})
            backend.fill(b->view(1, static_cast<int64_t>(b->floats())), 0.01f);
        layers.push_back(std::move(layer));
    }
    auto step = [&] {
        for (Layer& l : layers) // forward: y = x W^T (+ the bias, broadcast before)
            backend.gemm(false, true, 1.f, l.x.view(rows, l.in), l.w.view(l.out, l.in), 1.f,
                         l.y.view(rows, l.out));
        for (size_t i = layers.size(); i-- > 0;) { // backward, dy read from y's buffer
            Layer& l = layers[i];
            backend.gemm(true, false, 1.f, l.y.view(rows, l.out), l.x.view(rows, l.in), 0.f,
                         l.dw.view(l.out, l.in));
            if (i > 0)
                backend.gemm(false, false, 1.f, l.y.view(rows, l.out), l.w.view(l.out, l.in), 0.f,
                             l.dx.view(rows, l.in));
        }
        backend.synchronize();
    };
    step();
    std::vector<double> ms;
    for (int r = 0; r < repeat; ++r) {
        const auto start = Clock::now();
        step();
        ms.push_back(msBetween(start, Clock::now()));
    }
    return statsOf(ms);
}

TrainingResult benchSirenBatch(Backend& backend, int64_t rows, int64_t stepsPerSample, int repeat,
                               int warmupSamples)
{
    const SirenData d = sirenData(backend, rows);
    TrainingResult r = timeTraining(backend, kSirenSpec, d.x.view(rows, 2), d.y.view(rows, 1), 1,
                                    sirenConfig(), false, warmupSamples, repeat, stepsPerSample);
    r.name = rows >= 262144 ? "siren262k" : "siren" + std::to_string(rows / 1024) + "k";
    return r;
}

namespace {

// The tanh and conv workloads: minibatches of 256, shuffled each epoch, softmax cross-entropy,
// Adam at a constant 1e-3.
TrainerConfig minibatchConfig()
{
    return adamConfig(256, true, LossKind::CrossEntropy, 1e-3f);
}

} // namespace

TrainingResult benchTanh(Backend& backend, int repeat, int warmup)
{
    constexpr int64_t rows = 10000, inputs = 135, classes = 27;
    Rng rng(11);
    std::vector<float> x(static_cast<size_t>(rows * inputs)), y(static_cast<size_t>(rows));
    for (float& v : x)
        v = static_cast<float>(rng.normal());
    for (float& v : y)
        v = static_cast<float>(rng.below(classes));
    Buffer bx = uploadHost(backend, x, rows, inputs);
    Buffer by = uploadHost(backend, y, rows, 1);

    const TrainerConfig config = minibatchConfig();

    TrainingResult r = timeTraining(
        backend,
        "dense:216,tanh,dense:216,tanh,dense:216,tanh,dense:108,tanh,dense:54,tanh,"
        "dense:54,tanh,dense:27",
        bx.view(rows, inputs), by.view(rows, 1), classes, config, true, warmup, repeat);
    r.name = "tanh";
    return r;
}

TrainingResult benchConv(Backend& backend, int repeat, int warmup)
{
    constexpr int64_t rows = 20000, context = 8, vocab = 27;
    Rng rng(13);
    std::vector<float> x(static_cast<size_t>(rows * context)), y(static_cast<size_t>(rows));
    for (float& v : x)
        v = static_cast<float>(rng.below(vocab));
    for (float& v : y)
        v = static_cast<float>(rng.below(vocab));
    Buffer bx = uploadHost(backend, x, rows, context);
    Buffer by = uploadHost(backend, y, rows, 1);

    const TrainerConfig config = minibatchConfig();

    TrainingResult r = timeTraining(backend, kConvSpec, bx.view(rows, context), by.view(rows, 1),
                                    vocab, config, true, warmup, repeat);
    r.name = "conv";
    return r;
}

} // namespace il::bench
