// ironlearn-bench: how fast the engine is on this machine.
//
//   ironlearn-bench [--threads N] [--backend cpu|cuda] [--only WORKLOADS] [--repeat N]
//                   [--read-every N] [--background-load N] [--json]
//
// a) sgemm       GFLOP/s through Backend::gemm at n = 256, 512, 1024, 2048
// b) siren       ms per full-batch training step of a SIREN on 40,000 coordinates
// c) tanh        ms per epoch of a tanh MLP with softmax cross-entropy, minibatches of 256
//    conv        ms per epoch of a names-like convolution stack (embedding, two conv:64:3)
// d) siren262k   ms per training step of the same SIREN on 262,144 coordinates (a 512x512
//    siren4k     image) or 4,096, the whole set every step; timed in samples of --read-every
//                steps (50 on CUDA), the loss read back once per sample (the GPU targets)
// --background-load N runs the workloads quiet, then again beside N busy processes, and reports
// each loaded time next to the quiet one (docs/benchmarks.md, steady under load).
// packaging/bench/compare.sh runs a-c in PyTorch on the CPU and prints both side by side;
// packaging/bench/compare_cuda.sh does the same for a, d on CUDA.

#include "Backend.h"
#include "BackendRegistry.h"
#include "BackgroundLoad.h"
#include "CpuKernels.h"
#include "CpuThreading.h"
#include "Errors.h"
#include "RecordingStats.h"
#include "Workloads.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

struct Options {
    int threads = 0; // 0: one per core
    std::string backend = "cpu";
    std::vector<std::string> only; // empty: all
    int repeat = 10;
    int readEvery = 0;      // siren262k/siren4k: steps per timed sample; 0: 50 on a device, else 1
    int backgroundLoad = 0; // busy processes for the loaded run; 0: quiet run only
    bool json = false;
};

const char* const kWorkloads[] = {"sgemm", "siren", "tanh", "conv", "siren262k", "siren4k"};

const char* const usage =
    "Usage: ironlearn-bench [--threads N] [--backend cpu|cuda] [--only W[,...]] [--repeat N]\n"
    "                       [--read-every N] [--background-load N] [--json]\n"
    "\n"
    "Times the engine's workloads (a matrix product, SIREN, tanh and convolution training at\n"
    "several sizes) on the CPU or CUDA backend and prints the median of each; the benchmark "
    "scripts in\n"
    "the source tree compare these with PyTorch.\n"
    "\n"
    "Options:\n"
    "  --threads N     CPU worker threads (default: one per core)\n"
    "  --backend B     cpu (default) or cuda (see: ironlearn-cli devices)\n"
    "  --only W        run only these workloads, comma-separated: sgemm, siren, tanh, conv,\n"
    "                  siren262k, siren4k (default: all)\n"
    "  --repeat N      timed samples per workload (default 10; medians are reported)\n"
    "  --read-every N  siren262k/siren4k: steps per timed sample, the loss read back once per\n"
    "                  sample (default 50 on cuda, 1 on cpu)\n"
    "  --background-load N\n"
    "                  run the workloads quiet, then again beside N busy processes (children\n"
    "                  spinning on the CPU, killed at the end or on ctrl-C), and print each\n"
    "                  workload's loaded time next to its quiet time and the ratio\n"
    "  --json          machine-readable output on stdout\n"
    "  --version       the version\n"
    "\n"
    "Exit status: 0 success, 1 a workload failed, 2 usage error.\n";

[[noreturn]] void fail(const std::string& message)
{
    std::fprintf(stderr, "ironlearn-bench: %s\n", message.c_str());
    std::exit(2);
}

int parsePositive(const char* option, const char* text)
{
    char* end = nullptr;
    const long v = std::strtol(text, &end, 10);
    if (!end || *end != '\0' || v < 1 || v > 100000)
        fail(std::string(option) + " expects a positive integer, got '" + text + "'");
    return static_cast<int>(v);
}

