// Every Backend op of the CPU backend against a naive double-precision reference written here.
// Sizes include odd shapes (1x1, 7x13, 1000x3) to catch vectorisation tails and shapes above
// 100k elements to run the multithreaded paths. The optimizer steps are checked against
// hand-computed values. Runs once per SIMD target the CPU supports (tests/support/PerTarget.h).
#include "Backend.h"
#include "CpuKernels.h"
#include "Errors.h"
#include "ForwardingBackend.h"
#include "Layer.h"
#include "OpCases.h"
#include "Optimizer.h"
#include "PerTarget.h"
#include "Random.h"
#include "TestUtil.h"

#include <QElapsedTimer>
#include <QTest>

#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <numbers>
#include <numeric>
#include <optional>
#include <set>
#include <string>

using namespace il;
using opcases::refActivation;
using opcases::refDerivative;
using opcases::refLoss;
using testutil::allFinite;
using testutil::readScalar;
using testutil::toDevice;
using testutil::toHost;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

} // namespace

class TestBackendOps : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();

    void info();
    // The shared op table (tests/support/OpCases.h) against its double-precision references.
    void ops_data();
    void ops();
    // Every op of the list (BackendOps.def) is run by at least one row of that table.
    void everyOpHasACase();
    void fillAndCopy_data();
    void fillAndCopy();
    void shapeErrors();

    void gemmBetaZeroIgnoresC();
    void gemmEmptyInnerDimension();

    void activationSaturates_data();
    void activationSaturates();
    void sineLargeArguments_data();
    void sineLargeArguments();

    void lossStableForExtremeLogits();
    void lossClassWeights();
    void lossUnitWeightsAreUnweighted_data();
    void lossUnitWeightsAreUnweighted();
    void lossAccumulate_data();
    void lossAccumulate();
    void sampleRows_data();
    void sampleRows();
    void sampleRowsFrequencies();
    void sampleRowsTopKAsPickedOneByOne();
    void sampleRowsTopKIsLinear();
    void shuffledOrderIsAPermutation_data();
    void shuffledOrderIsAPermutation();
    void shuffledOrderIsUniform();

    void guardAndClip_data();
    void guardAndClip();
    void guardIsSticky();
    void guardStepIsExactPastFloatPrecision();
    void emptyProductKeepsInfinity();

    void sgdStep_data();
    void sgdStep();
    void adamStep_data();
    void adamStep();
    void rmspropStep_data();
    void rmspropStep();
    void optimizersSkipBadStep_data();
    void optimizersSkipBadStep();
    void optimizersLarge_data();
    void optimizersLarge();

    void invalidIdsThrow();

private:
    Backend& b() { return *m_backend; }
    std::unique_ptr<Backend> m_backend;
};

void TestBackendOps::initTestCase()
{
    m_backend = createCpuBackend();
    QVERIFY(m_backend);
}

void TestBackendOps::info()
{
    const DeviceInfo i = b().info();
    QCOMPARE(QString::fromStdString(i.backend), QStringLiteral("cpu"));
    QVERIFY(i.threads >= 1);
    QVERIFY(!i.name.empty());
    // The details name the kernels' target, the one this run forced (PerTarget.h).
    const QString target = QString::fromStdString(simd::activeTarget().name) + " kernels";
    QVERIFY2(QString::fromStdString(i.details).contains(target), i.details.c_str());
}

void TestBackendOps::ops_data()
{
    QTest::addColumn<int>("row");
    const auto& table = opcases::table();
    for (size_t i = 0; i < table.size(); ++i)
        QTest::newRow(qPrintable(table[i].name)) << static_cast<int>(i);
}

void TestBackendOps::ops()
{
    QFETCH(int, row);
    const opcases::OpCase c = opcases::table()[static_cast<size_t>(row)].make();
    QString why;
    QVERIFY2(opcases::matchesReference(c, c.run(b()), &why), qPrintable(why));
}

namespace {
// Counts the ops issued through it, composed ones included (the forwarder sees only the others).
struct OpCounter : testsupport::ForwardingBackend {
    OpCounter() : ForwardingBackend(createCpuBackend(1)) {}
    std::map<std::string, int> issued;

protected:
    void onOp(std::string_view op) override { ++issued[std::string(op)]; }
#define IL_COMPOSED_OP(name, params, args)                                                         \
    void name##Impl params override                                                                \
    {                                                                                              \
        onOp(#name);                                                                               \
        ForwardingBackend::name##Impl args;                                                        \
    }
#include "BackendOps.def"
};
} // namespace

void TestBackendOps::everyOpHasACase()
{
    const std::vector<std::string> listed = {
#define IL_OP(name, params, args) #name,
#define IL_COMPOSED_OP IL_OP
#include "BackendOps.def"
    };
    OpCounter counter;
    for (const opcases::Row& row : opcases::table())
        row.make().run(counter);
    // Ops whose contract is not a value against a reference, checked by hand on both backends
    // instead: draws (sampleRows, shuffledOrder: here and TestCudaParity), the guard block
    // (guardAndClip, guardIsSticky), optimizer rules (sgdStep... here, TestCudaParity::optimizer)
    // and the CUDA backend's batched norms (TestCudaParity::sumSquaresEach).
    const std::set<std::string> byHand = {"sampleRows", "shuffledOrder", "guardAndClip",
                                          "optimizerStep", "sumSquaresEach"};
    QStringList missing;
    for (const std::string& op : listed) {
        if (byHand.count(op)) {
            counter.issued.erase(op);
            continue;
        }
        if (!counter.issued.count(op)) missing << QString::fromStdString(op);
    }
    QVERIFY2(missing.isEmpty(),
             qPrintable("ops with no case in tests/support/OpCases.cpp: " + missing.join(", ")));
    // and nothing issued that the list lacks
    QCOMPARE(counter.issued.size() + byHand.size(), listed.size());
}

void TestBackendOps::fillAndCopy_data()
{
    QTest::addColumn<qint64>("rows");
    QTest::addColumn<qint64>("cols");
    QTest::newRow("1x1") << qint64(1) << qint64(1);
    QTest::newRow("7x13") << qint64(7) << qint64(13);
    QTest::newRow("400x301") << qint64(400) << qint64(301);
}

void TestBackendOps::fillAndCopy()
{
    // fill is in the op table; here the copy and both downloads.
    QFETCH(qint64, rows);
    QFETCH(qint64, cols);
    const size_t n = static_cast<size_t>(rows * cols);
    Rng rng(7);
    const std::vector<float> src = testutil::randomVector(rng, n, -1, 1);
    Buffer a = toDevice(b(), src);
    Buffer c = testutil::filledBuffer(b(), n, 0.f);
    b().copy(c.data(), a.data(), n * sizeof(float));
    b().synchronize();
    QVERIFY(testutil::bitIdentical(toHost(b(), c.view(rows, cols)), src));
    QVERIFY(testutil::bitIdentical(b().toHost(c.view(rows, cols)), src));
}

void TestBackendOps::shapeErrors()
{
    Buffer a = testutil::filledBuffer(b(), 64, 1.f);
    Buffer c = testutil::filledBuffer(b(), 64, 1.f);
    Buffer g = testutil::filledBuffer(b(), 64, 1.f);
    Buffer l = testutil::filledBuffer(b(), 1, 0.f);
    // 2x3 * 4x2: inner dimensions differ.
    QVERIFY_THROWS_EXCEPTION(
        ShapeError, b().gemm(false, false, 1.f, a.view(2, 3), a.view(4, 2), 0.f, c.view(2, 2)));
    // 2x3 * 3x2 into 2x3.
    QVERIFY_THROWS_EXCEPTION(
        ShapeError, b().gemm(false, false, 1.f, a.view(2, 3), a.view(3, 2), 0.f, c.view(2, 3)));
    QVERIFY_THROWS_EXCEPTION(ShapeError, b().broadcastRows(a.view(1, 4), c.view(3, 5)));
    QVERIFY_THROWS_EXCEPTION(ShapeError, b().axpby(1.f, a.view(3, 4), 1.f, c.view(4, 3)));
    QVERIFY_THROWS_EXCEPTION(
        ShapeError, b().activationForward(Activation::Tanh, 0.f, a.view(3, 4), c.view(3, 5)));
    QVERIFY_THROWS_EXCEPTION(ShapeError,
                             b().lossForwardBackward(LossKind::MSE, 0.f, {}, a.view(3, 4),
                                                     c.view(3, 3), g.view(3, 4), l.data(), false));
    QVERIFY_THROWS_EXCEPTION(ShapeError,
                             b().lossForwardBackward(LossKind::CrossEntropy, 0.f, {}, a.view(3, 4),
                                                     c.view(3, 2), g.view(3, 4), l.data(), false));
    // Class weights: none for regression losses, one per class (two for BCE) otherwise.
    QVERIFY_THROWS_EXCEPTION(ShapeError,
                             b().lossForwardBackward(LossKind::MSE, 0.f, a.view(1, 2), a.view(3, 4),
                                                     c.view(3, 4), g.view(3, 4), l.data(), false));
    QVERIFY_THROWS_EXCEPTION(ShapeError,
                             b().lossForward(LossKind::CrossEntropy, 0.f, a.view(1, 3),
                                             a.view(3, 4), c.view(3, 1), l.data(), false));
    QVERIFY_THROWS_EXCEPTION(ShapeError,
                             b().lossForwardBackward(LossKind::BinaryCrossEntropy, 0.f,
                                                     a.view(1, 3), a.view(3, 1), c.view(3, 1),
                                                     g.view(3, 1), l.data(), false));
}

// ---- gemm --------------------------------------------------------------------------------------

void TestBackendOps::gemmBetaZeroIgnoresC()
{
    // BLAS semantics: with beta == 0, C is write-only, so garbage (even NaN) in it must vanish.
    Rng rng(3);
    const int m = 9, n = 11, k = 7;
    const auto a = testutil::randomVector(rng, m * k, -1, 1);
    const auto bm = testutil::randomVector(rng, k * n, -1, 1);
    std::vector<double> ref(m * n);
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            double s = 0;
            for (int l = 0; l < k; ++l)
                s += double(a[i * k + l]) * bm[l * n + j];
            ref[i * n + j] = 2 * s;
        }
    Buffer da = toDevice(b(), a), db = toDevice(b(), bm);
    Buffer dc = testutil::filledBuffer(b(), m * n, kNaN);
    b().gemm(false, false, 2.f, da.view(m, k), db.view(k, n), 0.f, dc.view(m, n));
    IL_COMPARE_CLOSE(toHost(b(), dc.view(m, n)), ref, 1e-5, 1e-5);
}

