// Finite-difference checks of every layer's backward and every loss's gradient.
//
// Objective for layers: f = sum(y * R) for a fixed random R, computed in double on the host,
// so dL/dy = R. Analytic parameter and input gradients are compared with central differences
// taken in f32 (the backend's precision), hence eps ~1e-3 and a relative tolerance ~1e-2.
// Runs once per SIMD target the CPU supports (tests/support/PerTarget.h).
#include "Backend.h"
#include "Errors.h"
#include "HashGridMath.h"
#include "Layer.h"
#include "Network.h"
#include "PerTarget.h"
#include "Random.h"
#include "TestUtil.h"

#include <QTest>

#include <cmath>
#include <functional>
#include <memory>
#include <numbers>

using namespace il;
using testutil::toDevice;
using testutil::toHost;

namespace {

double dot(const std::vector<float>& a, const std::vector<float>& b)
{
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i)
        s += double(a[i]) * b[i];
    return s;
}

// Central difference of f with respect to element i of t (backend memory), in f32 steps.
double centralDifference(Backend& b, float* t, int64_t i, double eps,
                         const std::function<double()>& f)
{
    float orig = 0;
    b.download(&orig, t + i, sizeof(float));
    const float plus = static_cast<float>(orig + eps), minus = static_cast<float>(orig - eps);
    b.upload(t + i, &plus, sizeof(float));
    const double fp = f();
    b.upload(t + i, &minus, sizeof(float));
    const double fm = f();
    b.upload(t + i, &orig, sizeof(float));
    return (fp - fm) / (double(plus) - double(minus));
}

std::vector<double> numericGradient(Backend& b, Tensor t, double eps,
                                    const std::function<double()>& f)
{
    std::vector<double> g(static_cast<size_t>(t.size()));
    for (int64_t i = 0; i < t.size(); ++i)
        g[static_cast<size_t>(i)] = centralDifference(b, t.data, i, eps, f);
    return g;
}

// |analytic - numeric| <= rtol * max(|a|, |n|) + atol * max(1, max |n|) element-wise.
bool gradientsAgree(const std::vector<float>& analytic, const std::vector<double>& numeric,
                    double rtol, double atol, QString* why)
{
    if (analytic.size() != numeric.size()) {
        *why = QStringLiteral("size %1 vs %2").arg(analytic.size()).arg(numeric.size());
        return false;
    }
    double scale = 1;
    for (double n : numeric)
        scale = std::max(scale, std::fabs(n));
    for (size_t i = 0; i < analytic.size(); ++i) {
        const double a = analytic[i], n = numeric[i];
        if (!std::isfinite(a) ||
            std::fabs(a - n) > rtol * std::max(std::fabs(a), std::fabs(n)) + atol * scale) {
            *why = QStringLiteral("element %1: analytic %2, numeric %3 (of %4)")
                       .arg(i)
                       .arg(a, 0, 'g', 7)
                       .arg(n, 0, 'g', 7)
                       .arg(analytic.size());
            return false;
        }
    }
    return true;
}

#define CHECK_GRADIENT(analytic, numeric, rtol, atol, what)                                        \
    do {                                                                                           \
        QString why_;                                                                              \
        QVERIFY2(gradientsAgree((analytic), (numeric), (rtol), (atol), &why_),                     \
                 qPrintable(QStringLiteral(what ": ") + why_));                                    \
    } while (false)

// A single layer driven directly through Layer::forward/backward, with its parameters held by
// a one-layer Network (which lays out and binds the arena the way training does).
struct LayerRig {
    Backend& b;
    std::unique_ptr<Network> net;
    Layer* layer = nullptr;
    int64_t rows = 0, in = 0, out = 0;
    Buffer x, y, dy, dx, ws;
    std::vector<float> r; // the objective's weights