Options parseOptions(int argc, char** argv)
{
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&]() -> const char* {
            if (i + 1 >= argc) fail(arg + " needs a value");
            return argv[++i];
        };
        if (arg == "--help" || arg == "-h") {
            std::fputs(usage, stdout);
            std::exit(0);
        } else if (arg == "--version") {
            std::printf("ironlearn-bench %s\n", IRONLEARN_VERSION);
            std::exit(0);
        } else if (arg == "--threads") {
            o.threads = parsePositive("--threads", value());
        } else if (arg == "--backend") {
            o.backend = value();
        } else if (arg == "--only") {
            const std::string list = value();
            size_t start = 0;
            while (start <= list.size()) {
                const size_t comma = std::min(list.find(',', start), list.size());
                const std::string w = list.substr(start, comma - start);
                if (std::find(std::begin(kWorkloads), std::end(kWorkloads), w) ==
                    std::end(kWorkloads))
                    fail("--only: unknown workload '" + w +
                         "' (expected sgemm, siren, tanh, conv, siren262k or siren4k)");
                o.only.push_back(w);
                start = comma + 1;
            }
        } else if (arg == "--repeat") {
            o.repeat = parsePositive("--repeat", value());
        } else if (arg == "--read-every") {
            o.readEvery = parsePositive("--read-every", value());
        } else if (arg == "--background-load") {
            o.backgroundLoad = parsePositive("--background-load", value());
        } else if (arg == "--json") {
            o.json = true;
        } else {
            fail("unknown option '" + arg + "'\n" + usage);
        }
    }
    if (o.backend != "cpu" && o.backend != "cuda")
        fail("--backend: unknown backend '" + o.backend + "' (cpu or cuda)");
    if (o.threads == 0)
        o.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    return o;
}

bool wanted(const Options& o, const std::string& workload)
{
    return o.only.empty() || std::find(o.only.begin(), o.only.end(), workload) != o.only.end();
}

std::string jsonString(const std::string& s)
{
    std::string out = "\"";
    for (const char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += c;
        }
    }
    return out + "\"";
}