void TestBackendOps::gemmEmptyInnerDimension()
{
    // k = 0 (e.g. a weight gradient over an empty batch): op(A) op(B) is the zero matrix, so
    // BLAS gives C = beta * C.
    Buffer a = testutil::filledBuffer(b(), 1, 1.f);
    const std::vector<float> c0 = {1.f, -2.f, 3.f, 4.f, 5.f, -6.f};
    for (float beta : {0.f, 1.f, 0.5f}) {
        Buffer c = toDevice(b(), c0);
        b().gemm(false, false, 1.f, Tensor{a.data(), {2, 0}}, Tensor{a.data(), {0, 3}}, beta,
                 c.view(2, 3));
        std::vector<double> ref(c0.begin(), c0.end());
        for (auto& v : ref)
            v *= beta;
        IL_COMPARE_CLOSE(toHost(b(), c.view(2, 3)), ref, 0.0, 0.0);
    }
}

// ---- element-wise and reductions ---------------------------------------------------------------

// ---- activations -------------------------------------------------------------------------------

void TestBackendOps::activationSaturates_data()
{
    QTest::addColumn<int>("act");
    QTest::newRow("tanh") << int(Activation::Tanh);
    QTest::newRow("sigmoid") << int(Activation::Sigmoid);
}

void TestBackendOps::activationSaturates()
{
    QFETCH(int, act);
    const auto a = static_cast<Activation>(act);
    std::vector<float> x;
    for (float v : {9.f, 15.f, 20.f, 44.f, 50.f, 88.f, 89.f, 100.f, 1000.f, 1e10f, 1e30f, 3e38f}) {
        x.push_back(v);
        x.push_back(-v);
    }
    // Pad to a size with a vector tail, so both the vector body and the tail see extremes.
    const std::vector<float> base = x;
    while (x.size() < 37)
        x.insert(x.end(), base.begin(), base.end());
    x.resize(37);
    const size_t n = x.size();
    std::vector<double> yRef(n), dRef(n);
    std::vector<float> yRefF(n);
    for (size_t i = 0; i < n; ++i) {
        yRef[i] = refActivation(a, 0, x[i]);
        yRefF[i] = static_cast<float>(yRef[i]);
        dRef[i] = refDerivative(a, 0, x[i]);
    }
    Buffer dx = toDevice(b(), x);
    Buffer y = testutil::filledBuffer(b(), n, kNaN);
    const int64_t rows = 1, cols = static_cast<int64_t>(n);
    b().activationForward(a, 0.f, dx.view(rows, cols), y.view(rows, cols));
    const auto got = toHost(b(), y.view(rows, cols));
    QVERIFY2(allFinite(got), "non-finite activation output for a finite input");
    IL_COMPARE_CLOSE(got, yRef, 1e-6, 0.0);
    for (size_t i = 0; i < n; ++i) {
        if (std::fabs(x[i]) < 50.f) continue;
        // Saturated: tanh is exactly +-1, sigmoid exactly 1 or a tiny non-negative number.
        if (a == Activation::Tanh)
            QCOMPARE(got[i], x[i] > 0 ? 1.f : -1.f);
        else if (x[i] > 0)
            QCOMPARE(got[i], 1.f);
        else
            QVERIFY(got[i] >= 0.f && got[i] < 1e-20f);
    }

    Buffer yr = toDevice(b(), yRefF);
    Buffer dy = testutil::filledBuffer(b(), n, 1.f);
    Buffer g = testutil::filledBuffer(b(), n, kNaN);
    b().activationBackward(a, 0.f, dx.view(rows, cols), yr.view(rows, cols), dy.view(rows, cols),
                           g.view(rows, cols));
    const auto gg = toHost(b(), g.view(rows, cols));
    QVERIFY2(allFinite(gg), "non-finite activation gradient for a finite input");
    IL_COMPARE_CLOSE(gg, dRef, 1e-6, 0.0);
}

void TestBackendOps::sineLargeArguments_data()
{
    QTest::addColumn<double>("magnitude");
    QTest::newRow("1e4") << 1e4;
    QTest::newRow("1e6") << 1e6;
    QTest::newRow("1e8") << 1e8;
    QTest::newRow("1e9") << 1e9;
    QTest::newRow("1e12") << 1e12;
    QTest::newRow("1e20") << 1e20;
    QTest::newRow("1e38") << 1e38;
}

void TestBackendOps::sineLargeArguments()
{
    // Far outside the training range (a diverging SIREN, Fourier features of unscaled
    // coordinates) the fast sine may lose accuracy, but it must stay a sine: finite and within
    // [-1, 1], in the sine activation (forward and backward) and in the Fourier features.
    QFETCH(double, magnitude);
    Rng rng(5);
    const size_t n = 1001;
    auto x = testutil::randomVector(rng, n, -magnitude, magnitude);
    x[0] = static_cast<float>(magnitude);
    x[1] = static_cast<float>(-magnitude);
    const auto bounded = [](const std::vector<float>& v, float limit, QString* why) {
        for (size_t i = 0; i < v.size(); ++i)
            if (!(std::fabs(v[i]) <= limit)) {
                *why = QStringLiteral("element %1: %2").arg(i).arg(double(v[i]));
                return false;
            }
        return true;
    };
    QString why;
    Buffer dx = toDevice(b(), x);
    Buffer y = testutil::filledBuffer(b(), n, kNaN);
    b().activationForward(Activation::Sine, 1.f, dx.view(1, n), y.view(1, n));
    QVERIFY2(bounded(toHost(b(), y.view(1, n)), 1.0001f, &why), qPrintable("sine: " + why));

    Buffer dy = testutil::filledBuffer(b(), n, 1.f);
    Buffer g = testutil::filledBuffer(b(), n, kNaN);
    b().activationBackward(Activation::Sine, 1.f, dx.view(1, n), y.view(1, n), dy.view(1, n),
                           g.view(1, n));
    QVERIFY2(bounded(toHost(b(), g.view(1, n)), 1.0001f, &why),
             qPrintable("sine backward: " + why));

    Buffer f = testutil::filledBuffer(b(), 2 * n, kNaN);
    b().fourierForward(dx.view(1, n), f.view(1, 2 * n));
    QVERIFY2(bounded(toHost(b(), f.view(1, 2 * n)), 1.0001f, &why), qPrintable("fourier: " + why));
}

// ---- Fourier features and embeddings ------------------------------------------------------------

// ---- losses ----------------------------------------------------------------------------------

