// The CPU backend's SIMD kernels (src/engine/backends/cpu/CpuKernels.h) on every target this CPU
// runs:
//  - accuracy: FastMath.h's approximations (simd::evaluate) against libm in double, over dense
//    sweeps of the documented ranges plus the inputs where the range reduction is hardest, held
//    to the bounds stated in FastMath.h's header; NaN, huge and infinite inputs;
//  - identical bits: every kernel gives the same bytes on every target (SimdKernelCases.h), for
//    lengths around the 16-element block and the vector widths;
//  - target control: useTarget / activeTarget, the dispatch they steer (SimdDispatchProbe.h),
//    and the errors for a bad IRONLEARN_SIMD key.
#include "CpuKernels.h"
#include "Errors.h"
#include "SimdDispatchProbe.h"
#include "SimdKernelCases.h"

#include <QProcess>
#include <QTest>

#include <hwy/targets.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numbers>
#include <vector>

using namespace il;
using simd::MathFunction;

Q_DECLARE_METATYPE(il::simd::MathFunction)

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Set by unsupportedTarget() for a child run of this executable: main() hides that target
// from Highway before the kernels first read the CPU's targets.
constexpr const char* kHideVariable = "IL_TEST_HIDE_SIMD_TARGET";

// Highway's bit and name for each of our keys.
struct HwyTarget {
    const char* key;
    int64_t bit;
    const char* hwyName;
};
constexpr HwyTarget kHwyTargets[] = {{"avx512", HWY_AVX3, "AVX3"},
                                     {"avx2", HWY_AVX2, "AVX2"},
                                     {"sse4", HWY_SSE4, "SSE4"},
                                     {"ssse3", HWY_SSSE3, "SSSE3"}};

double reference(MathFunction f, double x)
{
    switch (f) {
    case MathFunction::Sin:
        return std::sin(x);
    case MathFunction::Cos:
        return std::cos(x);
    case MathFunction::Exp:
        return std::exp(x);
    case MathFunction::Log1p:
        return std::log1p(x);
    case MathFunction::Tanh:
        return std::tanh(x);
    case MathFunction::Sigmoid:
        return 1.0 / (1.0 + std::exp(-x));
    }
    return std::numeric_limits<double>::quiet_NaN();
}

// Floats in order along the number line: -0 and +0 both map to 0.
int64_t orderedKey(float x)
{
    const auto bits = std::bit_cast<int32_t>(x);
    return bits < 0 ? -static_cast<int64_t>(bits & 0x7fffffff) : bits;
}
float fromOrderedKey(int64_t k)
{
    return k < 0 ? -std::bit_cast<float>(static_cast<int32_t>(-k))
                 : std::bit_cast<float>(static_cast<int32_t>(k));
}

// The sweep over [lo, hi]: an even grid, every m-th float (so every binade down to the
// subnormals is visited), and for sin and cos the floats nearest to each odd multiple of pi/4
// with their neighbours, where the quadrant count is most easily off by one.
std::vector<float> sweep(MathFunction f, float lo, float hi)
{
    constexpr int64_t kGrid = 1 << 20;
    std::vector<float> x;
    x.reserve(3 * kGrid);
    for (int64_t i = 0; i < kGrid; ++i)
        x.push_back(lo + static_cast<float>((double(hi) - lo) * double(i) / double(kGrid - 1)));
    const int64_t k0 = orderedKey(lo), k1 = orderedKey(hi), step = (k1 - k0) / kGrid + 1;
    for (int64_t k = k0; k <= k1; k += step)
        x.push_back(fromOrderedKey(k));
    if (f == MathFunction::Sin || f == MathFunction::Cos) {
        for (double m = std::numbers::pi / 4; m <= hi; m += std::numbers::pi / 2) {
            const float c = static_cast<float>(m);
            for (float v : {std::nextafter(c, 0.f), c, std::nextafter(c, 2 * c)}) {
                x.push_back(v);
                x.push_back(-v);
            }
        }
    }
    return x;
}

std::vector<float> evaluateAll(MathFunction f, const std::vector<float>& x)
{
    std::vector<float> y(x.size());
    simd::evaluate(f, x.data(), y.data(), static_cast<int64_t>(x.size()));
    return y;
}