std::string jsonNumber(double v)
{
    if (!std::isfinite(v)) return "null";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

std::string envOrNull(const char* name)
{
    const char* v = std::getenv(name);
    return v ? jsonString(v) : "null";
}

// The SIMD targets this CPU runs, best first: "avx512, avx2, sse4".
std::string simdKeys()
{
    std::string keys;
    for (const il::simd::Target& t : il::simd::availableTargets())
        keys += (keys.empty() ? "" : ", ") + t.key;
    return keys;
}

std::string statsJson(const il::bench::Stats& s)
{
    return "\"ms\": " + jsonNumber(s.median) + ", \"min_ms\": " + jsonNumber(s.min) +
           ", \"max_ms\": " + jsonNumber(s.max) + ", \"samples\": " + std::to_string(s.samples);
}

std::string trainingJson(const il::bench::TrainingResult& r)
{
    return "{\"spec\": " + jsonString(r.spec) + ", \"unit\": " + jsonString(r.unit) + ", " +
           statsJson(r.ms) + ", \"timing\": " + jsonString(r.timing) +
           ", \"rows\": " + std::to_string(r.rows) +
           ", \"batch_size\": " + std::to_string(r.batchSize) +
           ", \"steps_per_epoch\": " + std::to_string(r.stepsPerEpoch) +
           ", \"parameters\": " + std::to_string(r.parameters) +
           ", \"warmup\": " + std::to_string(r.warmup) +
           ", \"read_every\": " + std::to_string(r.readEvery) +
           ", \"steps_per_sample\": " + std::to_string(r.unitsPerSample) +
           ", \"first_loss\": " + jsonNumber(r.firstLoss) +
           ", \"last_loss\": " + jsonNumber(r.lastLoss) + "}";
}

void printTraining(const il::bench::TrainingResult& r, const char* label)
{
    std::printf("%-34s %9.2f ms/%s  (min %.2f, max %.2f, %d samples, %s; loss %.4g -> %.4g)\n",
                label, r.ms.median, r.unit.c_str(), r.ms.min, r.ms.max, r.ms.samples,
                r.timing.c_str(), r.firstLoss, r.lastLoss);
}

struct Results {
    std::vector<il::bench::GemmResult> gemm;
    il::bench::TrainingResult siren, tanh, conv, siren262k, siren4k;
    il::bench::Stats sirenGemms; // the siren step's matrix products alone (its floor)
};

// Runs the wanted workloads, printing each figure as it comes unless --json.
Results runWorkloads(il::Backend& backend, const Options& opt, int64_t readEvery)
{
    Results r;
    if (wanted(opt, "sgemm")) {
        r.gemm = il::bench::benchGemm(backend, {256, 512, 1024, 2048}, opt.repeat);
        if (!opt.json) {
            for (const auto& g : r.gemm) {
                const std::string label = "sgemm n=" + std::to_string(g.n);
                std::printf("%-34s %9.1f GFLOP/s  (%.3f ms median, min %.3f)\n", label.c_str(),
                            g.gflops, g.ms.median, g.ms.min);
            }
            std::fflush(stdout);
        }
    }
    if (wanted(opt, "siren")) {
        r.siren = il::bench::benchSiren(backend, opt.repeat, 3);
        r.sirenGemms = il::bench::benchSirenGemms(backend, opt.repeat);
        if (!opt.json) {
            printTraining(r.siren, "siren 2-256x3-1, 40000 rows, full");
            std::printf("%-34s %9.2f ms/step  (its GEMMs alone: the step is %.2fx this floor)\n",
                        "  siren GEMMs alone (floor)", r.sirenGemms.median,
                        r.siren.ms.median / r.sirenGemms.median);
        }
        std::fflush(stdout);
    }
    if (wanted(opt, "tanh")) {
        r.tanh = il::bench::benchTanh(backend, opt.repeat, 1);
        if (!opt.json) printTraining(r.tanh, "tanh mlp 135-...-27, 10000 rows/256");
        std::fflush(stdout);
    }
    if (wanted(opt, "conv")) {
        r.conv = il::bench::benchConv(backend, opt.repeat, 1);
        if (!opt.json) printTraining(r.conv, "conv names 8x27-16-64-64-27, 20000/256");
        std::fflush(stdout);
    }
    // Warm-up: two samples on a device (the first step sizes every buffer, the second
    // records the step), one step on the CPU.
    const int warmupSamples = readEvery > 1 ? 2 : 1;
    if (wanted(opt, "siren262k")) {
        r.siren262k =
            il::bench::benchSirenBatch(backend, 262144, readEvery, opt.repeat, warmupSamples);
        if (!opt.json) printTraining(r.siren262k, "siren 2-256x3-1, 262144 rows, full");
        std::fflush(stdout);
    }
    if (wanted(opt, "siren4k")) {
        r.siren4k = il::bench::benchSirenBatch(backend, 4096, readEvery, opt.repeat, warmupSamples);
        if (!opt.json) printTraining(r.siren4k, "siren 2-256x3-1, 4096 rows, full");
        std::fflush(stdout);
    }
    return r;
}

// The wanted workloads' entries, each as `"name": value` after a ", ".
std::string workloadsJson(const Options& opt, const Results& r)
{
    std::string out;
    if (wanted(opt, "sgemm")) {
        out += ", \"sgemm\": [";
        for (size_t i = 0; i < r.gemm.size(); ++i) {
            const auto& g = r.gemm[i];
            out += std::string(i ? ", " : "") + "{\"n\": " + std::to_string(g.n) +
                   ", \"gflops\": " + jsonNumber(g.gflops) + ", " + statsJson(g.ms) +
                   ", \"inner\": " + std::to_string(g.inner) + "}";
        }
        out += "]";
    }
    if (wanted(opt, "siren"))
        out += ", \"siren\": " + trainingJson(r.siren) + ", \"siren_gemms\": {" +
               statsJson(r.sirenGemms) + "}";
    if (wanted(opt, "tanh")) out += ", \"tanh\": " + trainingJson(r.tanh);
    if (wanted(opt, "conv")) out += ", \"conv\": " + trainingJson(r.conv);
    if (wanted(opt, "siren262k")) out += ", \"siren262k\": " + trainingJson(r.siren262k);
    if (wanted(opt, "siren4k")) out += ", \"siren4k\": " + trainingJson(r.siren4k);
    return out;
}

// loaded: the same workloads beside opt.backgroundLoad busy processes (null without the option).
std::string resultsJson(const Options& opt, const il::DeviceInfo& info, const Results& r,
                        const Results* loaded)
{
    std::string out = "{\"tool\": \"ironlearn\", \"backend\": " + jsonString(info.backend) +
                      ", \"device\": " + jsonString(info.name) +
                      ", \"details\": " + jsonString(info.details) +
                      ", \"threads\": " + std::to_string(opt.threads) +
                      ", \"backend_threads\": " + std::to_string(info.threads) +
                      ", \"repeat\": " + std::to_string(opt.repeat) +
                      ", \"simd\": " + jsonString(il::simd::activeTarget().key) +
                      ", \"simd_available\": " + jsonString(simdKeys()) +
                      ", \"env\": {\"OPENBLAS_CORETYPE\": " + envOrNull("OPENBLAS_CORETYPE") +
                      ", \"OPENBLAS_L2_SIZE\": " + envOrNull("OPENBLAS_L2_SIZE") +
                      ", \"OMP_NUM_THREADS\": " + envOrNull("OMP_NUM_THREADS") +
                      ", \"OMP_WAIT_POLICY\": " + envOrNull("OMP_WAIT_POLICY") +
                      ", \"GOMP_SPINCOUNT\": " + envOrNull("GOMP_SPINCOUNT") + "}";
    out += workloadsJson(opt, r);
    // Whether the training steps ran as recordings (CUDA graphs): a failed one falls back to
    // direct ops, which times something else (the device check requires 0 fallbacks).
    const il::RecordingStats rec = il::recordingStats();
    out += ", \"recorded_steps\": " + std::to_string(rec.recorded) +
           ", \"recording_fallbacks\": " + std::to_string(rec.fellBack) +
           ", \"recording_failure\": " +
           (rec.fellBack ? jsonString(rec.lastFailure) : std::string("null"));
    if (loaded) {
        out += ", \"background_load\": " + std::to_string(opt.backgroundLoad) + ", \"loaded\": {" +
               workloadsJson(opt, *loaded).substr(2) + "}";
    }
    out += "}\n";
    return out;
}

// One line per workload (sgemm: per size): quiet ms, loaded ms and their ratio.
void printLoadComparison(const Options& opt, const Results& quiet, const Results& loaded)
{
    std::printf("\nbeside %d busy process%s (time per unit, medians):\n", opt.backgroundLoad,
                opt.backgroundLoad == 1 ? "" : "es");
    std::printf("%-24s %12s %12s %8s\n", "workload", "quiet ms", "loaded ms", "ratio");
    auto row = [](const std::string& name, double q, double l) {
        std::printf("%-24s %12.2f %12.2f %7.2fx\n", name.c_str(), q, l, q > 0 ? l / q : NAN);
    };
    for (size_t i = 0; i < quiet.gemm.size() && i < loaded.gemm.size(); ++i)
        row("sgemm n=" + std::to_string(quiet.gemm[i].n), quiet.gemm[i].ms.median,
            loaded.gemm[i].ms.median);
    const std::pair<const char*, il::bench::TrainingResult Results::*> training[] = {
        {"siren", &Results::siren},
        {"tanh", &Results::tanh},
        {"conv", &Results::conv},
        {"siren262k", &Results::siren262k},
        {"siren4k", &Results::siren4k}};
    for (const auto& [name, member] : training)
        if (wanted(opt, name))
            row(std::string(name) + " (per " + (quiet.*member).unit + ")",
                (quiet.*member).ms.median, (loaded.*member).ms.median);
    std::fflush(stdout);
}

} // namespace