void TestBackendOps::lossStableForExtremeLogits()
{
    // BCE on logits +-100: the stable form gives 0 or 100 per element, never inf or NaN.
    {
        const std::vector<float> z = {100.f, 100.f, -100.f, -100.f};
        const std::vector<float> t = {1.f, 0.f, 1.f, 0.f};
        Buffer dz = toDevice(b(), z), dt = toDevice(b(), t);
        Buffer g = testutil::filledBuffer(b(), 4, kNaN), l = testutil::filledBuffer(b(), 2, kNaN);
        b().lossForwardBackward(LossKind::BinaryCrossEntropy, 0.f, {}, dz.view(2, 2), dt.view(2, 2),
                                g.view(2, 2), l.data(), false);
        b().lossForward(LossKind::BinaryCrossEntropy, 0.f, {}, dz.view(2, 2), dt.view(2, 2),
                        l.data() + 1, false);
        QCOMPARE(readScalar(b(), l.data()), 50.f);
        QCOMPARE(readScalar(b(), l.data() + 1), 50.f);
        IL_COMPARE_CLOSE(toHost(b(), g.view(2, 2)), (std::vector<double>{0, 0.25, -0.25, 0}), 1e-7,
                         0.0);
    }
    // Cross-entropy with logits +-1000: log-sum-exp with the max subtracted.
    {
        const std::vector<float> z = {1000.f, -1000.f, 0.f, -1000.f, 0.f, 1000.f};
        const std::vector<float> t = {1.f, 2.f};
        Buffer dz = toDevice(b(), z), dt = toDevice(b(), t);
        Buffer g = testutil::filledBuffer(b(), 6, kNaN), l = testutil::filledBuffer(b(), 1, kNaN);
        b().lossForwardBackward(LossKind::CrossEntropy, 0.f, {}, dz.view(2, 3), dt.view(2, 1),
                                g.view(2, 3), l.data(), false);
        // Row 0: -log softmax_1 = 2000; row 1: 0. Mean 1000.
        QCOMPARE(readScalar(b(), l.data()), 1000.f);
        IL_COMPARE_CLOSE(toHost(b(), g.view(2, 3)), (std::vector<double>{0.5, -0.5, 0, 0, 0, 0}),
                         1e-7, 0.0);
        Buffer probs = testutil::filledBuffer(b(), 6, kNaN);
        b().softmaxRows(dz.view(2, 3), 1.f, probs.view(2, 3));
        IL_COMPARE_CLOSE(toHost(b(), probs.view(2, 3)), (std::vector<double>{1, 0, 0, 0, 0, 1}),
                         1e-7, 0.0);
    }
}

void TestBackendOps::lossClassWeights()
{
    // Worked by hand. Every logit 0: each row's cross-entropy over 2 classes is log 2, each BCE
    // element's is log 2 too. The weighted mean divides by the rows (scikit-learn's convention),
    // not by the sum of the weights (PyTorch's): that is the documented choice.
    const double ln2 = std::log(2.0);
    {
        Buffer dz = testutil::filledBuffer(b(), 4, 0.f), dt = toDevice(b(), {0.f, 1.f});
        Buffer dw = toDevice(b(), {1.f, 3.f});
        Buffer g = testutil::filledBuffer(b(), 4, kNaN), l = testutil::filledBuffer(b(), 2, kNaN);
        b().lossForwardBackward(LossKind::CrossEntropy, 0.f, dw.view(1, 2), dz.view(2, 2),
                                dt.view(2, 1), g.view(2, 2), l.data(), false);
        b().lossForward(LossKind::CrossEntropy, 0.f, dw.view(1, 2), dz.view(2, 2), dt.view(2, 1),
                        l.data() + 1, false);
        // (1 + 3) / 2 rows * log 2; dL/dz = w (p - onehot) / rows with p = 1/2.
        QVERIFY(std::fabs(readScalar(b(), l.data()) - 2 * ln2) < 1e-6);
        QVERIFY(std::fabs(readScalar(b(), l.data() + 1) - 2 * ln2) < 1e-6);
        IL_COMPARE_CLOSE(toHost(b(), g.view(2, 2)), (std::vector<double>{-0.25, 0.25, 0.75, -0.75}),
                         1e-7, 0.0);
    }
    {
        Buffer dz = testutil::filledBuffer(b(), 4, 0.f),
               dt = toDevice(b(), {1.f, 0.f, 0.f, 0.f, 0.f});
        Buffer dw = toDevice(b(), {0.5f, 2.f});
        Buffer g = testutil::filledBuffer(b(), 4, kNaN), l = testutil::filledBuffer(b(), 1, kNaN);
        b().lossForwardBackward(LossKind::BinaryCrossEntropy, 0.f, dw.view(1, 2), dz.view(4, 1),
                                dt.view(4, 1), g.view(4, 1), l.data(), false);
        // (2 + 3 * 0.5) / 4 * log 2; dL/dz = w (sigmoid(0) - t) / 4.
        QVERIFY(std::fabs(readScalar(b(), l.data()) - 0.875 * ln2) < 1e-6);
        IL_COMPARE_CLOSE(toHost(b(), g.view(4, 1)),
                         (std::vector<double>{-0.25, 0.0625, 0.0625, 0.0625}), 1e-7, 0.0);
    }
}

void TestBackendOps::lossUnitWeightsAreUnweighted_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<float>("smoothing");
    QTest::newRow("bce") << int(LossKind::BinaryCrossEntropy) << 0.f;
    QTest::newRow("ce") << int(LossKind::CrossEntropy) << 0.f;
    QTest::newRow("ce smoothing 0.1") << int(LossKind::CrossEntropy) << 0.1f;
}

void TestBackendOps::lossUnitWeightsAreUnweighted()
{
    // Weights of 1 give the unweighted loss and gradient bit for bit: a run with balanced
    // weights of a balanced table trains exactly as one without.
    QFETCH(int, kind);
    QFETCH(float, smoothing);
    const auto lk = static_cast<LossKind>(kind);
    const bool ce = lk == LossKind::CrossEntropy;
    const int64_t rows = 37, k = ce ? 5 : 1;
    Rng rng(5);
    const auto pred = testutil::randomVector(rng, rows * k, -4, 4);
    std::vector<float> target(static_cast<size_t>(rows));
    for (auto& t : target)
        t = ce ? float(rng.below(static_cast<uint64_t>(k))) : float(rng.below(2));
    Buffer dp = toDevice(b(), pred), dt = toDevice(b(), target);
    Buffer dw = testutil::filledBuffer(b(), ce ? k : 2, 1.f);
    const ConstTensor w = dw.view(1, ce ? k : 2);
    Buffer g0 = testutil::filledBuffer(b(), rows * k, kNaN),
           g1 = testutil::filledBuffer(b(), rows * k, kNaN);
    Buffer l = testutil::filledBuffer(b(), 2, kNaN);
    b().lossForwardBackward(lk, smoothing, {}, dp.view(rows, k), dt.view(rows, 1), g0.view(rows, k),
                            l.data(), false);
    b().lossForwardBackward(lk, smoothing, w, dp.view(rows, k), dt.view(rows, 1), g1.view(rows, k),
                            l.data() + 1, false);
    QVERIFY(testutil::bitIdentical(toHost(b(), g1.view(rows, k)), toHost(b(), g0.view(rows, k))));
    QCOMPARE(readScalar(b(), l.data() + 1), readScalar(b(), l.data()));
}

void TestBackendOps::lossAccumulate_data()
{
    QTest::addColumn<int>("kind");
    QTest::newRow("mse") << int(LossKind::MSE);
    QTest::newRow("mae") << int(LossKind::MAE);
    QTest::newRow("bce") << int(LossKind::BinaryCrossEntropy);
    QTest::newRow("ce") << int(LossKind::CrossEntropy);
}

void TestBackendOps::lossAccumulate()
{
    QFETCH(int, kind);
    const auto lk = static_cast<LossKind>(kind);
    const int64_t rows = 5, k = 3;
    Rng rng(99);
    const auto pred = testutil::randomVector(rng, rows * k, -1, 1);
    std::vector<float> target = testutil::randomVector(rng, rows * k, 0, 1);
    int64_t tc = k;
    if (lk == LossKind::CrossEntropy) {
        target = {0.f, 1.f, 2.f, 1.f, 0.f};
        tc = 1;
    }
    std::vector<double> gRef;
    const double lRef = refLoss(lk, 0, pred, target, rows, k, &gRef);
    Buffer dp = toDevice(b(), pred), dt = toDevice(b(), target);
    Buffer g = testutil::filledBuffer(b(), rows * k, kNaN);
    Buffer l = testutil::filledBuffer(b(), 1, 1.5f);
    b().lossForwardBackward(lk, 0.f, {}, dp.view(rows, k), dt.view(rows, tc), g.view(rows, k),
                            l.data(), true);
    QVERIFY(std::fabs(readScalar(b(), l.data()) - (1.5 + lRef)) < 1e-5);
    // The loss accumulates; the gradient is still written, not added to.
    IL_COMPARE_CLOSE(toHost(b(), g.view(rows, k)), gRef, 1e-7, 1e-5);
    b().lossForward(lk, 0.f, {}, dp.view(rows, k), dt.view(rows, tc), l.data(), true);
    QVERIFY(std::fabs(readScalar(b(), l.data()) - (1.5 + 2 * lRef)) < 1e-5);
    // Without accumulate the value is replaced.
    b().lossForward(lk, 0.f, {}, dp.view(rows, k), dt.view(rows, tc), l.data(), false);
    QVERIFY(std::fabs(readScalar(b(), l.data()) - lRef) < 1e-6);
}