    LayerRig(Backend& backend, std::unique_ptr<Layer> l, int64_t rowCount, int64_t inputWidth,
             const std::vector<float>& input, uint64_t seed)
        : b(backend), rows(rowCount), in(inputWidth)
    {
        std::vector<std::unique_ptr<Layer>> layers;
        layers.push_back(std::move(l));
        net = std::make_unique<Network>(b, in, std::move(layers));
        net->initialize(seed);
        layer = net->layers()[0].get();
        out = layer->outputWidth(in);
        Rng rng(seed + 1);
        r = testutil::randomVector(rng, static_cast<size_t>(rows * out), -1, 1);
        x = toDevice(b, input);
        y = testutil::filledBuffer(b, static_cast<size_t>(rows * out), 0.f);
        dy = toDevice(b, r);
        dx = testutil::filledBuffer(b, static_cast<size_t>(rows * in), 0.f);
        const int64_t wc = layer->workspaceCols(in);
        ws = testutil::filledBuffer(b, static_cast<size_t>(std::max<int64_t>(1, rows * wc)), 0.f);
    }

    Tensor xv() const { return x.view(rows, in); }
    Tensor wsv() const { return ws.view(rows, layer->workspaceCols(in)); }

    double objective()
    {
        layer->forward(b, xv(), y.view(rows, out), wsv());
        return dot(toHost(b, y.view(rows, out)), r);
    }

    void backward(bool wantInputGradient)
    {
        objective(); // fresh forward state (workspace)
        layer->backward(b, xv(), y.view(rows, out), dy.view(rows, out),
                        wantInputGradient ? dx.view(rows, in) : Tensor{}, wsv());
    }
};

// Random inputs in [lo, hi], avoiding |x| < gap (kinks of ReLU at 0).
std::vector<float> inputs(Rng& rng, size_t n, double lo, double hi, double gap = 0)
{
    std::vector<float> v(n);
    for (auto& x : v) {
        do {
            x = static_cast<float>(rng.uniform(lo, hi));
        } while (std::fabs(x) < gap);
    }
    return v;
}

} // namespace

class TestGradients : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();

    void activationLayer_data();
    void activationLayer();
    void denseLayer_data();
    void denseLayer();
    void fourierLayer();
    void hashGridLayer_data();
    void hashGridLayer();
    void embeddingLayer();
    void network_data();
    void network();
    void backwardOverwritesGradients();
    void loss_data();
    void loss();
    void networkWithLoss_data();
    void networkWithLoss();

private:
    Backend& b() { return *m_backend; }
    std::unique_ptr<Backend> m_backend;
};

void TestGradients::initTestCase()
{
    m_backend = createCpuBackend();
}

void TestGradients::activationLayer_data()
{
    QTest::addColumn<QString>("spec");
    QTest::addColumn<double>("range");
    // Rows tuned to an activation's argument first; then every other activation type of the
    // registry with its defaults, so a new activation is checked without an edit here.
    const std::pair<const char*, double> tuned[] = {{"relu", 3.0},   {"leakyrelu:0.1", 3.0},
                                                    {"tanh", 3.0},   {"sigmoid", 4.0},
                                                    {"sine:1", 4.0}, {"sine:30", 0.5}};
    QStringList covered;
    for (const auto& [spec, range] : tuned) {
        QTest::newRow(spec) << QString(spec) << range;
        covered << QString(spec).section(':', 0, 0);
    }
    for (const LayerType& t : layerTypes()) {
        const QString name = QString::fromStdString(t.name);
        if (t.activation && !covered.contains(name))
            QTest::newRow(qPrintable(name + " (defaults)")) << name << 3.0;
    }
}