// What is wrong with useTarget(key)'s error (empty if nothing): it must throw BackendError
// naming IRONLEARN_SIMD, the key, `mentions` and every available key, and change nothing.
QString targetErrorProblem(const std::string& key, const QString& mentions)
{
    const simd::Target before = simd::activeTarget();
    QString message;
    try {
        simd::useTarget(key);
        return QString("useTarget(\"%1\") did not throw").arg(QString::fromStdString(key));
    } catch (const BackendError& e) {
        message = e.what();
    }
    QStringList wanted = {"IRONLEARN_SIMD=" + QString::fromStdString(key), mentions};
    for (const simd::Target& t : simd::availableTargets())
        wanted << QString::fromStdString(t.key);
    for (const QString& w : wanted)
        if (!message.contains(w)) return QString("\"%1\" does not name %2").arg(message, w);
    if (simd::activeTarget().key != before.key)
        return QString("useTarget(\"%1\") changed the target").arg(QString::fromStdString(key));
    return {};
}

QString targetName()
{
    return QString::fromStdString(simd::activeTarget().name);
}

} // namespace

class TestSimdKernels : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();

    void accuracy_data();
    void accuracy();
    void nanStaysNan();
    void sinCosLargeArguments();
    void saturation();

    void identicalBits_data();
    void identicalBits();

    void forcedTargetRuns();
    void unknownTarget();
    void unsupportedTarget();

private:
    std::vector<simd::Target> m_targets;
    std::vector<simdcases::Case> m_cases;
};

void TestSimdKernels::initTestCase()
{
    m_targets = simd::availableTargets();
    QVERIFY(!m_targets.empty());
    QStringList names;
    for (const auto& t : m_targets)
        names << QString::fromStdString(t.name);
    qInfo("SIMD targets of this CPU: %s", qPrintable(names.join(", ")));
    QString missing;
    m_cases = simdcases::allCases(&missing);
    QVERIFY2(missing.isEmpty(), qPrintable("no hyperparameters for optimizer rule(s):" + missing +
                                           " (add them in SimdKernelCases.cpp)"));
}

void TestSimdKernels::cleanupTestCase()
{
    simd::useTarget("best");
}

// ---- accuracy ----------------------------------------------------------------------------------

void TestSimdKernels::accuracy_data()
{
    // The bounds of FastMath.h's header comment; keep the two in step.
    QTest::addColumn<MathFunction>("f");
    QTest::addColumn<float>("lo");
    QTest::addColumn<float>("hi");
    QTest::addColumn<bool>("relative");
    QTest::addColumn<double>("bound");
    QTest::newRow("sin") << MathFunction::Sin << -1e4f << 1e4f << false << 1e-7;
    QTest::newRow("sin to 1e5") << MathFunction::Sin << 1e4f << 1e5f << false << 1e-6;
    QTest::newRow("cos") << MathFunction::Cos << -1e4f << 1e4f << false << 1e-7;
    QTest::newRow("cos to 1e5") << MathFunction::Cos << -1e5f << -1e4f << false << 1e-6;
    QTest::newRow("exp") << MathFunction::Exp << -87.f << 88.f << true << 1e-7;
    QTest::newRow("log1p") << MathFunction::Log1p << 0.f << 1.f << false << 1e-7;
    QTest::newRow("tanh") << MathFunction::Tanh << -20.f << 20.f << false << 1.5e-7;
    QTest::newRow("tanh beyond") << MathFunction::Tanh << 20.f << 1e30f << false << 0.0;
    QTest::newRow("sigmoid") << MathFunction::Sigmoid << -20.f << 20.f << false << 1e-7;
    QTest::newRow("sigmoid beyond") << MathFunction::Sigmoid << -1e30f << -20.f << false << 1e-7;
}

void TestSimdKernels::accuracy()
{
    QFETCH(MathFunction, f);
    QFETCH(float, lo);
    QFETCH(float, hi);
    QFETCH(bool, relative);
    QFETCH(double, bound);
    const std::vector<float> x = sweep(f, lo, hi);
    std::vector<double> ref(x.size());
    for (size_t i = 0; i < x.size(); ++i)
        ref[i] = reference(f, x[i]);
    for (const simd::Target& t : m_targets) {
        simd::useTarget(t.key);
        const std::vector<float> y = evaluateAll(f, x);
        double worst = 0;
        size_t at = 0;
        for (size_t i = 0; i < x.size(); ++i) {
            double e = std::fabs(double(y[i]) - ref[i]);
            if (relative) e /= std::fabs(ref[i]);
            if (!(e <= worst)) { // a NaN error is the worst
                worst = e;
                at = i;
                if (std::isnan(e)) break;
            }
        }
        const QString report =
            QString("%1 on %2: max %3 error %4 at x = %5 (got %6, libm %7); bound %8")
                .arg(QTest::currentDataTag(), targetName(), relative ? "relative" : "absolute")
                .arg(worst, 0, 'g', 3)
                .arg(double(x[at]), 0, 'g', 9)
                .arg(double(y[at]), 0, 'g', 9)
                .arg(ref[at], 0, 'g', 9)
                .arg(bound, 0, 'g', 3);
        qInfo("%s", qPrintable(report));
        QVERIFY2(worst <= bound, qPrintable(report));
    }
}

