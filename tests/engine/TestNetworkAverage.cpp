// K networks of one stack averaged as one (NetworkAverage.h): the averaged network's output is
// share x the members' mean + (1 - share) x the linear part, on rows none of them saw, for
// stacks of one, two and three dense layers with and without a final skip; the widths of the
// averaged stack; the stacks and sizes it refuses.
#include "Backend.h"
#include "Errors.h"
#include "Network.h"
#include "NetworkAverage.h"
#include "Random.h"
#include "TestUtil.h"

#include <QTest>

#include <cmath>
#include <memory>
#include <vector>

using namespace il;

namespace {

constexpr int64_t kInputs = 3, kOutputs = 2, kRows = 17;

std::vector<float> outputs(Network& net, const std::vector<float>& x)
{
    Backend& b = net.backend();
    const Buffer in = testutil::toDevice(b, x);
    Buffer out = testutil::filledBuffer(b, static_cast<size_t>(kRows * net.outputWidth()), 0.f);
    net.predict(in.view(kRows, kInputs), out.view(kRows, net.outputWidth()));
    return testutil::toHost(b, out.view(kRows, net.outputWidth()));
}

// A member with every weight drawn at random (a final skip's too, which starts at zero).
std::unique_ptr<Network> member(Backend& b, const std::string& spec, uint64_t seed)
{
    auto net = std::make_unique<Network>(b, kInputs, spec, kOutputs);
    net->initialize(seed);
    Rng rng(seed * 7 + 1);
    for (const NamedTensor& t : net->namedTensors()) {
        std::vector<float> v(static_cast<size_t>(t.tensor.size()));
        for (float& w : v)
            w = static_cast<float>(rng.uniform(-1, 1));
        b.upload(t.tensor, v.data());
    }
    return net;
}

} // namespace

class TestNetworkAverage : public QObject {
    Q_OBJECT

private slots:
    void meanOfTheMembers_data();
    void meanOfTheMembers();
    void refusals();
};

void TestNetworkAverage::meanOfTheMembers_data()
{
    QTest::addColumn<QString>("spec");
    QTest::addColumn<QString>("averaged");
    QTest::addColumn<double>("share");
    QTest::newRow("one hidden layer, blended") << "dense:5:xavier,relu,dense"
                                               << "dense:20:xavier,relu,dense:2,skip" << 0.7;
    QTest::newRow("one hidden layer, the mean alone") << "dense:5,tanh,dense"
                                                      << "dense:20,tanh,dense:2,skip" << 1.0;
    QTest::newRow("two hidden layers and a skip")
        << "dense:4,gelu,dense:6,sigmoid,dense,skip"
        << "dense:16,gelu,dense:24,sigmoid,dense:2,skip" << 0.4;
    QTest::newRow("linear") << "dense"
                            << "dense:2,skip" << 0.25;
    QTest::newRow("the linear part alone") << "dense:3,relu,dense"
                                           << "dense:12,relu,dense:2,skip" << 0.0;
}

void TestNetworkAverage::meanOfTheMembers()
{
    QFETCH(QString, spec);
    QFETCH(QString, averaged);
    QFETCH(double, share);
    auto b = createCpuBackend(1);
    constexpr int k = 4;
    std::vector<std::unique_ptr<Network>> members;
    std::vector<HostTensors> weights;
    for (int m = 0; m < k; ++m) {
        members.push_back(member(*b, spec.toStdString(), 100 + m));
        weights.push_back(copyToHost(*members.back()));
    }
    const std::string avgSpec = averagedSpec(*members[0], k);
    QCOMPARE(QString::fromStdString(avgSpec), averaged);
    LinearPart linear;
    Rng rng(9);
    for (int i = 0; i < kInputs * kOutputs; ++i)
        linear.weights.push_back(static_cast<float>(rng.uniform(-2, 2)));
    linear.bias = {0.5f, -1.5f};
    Network avg(*b, kInputs, avgSpec, kOutputs);
    setAveraged(avg, *members[0], weights, share, linear);

    std::vector<float> x(kRows * kInputs);
    for (float& v : x)
        v = static_cast<float>(rng.uniform(-3, 3));
    std::vector<double> expected(kRows * kOutputs, 0.0);
    for (auto& m : members) {
        const std::vector<float> y = outputs(*m, x);
        for (size_t i = 0; i < expected.size(); ++i)
            expected[i] += share * y[i] / k;
    }
    for (int64_t r = 0; r < kRows; ++r)
        for (int64_t c = 0; c < kOutputs; ++c) {
            double lin = linear.bias[static_cast<size_t>(c)];
            for (int64_t j = 0; j < kInputs; ++j)
                lin += static_cast<double>(linear.weights[static_cast<size_t>(c * kInputs + j)]) *
                       x[static_cast<size_t>(r * kInputs + j)];
            expected[static_cast<size_t>(r * kOutputs + c)] += (1 - share) * lin;
        }
    const std::vector<float> got = outputs(avg, x);
    QCOMPARE(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i)
        QVERIFY2(
            std::fabs(got[i] - expected[i]) <= 1e-4 * (1 + std::fabs(expected[i])),
            qPrintable(QString("output %1: %2, expected %3").arg(i).arg(got[i]).arg(expected[i])));
}

void TestNetworkAverage::refusals()
{
    auto b = createCpuBackend(1);
    std::string why;
    Network normed(*b, kInputs, "dense:4,layernorm,relu,dense", kOutputs);
    QVERIFY(averagedSpec(normed, 3, &why).empty());
    QVERIFY2(QString::fromStdString(why).contains("layernorm"), why.c_str());
    Network dropped(*b, kInputs, "dense:4,relu,dropout,dense", kOutputs);
    QVERIFY(averagedSpec(dropped, 3, &why).empty());

    auto m = member(*b, "dense:4,relu,dense", 1);
    const std::vector<HostTensors> weights = {copyToHost(*m), copyToHost(*m)};
    // Built for three members, given two: the sizes do not fit.
    Network three(*b, kInputs, averagedSpec(*m, 3), kOutputs);
    QVERIFY_THROWS_EXCEPTION(EngineError, setAveraged(three, *m, weights, 1.0, {}));
    // A linear part of the wrong widths.
    Network two(*b, kInputs, averagedSpec(*m, 2), kOutputs);
    LinearPart wrong{{1.f, 2.f}, {0.f}};
    QVERIFY_THROWS_EXCEPTION(EngineError, setAveraged(two, *m, weights, 0.5, wrong));
}

QTEST_GUILESS_MAIN(TestNetworkAverage)
#include "TestNetworkAverage.moc"