void TestGradients::activationLayer()
{
    QFETCH(QString, spec);
    QFETCH(double, range);
    const int64_t rows = 3, width = 5;
    auto layer = makeLayer(spec.toStdString());
    QVERIFY(layer->isActivation());
    QCOMPARE(layer->outputWidth(width), width);
    const Activation a = layer->activation();
    const float param = layer->activationParam();
    Rng rng(42 + static_cast<uint64_t>(a));
    const bool kink = a == Activation::ReLU || a == Activation::LeakyReLU;
    const auto x = inputs(rng, rows * width, -range, range, kink ? 0.05 : 0.0);
    const auto r = testutil::randomVector(rng, rows * width, -1, 1);

    layer->bind(width, {}, {});
    Buffer dx = toDevice(b(), x), dy = toDevice(b(), r);
    Buffer y = testutil::filledBuffer(b(), rows * width, 0.f);
    Buffer g = testutil::filledBuffer(b(), rows * width, 0.f);
    const Tensor none{nullptr, {rows, 0}};
    const auto objective = [&] {
        layer->forward(b(), dx.view(rows, width), y.view(rows, width), none);
        return dot(toHost(b(), y.view(rows, width)), r);
    };
    objective();
    layer->backward(b(), dx.view(rows, width), y.view(rows, width), dy.view(rows, width),
                    g.view(rows, width), none);
    const double eps = a == Activation::Sine ? 1e-3 / std::max(1.f, param) * 3 : 1e-3;
    const auto numeric = numericGradient(b(), dx.view(rows, width), eps, objective);
    CHECK_GRADIENT(toHost(b(), g.view(rows, width)), numeric, 1e-2, 2e-3, "input gradient");
}

void TestGradients::denseLayer_data()
{
    QTest::addColumn<qint64>("rows");
    QTest::addColumn<qint64>("in");
    QTest::addColumn<qint64>("units");
    QTest::newRow("1x1 -> 1") << qint64(1) << qint64(1) << qint64(1);
    QTest::newRow("3x4 -> 5") << qint64(3) << qint64(4) << qint64(5);
    QTest::newRow("9x7 -> 13") << qint64(9) << qint64(7) << qint64(13);
}

void TestGradients::denseLayer()
{
    QFETCH(qint64, rows);
    QFETCH(qint64, in);
    QFETCH(qint64, units);
    Rng rng(static_cast<uint64_t>(rows * in * units));
    LayerRig rig(b(), makeLayer("dense:" + std::to_string(units)), rows, in,
                 inputs(rng, rows * in, -1, 1), 7);
    QCOMPARE(rig.out, units);
    QCOMPARE(rig.layer->params().size(), size_t(2));
    QCOMPARE(rig.layer->params()[0].shape, (Shape{units, in})); // nn.Linear layout
    QCOMPARE(rig.layer->params()[1].shape, (Shape{1, units}));
    // Non-zero bias, so a forward that forgets it shows in the value check below.
    const auto bias = testutil::randomVector(rng, units, -1, 1);
    b().upload(rig.layer->params()[1].data, bias.data(), bias.size() * sizeof(float));

    // Forward value: y = x W^T + b.
    rig.objective();
    const auto W = toHost(b(), rig.layer->params()[0]);
    const auto X = toHost(b(), rig.xv());
    std::vector<double> yRef(rows * units);
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < units; ++j) {
            double s = bias[j];
            for (int64_t k = 0; k < in; ++k)
                s += double(X[i * in + k]) * W[j * in + k];
            yRef[i * units + j] = s;
        }
    IL_COMPARE_CLOSE(toHost(b(), rig.y.view(rows, units)), yRef, 1e-5, 1e-5);

    rig.backward(true);
    const auto f = [&] { return rig.objective(); };
    const double eps = 1e-2; // the objective is linear in every input: no truncation error
    CHECK_GRADIENT(toHost(b(), rig.layer->grads()[0]),
                   numericGradient(b(), rig.layer->params()[0], eps, f), 1e-2, 1e-3, "weight");
    CHECK_GRADIENT(toHost(b(), rig.layer->grads()[1]),
                   numericGradient(b(), rig.layer->params()[1], eps, f), 1e-2, 1e-3, "bias");
    CHECK_GRADIENT(toHost(b(), rig.dx.view(rows, in)), numericGradient(b(), rig.xv(), eps, f), 1e-2,
                   1e-3, "input");
}