// One row per case: probabilities, the number u, topK, firstAllowed, the expected id. Worked out
// by hand from the rule: the first allowed id whose running sum exceeds u * (allowed total).
void TestBackendOps::sampleRows_data()
{
    QTest::addColumn<QVector<float>>("p");
    QTest::addColumn<float>("u");
    QTest::addColumn<int>("topK");
    QTest::addColumn<int>("firstAllowed");
    QTest::addColumn<int>("expected");
    const QVector<float> p{0.1f, 0.2f, 0.3f, 0.4f};
    QTest::newRow("u 0 -> first") << p << 0.f << 0 << 0 << 0;
    QTest::newRow("u 0.05 -> 0") << p << 0.05f << 0 << 0 << 0;
    QTest::newRow("u 0.15 -> 1") << p << 0.15f << 0 << 0 << 1;
    QTest::newRow("u 0.35 -> 2") << p << 0.35f << 0 << 0 << 2;
    QTest::newRow("u 0.99 -> 3") << p << 0.99f << 0 << 0 << 3;
    // Without id 0 the total is 0.9: 0.2 / 0.9 = 0.222 is where id 2 starts.
    QTest::newRow("no 0, u 0.2 -> 1") << p << 0.2f << 0 << 1 << 1;
    QTest::newRow("no 0, u 0.25 -> 2") << p << 0.25f << 0 << 1 << 2;
    // Top 2 keeps ids 2 and 3 (total 0.7): 0.3 / 0.7 = 0.43.
    QTest::newRow("top 2, u 0.4 -> 2") << p << 0.4f << 2 << 0 << 2;
    QTest::newRow("top 2, u 0.5 -> 3") << p << 0.5f << 2 << 0 << 3;
    QTest::newRow("top 1 -> argmax") << p << 0.f << 1 << 0 << 3;
    // Ties keep the lower id.
    QTest::newRow("tie, top 1") << QVector<float>{0.3f, 0.3f, 0.3f} << 0.9f << 1 << 0 << 0;
    QTest::newRow("tie, top 2") << QVector<float>{0.3f, 0.3f, 0.3f} << 0.9f << 2 << 0 << 1;
    // NaN, Inf and negative count as 0.
    QTest::newRow("nan inf negative")
        << QVector<float>{kNaN, INFINITY, -1.f, 0.5f} << 0.f << 0 << 0 << 3;
    // Everything underflowed: the most probable allowed id.
    QTest::newRow("all zero") << QVector<float>{0.f, 0.f, 0.f} << 0.5f << 0 << 1 << 1;
    QTest::newRow("u rounds to 1") << p << 1.f << 0 << 0 << 3;
}

void TestBackendOps::sampleRows()
{
    QFETCH(QVector<float>, p);
    QFETCH(float, u);
    QFETCH(int, topK);
    QFETCH(int, firstAllowed);
    QFETCH(int, expected);
    const int64_t k = p.size();
    // The same row three times, so the row index cannot matter.
    std::vector<float> probs, numbers(3, u);
    for (int r = 0; r < 3; ++r)
        probs.insert(probs.end(), p.begin(), p.end());
    Buffer dp = toDevice(b(), probs), du = toDevice(b(), numbers);
    Buffer ids = testutil::filledBuffer(b(), 3, -1.f);
    b().sampleRows(dp.view(3, k), du.view(3, 1), topK, firstAllowed, ids.view(3, 1));
    for (float id : toHost(b(), ids.view(3, 1)))
        QCOMPARE(id, float(expected));
    QVERIFY_THROWS_EXCEPTION(ShapeError, b().sampleRows(dp.view(3, k), du.view(3, 1), topK,
                                                        firstAllowed, ids.view(1, 3)));
}

// 20,000 draws with evenly spread numbers follow the distribution to within 0.5%.
void TestBackendOps::sampleRowsFrequencies()
{
    const std::vector<float> p{0.05f, 0.15f, 0.5f, 0.3f};
    const int64_t rows = 20000;
    std::vector<float> probs, numbers;
    for (int64_t r = 0; r < rows; ++r) {
        probs.insert(probs.end(), p.begin(), p.end());
        numbers.push_back((static_cast<float>(r) + 0.5f) / static_cast<float>(rows));
    }
    Buffer dp = toDevice(b(), probs), du = toDevice(b(), numbers);
    Buffer ids(&b(), static_cast<size_t>(rows));
    b().sampleRows(dp.view(rows, 4), du.view(rows, 1), 0, 0, ids.view(rows, 1));
    std::vector<int> count(4);
    for (float id : toHost(b(), ids.view(rows, 1)))
        ++count[static_cast<size_t>(id)];
    for (size_t j = 0; j < p.size(); ++j)
        QVERIFY2(std::fabs(count[j] / double(rows) - p[j]) < 0.005,
                 qPrintable(QString("id %1: %2 of %3").arg(j).arg(count[j]).arg(rows)));
}

namespace {

// The top-k rule as it was first written, kept as the reference: pick the largest unpicked
// weight topK times (ties: the lower index), zero the rest. O(k * topK).
std::vector<float> topKOneByOne(std::vector<float> w, int64_t topK)
{
    std::vector<bool> picked(w.size());
    for (int64_t t = 0; t < topK; ++t) {
        int64_t best = -1;
        for (size_t j = 0; j < w.size(); ++j)
            if (!picked[j] && (best < 0 || w[j] > w[static_cast<size_t>(best)]))
                best = static_cast<int64_t>(j);
        picked[static_cast<size_t>(best)] = true;
    }
    for (size_t j = 0; j < w.size(); ++j)
        if (!picked[j]) w[j] = 0.f;
    return w;
}

// Draws id by the rule of sampleCategory from weights already filtered.
int64_t drawFrom(const std::vector<float>& w, float u)
{
    double total = 0;
    for (float v : w)
        total += v;
    double r = static_cast<double>(u) * total;
    int64_t last = -1;
    for (size_t j = 0; j < w.size(); ++j) {
        if (w[j] <= 0) continue;
        last = static_cast<int64_t>(j);
        if (r < w[j]) return last;
        r -= w[j];
    }
    return last;
}

} // namespace

// The linear-time selection keeps exactly the weights the one-by-one picking kept: rows with
// many ties, zeros (underflow), subnormals and a few large values, every topK from 1 to k - 1,
// and numbers u spread over [0, 1).
void TestBackendOps::sampleRowsTopKAsPickedOneByOne()
{
    Rng rng(7);
    const float levels[] = {0.f, 1e-41f, 1e-30f, 0.001f, 0.25f, 0.25f, 0.5f, 3.f};
    for (const int64_t k : {2, 3, 17, 64}) {
        for (int trial = 0; trial < 6; ++trial) {
            std::vector<float> p(static_cast<size_t>(k));
            for (float& v : p)
                v = trial % 2 ? levels[rng.next() % 8]
                              : static_cast<float>(rng.uniform()) * (trial == 4 ? 1e-3f : 1.f);
            const int64_t rows = k - 1; // topK = row + 1
            std::vector<float> numbers;
            for (int64_t r = 0; r < rows; ++r)
                numbers.push_back(static_cast<float>(rng.uniform()) * 0.999f);
            for (int64_t r = 0; r < rows; ++r) {
                Buffer dp = toDevice(b(), p), du = toDevice(b(), {numbers[size_t(r)]});
                Buffer ids = testutil::filledBuffer(b(), 1, -1.f);
                b().sampleRows(dp.view(1, k), du.view(1, 1), static_cast<int>(r + 1), 0,
                               ids.view(1, 1));
                const std::vector<float> kept = topKOneByOne(p, r + 1);
                int64_t expected = drawFrom(kept, numbers[size_t(r)]);
                if (expected < 0) // everything zero: the most probable id
                    expected = std::max_element(p.begin(), p.end()) - p.begin();
                QVERIFY2(
                    toHost(b(), ids.view(1, 1))[0] == float(expected),
                    qPrintable(QString("k %1, topK %2, trial %3").arg(k).arg(r + 1).arg(trial)));
            }
        }
    }
}

