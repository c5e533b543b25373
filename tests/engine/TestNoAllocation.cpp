// After the first step, a training step allocates nothing.
//
// This executable replaces the global operator new/delete with counting versions. Only C++
// allocations are counted: OpenBLAS and the OpenMP runtime allocate with malloc, and their
// buffers are reused between calls anyway.
#include "Backend.h"
#include "Network.h"
#include "Optimizer.h"
#include "Random.h"
#include "TestUtil.h"
#include "Trainer.h"

#include <QTest>

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<long long> g_allocations{0};

void* countedAlloc(std::size_t n)
{
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    return std::malloc(n ? n : 1);
}

void* countedAlignedAlloc(std::size_t n, std::align_val_t al)
{
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    const auto a = static_cast<std::size_t>(al);
    void* p = nullptr;
    if (posix_memalign(&p, a < sizeof(void*) ? sizeof(void*) : a, n ? n : 1) != 0) return nullptr;
    return p;
}
} // namespace

void* operator new(std::size_t n)
{
    if (void* p = countedAlloc(n)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n)
{
    if (void* p = countedAlloc(n)) return p;
    throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept
{
    return countedAlloc(n);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept
{
    return countedAlloc(n);
}
void* operator new(std::size_t n, std::align_val_t al)
{
    if (void* p = countedAlignedAlloc(n, al)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t al)
{
    if (void* p = countedAlignedAlloc(n, al)) return p;
    throw std::bad_alloc();
}
void* operator new(std::size_t n, std::align_val_t al, const std::nothrow_t&) noexcept
{
    return countedAlignedAlloc(n, al);
}
void* operator new[](std::size_t n, std::align_val_t al, const std::nothrow_t&) noexcept
{
    return countedAlignedAlloc(n, al);
}
void operator delete(void* p) noexcept
{
    std::free(p);
}
void operator delete[](void* p) noexcept
{
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept
{
    std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept
{
    std::free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept
{
    std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept
{
    std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept
{
    std::free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept
{
    std::free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept
{
    std::free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept
{
    std::free(p);
}
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept
{
    std::free(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept
{
    std::free(p);
}

using namespace il;
using testutil::toDevice;

namespace {
long long allocations()
{
    return g_allocations.load(std::memory_order_relaxed);
}

struct Problem {
    QString spec;
    int64_t in, out, vocab;
    LossKind loss;
};

// Inputs (ids for an embedding) and targets (class ids for cross-entropy).
void problemData(const Problem& p, int64_t rows, std::vector<float>& x, std::vector<float>& y)
{
    Rng rng(3);
    x.resize(static_cast<size_t>(rows * p.in));
    for (auto& v : x)
        v = p.vocab > 0 ? static_cast<float>(rng.below(static_cast<uint64_t>(p.vocab)))
                        : static_cast<float>(rng.uniform(-1, 1));
    const bool ids = p.loss == LossKind::CrossEntropy;
    y.resize(static_cast<size_t>(rows * (ids ? 1 : p.out)));
    for (auto& v : y)
        v = ids ? static_cast<float>(rng.below(static_cast<uint64_t>(p.out)))
                : static_cast<float>(rng.uniform(0, 1));
}
} // namespace

Q_DECLARE_METATYPE(Problem)

class TestNoAllocation : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void counterCountsAllocations();
    void manualSteps_data();
    void manualSteps();
    void trainerSteps_data();
    void trainerSteps();

private:
    std::unique_ptr<Backend> m_backend;
};

void TestNoAllocation::initTestCase()
{
    m_backend = createCpuBackend();
}

void TestNoAllocation::counterCountsAllocations()
{
    // The replacement is in effect (otherwise the tests below would pass vacuously).
    const long long before = allocations();
    auto* p = new std::vector<int>(100);
    QVERIFY(allocations() >= before + 2);
    delete p;
    const long long mid = allocations();
    Buffer buf(m_backend.get(), 1000); // backend memory may come from anywhere: not asserted
    (void)buf;
    QVERIFY(allocations() >= mid);
}

static std::vector<std::pair<const char*, Problem>> problems()
{
    return {
        {"mlp mse", {"dense:32,tanh,dense:32,relu,dense:4", 3, 4, 0, LossKind::MSE}},
        {"siren mae", {"dense:16,sine,dense:16,sine,dense:1", 2, 1, 0, LossKind::MAE}},
        {"fourier bce",
         {"fourier:16:1,dense:16,sigmoid,dense:2", 2, 2, 0, LossKind::BinaryCrossEntropy}},
        {"embedding ce",
         {"embedding:10:4,dense:8,leakyrelu,dense:5", 3, 5, 10, LossKind::CrossEntropy}},
    };
}

void TestNoAllocation::manualSteps_data()
{
    QTest::addColumn<Problem>("problem");
    QTest::addColumn<QString>("optimizer");
    // Every problem with AdamW, plus every other registered optimizer on the first.
    for (const auto& [name, p] : problems())
        QTest::newRow(name) << p << QString("adamw");
    const Problem mlp = problems().front().second;
    for (const OptimizerType& t : optimizerTypes())
        if (QLatin1String(t.name) != QLatin1String("adamw"))
            QTest::addRow("mlp mse %s", t.name) << mlp << QString::fromLatin1(t.name);
}

void TestNoAllocation::manualSteps()
{
    // A training step driven by hand, as the trainer does it.
    QFETCH(Problem, problem);
    QFETCH(QString, optimizer);
    const OptimizerConfig oc = OptimizerConfig::named(optimizer.toStdString());
    Backend& b = *m_backend;
    const int64_t rows = 64;
    std::vector<float> hx, hy;
    problemData(problem, rows, hx, hy);
    Buffer x = toDevice(b, hx), y = toDevice(b, hy);
    const int64_t yCols = problem.loss == LossKind::CrossEntropy ? 1 : problem.out;

    Network net(b, problem.in, problem.spec.toStdString(), problem.out, problem.vocab);
    net.initialize(1);
    Optimizer opt(b, oc, net.parameterRanges());
    const auto grads = net.namedGradients();
    const int count = static_cast<int>(grads.size());
    Buffer sq(&b, static_cast<size_t>(count)), guard = toDevice(b, {1.f, 0.f, 0.f, 0.f});
    Buffer loss(&b, 1), dOut(&b, static_cast<size_t>(rows * problem.out));

    const auto step = [&](int64_t s) {
        Tensor out = net.forward(x.view(rows, problem.in));
        Tensor g = dOut.view(rows, problem.out);
        b.lossForwardBackward(problem.loss, 0.f, {}, out, y.view(rows, yCols), g, loss.data(),
                              false);
        net.backward(x.view(rows, problem.in), g);
        for (int i = 0; i < count; ++i)
            b.sumSquares(grads[static_cast<size_t>(i)].tensor, sq.data() + i);
        b.guardAndClip(sq.data(), count, loss.data(), 1.f, s, guard.data());
        opt.step(net.parameters(), net.gradients(), 1e-3f, 1e-3f, s + 1, guard.data());
    };
    step(0);
    const long long before = allocations();
    for (int64_t s = 1; s < 20; ++s)
        step(s);
    b.synchronize();
    const long long during = allocations() - before;
    QVERIFY2(during == 0, qPrintable(QStringLiteral("%1 allocations in 19 steps").arg(during)));
    QVERIFY(testutil::readScalar(b, guard.data() + GuardBad) == 0.f);
}

void TestNoAllocation::trainerSteps_data()
{
    QTest::addColumn<Problem>("problem");
    QTest::addColumn<bool>("weighted"); // class weights: uploaded once per run, not per step
    for (const auto& [name, p] : problems()) {
        QTest::newRow(name) << p << false;
        if (p.loss == LossKind::BinaryCrossEntropy || p.loss == LossKind::CrossEntropy)
            QTest::addRow("%s class-weighted", name) << p << true;
    }
}

void TestNoAllocation::trainerSteps()
{
    // Trainer::run with mini-batches: the allocation count seen from the progress callback
    // must not move between the report after step 2 and the last report. Reports come after
    // every step (progressInterval 0); the history is reserved up front so that recording an
    // epoch does not count.
    QFETCH(Problem, problem);
    QFETCH(bool, weighted);
    Backend& b = *m_backend;
    const int64_t rows = 256;
    std::vector<float> hx, hy;
    problemData(problem, rows, hx, hy);
    Buffer x = toDevice(b, hx), y = toDevice(b, hy);
    const int64_t yCols = problem.loss == LossKind::CrossEntropy ? 1 : problem.out;
    TrainingData data;
    data.trainX = x.view(rows, problem.in);
    data.trainY = y.view(rows, yCols);
    data.valX = x.view(64, problem.in); // validation every epoch, smaller than a batch
    data.valY = y.view(64, yCols);

    Network net(b, problem.in, problem.spec.toStdString(), problem.out, problem.vocab);
    net.initialize(1);
    TrainerConfig cfg;
    cfg.loss = problem.loss;
    cfg.optimizer = OptimizerConfig::named("adam");
    cfg.schedule.kind = ScheduleKind::Cosine;
    cfg.schedule.lrMax = 1e-3f;
    cfg.schedule.warmupSteps = 3;
    cfg.batchSize = 96; // two full batches and a short one per epoch
    cfg.epochs = 6;
    cfg.clipNorm = 1.f;
    cfg.patience = 100;
    if (weighted) {
        cfg.classWeighting = ClassWeighting::Balanced;
        const bool ce = problem.loss == LossKind::CrossEntropy;
        for (int64_t c = 0; c < (ce ? problem.out : 2); ++c)
            cfg.classWeights.push_back(0.5f + static_cast<float>(c));
    }
    Optimizer opt(b, cfg.optimizer, net.parameterRanges());
    TrainingState state;
    state.history.reserve(1000);

    struct Mark {
        int64_t step;
        long long count;
    };
    std::vector<Mark> marks;
    marks.reserve(1000);
    RunPolicy policy;
    policy.progressInterval = 0;
    Trainer trainer(net, opt, cfg, state, policy);
    trainer.setProgressCallback([&](const Progress& p) {
        marks.push_back({p.step, allocations()});
    });
    const TrainResult r = trainer.run(data);
    QVERIFY2(r.reason == StopReason::Finished, r.message.c_str());
    QVERIFY(marks.size() >= 10);
    const Mark* first = nullptr;
    for (const auto& m : marks)
        if (m.step >= 2 && !first) first = &m;
    QVERIFY(first);
    for (const auto& m : marks)
        if (m.step > first->step)
            QVERIFY2(m.count == first->count,
                     qPrintable(QStringLiteral("%1 allocations between step %2 and step %3")
                                    .arg(m.count - first->count)
                                    .arg(first->step)
                                    .arg(m.step)));
}

QTEST_GUILESS_MAIN(TestNoAllocation)
#include "TestNoAllocation.moc"