void TestGradients::fourierLayer()
{
    const int64_t rows = 4, in = 2, count = 6;
    Rng rng(3);
    LayerRig rig(b(), makeLayer("fourier:" + std::to_string(count) + ":1"), rows, in,
                 inputs(rng, rows * in, -1, 1), 11);
    QCOMPARE(rig.out, 2 * count);
    // The projection B is fixed: saved, never trained.
    QCOMPARE(rig.net->parameterCount(), qint64(0));
    const auto named = rig.net->namedTensors();
    QCOMPARE(named.size(), size_t(1));
    QVERIFY(!named[0].trainable);
    QCOMPARE(named[0].tensor.shape, (Shape{count, in}));

    // Forward value: [sin(2 pi x B^T) | cos(2 pi x B^T)].
    rig.objective();
    const auto B = toHost(b(), named[0].tensor);
    const auto X = toHost(b(), rig.xv());
    std::vector<double> yRef(rows * 2 * count);
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < count; ++j) {
            double z = 0;
            for (int64_t k = 0; k < in; ++k)
                z += double(X[i * in + k]) * B[j * in + k];
            z *= 2 * std::numbers::pi;
            yRef[i * 2 * count + j] = std::sin(z);
            yRef[i * 2 * count + count + j] = std::cos(z);
        }
    IL_COMPARE_CLOSE(toHost(b(), rig.y.view(rows, 2 * count)), yRef, 2e-5, 0.0);

    rig.backward(true);
    CHECK_GRADIENT(toHost(b(), rig.dx.view(rows, in)),
                   numericGradient(b(), rig.xv(), 1e-3, [&] { return rig.objective(); }), 1e-2,
                   2e-3, "input");
}

void TestGradients::hashGridLayer_data()
{
    QTest::addColumn<QString>("spec");
    QTest::newRow("direct tables") << "hashgrid:3:2:8:2:2";     // every vertex its own row
    QTest::newRow("hashed, colliding") << "hashgrid:4:2:4:2:2"; // 16 rows for up to 289 vertices
    QTest::newRow("defaults") << "hashgrid";
}

// The table gradient by finite differences (the output is linear in the tables, so central
// differences are exact up to rounding), and the forward value against the interpolation
// written out here. The encoding asks for no input gradient: it is always first.
void TestGradients::hashGridLayer()
{
    QFETCH(QString, spec);
    const int64_t rows = 9, in = 2;
    Rng rng(21);
    auto x = inputs(rng, rows * in, -1, 1);
    x[0] = -1.f; // the grid's edges
    x[3] = 1.f;
    LayerRig rig(b(), makeLayer(spec.toStdString()), rows, in, x, 13);
    const auto* layer = rig.layer;
    QCOMPARE(layer->params().size(), size_t(1));
    const Tensor table = layer->params()[0];
    // Random tables (not the tiny initial values), so every output carries weight.
    b().upload(table, inputs(rng, table.size(), -1, 1).data());
    b().fill(rig.layer->grads()[0], 1e3f); // must be overwritten
    rig.backward(false);
    const auto analytic = toHost(b(), rig.layer->grads()[0]);
    if (table.size() <= 4096) {
        CHECK_GRADIENT(analytic, numericGradient(b(), table, 1e-2, [&] { return rig.objective(); }),
                       1e-3, 1e-3, "table");
    } else { // the defaults' 2^20 floats: check the entries the points touch, and that the
             // rest stay zero
        int64_t touched = 0;
        for (float v : analytic)
            touched += v != 0.f;
        QVERIFY2(touched > 0 && touched <= rows * 16 * 4 * 2, qPrintable(QString::number(touched)));
    }
    // Forward: y = sum over the 4 vertices of weight * table row, per level and feature.
    rig.objective();
    const auto got = toHost(b(), rig.y.view(rows, rig.out));
    const auto tab = toHost(b(), table);
    const int64_t levels = rig.out / static_cast<int64_t>(table.cols());
    const int64_t features = table.cols(), blockRows = table.rows() / levels;
    std::vector<double> want(got.size(), 0.0);
    const LayerItem& item = layer->item();
    const HashGrid g =
        hashgrid::make(static_cast<int>(item.args[0]), static_cast<int>(item.args[1]),
                       static_cast<int>(item.args[2]), item.args[3], item.args[4]);
    QCOMPARE(g.tableRows(), blockRows);
    for (int64_t r = 0; r < rows; ++r)
        for (int l = 0; l < levels; ++l) {
            const hashgrid::Corners c = hashgrid::corners(g, l, x[r * 2], x[r * 2 + 1]);
            double sumW = 0;
            for (int k = 0; k < 4; ++k) {
                sumW += c.weight[k];
                for (int64_t f = 0; f < features; ++f)
                    want[r * rig.out + l * features + f] +=
                        double(c.weight[k]) * tab[(l * blockRows + c.row[k]) * features + f];
            }
            QVERIFY(std::fabs(sumW - 1.0) < 1e-6); // bilinear weights partition unity
        }
    IL_COMPARE_CLOSE(got, want, 1e-6, 0.0);
}