// Top-k costs O(k) per row, not O(k * topK): 100,000 symbols keeping 50,000 took 5 * 10^9 steps
// (seconds per row; --top-k 9999 over 10,000 symbols made a sweep take hours).
void TestBackendOps::sampleRowsTopKIsLinear()
{
    const int64_t k = 100000, rows = 4;
    Rng rng(3);
    std::vector<float> probs(static_cast<size_t>(k * rows)), numbers(rows, 0.5f);
    for (float& v : probs)
        v = static_cast<float>(rng.uniform());
    Buffer dp = toDevice(b(), probs), du = toDevice(b(), numbers);
    Buffer ids(&b(), static_cast<size_t>(rows));
    QElapsedTimer timer;
    timer.start();
    b().sampleRows(dp.view(rows, k), du.view(rows, 1), static_cast<int>(k / 2), 0,
                   ids.view(rows, 1));
    toHost(b(), ids.view(rows, 1));
    // O(V*K) took 84 s here; linear, milliseconds (ASan: a few times slower, still far below).
    const qint64 limit = IRONLEARN_SANITIZED ? 6000 : 2000;
    QVERIFY2(timer.elapsed() < limit, qPrintable(QString("%1 ms").arg(timer.elapsed())));
}

void TestBackendOps::shuffledOrderIsAPermutation_data()
{
    QTest::addColumn<qint64>("n");
    for (qint64 n : {1, 2, 3, 5, 17, 64, 1000, 65537})
        QTest::addRow("%lld", n) << n;
}

// Every row exactly once; the same key the same order; another key another order.
void TestBackendOps::shuffledOrderIsAPermutation()
{
    QFETCH(qint64, n);
    IndexBuffer order(&b(), static_cast<size_t>(n));
    auto run = [&](uint64_t key) {
        b().shuffledOrder(key, n, order.data());
        std::vector<int32_t> host(static_cast<size_t>(n));
        b().download(host.data(), order.data(), host.size() * sizeof(int32_t));
        return host;
    };
    const auto a = run(42);
    std::vector<int> seen(static_cast<size_t>(n));
    for (int32_t r : a) {
        QVERIFY2(r >= 0 && r < n, qPrintable(QString::number(r)));
        QVERIFY2(++seen[static_cast<size_t>(r)] == 1, qPrintable(QString("%1 twice").arg(r)));
    }
    QCOMPARE(run(42), a);
    if (n >= 5) {
        QVERIFY(run(43) != a);
        std::vector<int32_t> identity(static_cast<size_t>(n));
        std::iota(identity.begin(), identity.end(), 0);
        QVERIFY(a != identity);
    }
}

// Over 4,000 keys, where row 0 lands among 10 positions is close to uniform (each position's
// count within 5 standard deviations of 400), and so is which row comes first.
void TestBackendOps::shuffledOrderIsUniform()
{
    const int64_t n = 10;
    const int keys = 4000;
    IndexBuffer order(&b(), static_cast<size_t>(n));
    std::vector<int> whereRow0(n), firstRow(n);
    std::vector<int32_t> host(static_cast<size_t>(n));
    for (int k = 0; k < keys; ++k) {
        b().shuffledOrder(Rng::derive(7, "shuffle", static_cast<uint64_t>(k)).next(), n,
                          order.data());
        b().download(host.data(), order.data(), host.size() * sizeof(int32_t));
        ++firstRow[static_cast<size_t>(host[0])];
        for (int64_t i = 0; i < n; ++i)
            if (host[static_cast<size_t>(i)] == 0) ++whereRow0[static_cast<size_t>(i)];
    }
    const double mean = keys / double(n), sd = std::sqrt(keys * 0.1 * 0.9);
    for (int64_t i = 0; i < n; ++i) {
        QVERIFY2(std::fabs(whereRow0[size_t(i)] - mean) < 5 * sd,
                 qPrintable(QString("row 0 at %1: %2 times").arg(i).arg(whereRow0[size_t(i)])));
        QVERIFY2(std::fabs(firstRow[size_t(i)] - mean) < 5 * sd,
                 qPrintable(QString("row %1 first: %2 times").arg(i).arg(firstRow[size_t(i)])));
    }
}

// ---- guard and optimizers
// ------------------------------------------------------------------------

void TestBackendOps::guardAndClip_data()
{
    QTest::addColumn<QList<float>>("sq");
    QTest::addColumn<float>("loss");
    QTest::addColumn<float>("maxNorm");
    QTest::addColumn<float>("scale");
    QTest::addColumn<float>("bad");
    QTest::addColumn<float>("badTensor"); // only checked when bad

    // Norm sqrt(1 + 4 + 4) = 3.
    QTest::newRow("clip to half") << QList<float>{1, 4, 4} << 2.f << 1.5f << 0.5f << 0.f << 0.f;
    QTest::newRow("norm below max") << QList<float>{1, 4, 4} << 2.f << 6.f << 1.f << 0.f << 0.f;
    QTest::newRow("norm equals max") << QList<float>{1, 4, 4} << 2.f << 3.f << 1.f << 0.f << 0.f;
    QTest::newRow("no clipping") << QList<float>{1e6f, 4, 4} << 2.f << 0.f << 1.f << 0.f << 0.f;
    QTest::newRow("negative max") << QList<float>{1e6f, 4} << 2.f << -1.f << 1.f << 0.f << 0.f;
    QTest::newRow("zero gradient") << QList<float>{0, 0} << 2.f << 1.f << 1.f << 0.f << 0.f;
    QTest::newRow("one tensor") << QList<float>{100} << 0.f << 1.f << 0.1f << 0.f << 0.f;
    QTest::newRow("nan loss") << QList<float>{1, 4} << kNaN << 1.f << 0.f << 1.f << -1.f;
    QTest::newRow("inf loss") << QList<float>{1, 4} << kInf << 0.f << 0.f << 1.f << -1.f;
    QTest::newRow("-inf loss") << QList<float>{1, 4} << -kInf << 1.f << 0.f << 1.f << -1.f;
    QTest::newRow("inf sq[1]") << QList<float>{1, kInf, 4} << 2.f << 1.f << 0.f << 1.f << 1.f;
    QTest::newRow("nan sq[2]") << QList<float>{1, 4, kNaN} << 2.f << 0.f << 0.f << 1.f << 2.f;
    QTest::newRow("first of two") << QList<float>{1, kNaN, kInf} << 2.f << 1.f << 0.f << 1.f << 1.f;
    QList<float> many(1000, 0.25f); // norm sqrt(250)
    QTest::newRow("1000 tensors") << many << 1.f << 1.f << float(1 / std::sqrt(250.0)) << 0.f
                                  << 0.f;
    many[777] = kNaN;
    QTest::newRow("1000 tensors, nan at 777") << many << 1.f << 1.f << 0.f << 1.f << 777.f;
}

void TestBackendOps::guardAndClip()
{
    QFETCH(QList<float>, sq);
    QFETCH(float, loss);
    QFETCH(float, maxNorm);
    QFETCH(float, scale);
    QFETCH(float, bad);
    QFETCH(float, badTensor);
    Buffer dsq = toDevice(b(), std::vector<float>(sq.begin(), sq.end()));
    Buffer dl = testutil::filledBuffer(b(), 1, loss);
    Buffer guard = toDevice(b(), {1.f, 0.f, 0.f, 0.f, 0.f});
    b().guardAndClip(dsq.data(), int(sq.size()), dl.data(), maxNorm, 37, guard.data());
    const auto g = toHost(b(), guard.view(1, GuardSlots));
    QVERIFY2(std::fabs(g[GuardScale] - scale) <= 1e-6f * std::max(1.f, scale),
             qPrintable(QStringLiteral("scale %1, expected %2").arg(g[GuardScale]).arg(scale)));
    QCOMPARE(g[GuardBad], bad);
    if (bad != 0) {
        QCOMPARE(g[GuardBadStep], 37.f);
        QCOMPARE(g[GuardBadTensor], badTensor);
    }
}

// C = beta * C when the inner dimension is 0, even where C holds an infinity (0 * Inf is NaN).
void TestBackendOps::emptyProductKeepsInfinity()
{
    Buffer a = toDevice(b(), {}), bb = toDevice(b(), {});
    for (const float beta : {1.f, 2.f, 0.f}) {
        Buffer c = toDevice(b(), {kInf, 1.f, -kInf, 3.f});
        b().gemm(false, false, 1.f, a.view(2, 0), bb.view(0, 2), beta, c.view(2, 2));
        const auto got = toHost(b(), c.view(2, 2));
        const std::vector<float> want = beta == 0.f
                                            ? std::vector<float>{0, 0, 0, 0}
                                            : std::vector<float>{kInf, beta, -kInf, 3 * beta};
        QCOMPARE(got, want);
    }
}

