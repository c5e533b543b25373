// The limits of Limits.h: a layer list of more than kMaxLayers items is refused before it is
// split; inference (predict, evaluateLoss) runs in chunks whose activations stay under
// kInferenceActivationBytes however wide the network, so a dense:100000 network predicts a
// few hundred rows at a time while a small one keeps its 4096-row chunks.
#include "Errors.h"
#include "LayerSpec.h"
#include "Limits.h"
#include "Network.h"
#include "TestUtil.h"
#include "Trainer.h"

#include <QTest>

#include <string>

using namespace il;

class TestLimits : public QObject {
    Q_OBJECT

private slots:
    void layerCountIsLimited();
    void chunksScaleWithWidth();
    void wideInferenceStaysUnderTheBound();
};

void TestLimits::layerCountIsLimited()
{
    std::string spec = "dense:4";
    for (size_t i = 1; i + 1 < kMaxLayers; ++i)
        spec += ",tanh";
    spec += ",dense:1";
    QCOMPARE(parseLayerItems(spec).size(), kMaxLayers); // at the limit: fine
    spec += ",tanh";
    try {
        parseLayerItems(spec);
        QFAIL("a list over the limit was accepted");
    } catch (const EngineError& e) {
        QCOMPARE(QString(e.what()), QString("the layer list has 1001 items; at most 1000 are "
                                            "allowed"));
    }
}

void TestLimits::chunksScaleWithWidth()
{
    auto cpu = createCpuBackend(1);
    Network small(*cpu, 2, "dense:16,tanh,dense", 1);
    QCOMPARE(activationFloatsPerRow(small), int64_t(2 + 16 + 16 + 1 + 2 * 16));
    QCOMPARE(inferenceChunkRows(small, 16384), int64_t(16384)); // small: as asked
    QCOMPARE(inferenceChunkRows(small, 0), int64_t(1));

    Network wide(*cpu, 2, "dense:100000,dense", 1);
    const int64_t perRow = activationFloatsPerRow(wide);
    QCOMPARE(perRow, int64_t(2 + 100000 + 1 + 2 * 100000));
    const int64_t rows = inferenceChunkRows(wide, 16384);
    QCOMPARE(rows, kInferenceActivationBytes / (perRow * 4)); // 223 rows
    QVERIFY(rows * perRow * 4 <= kInferenceActivationBytes);
    // Wider than the bound per row: one row at a time (the model file refuses such a network).
    QCOMPARE(inferenceChunkRows(wide, 16384, 1000), int64_t(1));
}

void TestLimits::wideInferenceStaysUnderTheBound()
{
    auto cpu = createCpuBackend(1);
    Backend& b = *cpu;
    Network net(b, 2, "dense:100000,dense", 1);
    net.initialize(1);
    const int64_t n = 1000;
    std::vector<float> host(static_cast<size_t>(2 * n), 0.5f), target(static_cast<size_t>(n), 1.f);
    const Buffer x = testutil::toDevice(b, host);
    const Buffer y = testutil::toDevice(b, target);
    Buffer out(&b, static_cast<size_t>(n));
    net.predict(x.view(n, 2), out.view(n, 1)); // asks for 4096-row chunks
    const int64_t chunk = inferenceChunkRows(net, 4096);
    QVERIFY(chunk < n);
    QCOMPARE(net.reservedRows(), chunk); // activations were never sized past the bound
    QVERIFY(net.reservedRows() * activationFloatsPerRow(net) * 4 <= kInferenceActivationBytes);
    // Every row predicted, the same as one row at a time.
    const std::vector<float> all = testutil::toHost(b, out.view(n, 1));
    Buffer one(&b, 1);
    net.predict(x.view(n, 2).rowSlice(n - 1, 1), one.view(1, 1));
    QCOMPARE(all.back(), testutil::toHost(b, one.view(1, 1))[0]);
    Buffer scratch;
    const double loss = Trainer::evaluateLoss(net, LossKind::MSE, x.view(n, 2), y.view(n, 1),
                                              scratch);
    QVERIFY(std::isfinite(loss));
    QCOMPARE(net.reservedRows(), chunk);
}

QTEST_GUILESS_MAIN(TestLimits)
#include "TestLimits.moc"
