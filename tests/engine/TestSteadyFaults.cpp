// A steady training step touches no new memory: between steps 10 and 30 the process takes (almost)
// no minor page faults. A fault there means a step maps fresh pages — a buffer allocated per step,
// a workspace that grows, a first touch of memory that should have been reused — which costs
// time on every step (the kernel zeroes each page) and would show first on a busy desktop.
//
// Two runs on the CPU backend, each through Trainer::run as the CLI and the studio use it:
// - SIREN 2-256x3-1 on 40,000 rows, full batch, Adam (the bench's SIREN workload);
// - a names-shaped run: 3-character context as ids, embedding, tanh, 27-way softmax with label
//   smoothing, shuffled mini-batches of 256, AdamW.
// Faults are counted process-wide (every thread: OpenMP workers and OpenBLAS included) with
// getrusage, from the progress report after step 10 to the one after step 30.
#include "Backend.h"
#include "Network.h"
#include "Optimizer.h"
#include "Random.h"
#include "TestUtil.h"
#include "Trainer.h"

#include <QTest>

#include <sys/resource.h>

#include <cmath>
#include <cstdlib>

using namespace il;
using testutil::toDevice;

namespace {

// Faults allowed over the 20 steady steps: a handful for the runtime's own bookkeeping (a timer,
// a lazily mapped page of libgomp), far below the hundreds to thousands a per-step buffer of
// these sizes takes (the SIREN activations are 40,000 x 256 floats = 10,000 pages).
constexpr long kMaxSteadyFaults = 32;

long minorFaults()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

// Runs the trainer and returns the minor faults between the reports after steps 10
// and 30 (-1 if a report is missing).
long steadyFaults(Network& net, const TrainerConfig& cfg, const TrainingData& data)
{
    Optimizer opt(net.backend(), cfg.optimizer, net.parameterRanges());
    TrainingState state;
    state.history.reserve(100);
    RunPolicy policy;
    policy.progressInterval = 0; // a report after every step
    long at10 = -1, at30 = -1;
    Trainer trainer(net, opt, cfg, state, policy);
    trainer.setProgressCallback([&](const Progress& p) {
        if (p.step == 10) at10 = minorFaults();
        if (p.step == 30) at30 = minorFaults();
    });
    const TrainResult r = trainer.run(data);
    if (r.reason != StopReason::Finished || at10 < 0 || at30 < 0) return -1;
    return at30 - at10;
}

// Empty when the run reported steps 10 and 30 and took at most kMaxSteadyFaults between them;
// otherwise what went wrong.
QString steadyProblem(const char* run, long faults)
{
    if (faults < 0) return QStringLiteral("%1: the run did not report steps 10 and 30").arg(run);
    qInfo("%s: %ld minor faults in steps 11-30", run, faults);
    if (faults <= kMaxSteadyFaults) return {};
    return QStringLiteral("%1: %2 minor page faults in 20 steady steps (at most %3)")
        .arg(run)
        .arg(faults)
        .arg(kMaxSteadyFaults);
}

} // namespace

class TestSteadyFaults : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
#if IRONLEARN_SANITIZED
        // ASan's allocator keeps freed memory in quarantine and never hands it out again soon,
        // so every allocation maps fresh pages: the count says nothing about our own reuse.
        QSKIP("under AddressSanitizer the allocator is ASan's, not the one the program ships with");
#endif
        m_backend = createCpuBackend();
    }
    void counterSeesFreshPages();
    void sirenFullBatch();
    void namesMiniBatches();

private:
    std::unique_ptr<Backend> m_backend;
};

void TestSteadyFaults::counterSeesFreshPages()
{
    // The counter works here: touching 64 fresh pages takes at least 64 faults.
    const long before = minorFaults();
    const size_t bytes = 64 * 4096;
    char* p = static_cast<char*>(std::aligned_alloc(4096, bytes));
    QVERIFY(p);
    for (size_t i = 0; i < bytes; i += 4096)
        p[i] = 1;
    const long taken = minorFaults() - before;
    std::free(p);
    QVERIFY2(taken >= 64, qPrintable(QStringLiteral("%1 faults for 64 fresh pages").arg(taken)));
}

void TestSteadyFaults::sirenFullBatch()
{
    Backend& b = *m_backend;
    constexpr int64_t rows = 40000;
    Rng rng(7);
    std::vector<float> hx(static_cast<size_t>(rows * 2)), hy(static_cast<size_t>(rows));
    for (int64_t i = 0; i < rows; ++i) {
        const float u = static_cast<float>(rng.uniform(-1, 1));
        const float v = static_cast<float>(rng.uniform(-1, 1));
        hx[static_cast<size_t>(2 * i)] = u;
        hx[static_cast<size_t>(2 * i + 1)] = v;
        hy[static_cast<size_t>(i)] = std::sin(3.f * u) * std::cos(2.f * v);
    }
    Buffer x = toDevice(b, hx), y = toDevice(b, hy);
    TrainingData data;
    data.trainX = x.view(rows, 2);
    data.trainY = y.view(rows, 1);

    Network net(b, 2, "dense:256,sine:30,dense:256,sine:30,dense:256,sine:30,dense:1", 1);
    net.initialize(1);
    TrainerConfig cfg;
    cfg.steps = 31;    // the report after step 30 comes before the run's end
    cfg.batchSize = 0; // full batch
    cfg.shuffle = false;
    cfg.loss = LossKind::MSE;
    cfg.optimizer = OptimizerConfig::named("adam");
    cfg.schedule.kind = ScheduleKind::Constant;
    cfg.schedule.lrMax = 1e-4f;
    const QString problem = steadyProblem("SIREN 40,000 rows", steadyFaults(net, cfg, data));
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
}

void TestSteadyFaults::namesMiniBatches()
{
    Backend& b = *m_backend;
    constexpr int64_t rows = 20000, context = 3, vocab = 27;
    Rng rng(11);
    std::vector<float> hx(static_cast<size_t>(rows * context)), hy(static_cast<size_t>(rows));
    for (auto& v : hx)
        v = static_cast<float>(rng.below(vocab));
    for (auto& v : hy)
        v = static_cast<float>(rng.below(vocab));
    Buffer x = toDevice(b, hx), y = toDevice(b, hy);
    TrainingData data;
    data.trainX = x.view(rows, context);
    data.trainY = y.view(rows, 1);
    data.valX = x.view(2000, context); // evaluated once per epoch (78 steps): not in 10-30
    data.valY = y.view(2000, 1);

    Network net(b, context, "embedding:27:16,dense:128,tanh,dense:27", vocab, vocab);
    net.initialize(1);
    TrainerConfig cfg;
    cfg.steps = 40; // the end of a run (final evaluation, buffers for it) stays outside 10-30
    cfg.batchSize = 256;
    cfg.loss = LossKind::CrossEntropy;
    cfg.labelSmoothing = 0.1f;
    cfg.optimizer = OptimizerConfig::named("adamw");
    cfg.schedule.kind = ScheduleKind::Cosine;
    cfg.schedule.lrMax = 3e-3f;
    const QString problem = steadyProblem("names-shaped run", steadyFaults(net, cfg, data));
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
}

QTEST_GUILESS_MAIN(TestSteadyFaults)
#include "TestSteadyFaults.moc"