void TestGradients::embeddingLayer()
{
    const int64_t rows = 5, context = 3, vocab = 7, dim = 4;
    // Ids repeat within a row and across rows, and one id never occurs (zero gradient).
    const std::vector<float> ids = {0, 1, 1, 2, 3, 4, 6, 6, 6, 0, 2, 1, 1, 3, 0};
    LayerRig rig(b(), makeLayer("embedding:" + std::to_string(vocab) + ":" + std::to_string(dim)),
                 rows, context, ids, 5);
    QCOMPARE(rig.out, context * dim);
    QCOMPARE(rig.layer->params().size(), size_t(1));
    QCOMPARE(rig.layer->params()[0].shape, (Shape{vocab, dim}));
    b().fill(rig.layer->grads()[0], 1e3f); // must be overwritten
    rig.backward(false);
    const auto analytic = toHost(b(), rig.layer->grads()[0]);
    CHECK_GRADIENT(
        analytic,
        numericGradient(b(), rig.layer->params()[0], 1e-2, [&] { return rig.objective(); }), 1e-2,
        1e-3, "table");
    // Id 6 fills input row 2: its gradient is the sum of the three slices. Id 5 never occurs.
    const auto& R = rig.r;
    const int64_t w = context * dim;
    for (int64_t d = 0; d < dim; ++d) {
        const double want = double(R[2 * w + d]) + R[2 * w + dim + d] + R[2 * w + 2 * dim + d];
        QVERIFY(std::fabs(analytic[6 * dim + d] - want) < 1e-5);
        QCOMPARE(analytic[5 * dim + d], 0.f);
    }
}