void TestSimdKernels::nanStaysNan()
{
    // The trainer's guard relies on NaN in, NaN out (FastMath.h).
    const std::vector<float> x = {kNaN, -kNaN, std::bit_cast<float>(0x7f800001u)};
    for (const simd::Target& t : m_targets) {
        simd::useTarget(t.key);
        for (MathFunction f : {MathFunction::Sin, MathFunction::Cos, MathFunction::Exp,
                               MathFunction::Log1p, MathFunction::Tanh, MathFunction::Sigmoid}) {
            const std::vector<float> y = evaluateAll(f, x);
            for (size_t i = 0; i < y.size(); ++i)
                QVERIFY2(std::isnan(y[i]), qPrintable(QString("function %1, NaN #%2 on %3 gives %4")
                                                          .arg(int(f))
                                                          .arg(i)
                                                          .arg(targetName())
                                                          .arg(double(y[i]))));
        }
    }
}

void TestSimdKernels::sinCosLargeArguments()
{
    // Beyond |x| ~ 6e6 a float step exceeds 2 pi and sin(x) carries no information; the results
    // must still lie in [-1, 1]. At +-inf they are NaN, as in libm, so that an overflowed
    // pre-activation reaches the trainer's guard instead of passing a sine layer as a number.
    std::vector<float> x;
    for (float v :
         {1e5f, 3e6f, 6.3e6f, 1e7f, 1e10f, 1e20f, 1e30f, std::numeric_limits<float>::max()}) {
        x.push_back(v);
        x.push_back(-v);
    }
    const std::vector<float> inf = {kInf, -kInf};
    for (const simd::Target& t : m_targets) {
        simd::useTarget(t.key);
        for (MathFunction f : {MathFunction::Sin, MathFunction::Cos}) {
            const QString name = f == MathFunction::Sin ? "sin" : "cos";
            const std::vector<float> y = evaluateAll(f, x);
            for (size_t i = 0; i < y.size(); ++i)
                QVERIFY2(std::fabs(y[i]) <= 1.f, qPrintable(QString("%1(%2) = %3 on %4")
                                                                .arg(name)
                                                                .arg(double(x[i]))
                                                                .arg(double(y[i]))
                                                                .arg(targetName())));
            for (float v : evaluateAll(f, inf))
                QVERIFY2(std::isnan(v), qPrintable(name + "(+-inf) is not NaN on " + targetName()));
        }
    }
}

void TestSimdKernels::saturation()
{
    // exp clamps its argument to [-87, 88]: finite, never 0 or inf. tanh and sigmoid saturate
    // exactly at +-1 and 1, and sigmoid(-inf) is (near) 0, not NaN.
    for (const simd::Target& t : m_targets) {
        simd::useTarget(t.key);
        const auto e = evaluateAll(MathFunction::Exp,
                                   {88.f, 100.f, 1e30f, kInf, -87.f, -100.f, -1e30f, -kInf});
        for (int i = 1; i < 4; ++i)
            QCOMPARE(e[i], e[0]);
        for (int i = 5; i < 8; ++i)
            QCOMPARE(e[i], e[4]);
        QVERIFY(std::isfinite(e[0]) && e[4] > 0.f);
        const auto th = evaluateAll(MathFunction::Tanh, {20.f, 1e30f, kInf, -20.f, -kInf});
        QCOMPARE(th, (std::vector<float>{1.f, 1.f, 1.f, -1.f, -1.f}));
        const auto sg = evaluateAll(MathFunction::Sigmoid, {30.f, kInf, -kInf, -1e30f});
        QCOMPARE(sg[0], 1.f);
        QCOMPARE(sg[1], 1.f);
        QVERIFY(sg[2] >= 0.f && sg[2] < 1e-37f && sg[3] == sg[2]);
    }
}

// ---- identical bits ----------------------------------------------------------------------------

void TestSimdKernels::identicalBits_data()
{
    QTest::addColumn<int>("index");
    for (size_t i = 0; i < m_cases.size(); ++i)
        QTest::newRow(qPrintable(m_cases[i].name)) << int(i);
}