// The step of the first bad step, exactly, past the 2^24 steps a float counts without gaps.
void TestBackendOps::guardStepIsExactPastFloatPrecision()
{
    for (const int64_t step : {int64_t{37}, (int64_t{1} << 24) + 3, (int64_t{1} << 40) + 12345}) {
        Buffer guard = toDevice(b(), {1.f, 0.f, 0.f, 0.f, 0.f});
        Buffer sq = toDevice(b(), {1.f, kNaN});
        Buffer loss = testutil::filledBuffer(b(), 1, 0.5f);
        b().guardAndClip(sq.data(), 2, loss.data(), 0.f, step, guard.data());
        const auto g = toHost(b(), guard.view(1, GuardSlots));
        QCOMPARE(g[GuardBad], 1.f);
        QCOMPARE(guardStep(g.data()), step);
    }
}

void TestBackendOps::guardIsSticky()
{
    Buffer guard = toDevice(b(), {1.f, 0.f, 0.f, 0.f, 0.f});
    Buffer good = toDevice(b(), {1.f, 4.f, 4.f});
    Buffer badSq = toDevice(b(), {1.f, 4.f, kInf});
    Buffer loss = testutil::filledBuffer(b(), 1, 0.5f);

    b().guardAndClip(good.data(), 3, loss.data(), 1.5f, 1, guard.data());
    QCOMPARE(readScalar(b(), guard.data() + GuardBad), 0.f);
    QCOMPARE(readScalar(b(), guard.data() + GuardScale), 0.5f);

    b().guardAndClip(badSq.data(), 3, loss.data(), 1.5f, 2, guard.data());
    // A later finite step does not clear it, nor move the recorded step or tensor.
    b().guardAndClip(good.data(), 3, loss.data(), 1.5f, 3, guard.data());
    testutil::writeScalar(b(), loss.data(), kNaN);
    b().guardAndClip(good.data(), 3, loss.data(), 0.f, 4, guard.data());
    testutil::writeScalar(b(), loss.data(), 0.5f);
    b().guardAndClip(good.data(), 3, loss.data(), 0.f, 5, guard.data());
    const auto g = toHost(b(), guard.view(1, GuardSlots));
    QCOMPARE(g[GuardBad], 1.f);
    QCOMPARE(g[GuardBadStep], 2.f);
    QCOMPARE(g[GuardBadTensor], 2.f);
    QCOMPARE(g[GuardScale], 0.f);

    // Clearing Bad (as the trainer does after restoring weights) re-arms it.
    testutil::writeScalar(b(), guard.data() + GuardBad, 0.f);
    b().guardAndClip(good.data(), 3, loss.data(), 6.f, 6, guard.data());
    QCOMPARE(readScalar(b(), guard.data() + GuardBad), 0.f);
    QCOMPARE(readScalar(b(), guard.data() + GuardScale), 1.f);
}

namespace {
const std::vector<float> kP0 = {1.f, -2.f, 0.5f, 0.f};
const std::vector<float> kG1 = {0.5f, 1.f, -2.f, 0.f};
const std::vector<float> kG2 = {-1.f, 0.5f, 0.25f, 3.f};
} // namespace

void TestBackendOps::sgdStep_data()
{
    // Expected values worked out by hand (PyTorch's SGD: g' = scale * g + wd * p;
    // v = mu * v + g'; p -= lr * v, or lr * (g' + mu * v) with Nesterov), two steps with
    // gradients kG1 then kG2 from kP0.
    QTest::addColumn<float>("lr");
    QTest::addColumn<float>("momentum");
    QTest::addColumn<float>("weightDecay");
    QTest::addColumn<bool>("nesterov");
    QTest::addColumn<float>("scale");
    QTest::addColumn<QList<float>>("after1");
    QTest::addColumn<QList<float>>("after2");
    QTest::newRow("plain") << 0.1f << 0.f << 0.f << false << 1.f
                           << QList<float>{0.95f, -2.1f, 0.7f, 0.f}
                           << QList<float>{1.05f, -2.15f, 0.675f, -0.3f};
    QTest::newRow("momentum") << 0.1f << 0.9f << 0.f << false << 1.f
                              << QList<float>{0.95f, -2.1f, 0.7f, 0.f}
                              << QList<float>{1.005f, -2.24f, 0.855f, -0.3f};
    QTest::newRow("nesterov") << 0.1f << 0.9f << 0.f << true << 1.f
                              << QList<float>{0.905f, -2.19f, 0.88f, 0.f}
                              << QList<float>{1.0545f, -2.366f, 0.9945f, -0.57f};
    QTest::newRow("weight decay") << 0.1f << 0.f << 0.1f << false << 1.f
                                  << QList<float>{0.94f, -2.08f, 0.695f, 0.f}
                                  << QList<float>{1.0306f, -2.1092f, 0.66305f, -0.3f};
    QTest::newRow("momentum + weight decay")
        << 0.1f << 0.9f << 0.1f << false << 1.f << QList<float>{0.94f, -2.08f, 0.695f, 0.f}
        << QList<float>{0.9766f, -2.1812f, 0.83855f, -0.3f};
    QTest::newRow("clip scale 0.5")
        << 0.1f << 0.f << 0.f << false << 0.5f << QList<float>{0.975f, -2.05f, 0.6f, 0.f}
        << QList<float>{1.025f, -2.075f, 0.5875f, -0.15f};
}

void TestBackendOps::sgdStep()
{
    QFETCH(float, lr);
    QFETCH(float, momentum);
    QFETCH(float, weightDecay);
    QFETCH(bool, nesterov);
    QFETCH(float, scale);
    QFETCH(QList<float>, after1);
    QFETCH(QList<float>, after2);
    Buffer p = toDevice(b(), kP0), g1 = toDevice(b(), kG1), g2 = toDevice(b(), kG2);
    // Plain SGD must neither read nor write the velocity: NaN in it would show.
    Buffer v = testutil::filledBuffer(b(), 4, momentum == 0.f ? kNaN : 0.f);
    Buffer guard = toDevice(b(), {scale, 0.f, 0.f, 0.f});
    // Momentum 0 is the Sgd rule, which keeps no state (as Optimizers.cpp runs it).
    const auto step = [&](const Buffer& g) {
        if (momentum == 0.f)
            testutil::ruleStep(b(), OptimizerRule::Sgd, lr, 1, {weightDecay}, p.view(1, 4),
                               g.view(1, 4), {}, guard.data());
        else
            testutil::ruleStep(b(), OptimizerRule::Momentum, lr, 1,
                               {momentum, weightDecay, nesterov ? 1.f : 0.f}, p.view(1, 4),
                               g.view(1, 4), {v.view(1, 4)}, guard.data());
    };
    step(g1);
    IL_COMPARE_CLOSE(toHost(b(), p.view(1, 4)), std::vector<float>(after1.begin(), after1.end()),
                     1e-6, 1e-6);
    step(g2);
    IL_COMPARE_CLOSE(toHost(b(), p.view(1, 4)), std::vector<float>(after2.begin(), after2.end()),
                     1e-6, 1e-6);
    if (momentum == 0.f)
        for (float x : toHost(b(), v.view(1, 4)))
            QVERIFY(std::isnan(x));
}