void TestGradients::network_data()
{
    QTest::addColumn<QString>("spec");
    QTest::addColumn<qint64>("in");
    QTest::addColumn<qint64>("out");
    QTest::addColumn<qint64>("vocab");
    QTest::newRow("tanh/sigmoid") << "dense:6,tanh,dense:5,sigmoid,dense:3" << qint64(4)
                                  << qint64(3) << qint64(0);
    QTest::newRow("relu/leakyrelu")
        << "dense:6,relu,dense:5,leakyrelu:0.1,dense:2" << qint64(3) << qint64(2) << qint64(0);
    QTest::newRow("sine") << "dense:5,sine:2,dense:4,sine:2,dense:2" << qint64(3) << qint64(2)
                          << qint64(0);
    QTest::newRow("siren w0=30") << "dense:6,sine,dense:5,sine,dense" << qint64(2) << qint64(1)
                                 << qint64(0);
    QTest::newRow("fourier") << "fourier:4:1,dense:5,tanh,dense:2" << qint64(2) << qint64(2)
                             << qint64(0);
    QTest::newRow("embedding") << "embedding:7:3,dense:5,tanh,dense:3" << qint64(2) << qint64(3)
                               << qint64(7);
    // The linear skip reads the network's inputs: its gradient is dy^T inputs, its input's dy.
    QTest::newRow("wide and deep (skip)")
        << "dense:6,tanh,dense:3,skip" << qint64(4) << qint64(3) << qint64(0);
    QTest::newRow("skip first and in the middle")
        << "skip,dense:5,tanh,skip,dense:2" << qint64(5) << qint64(2) << qint64(0);
    // Normalisations, with the batch's statistics (a training forward), and a makemore-style
    // tree: merges of consecutive positions with per-position dense layers between them.
    QTest::newRow("layernorm") << "dense:6,layernorm,tanh,dense:3" << qint64(4) << qint64(3)
                               << qint64(0);
    QTest::newRow("batchnorm") << "dense:6,batchnorm,tanh,dense:3" << qint64(4) << qint64(3)
                               << qint64(0);
    QTest::newRow("merge tree (wavenet)")
        << "embedding:7:3,merge:2,dense:5,batchnorm,tanh,merge:2,dense:4,layernorm,tanh,dense:3"
        << qint64(4) << qint64(3) << qint64(7);
    QTest::newRow("dropout (the same mask in every forward)")
        << "dense:6,dropout:0.3,tanh,dense:5,dropout:0.5,dense:3" << qint64(4) << qint64(3)
        << qint64(0);
    QTest::newRow("merge then layernorm per position")
        << "embedding:6:2,merge:2,layernorm,dense:3,tanh,merge:3,dense:2" << qint64(6) << qint64(2)
        << qint64(6);
    // Each layer type's registry example (LayerType::example), so a new type is checked here
    // with no change to this test: names with a context of 4 and a vocabulary of 7, a table of 4
    // inputs and 3 outputs, or a picture's 2 coordinates and 3 channels.
    for (const LayerType& t : layerTypes()) {
        if (t.example.layers.empty()) continue;
        const QString layers = QString::fromStdString(t.example.layers);
        const QByteArray row = QByteArray("example: ") + t.name.c_str();
        if (t.example.data == "names")
            QTest::newRow(row) << layers << qint64(4) << qint64(7) << qint64(7);
        else if (t.example.data == "image")
            QTest::newRow(row) << layers << qint64(2) << qint64(3) << qint64(0);
        else
            QTest::newRow(row) << layers << qint64(4) << qint64(3) << qint64(0);
    }
}

void TestGradients::network()
{
    QFETCH(QString, spec);
    QFETCH(qint64, in);
    QFETCH(qint64, out);
    QFETCH(qint64, vocab);
    Network net(b(), in, spec.toStdString(), out, vocab);
    net.initialize(3);
    QCOMPARE(net.outputWidth(), out);
    const bool siren = spec.startsWith("dense:6,sine");
    const int64_t rows = 4;
    Rng rng(17);
    if (!siren) { // replace the initialisation by O(1) weights, so every layer matters
        const auto p = testutil::randomVector(rng, net.parameterCount(), -1, 1);
        b().upload(net.parameters().data, p.data(), p.size() * sizeof(float));
    }

    // Inputs; for ReLU, keep every pre-activation away from the kink.
    std::vector<float> x;
    Buffer dx;
    for (int attempt = 0;; ++attempt) {
        QVERIFY(attempt < 100);
        if (vocab > 0) {
            x.resize(rows * in);
            for (auto& v : x)
                v = static_cast<float>(rng.below(vocab));
        } else {
            x = testutil::randomVector(rng, rows * in, -1, 1);
        }
        dx = toDevice(b(), x);
        net.forward(dx.view(rows, in));
        bool nearKink = false;
        for (size_t i = 1; i < net.layers().size(); ++i) {
            const auto act = net.layers()[i]->activation();
            if (net.layers()[i]->isActivation() &&
                (act == Activation::ReLU || act == Activation::LeakyReLU))
                for (float v : toHost(b(), net.layerOutput(int(i) - 1)))
                    nearKink = nearKink || std::fabs(v) < 0.02f;
        }
        if (!nearKink) break;
    }
    const auto r = testutil::randomVector(rng, rows * out, -1, 1);
    Buffer dr = toDevice(b(), r);
    // What the network keeps beside its parameters (dropout's counter, batch norm's running
    // statistics) goes back to its value before each forward: every forward then draws the same
    // dropout mask, and the objective is a function of the parameters alone.
    const Tensor all = net.weights();
    const Tensor fixed{all.data + net.parameterCount(), {1, all.size() - net.parameterCount()}};
    const auto fixedStart = toHost(b(), fixed);
    const auto f = [&] {
        if (fixed.size() > 0) b().upload(fixed, fixedStart.data());
        return dot(toHost(b(), net.forward(dx.view(rows, in))), r);
    };
    f();
    b().fill(net.gradients(), 1e3f);
    net.backward(dx.view(rows, in), dr.view(rows, out));
    const auto analytic = toHost(b(), net.gradients());
    const auto numeric = numericGradient(b(), net.parameters(), siren ? 2e-4 : 1e-3, f);
    CHECK_GRADIENT(analytic, numeric, 1e-2, 2e-3, "parameters");
}