void TestSimdKernels::identicalBits()
{
    QFETCH(int, index);
    if (m_targets.size() < 2)
        QSKIP(qPrintable("this CPU runs only the " + QString::fromStdString(m_targets[0].name) +
                         " target: there is nothing to compare it with"));
    const simdcases::Case& c = m_cases[size_t(index)];
    for (int64_t n : {1, 3, 15, 16, 17, 31, 1000, 4099}) {
        simd::useTarget(m_targets[0].key);
        const simdcases::Bytes first = c.run(n);
        QVERIFY(!first.data.empty());
        for (size_t t = 1; t < m_targets.size(); ++t) {
            simd::useTarget(m_targets[t].key);
            const simdcases::Bytes other = c.run(n);
            QCOMPARE(other.data.size(), first.data.size());
            if (std::memcmp(other.data.data(), first.data.data(), first.data.size()) == 0) continue;
            size_t at = 0;
            while (other.data[at] == first.data[at])
                ++at;
            QFAIL(qPrintable(QString("%1, n = %2: %3 differs from %4 at byte %5 (float #%6)")
                                 .arg(c.name)
                                 .arg(n)
                                 .arg(QString::fromStdString(m_targets[t].name),
                                      QString::fromStdString(m_targets[0].name))
                                 .arg(at)
                                 .arg(at / sizeof(float))));
        }
    }
}

// ---- target control ----------------------------------------------------------------------------

void TestSimdKernels::forcedTargetRuns()
{
    // What useTarget forces is what activeTarget reports and what the dispatch calls.
    for (const simd::Target& t : m_targets) {
        simd::useTarget(t.key);
        QCOMPARE(simd::activeTarget().key, t.key);
        QCOMPARE(simd::activeTarget().name, t.name);
        const char* expected = nullptr;
        for (const HwyTarget& h : kHwyTargets)
            if (t.key == h.key) expected = h.hwyName;
        QVERIFY2(expected, t.key.c_str());
        QCOMPARE(simdprobe::dispatchedTarget(), std::string(expected));
    }
    for (const char* best : {"best", ""}) {
        simd::useTarget(m_targets.back().key);
        simd::useTarget(best);
        QCOMPARE(simd::activeTarget().key, m_targets.front().key);
    }
    if (m_targets.front().key == "avx512") {
        simd::useTarget("avx3"); // Highway's name for AVX-512, accepted too
        QCOMPARE(simd::activeTarget().key, std::string("avx512"));
    }
    simd::useTarget("best");
}

void TestSimdKernels::unknownTarget()
{
    simd::useTarget(m_targets.back().key);
    for (const char* key : {"bogus", "AVX2", "avx2 ", "neon"}) {
        const QString problem = targetErrorProblem(key, "unknown SIMD target");
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
    }
    simd::useTarget("best");
}

void TestSimdKernels::unsupportedTarget()
{
    std::vector<HwyTarget> missing;
    for (const HwyTarget& h : kHwyTargets) {
        bool available = false;
        for (const simd::Target& t : m_targets)
            available = available || t.key == h.key;
        if (!available) missing.push_back(h);
    }
    if (missing.empty()) {
        // This CPU runs every target: run this test again in a child process whose Highway
        // hides the best one, as on a CPU without it.
        QVERIFY2(!qEnvironmentVariableIsSet(kHideVariable), "the hidden target is still there");
        QProcess child;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(kHideVariable, QString::fromStdString(m_targets.front().key));
        child.setProcessEnvironment(env);
        child.setProcessChannelMode(QProcess::MergedChannels);
        child.start(QCoreApplication::applicationFilePath(), {"unsupportedTarget"});
        QVERIFY(child.waitForFinished(60000));
        const QString out = QString::fromUtf8(child.readAll());
        QVERIFY2(child.exitStatus() == QProcess::NormalExit && child.exitCode() == 0,
                 qPrintable(out));
        QVERIFY2(out.contains("PASS   : TestSimdKernels::unsupportedTarget()") &&
                     !out.contains("SKIP"),
                 qPrintable(out));
        return;
    }
    for (const HwyTarget& h : missing) {
        for (const simd::Target& t : m_targets) {
            simd::useTarget(t.key);
            const QString problem = targetErrorProblem(h.key, "has no");
            QVERIFY2(problem.isEmpty(), qPrintable(problem));
        }
    }
    simd::useTarget("best");
}

int main(int argc, char** argv)
{
    // Before anything reads the CPU's targets (see unsupportedTarget).
    if (const char* hide = std::getenv(kHideVariable))
        for (const HwyTarget& h : kHwyTargets)
            if (std::strcmp(hide, h.key) == 0) hwy::DisableTargets(h.bit);
    QCoreApplication app(argc, argv);
    TestSimdKernels tc;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&tc, argc, argv);
}

#include "TestSimdKernels.moc"