void TestBackendOps::adamStep_data()
{
    // Hand-computed (PyTorch's Adam/AdamW): m = b1 m + (1-b1) g, v = b2 v + (1-b2) g^2,
    // p -= lr * (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps)  [+ lr * wd * p for AdamW;
    // Adam adds wd * p to g instead]. Steps 1 and 2 with gradients kG1 then kG2 from kP0.
    QTest::addColumn<float>("lr");
    QTest::addColumn<float>("beta1");
    QTest::addColumn<float>("beta2");
    QTest::addColumn<float>("weightDecay");
    QTest::addColumn<bool>("decoupled");
    QTest::addColumn<float>("scale");
    QTest::addColumn<QList<float>>("after1");
    QTest::addColumn<QList<float>>("m1");
    QTest::addColumn<QList<float>>("v1");
    QTest::addColumn<QList<float>>("after2");
    QTest::newRow("adam") << 0.1f << 0.9f << 0.999f << 0.f << false << 1.f
                          << QList<float>{0.9f, -2.1f, 0.6f, 0.f}
                          << QList<float>{0.05f, 0.1f, -0.2f, 0.f}
                          << QList<float>{0.00025f, 0.001f, 0.004f, 0.f}
                          << QList<float>{0.936610354f, -2.19321796f, 0.657253457f, -0.074413682f};
    QTest::newRow("adam L2") << 0.1f << 0.9f << 0.999f << 0.1f << false << 1.f
                             << QList<float>{0.9f, -2.1f, 0.6f, 0.f}
                             << QList<float>{0.06f, 0.08f, -0.195f, 0.f}
                             << QList<float>{0.00036f, 0.00064f, 0.0038025f, 0.f}
                             << QList<float>{0.925263519f, -2.18836228f, 0.654485156f,
                                             -0.074413682f};
    QTest::newRow("adamw") << 0.1f << 0.9f << 0.999f << 0.1f << true << 1.f
                           << QList<float>{0.89f, -2.08f, 0.595f, 0.f}
                           << QList<float>{0.05f, 0.1f, -0.2f, 0.f}
                           << QList<float>{0.00025f, 0.001f, 0.004f, 0.f}
                           << QList<float>{0.917710354f, -2.15241796f, 0.646303457f, -0.074413682f};
    QTest::newRow("clip scale 0.5")
        << 0.1f << 0.9f << 0.999f << 0.f << false << 0.5f << QList<float>{0.9f, -2.1f, 0.6f, 0.f}
        << QList<float>{0.025f, 0.05f, -0.1f, 0.f} << QList<float>{6.25e-05f, 0.00025f, 0.001f, 0.f}
        << QList<float>{0.936610356f, -2.19321796f, 0.657253456f, -0.0744136817f};
    QTest::newRow("other betas") << 0.01f << 0.8f << 0.99f << 0.f << false << 1.f
                                 << QList<float>{0.99f, -2.01f, 0.51f, 0.f}
                                 << QList<float>{0.1f, 0.2f, -0.4f, 0.f}
                                 << QList<float>{0.0025f, 0.01f, 0.04f, 0.f}
                                 << QList<float>{0.994210028f, -2.01914927f, 0.51527521f,
                                                 -0.00783707551f};
}

void TestBackendOps::adamStep()
{
    QFETCH(float, lr);
    QFETCH(float, beta1);
    QFETCH(float, beta2);
    QFETCH(float, weightDecay);
    QFETCH(bool, decoupled);
    QFETCH(float, scale);
    QFETCH(QList<float>, after1);
    QFETCH(QList<float>, m1);
    QFETCH(QList<float>, v1);
    QFETCH(QList<float>, after2);
    const auto vec = [](const QList<float>& l) { return std::vector<float>(l.begin(), l.end()); };
    Buffer p = toDevice(b(), kP0), g1 = toDevice(b(), kG1), g2 = toDevice(b(), kG2);
    Buffer m = testutil::filledBuffer(b(), 4, 0.f), v = testutil::filledBuffer(b(), 4, 0.f);
    Buffer guard = toDevice(b(), {scale, 0.f, 0.f, 0.f});
    const auto step = [&](const Buffer& g, int64_t t) {
        testutil::ruleStep(b(), OptimizerRule::Adam, lr, t,
                           {beta1, beta2, 1e-8f, weightDecay, decoupled ? 1.f : 0.f}, p.view(1, 4),
                           g.view(1, 4), {m.view(1, 4), v.view(1, 4)}, guard.data());
    };
    step(g1, 1);
    IL_COMPARE_CLOSE(toHost(b(), p.view(1, 4)), vec(after1), 1e-6, 1e-6);
    // 1 - 0.999f is 0.00099998713 in f32, hence the relative tolerance on the moments.
    IL_COMPARE_CLOSE(toHost(b(), m.view(1, 4)), vec(m1), 1e-9, 1e-4);
    IL_COMPARE_CLOSE(toHost(b(), v.view(1, 4)), vec(v1), 1e-12, 1e-4);
    step(g2, 2);
    IL_COMPARE_CLOSE(toHost(b(), p.view(1, 4)), vec(after2), 2e-6, 1e-6);
}

void TestBackendOps::rmspropStep_data()
{
    // Hand-computed (PyTorch's RMSprop): g' = scale * g + wd * p, v = rho v + (1 - rho) g'^2,
    // p -= lr * g' / (sqrt(v) + eps), eps 1e-8. Two steps with gradients kG1 then kG2 from kP0,
    // through the registry's "rmsprop".
    QTest::addColumn<float>("lr");
    QTest::addColumn<float>("rho");
    QTest::addColumn<float>("weightDecay");
    QTest::addColumn<float>("scale");
    QTest::addColumn<QList<float>>("after1");
    QTest::addColumn<QList<float>>("v1");
    QTest::addColumn<QList<float>>("after2");
    QTest::addColumn<QList<float>>("v2");
    QTest::newRow("rmsprop") << 0.01f << 0.99f << 0.f << 1.f
                             << QList<float>{0.90000002f, -2.09999999f, 0.599999995f, 0.f}
                             << QList<float>{0.0025f, 0.01f, 0.04f, 0.f}
                             << QList<float>{0.989532308f, -2.14490131f, 0.587535004f,
                                             -0.0999999967f}
                             << QList<float>{0.012475f, 0.0124f, 0.040225f, 0.09f};
    QTest::newRow("weight decay") << 0.01f << 0.99f << 0.1f << 1.f
                                  << QList<float>{0.900000017f, -2.09999999f, 0.599999995f, 0.f}
                                  << QList<float>{0.0036f, 0.0064f, 0.038025f, 0.f}
                                  << QList<float>{0.983613019f, -2.13423153f, 0.584222586f,
                                                  -0.0999999967f}
                                  << QList<float>{0.011845f, 0.00717700001f, 0.03860575f, 0.09f};
    QTest::newRow("clip scale 0.5")
        << 0.01f << 0.99f << 0.f << 0.5f
        << QList<float>{0.90000004f, -2.09999998f, 0.59999999f, 0.f}
        << QList<float>{0.000625f, 0.0025f, 0.01f, 0.f}
        << QList<float>{0.98953232f, -2.1449013f, 0.587535f, -0.0999999933f}
        << QList<float>{0.00311875f, 0.0031f, 0.01005625f, 0.0225f};
    QTest::newRow("rho 0.9") << 0.001f << 0.9f << 0.f << 1.f
                             << QList<float>{0.996837723f, -2.00316228f, 0.503162278f, 0.f}
                             << QList<float>{0.025f, 0.1f, 0.4f, 0.f}
                             << QList<float>{0.999694865f, -2.0046367f, 0.502749181f,
                                             -0.00316227763f}
                             << QList<float>{0.1225f, 0.115f, 0.36625f, 0.9f};
}

void TestBackendOps::rmspropStep()
{
    QFETCH(float, lr);
    QFETCH(float, rho);
    QFETCH(float, weightDecay);
    QFETCH(float, scale);
    QFETCH(QList<float>, after1);
    QFETCH(QList<float>, v1);
    QFETCH(QList<float>, after2);
    QFETCH(QList<float>, v2);
    const auto vec = [](const QList<float>& l) { return std::vector<float>(l.begin(), l.end()); };
    OptimizerConfig config = OptimizerConfig::named("rmsprop");
    QCOMPARE(config.value("rho"), 0.99f); // PyTorch's defaults
    QCOMPARE(config.value("eps"), 1e-8f);
    config.set("rho", rho);
    config.set("weight_decay", weightDecay);
    Optimizer opt(b(), config, 4);
    QCOMPARE(opt.state().size(), size_t(1));
    const Tensor v = opt.state()[0].second;
    Buffer p = toDevice(b(), kP0), g1 = toDevice(b(), kG1), g2 = toDevice(b(), kG2);
    Buffer guard = toDevice(b(), {scale, 0.f, 0.f, 0.f});
    opt.step(p.view(1, 4), g1.view(1, 4), lr, lr, 1, guard.data());
    IL_COMPARE_CLOSE(toHost(b(), p.view(1, 4)), vec(after1), 1e-6, 1e-6);
    // 1 - 0.99f is not 0.01 in f32, hence the relative tolerance on v.
    IL_COMPARE_CLOSE(toHost(b(), v), vec(v1), 1e-12, 1e-5);
    opt.step(p.view(1, 4), g2.view(1, 4), lr, lr, 2, guard.data());
    IL_COMPARE_CLOSE(toHost(b(), p.view(1, 4)), vec(after2), 2e-6, 1e-6);
    IL_COMPARE_CLOSE(toHost(b(), v), vec(v2), 1e-12, 1e-5);
}