void TestGradients::backwardOverwritesGradients()
{
    Network net(b(), 3, "dense:4,tanh,dense:2", 2);
    net.initialize(1);
    Rng rng(1);
    Buffer x = toDevice(b(), testutil::randomVector(rng, 15, -1, 1));
    Buffer r = toDevice(b(), testutil::randomVector(rng, 10, -1, 1));
    net.forward(x.view(5, 3));
    net.backward(x.view(5, 3), r.view(5, 2));
    const auto first = toHost(b(), net.gradients());
    net.forward(x.view(5, 3));
    net.backward(x.view(5, 3), r.view(5, 2));
    QVERIFY2(testutil::bitIdentical(toHost(b(), net.gradients()), first),
             "a second backward changed the gradients (accumulated instead of overwriting?)");
    b().fill(net.gradients(), -7.f);
    net.forward(x.view(5, 3));
    net.backward(x.view(5, 3), r.view(5, 2));
    QVERIFY(testutil::bitIdentical(toHost(b(), net.gradients()), first));
}

void TestGradients::loss_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<float>("smoothing");
    QTest::addColumn<bool>("weighted"); // class weights (lossWeights)
    QTest::newRow("mse") << int(LossKind::MSE) << 0.f << false;
    QTest::newRow("mae") << int(LossKind::MAE) << 0.f << false;
    QTest::newRow("bce") << int(LossKind::BinaryCrossEntropy) << 0.f << false;
    QTest::newRow("bce class-weighted") << int(LossKind::BinaryCrossEntropy) << 0.f << true;
    QTest::newRow("ce") << int(LossKind::CrossEntropy) << 0.f << false;
    QTest::newRow("ce smoothing 0.1") << int(LossKind::CrossEntropy) << 0.1f << false;
    QTest::newRow("ce class-weighted") << int(LossKind::CrossEntropy) << 0.f << true;
    QTest::newRow("ce class-weighted smoothing 0.1") << int(LossKind::CrossEntropy) << 0.1f << true;
}

namespace {
std::vector<float> lossTargets(LossKind kind, Rng& rng, const std::vector<float>& pred,
                               int64_t rows, int64_t k)
{
    std::vector<float> t(pred.size());
    switch (kind) {
    case LossKind::MSE:
        return testutil::randomVector(rng, pred.size(), -2, 2);
    case LossKind::MAE: // keep |pred - target| well above the step size (|.| has a kink)
        for (size_t i = 0; i < t.size(); ++i)
            t[i] = pred[i] + static_cast<float>((rng.below(2) ? 1 : -1) * rng.uniform(0.1, 1));
        return t;
    case LossKind::BinaryCrossEntropy:
        for (size_t i = 0; i < t.size(); ++i)
            t[i] = i % 3 == 2 ? 0.3f : float(rng.below(2));
        return t;
    case LossKind::CrossEntropy:
        t.resize(static_cast<size_t>(rows));
        for (auto& c : t)
            c = static_cast<float>(rng.below(static_cast<uint64_t>(k)));
        return t;
    }
    return t;
}
// Class weights far from 1 and from each other, so a weight applied to the value but not to the
// gradient (or to the wrong class) shows: BCE's two (targets 0 and 1), or one per class.
std::vector<float> lossWeights(LossKind kind, int64_t k)
{
    if (kind == LossKind::BinaryCrossEntropy) return {0.4f, 2.6f};
    std::vector<float> w(static_cast<size_t>(k));
    for (int64_t j = 0; j < k; ++j)
        w[static_cast<size_t>(j)] = 0.3f + 0.9f * static_cast<float>(j);
    return w;
}
} // namespace