int main(int argc, char** argv)
{
    il::applyCpuThreadingDefaults(argv);
    const Options opt = parseOptions(argc, argv);
    try {
        std::unique_ptr<il::Backend> backend;
        try {
            il::BackendOptions bo;
            bo.threads = opt.threads;
            backend = il::createBackend(opt.backend, bo);
        } catch (const il::BackendError& e) {
            std::fprintf(stderr, "ironlearn-bench: --backend %s: %s\n", opt.backend.c_str(),
                         e.what());
            return 1;
        }
        const il::DeviceInfo info = backend->info();
        // On a device, time samples of 50 steps with one loss read-back each, so the figure is
        // the device's work, not a download per step.
        const bool device = !backend->memoryOnHost();
        const int64_t readEvery = opt.readEvery > 0 ? opt.readEvery : device ? 50 : 1;

        if (!opt.json) {
            std::printf(
                "ironlearn-bench: %s backend, %s, %d threads\n  %s\n  SIMD: %s (this CPU: %s; "
                "IRONLEARN_SIMD forces one)\n",
                info.backend.c_str(), info.name.c_str(), info.threads, info.details.c_str(),
                il::simd::activeTarget().name.c_str(), simdKeys().c_str());
            std::fflush(stdout);
        }
        const Results results = runWorkloads(*backend, opt, readEvery);
        // The JSON takes the details as the run left them (how many product shapes got a bias
        // epilogue is known only once they ran).
        if (opt.backgroundLoad == 0) {
            if (opt.json)
                std::fputs(resultsJson(opt, backend->info(), results, nullptr).c_str(), stdout);
            return 0;
        }
        Results loaded;
        {
            il::bench::BackgroundLoad load(opt.backgroundLoad);
            if (!opt.json) {
                std::printf("\nagain, beside %d busy process%s:\n", opt.backgroundLoad,
                            opt.backgroundLoad == 1 ? "" : "es");
                std::fflush(stdout);
            }
            loaded = runWorkloads(*backend, opt, readEvery);
        } // the busy processes end here, and on any exception or signal before
        if (opt.json)
            std::fputs(resultsJson(opt, backend->info(), results, &loaded).c_str(), stdout);
        else
            printLoadComparison(opt, results, loaded);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ironlearn-bench: %s\n", e.what());
        return 1;
    }
    return 0;
}