void TestBackendOps::optimizersSkipBadStep_data()
{
    QTest::addColumn<QString>("optimizer");
    QTest::addColumn<float>("scale"); // guardAndClip writes 0; a stale 1 must not matter
    for (const OptimizerType& t : optimizerTypes())
        for (float s : {0.f, 1.f})
            QTest::addRow("%s scale=%g", t.name, double(s)) << QString::fromLatin1(t.name) << s;
}

void TestBackendOps::optimizersSkipBadStep()
{
    // Every registered optimizer, with weight decay where it has one, through its update.
    QFETCH(QString, optimizer);
    QFETCH(float, scale);
    OptimizerConfig config = OptimizerConfig::named(optimizer.toStdString());
    if (config.has("weight_decay")) config.set("weight_decay", 0.1f);
    const std::vector<float> s0 = {0.1f, -0.2f, 0.3f, 0.4f}, s1 = {0.01f, 0.02f, 0.03f, 0.04f};
    Buffer p = toDevice(b(), kP0), g = toDevice(b(), kG1);
    Buffer guard = toDevice(b(), {scale, 1.f, 3.f, 0.f});
    std::vector<Buffer> state;
    std::vector<Tensor> views;
    for (size_t i = 0; i < config.type().state.size(); ++i) {
        state.push_back(toDevice(b(), i % 2 == 0 ? s0 : s1));
        views.push_back(state.back().view(1, 4));
    }
    config.type().update(
        OptimizerUpdate{b(), config, p.view(1, 4), g.view(1, 4), views, 0.1f, 4, guard.data()});
    QVERIFY2(testutil::bitIdentical(toHost(b(), p.view(1, 4)), kP0), "parameters changed");
    for (size_t i = 0; i < views.size(); ++i)
        QVERIFY2(testutil::bitIdentical(toHost(b(), views[i]), i % 2 == 0 ? s0 : s1),
                 config.type().state[i]);
}

void TestBackendOps::optimizersLarge_data()
{
    QTest::addColumn<QString>("optimizer");
    QTest::addColumn<qint64>("n");
    const QString names[] = {"sgd", "momentum", "nesterov", "adam", "adamw", "rmsprop", "adagrad"};
    for (const QString& o : names)
        for (qint64 n : {qint64(1), qint64(7), qint64(200003)})
            QTest::newRow(qPrintable(QStringLiteral("%1 n=%2").arg(o).arg(n))) << o << n;
}

void TestBackendOps::optimizersLarge()
{
    // Three steps over long vectors (vector tails, threads) against the formulas in double.
    QFETCH(QString, optimizer);
    QFETCH(qint64, n);
    const size_t un = static_cast<size_t>(n);
    Rng rng(un + 3);
    const auto p0 = testutil::randomVector(rng, un, -1, 1);
    std::vector<std::vector<float>> grads;
    for (int s = 0; s < 3; ++s)
        grads.push_back(testutil::randomVector(rng, un, -2, 2));
    const float scale = 0.7f, lr = 0.01f, wd = 0.05f;

    std::vector<double> p(p0.begin(), p0.end()), m(un, 0.0), v(un, 0.0);
    Buffer dp = toDevice(b(), p0);
    Buffer dm = testutil::filledBuffer(b(), un, 0.f), dv = testutil::filledBuffer(b(), un, 0.f);
    Buffer guard = toDevice(b(), {scale, 0.f, 0.f, 0.f});
    std::optional<Optimizer> registered; // an optimizer run through the registry, with its state
    for (int s = 0; s < 3; ++s) {
        Buffer dg = toDevice(b(), grads[static_cast<size_t>(s)]);
        const auto& g = grads[static_cast<size_t>(s)];
        if (optimizer == "rmsprop") {
            const float rho = 0.99f;
            testutil::ruleStep(b(), OptimizerRule::RmsProp, lr, s + 1, {rho, 1e-8f, wd},
                               dp.view(1, n), dg.view(1, n), {dm.view(1, n)}, guard.data());
            for (size_t i = 0; i < un; ++i) {
                const double gi = double(scale) * g[i] + double(wd) * p[i];
                m[i] = rho * m[i] + (1 - double(rho)) * gi * gi;
                p[i] -= double(lr) * gi / (std::sqrt(m[i]) + 1e-8);
            }
        } else if (optimizer == "adagrad") { // the registry's, with PyTorch's defaults
            if (!registered) {
                OptimizerConfig config = OptimizerConfig::named("adagrad");
                QCOMPARE(config.value("eps"), 1e-10f);
                config.set("weight_decay", wd);
                registered.emplace(b(), config, n);
            }
            registered->step(dp.view(1, n), dg.view(1, n), lr, lr, s + 1, guard.data());
            for (size_t i = 0; i < un; ++i) { // s += g^2, no lr decay
                const double gi = double(scale) * g[i] + double(wd) * p[i];
                m[i] += gi * gi;
                p[i] -= double(lr) * gi / (std::sqrt(m[i]) + 1e-10);
            }
        } else if (optimizer.startsWith("adam")) {
            const bool dec = optimizer == "adamw";
            const float beta1 = 0.9f, beta2 = 0.999f;
            testutil::ruleStep(b(), OptimizerRule::Adam, lr, s + 1,
                               {beta1, beta2, 1e-8f, wd, dec ? 1.f : 0.f}, dp.view(1, n),
                               dg.view(1, n), {dm.view(1, n), dv.view(1, n)}, guard.data());
            const double b1 = beta1, b2 = beta2;
            for (size_t i = 0; i < un; ++i) {
                double gi = double(scale) * g[i] + (dec ? 0.0 : double(wd) * p[i]);
                m[i] = b1 * m[i] + (1 - b1) * gi;
                v[i] = b2 * v[i] + (1 - b2) * gi * gi;
                const double mh = m[i] / (1 - std::pow(b1, s + 1));
                const double vh = v[i] / (1 - std::pow(b2, s + 1));
                p[i] -= double(lr) * (mh / (std::sqrt(vh) + 1e-8) + (dec ? wd * p[i] : 0.0));
            }
        } else {
            const float momentum = optimizer == "sgd" ? 0.f : 0.9f;
            const bool nesterov = optimizer == "nesterov";
            if (momentum == 0.f)
                testutil::ruleStep(b(), OptimizerRule::Sgd, lr, s + 1, {wd}, dp.view(1, n),
                                   dg.view(1, n), {}, guard.data());
            else
                testutil::ruleStep(b(), OptimizerRule::Momentum, lr, s + 1,
                                   {momentum, wd, nesterov ? 1.f : 0.f}, dp.view(1, n),
                                   dg.view(1, n), {dm.view(1, n)}, guard.data());
            const double mu = momentum;
            for (size_t i = 0; i < un; ++i) {
                const double gi = double(scale) * g[i] + double(wd) * p[i];
                if (mu == 0) {
                    p[i] -= double(lr) * gi;
                } else {
                    m[i] = mu * m[i] + gi;
                    p[i] -= double(lr) * (nesterov ? gi + mu * m[i] : m[i]);
                }
            }
        }
    }
    IL_COMPARE_CLOSE(toHost(b(), dp.view(1, n)), p, 1e-5, 1e-5);
    if (registered)
        IL_COMPARE_CLOSE(toHost(b(), registered->state()[0].second), m, 1e-5, 1e-4);
    else if (optimizer != "sgd")
        IL_COMPARE_CLOSE(toHost(b(), dm.view(1, n)), m, 1e-5, 1e-4);
}

// ---- data movement ------------------------------------------------------------------------------

void TestBackendOps::invalidIdsThrow()
{
    // A token or class id outside the table is a data error, reported, never read out of bounds.
    Buffer table = testutil::filledBuffer(b(), 5 * 2, 1.f);
    Buffer y = testutil::filledBuffer(b(), 2 * 2, 0.f);
    for (float bad : {5.f, -1.f, kNaN}) {
        Buffer ids = toDevice(b(), {0.f, bad});
        QVERIFY_THROWS_EXCEPTION(
            EngineError, b().embeddingForward(ids.view(2, 1), table.view(5, 2), y.view(2, 2)));
        Buffer logits = testutil::filledBuffer(b(), 2 * 5, 0.f);
        Buffer g = testutil::filledBuffer(b(), 2 * 5, 0.f), l = testutil::filledBuffer(b(), 1, 0.f);
        QVERIFY_THROWS_EXCEPTION(
            EngineError, b().lossForwardBackward(LossKind::CrossEntropy, 0.f, {}, logits.view(2, 5),
                                                 ids.view(2, 1), g.view(2, 5), l.data(), false));
    }
}

IL_PER_SIMD_TARGET_MAIN(TestBackendOps) // once per SIMD target
#include "TestBackendOps.moc"