void TestGradients::loss()
{
    QFETCH(int, kind);
    QFETCH(float, smoothing);
    QFETCH(bool, weighted);
    const auto lk = static_cast<LossKind>(kind);
    const int64_t rows = 3, k = 4;
    Rng rng(23 + static_cast<uint64_t>(kind));
    const auto pred = testutil::randomVector(rng, rows * k, -2, 2);
    const auto target = lossTargets(lk, rng, pred, rows, k);
    const int64_t tc = lk == LossKind::CrossEntropy ? 1 : k;
    Buffer dp = toDevice(b(), pred), dt = toDevice(b(), target);
    const auto weights = lossWeights(lk, k);
    Buffer dw = toDevice(b(), weights);
    const ConstTensor w =
        weighted ? ConstTensor(dw.view(1, static_cast<int64_t>(weights.size()))) : ConstTensor();
    Buffer g = testutil::filledBuffer(b(), rows * k, 0.f), l = testutil::filledBuffer(b(), 1, 0.f);
    b().lossForwardBackward(lk, smoothing, w, dp.view(rows, k), dt.view(rows, tc), g.view(rows, k),
                            l.data(), false);
    const auto f = [&] {
        b().lossForward(lk, smoothing, w, dp.view(rows, k), dt.view(rows, tc), l.data(), false);
        return double(testutil::readScalar(b(), l.data()));
    };
    CHECK_GRADIENT(toHost(b(), g.view(rows, k)), numericGradient(b(), dp.view(rows, k), 1e-2, f),
                   1e-2, 1e-3, "dL/dpred");
}

void TestGradients::networkWithLoss_data()
{
    loss_data();
}

void TestGradients::networkWithLoss()
{
    // The whole chain a training step runs: forward, fused loss + dL/dy, backward.
    QFETCH(int, kind);
    QFETCH(float, smoothing);
    QFETCH(bool, weighted);
    const auto lk = static_cast<LossKind>(kind);
    const int64_t rows = 6, in = 3, k = 3;
    Network net(b(), in, "dense:5,tanh,dense:3", k);
    net.initialize(9);
    Rng rng(31 + static_cast<uint64_t>(kind));
    Buffer x = toDevice(b(), testutil::randomVector(rng, rows * in, -1, 1));
    const auto pred0 = toHost(b(), net.forward(x.view(rows, in)));
    auto target = lossTargets(lk, rng, pred0, rows, k);
    Buffer dt = toDevice(b(), target);
    const int64_t tc = lk == LossKind::CrossEntropy ? 1 : k;
    Buffer g = testutil::filledBuffer(b(), rows * k, 0.f), l = testutil::filledBuffer(b(), 1, 0.f);
    const auto weights = lossWeights(lk, k);
    Buffer dw = toDevice(b(), weights);
    const ConstTensor w =
        weighted ? ConstTensor(dw.view(1, static_cast<int64_t>(weights.size()))) : ConstTensor();

    Tensor y = net.forward(x.view(rows, in));
    b().lossForwardBackward(lk, smoothing, w, y, dt.view(rows, tc), g.view(rows, k), l.data(),
                            false);
    net.backward(x.view(rows, in), g.view(rows, k));
    const auto analytic = toHost(b(), net.gradients());
    const auto f = [&] {
        Tensor out = net.forward(x.view(rows, in));
        b().lossForward(lk, smoothing, w, out, dt.view(rows, tc), l.data(), false);
        return double(testutil::readScalar(b(), l.data()));
    };
    CHECK_GRADIENT(analytic, numericGradient(b(), net.parameters(), 1e-2, f), 2e-2, 2e-3,
                   "parameters");
}

IL_PER_SIMD_TARGET_MAIN(TestGradients) // once per SIMD target
#include "TestGradients.moc"
