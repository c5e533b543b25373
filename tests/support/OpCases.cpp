#include "OpCases.h"

#include "../engine/TestUtil.h"
#include "DropoutMath.h"
#include "Layer.h"
#include "NormMath.h"
#include "Optimizer.h"
#include "Random.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <memory>
#include <numbers>
#include <tuple>

using namespace il;
using testutil::filledBuffer;
using testutil::randomVector;
using testutil::toDevice;
using testutil::toHost;

namespace opcases {

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

Bound boundOf(Tolerance t)
{
    return [t](size_t, double ref) { return t.atol + t.rtol * std::fabs(ref); };
}

std::vector<double> toDouble(const std::vector<float>& v)
{
    return {v.begin(), v.end()};
}

// An output that must be identical, bit for bit, on every backend and equal to `ref`.
Check exact(const QString& name, std::vector<double> ref)
{
    return {name, std::move(ref), 0.0, 0.0, boundOf(kExact), true};
}

QString shapeName(int64_t rows, int64_t cols)
{
    return QStringLiteral("%1x%2").arg(rows).arg(cols);
}

// ---- fill, broadcast ---------------------------------------------------------------------------

OpCase fillCase(int64_t rows, int64_t cols)
{
    const auto n = static_cast<size_t>(rows * cols);
    std::vector<double> ref(n, 2.5);
    ref.push_back(-3.0); // one past the end is untouched
    OpCase c;
    c.run = [=](Backend& b) -> std::vector<Output> {
        Buffer buf = filledBuffer(b, n + 1, -3.f);
        b.fill(buf.view(rows, cols), 2.5f);
        return {{"buffer", toHost(b, buf.view(1, static_cast<int64_t>(n + 1)))}};
    };
    c.checks = {exact("buffer", ref)};
    return c;
}

OpCase broadcastRowsCase(int64_t rows, int64_t cols)
{
    Rng rng(11);
    const auto bias = randomVector(rng, static_cast<size_t>(cols), -5, 5);
    std::vector<double> ref(static_cast<size_t>(rows * cols));
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j)
            ref[static_cast<size_t>(i * cols + j)] = bias[static_cast<size_t>(j)];
    OpCase c;
    c.run = [=](Backend& b) -> std::vector<Output> {
        Buffer db = toDevice(b, bias);
        Buffer dy = filledBuffer(b, static_cast<size_t>(rows * cols), 123.f);
        b.broadcastRows(db.view(1, cols), dy.view(rows, cols));
        return {{"y", toHost(b, dy.view(rows, cols))}};
    };
    c.checks = {exact("y", ref)};
    return c;
}

// ---- reductions and element-wise ---------------------------------------------------------------

OpCase sumRowsCase(int64_t rows, int64_t cols, float beta)
{
    Rng rng(static_cast<uint64_t>(rows + cols));
    const auto x = randomVector(rng, static_cast<size_t>(rows * cols), -1, 1);
    // beta == 0 must ignore what was there, even NaN.
    const auto out0 = beta == 0.f ? std::vector<float>(static_cast<size_t>(cols), kNaN)
                                  : randomVector(rng, static_cast<size_t>(cols), -3, 3);
    std::vector<double> ref(static_cast<size_t>(cols)), magnitude(static_cast<size_t>(cols));
    for (int64_t j = 0; j < cols; ++j) {
        const double start = beta == 0.f ? 0.0 : double(beta) * out0[static_cast<size_t>(j)];
        double s = start, m = std::fabs(start);
        for (int64_t i = 0; i < rows; ++i) {
            s += x[static_cast<size_t>(i * cols + j)];
            m += std::fabs(x[static_cast<size_t>(i * cols + j)]);
        }
        ref[static_cast<size_t>(j)] = s;
        magnitude[static_cast<size_t>(j)] = m;
    }
    OpCase c;
    c.run = [=](Backend& b) -> std::vector<Output> {
        Buffer dx = toDevice(b, x), dout = toDevice(b, out0);
        b.sumRows(dx.view(rows, cols), beta, dout.view(1, cols));
        return {{"out", toHost(b, dout.view(1, cols))}};
    };
    c.checks = {{"out", ref, 2e-7 * double(rows) + 1e-6, 1e-5,
                 [=](size_t i, double) { return reductionBound(double(rows + 1), magnitude[i]); }}};
    return c;
}

OpCase sumSquaresCase(int64_t rows, int64_t cols)
{
    const auto n = static_cast<size_t>(rows * cols);
    Rng rng(n);
    auto x = randomVector(rng, n, -1, 1);
    // Distinctive values at both ends: skipping the head or the tail of the loop shows.
    x.front() = 3.f;
    x.back() = -std::sqrt(static_cast<float>(n)) - 1.f;
    double ref = 0;
    for (float v : x)
        ref += double(v) * v;
    OpCase c;
    c.run = [=](Backend& b) -> std::vector<Output> {
        Buffer dx = toDevice(b, x);
        Buffer out = filledBuffer(b, 1, 99.f);
        b.sumSquares(dx.view(rows, cols), out.data());
        return {{"sum", toHost(b, out.view(1, 1))}};
    };
    // Every term is positive, so the magnitude is the sum itself.
    c.checks = {{"sum", {ref}, 0.0, 1e-4, [n](size_t, double want) {
                     return reductionBound(double(n), want);
                 }}};
    return c;
}

OpCase axpbyCase(int64_t rows, int64_t cols, float a, float bb)
{
    const auto n = static_cast<size_t>(rows * cols);
    Rng rng(n + 5);
    const auto x = randomVector(rng, n, -2, 2);
    const auto y = randomVector(rng, n, -2, 2);
    std::vector<double> ref(n);
    for (size_t i = 0; i < n; ++i)
        ref[i] = double(a) * x[i] + double(bb) * y[i];
    OpCase c;
    c.run = [=](Backend& b) -> std::vector<Output> {
        Buffer dx = toDevice(b, x), dy = toDevice(b, y);
        b.axpby(a, dx.view(rows, cols), bb, dy.view(rows, cols));
        return {{"y", toHost(b, dy.view(rows, cols))}};
    };
    c.checks = {{"y", ref, 1e-6, 1e-6, boundOf(kElementwise)}};
    return c;
}

// ---- gemm --------------------------------------------------------------------------------------

// C = alpha op(A) op(B) + beta C, or with op = identity; c0 NaN when beta == 0 (BLAS semantics:
// C is then write-only, garbage must vanish). The double reference is skipped above 1e7
// multiply-adds (the large shapes are there for the device's tiling; the CPU is checked on the
// others); the parity bound scales with each element's |alpha| |op(A)| |op(B)| + |beta C|.
OpCase gemmCase(int m, int n, int k, bool transA, bool transB, float alpha, float beta)
{
    Rng rng(static_cast<uint64_t>(m * 131 + n * 7 + k + transA * 3 + transB * 5));
    const auto a = randomVector(rng, size_t(m) * k, -1, 1);
    const auto bm = randomVector(rng, size_t(k) * n, -1, 1);
    const auto c0 = beta == 0.f ? std::vector<float>(size_t(m) * n, kNaN)
                                : randomVector(rng, size_t(m) * n, -1, 1);
    auto product = [=](bool absolute) {
        auto f = [absolute](double v) { return absolute ? std::fabs(v) : v; };
        std::vector<double> out(size_t(m) * n);
        for (int i = 0; i < m; ++i)
            for (int j = 0; j < n; ++j) {
                double s = 0;
                for (int l = 0; l < k; ++l) {
                    const double av = transA ? a[size_t(l) * m + i] : a[size_t(i) * k + l];
                    const double bv = transB ? bm[size_t(j) * k + l] : bm[size_t(l) * n + j];
                    s += f(av) * f(bv);
                }
                const size_t ij = size_t(i) * n + j;
                out[ij] = f(alpha) * s + (beta == 0.f ? 0.0 : f(beta) * f(c0[ij]));
            }
        return out;
    };
    const bool small = double(m) * n * k <= 1e7;
    const auto shapeA = transA ? Shape{k, m} : Shape{m, k};
    const auto shapeB = transB ? Shape{n, k} : Shape{k, n};
    OpCase c;
    c.run = [=](Backend& b) -> std::vector<Output> {
        Buffer da = toDevice(b, a), db = toDevice(b, bm), dc = toDevice(b, c0);
        b.gemm(transA, transB, alpha, da.view(shapeA), db.view(shapeB), beta, dc.view(m, n));
        return {{"c", toHost(b, dc.view(m, n))}};
    };
    auto magnitude = std::make_shared<std::vector<double>>(); // made on first use
    c.checks = {{"c", small ? product(false) : std::vector<double>{}, 2e-6 * k + 1e-6, 1e-5,
                 [=](size_t i, double) {
                     if (magnitude->empty()) *magnitude = product(true);
                     return reductionBound(k + 1, (*magnitude)[i]);
                 }}};
    return c;
}

// The dense layer's products (linearForward, linearBackward): y = x w^T + bias, then dw = dy^T x
// and dbias = the sum of dy's rows. Every operand sits `offset` floats into its buffer, as
// parameters do in the network's arena, so the CUDA backend meets its pointers at every
// alignment its epilogue path has to handle.
OpCase linearCase(int64_t n, int64_t in, int64_t out, int offset)
{
    Rng rng(static_cast<uint64_t>(n * 31 + in * 7 + out + offset));
    const auto off = static_cast<size_t>(offset);
    const auto x = randomVector(rng, size_t(n * in) + off, -1, 1);
    const auto w = randomVector(rng, size_t(out * in) + off, -1, 1);
    const auto bias = randomVector(rng, size_t(out) + off, -1, 1);
    const auto dy = randomVector(rng, size_t(n * out) + off, -1, 1);
    const auto ny = static_cast<size_t>(n * out), nw = static_cast<size_t>(out * in);
    const auto nb = static_cast<size_t>(out);
    std::vector<double> y(ny), yMag(ny), dw(nw), dwMag(nw), db(nb), dbMag(nb);
    for (int64_t r = 0; r < n; ++r)
        for (int64_t o = 0; o < out; ++o) {
            double s = bias[off + size_t(o)], m = std::fabs(s);
            for (int64_t i = 0; i < in; ++i) {
                const double t = double(x[off + size_t(r * in + i)]) * w[off + size_t(o * in + i)];
                s += t;
                m += std::fabs(t);
            }
            y[size_t(r * out + o)] = s;
            yMag[size_t(r * out + o)] = m;
        }
    for (int64_t o = 0; o < out; ++o) {
        for (int64_t i = 0; i < in; ++i) {
            double s = 0, m = 0;
            for (int64_t r = 0; r < n; ++r) {
                const double t =
                    double(dy[off + size_t(r * out + o)]) * x[off + size_t(r * in + i)];
                s += t;
                m += std::fabs(t);
            }
            dw[size_t(o * in + i)] = s;
            dwMag[size_t(o * in + i)] = m;
        }
        double s = 0, m = 0;
        for (int64_t r = 0; r < n; ++r) {
            s += dy[off + size_t(r * out + o)];
            m += std::fabs(dy[off + size_t(r * out + o)]);
        }
        db[size_t(o)] = s;
        dbMag[size_t(o)] = m;
    }
    OpCase c;
    c.run = [=](Backend& b) -> std::vector<Output> {
        Buffer dx = toDevice(b, x), dwt = toDevice(b, w), dbias = toDevice(b, bias),
               ddy = toDevice(b, dy);
        // Outputs start as NaN: both ops overwrite them.
        Buffer dyOut = filledBuffer(b, size_t(n * out) + off, kNaN);
        Buffer dwOut = filledBuffer(b, size_t(out * in) + off, kNaN);
        Buffer dbOut = filledBuffer(b, size_t(out) + off, kNaN);
        b.linearForward(dx.view(n, in, off), dwt.view(out, in, off), dbias.view(1, out, off),
                        dyOut.view(n, out, off));
        b.linearBackward(dx.view(n, in, off), ddy.view(n, out, off), dwOut.view(out, in, off),
                         dbOut.view(1, out, off));
        return {{"y", toHost(b, dyOut.view(n, out, off))},
                {"dw", toHost(b, dwOut.view(out, in, off))},
                {"dbias", toHost(b, dbOut.view(1, out, off))}};
    };
    c.checks = {{"y", y, 2e-6 * double(in) + 1e-6, 1e-5,
                 [=](size_t i, double) { return reductionBound(double(in + 1), yMag[i]); }},
                {"dw", dw, 2e-6 * double(n) + 1e-6, 1e-5,
                 [=](size_t i, double) { return reductionBound(double(n), dwMag[i]); }},
                {"dbias", db, 2e-7 * double(n) + 1e-6, 1e-5,
                 [=](size_t i, double) { return reductionBound(double(n), dbMag[i]); }}};
    return c;
}

// ---- activations, Fourier features, embeddings -------------------------------------------------

// Forward (y from x, or in place), then backward from the reference y (dx from dy, or in
// place over dy). Inputs: uniform over the interesting range with large magnitudes and exact
// values at the start; sine arguments w0 x reach +-100 (a SIREN's first layer).
OpCase activationCase(Activation a, float param, int64_t rows, int64_t cols, bool inPlace)
{
    const auto n = static_cast<size_t>(rows * cols);
    const double p = param;
    Rng rng(n * 7 + static_cast<uint64_t>(a));
    std::vector<float> x;
    if (a == Activation::Sine) {
        const double range = 100.0 / p;
        x = randomVector(rng, n, -range, range);
        const float special[] = {float(range), float(-range), 0.f, float(std::numbers::pi / p)};
        for (size_t i = 0; i < std::size(special) && i < n; ++i)
            x[i] = special[i];
    } else {
        x = randomVector(rng, n, -6, 6);
        const float special[] = {0.f, 1e-3f, -1e-3f, 50.f, -50.f, 100.f, -100.f, 20.f, -20.f};
        for (size_t i = 0; i < std::size(special) && i < n; ++i)
            x[i] = special[i];
    }
    const auto dy = randomVector(rng, n, -1, 1);
    std::vector<double> yRef(n), dxRef(n);
    std::vector<float> yRefF(n), xBack = x;
    for (size_t i = 0; i < n; ++i) {
        yRef[i] = refActivation(a, p, x[i]);
        yRefF[i] = static_cast<float>(yRef[i]);
        // The derivative of (leaky) ReLU at 0 is a convention: backward never sees 0.
        if ((a == Activation::ReLU || a == Activation::LeakyReLU) && x[i] == 0.f) xBack[i] = 0.5f;
        dxRef[i] = dy[i] * refDerivative(a, p, xBack[i]);
    }
    const bool exactOp =
        a == Activation::Identity || a == Activation::ReLU || a == Activation::LeakyReLU;
    const double fwdTol = exactOp ? 0.0 : 1e-5;
    const double bwdTol = exactOp ? 0.0 : 1e-5 * std::max(1.0, p);
    const double rtol = exactOp ? 1e-6 : 1e-5;
    // The sine's derivative is w0 cos(w0 x): its error scales with w0.
    const double scale = a == Activation::Sine ? std::max(1.0, p) : 1.0;
    const Tolerance bwdParity{kTranscendental.atol * scale, kTranscendental.rtol, "transcendental"};

    OpCase c;
    c.run = [=](Backend& b) -> std::vector<Output> {
        Buffer dx = toDevice(b, x);
        Buffer out = filledBuffer(b, n, kNaN);
        const Tensor xv = dx.view(rows, cols), yv = out.view(rows, cols);
        if (inPlace) {
            b.copy(out.data(), dx.data(), n * sizeof(float));
            b.activationForward(a, param, yv, yv);
        } else {
            b.activationForward(a, param, xv, yv);
        }
        std::vector<Output> o = {{"y", toHost(b, yv)}, {"x after forward", toHost(b, xv)}};
        Buffer xb = toDevice(b, xBack), yb = toDevice(b, yRefF), dyb = toDevice(b, dy);
        Buffer grad = filledBuffer(b, n, kNaN);
        const Tensor gv = inPlace ? dyb.view(rows, cols) : grad.view(rows, cols);
        b.activationBackward(a, param, xb.view(rows, cols), yb.view(rows, cols),
                             dyb.view(rows, cols), gv);
        o.push_back({"dx", toHost(b, gv)});
        return o;
    };
    c.checks = {{"y", yRef, fwdTol, rtol, boundOf(kTranscendental), exactOp},
                exact("x after forward", toDouble(x)),
                {"dx", dxRef, bwdTol, rtol, boundOf(bwdParity), exactOp}};
    return c;
}

OpCase fourierCase(int64_t rows, int64_t count, bool inPlace)
{
    const auto n = static_cast<size_t>(rows * count);
    Rng rng(n + 17);
    auto z = randomVector(rng, n, -100, 100);
    z[0] = 0.f;
    const auto dy = randomVector(rng, 2 * n, -1, 1);
    std::vector<double> yRef(2 * n), dzRef(n);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < count; ++j) {
            const double zz = z[static_cast<size_t>(r * count + j)];
            const auto s = static_cast<size_t>(r * 2 * count + j);
            const size_t c = s + static_cast<size_t>(count);
            yRef[s] = std::sin(zz);
            yRef[c] = std::cos(zz);
            dzRef[static_cast<size_t>(r * count + j)] = dy[s] * std::cos(zz) - dy[c] * std::sin(zz);
        }
    OpCase c;
    c.run = [=](Backend& b) -> std::vector<Output> {
        Buffer dz = toDevice(b, z);
        Buffer y = filledBuffer(b, 2 * n, kNaN);
        b.fourierForward(dz.view(rows, count), y.view(rows, 2 * count));
        Buffer ddy = toDevice(b, dy);
        // In place: the gradient overwrites z.
        Buffer g = inPlace ? toDevice(b, z) : filledBuffer(b, n, kNaN);
        b.fourierBackward(inPlace ? g.view(rows, count) : dz.view(rows, count),
                          ddy.view(rows, 2 * count), g.view(rows, count));
        return {{"y", toHost(b, y.view(rows, 2 * count))}, {"dz", toHost(b, g.view(rows, count))}};
    };
    // dy_sin cos(z) - dy_cos sin(z): two transcendental terms of magnitude <= 1.
    c.checks = {{"y", yRef, 1e-5, 0.0, boundOf(kTranscendental)},
                {"dz", dzRef, 2e-5, 0.0,
                 boundOf({2 * kTranscendental.atol, kTranscendental.rtol, "transcendental"})}};
    return c;
}

// The hash encoding against a double-precision interpolation over the same vertices and weights
// (hashgrid::corners: the geometry is integer and float work every backend must do alike).
// Coordinates run a little past [-1, 1] and hit the edges exactly, to test the clamping.
OpCase hashGridCase(int64_t rows, int levels, int features, int log2Table, double base,
                    double scale)
{
    const HashGrid g = hashgrid::make(levels, features, log2Table, base, scale);
    Rng rng(static_cast<uint64_t>(rows * 131 + levels * 7 + log2Table));
    auto x = randomVector(rng, static_cast<size_t>(rows * 2), -1.05, 1.05);
    x[0] = -1.f;
    if (x.size() > 3) x[3] = 1.f;
    const auto tables = randomVector(rng, static_cast<size_t>(g.rows() * features), -1, 1);
    const auto dy = randomVector(rng, static_cast<size_t>(rows * g.outputs()), -1, 1);
    std::vector<double> yRef(dy.size()), dRef(tables.size(), 0.0);
    for (int64_t r = 0; r < rows; ++r)
        for (int l = 0; l < levels; ++l) {
            const hashgrid::Corners c = hashgrid::corners(g, l, x[r * 2], x[r * 2 + 1]);
            const int64_t block = l * g.tableRows() * features;
            for (int f = 0; f < features; ++f) {
                const size_t o = static_cast<size_t>(r * g.outputs() + l * features + f);
                for (int k = 0; k < 4; ++k) {
                    const auto t = static_cast<size_t>(block + c.row[k] * features + f);
                    yRef[o] += double(c.weight[k]) * tables[t];
                    dRef[t] += double(c.weight[k]) * dy[o];
                }
            }
        }
    OpCase c;
    c.run = [=](Backend& b) -> std::vector<Output> {
        Buffer xb = toDevice(b, x), tb = toDevice(b, tables), dyb = toDevice(b, dy);
        Buffer y = filledBuffer(b, dy.size(), kNaN), dt = filledBuffer(b, tables.size(), kNaN);
        const Tensor tv = tb.view(g.rows(), features), dtv = dt.view(g.rows(), features);
        b.hashGridForward(g, xb.view(rows, 2), tv, y.view(rows, g.outputs()));
        b.hashGridBackward(g, xb.view(rows, 2), dyb.view(rows, g.outputs()), dtv);
        return {{"y", toHost(b, y.view(rows, g.outputs()))}, {"dtables", toHost(b, dtv)}};
    };
    // y: four products of magnitude <= 1. dtables: sums of up to rows * 4 products (hashed
    // levels collect many), in each backend's own order.
    const double sumBound = reductionBound(4.0 * static_cast<double>(rows), 4.0);
    c.checks = {{"y", yRef, 1e-6, 0.0, boundOf(kElementwise)},
                {"dtables", dRef, sumBound, 0.0, [sumBound](size_t, double) { return sumBound; }}};
    return c;
}

OpCase embeddingCase(int64_t rows, int64_t context, int64_t vocab, int64_t dim)
{
    Rng rng(static_cast<uint64_t>(rows * 3 + vocab));
    std::vector<float> ids(static_cast<size_t>(rows * context));
    for (auto& id : ids)
        id = static_cast<float>(rng.below(static_cast<uint64_t>(vocab)));
    // Repeats inside one row and across rows.
    for (int64_t c = 0; c < context; ++c)
        ids[static_cast<size_t>(c)] = static_cast<float>(vocab - 1);
    if (rows > 1) ids[static_cast<size_t>(context)] = static_cast<float>(vocab - 1);
    const auto table = randomVector(rng, static_cast<size_t>(vocab * dim), -1, 1);
    const int64_t width = context * dim;
    const auto dy = randomVector(rng, static_cast<size_t>(rows * width), -1, 1);

    std::vector<double> yRef(static_cast<size_t>(rows * width));
    std::vector<double> dtRef(static_cast<size_t>(vocab * dim), 0.0), magnitude = dtRef;
    std::vector<double> uses(static_cast<size_t>(vocab), 0.0);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < context; ++c) {
            const auto id = static_cast<int64_t>(ids[static_cast<size_t>(r * context + c)]);
            uses[static_cast<size_t>(id)] += 1;
            for (int64_t d = 0; d < dim; ++d) {
                const auto yi = static_cast<size_t>(r * width + c * dim + d);
                yRef[yi] = table[static_cast<size_t>(id * dim + d)];
                dtRef[static_cast<size_t>(id * dim + d)] += dy[yi];
                magnitude[static_cast<size_t>(id * dim + d)] += std::fabs(dy[yi]);
            }
        }
    OpCase c;
    c.run = [=](Backend& b) -> std::vector<Output> {
        Buffer dIds = toDevice(b, ids), dTable = toDevice(b, table);
        Buffer y = filledBuffer(b, static_cast<size_t>(rows * width), kNaN);
        b.embeddingForward(dIds.view(rows, context), dTable.view(vocab, dim), y.view(rows, width));
        Buffer ddy = toDevice(b, dy);
        Buffer dt = filledBuffer(b, static_cast<size_t>(vocab * dim), 777.f); // overwritten
        b.embeddingBackward(dIds.view(rows, context), ddy.view(rows, width), dt.view(vocab, dim));
        return {{"y", toHost(b, y.view(rows, width))}, {"dtable", toHost(b, dt.view(vocab, dim))}};
    };
    // Each gradient element sums the dy slices of one id: its bound follows that id's count and
    // the magnitude of those slices.
    c.checks = {exact("y", yRef),
                {"dtable", dtRef, 1e-6 * double(rows) + 1e-6, 1e-5, [=](size_t i, double) {
                     return reductionBound(uses[i / size_t(dim)], magnitude[i]);
                 }}};
    return c;
}

// Windows of rows: forward copies (exact); backward sums each number's windows in window order,
// the same bits on every backend.
OpCase windowsCase(int64_t rows, int64_t cols, int64_t step, int64_t width, int64_t q)
{
    Rng rng(static_cast<uint64_t>(rows * 131 + cols * 7 + step));
    const auto x = randomVector(rng, static_cast<size_t>(rows * cols), -1, 1);
    const auto dy = randomVector(rng, static_cast<size_t>(rows * q * width), -1, 1);
    std::vector<double> yRef(dy.size()), dxRef(x.size(), 0.0);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t w = 0; w < q; ++w)
            for (int64_t j = 0; j < width; ++j) {
                const auto yi = static_cast<size_t>((r * q + w) * width + j);
                const auto xi = static_cast<size_t>(r * cols + w * step + j);
                yRef[yi] = x[xi];
                dxRef[xi] += dy[yi];
            }
    OpCase c;
    c.run = [=](Backend& b) -> std::vector<Output> {
        Buffer dX = toDevice(b, x), dDy = toDevice(b, dy);
        Buffer y = filledBuffer(b, dy.size(), kNaN);
        b.windows(dX.view(rows, cols), step, y.view(rows * q, width));
        Buffer dx = filledBuffer(b, x.size(), 777.f); // overwritten, 0 where no window reaches
        b.windowsBackward(dDy.view(rows * q, width), step, dx.view(rows, cols));
        return {{"y", toHost(b, y.view(rows * q, width))}, {"dx", toHost(b, dx.view(rows, cols))}};
    };
    c.checks = {exact("y", yRef), {"dx", dxRef, 1e-6, 1e-6, boundOf(kExact), true}};
    return c;
}

// ---- layer and batch normalisation (NormMath.h) -------------------------------------------------

// Normalisation of groups of n values (a row for layer norm, a column for batch norm) in double:
// the references of both cases. get(g, i) / put(g, i, v) address element i of group g.
struct NormReference {
    std::vector<double> y, dx, dgamma, dbeta, mean, rstd, var;
};

// Each output of a normalisation sums n terms of magnitude about 1 (the inputs are O(1), so
// 1 / std is too): a bound that grows like sqrt(n), as for the other reductions.
Check normCheck(const QString& name, std::vector<double> ref, int64_t n)
{
    const double tol = 2e-6 * std::sqrt(double(std::max<int64_t>(n, 1)));
    return {name, std::move(ref), tol, 1e-5,
            [tol](size_t, double want) { return 2 * tol + 2e-5 * std::fabs(want); }};
}

// rows x cols; byRow: layer norm (each row a group), else batch norm (each column). The running
// statistics are used instead of the batch's when running is given (batch norm, inference).
NormReference normReference(const std::vector<float>& x, const std::vector<float>& gamma,
                            const std::vector<float>& beta, const std::vector<float>& dy,
                            int64_t rows, int64_t cols, bool byRow,
                            const std::vector<float>* runMean, const std::vector<float>* runVar)
{
    const int64_t groups = byRow ? rows : cols, n = byRow ? cols : rows;
    const auto at = [&](int64_t g, int64_t i) {
        return static_cast<size_t>(byRow ? g * cols + i : i * cols + g);
    };
    const auto channel = [&](int64_t g, int64_t i) { return static_cast<size_t>(byRow ? i : g); };
    NormReference r;
    const auto total = static_cast<size_t>(rows * cols);
    r.y.assign(total, 0);
    r.dx.assign(total, 0);
    r.dgamma.assign(static_cast<size_t>(cols), 0);
    r.dbeta.assign(static_cast<size_t>(cols), 0);
    for (int64_t g = 0; g < groups; ++g) {
        double m = 0, v = 0;
        for (int64_t i = 0; i < n; ++i)
            m += x[at(g, i)];
        m /= double(n);
        for (int64_t i = 0; i < n; ++i)
            v += (x[at(g, i)] - m) * (x[at(g, i)] - m);
        v /= double(n);
        r.var.push_back(v);
        if (runMean) {
            m = (*runMean)[static_cast<size_t>(g)];
            v = (*runVar)[static_cast<size_t>(g)];
        }
        const double rstd = 1 / std::sqrt(v + double(il::normmath::kEps));
        r.mean.push_back(m);
        r.rstd.push_back(rstd);
        double meanG = 0, meanGX = 0;
        for (int64_t i = 0; i < n; ++i) {
            const size_t k = at(g, i), c = channel(g, i);
            const double xhat = (x[k] - m) * rstd;
            r.y[k] = xhat * gamma[c] + beta[c];
            meanG += double(dy[k]) * gamma[c];
            meanGX += double(dy[k]) * gamma[c] * xhat;
            r.dgamma[c] += dy[k] * xhat;
            r.dbeta[c] += dy[k];
        }
        meanG /= double(n);
        meanGX /= double(n);
        for (int64_t i = 0; i < n; ++i) {
            const size_t k = at(g, i), c = channel(g, i);
            const double xhat = (x[k] - m) * rstd;
            r.dx[k] = rstd * (double(dy[k]) * gamma[c] - meanG - xhat * meanGX);
        }
    }
    return r;
}

OpCase layerNormCase(int64_t rows, int64_t cols)
{
    Rng rng(static_cast<uint64_t>(rows * 1000 + cols));
    const auto n = static_cast<size_t>(rows * cols);
    // An offset and a scale per row, so the statistics matter.
    std::vector<float> x = randomVector(rng, n, -1, 1);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
            x[static_cast<size_t>(r * cols + c)] =
                x[static_cast<size_t>(r * cols + c)] * float(1 + r % 3) + float(r % 5) - 2.f;
    const auto gamma = randomVector(rng, static_cast<size_t>(cols), 0.5, 1.5);
    const auto beta = randomVector(rng, static_cast<size_t>(cols), -1, 1);
    const auto dy = randomVector(rng, n, -1, 1);
    const NormReference ref = normReference(x, gamma, beta, dy, rows, cols, true, nullptr, nullptr);
    std::vector<double> stats;
    for (int64_t r = 0; r < rows; ++r) {
        stats.push_back(ref.mean[static_cast<size_t>(r)]);
        stats.push_back(ref.rstd[static_cast<size_t>(r)]);
    }
    OpCase c;
    c.run = [=](Backend& b) -> std::vector<Output> {
        Buffer dX = toDevice(b, x), dG = toDevice(b, gamma), dB = toDevice(b, beta);
        Buffer y = filledBuffer(b, n, kNaN),
               st = filledBuffer(b, static_cast<size_t>(rows * 2), kNaN);
        b.layerNormForward(dX.view(rows, cols), dG.view(1, cols), dB.view(1, cols),
                           il::normmath::kEps, y.view(rows, cols), st.view(rows, 2));
        Buffer dDy = toDevice(b, dy), dx = filledBuffer(b, n, kNaN);
        Buffer dg = filledBuffer(b, static_cast<size_t>(cols), 777.f); // overwritten
        Buffer db = filledBuffer(b, static_cast<size_t>(cols), 777.f);
        b.layerNormBackward(dX.view(rows, cols), dG.view(1, cols), st.view(rows, 2),
                            dDy.view(rows, cols), dx.view(rows, cols), dg.view(1, cols),
                            db.view(1, cols));
        return {{"y", toHost(b, y.view(rows, cols))},
                {"stats", toHost(b, st.view(rows, 2))},
                {"dx", toHost(b, dx.view(rows, cols))},
                {"dgamma", toHost(b, dg.view(1, cols))},
                {"dbeta", toHost(b, db.view(1, cols))}};
    };
    c.checks = {normCheck("y", ref.y, cols), normCheck("stats", stats, cols),
                normCheck("dx", ref.dx, cols), normCheck("dgamma", ref.dgamma, rows),
                normCheck("dbeta", ref.dbeta, rows)};
    return c;
}

// Batch norm: a training forward (batch statistics, running ones updated), its backward, then an
// inference forward with the updated running statistics.
OpCase batchNormCase(int64_t rows, int64_t cols)
{
    Rng rng(static_cast<uint64_t>(rows * 7919 + cols));
    const auto n = static_cast<size_t>(rows * cols);
    std::vector<float> x = randomVector(rng, n, -1, 1);
    for (int64_t r = 0; r < rows; ++r) // a mean and a spread per column
        for (int64_t c = 0; c < cols; ++c)
            x[static_cast<size_t>(r * cols + c)] =
                x[static_cast<size_t>(r * cols + c)] * float(1 + c % 3) + float(c % 5) - 2.f;
    const auto gamma = randomVector(rng, static_cast<size_t>(cols), 0.5, 1.5);
    const auto beta = randomVector(rng, static_cast<size_t>(cols), -1, 1);
    const auto dy = randomVector(rng, n, -1, 1);
    const auto runMean0 = randomVector(rng, static_cast<size_t>(cols), -1, 1);
    const auto runVar0 = randomVector(rng, static_cast<size_t>(cols), 0.5, 2);
    const float momentum = 0.1f;
    const NormReference train =
        normReference(x, gamma, beta, dy, rows, cols, false, nullptr, nullptr);
    std::vector<float> runMean(runMean0), runVar(runVar0);
    std::vector<double> runMeanRef, runVarRef;
    for (size_t c = 0; c < static_cast<size_t>(cols); ++c) {
        const double unbiased =
            rows > 1 ? train.var[c] * double(rows) / double(rows - 1) : train.var[c];
        runMeanRef.push_back((1 - momentum) * double(runMean0[c]) + momentum * train.mean[c]);
        runVarRef.push_back((1 - momentum) * double(runVar0[c]) + momentum * unbiased);
        runMean[c] = static_cast<float>(runMeanRef.back());
        runVar[c] = static_cast<float>(runVarRef.back());
    }
    const NormReference infer =
        normReference(x, gamma, beta, dy, rows, cols, false, &runMean, &runVar);
    OpCase c;
    c.run = [=](Backend& b) -> std::vector<Output> {
        Buffer dX = toDevice(b, x), dG = toDevice(b, gamma), dB = toDevice(b, beta);
        Buffer rm = toDevice(b, runMean0), rv = toDevice(b, runVar0);
        Buffer y = filledBuffer(b, n, kNaN), yi = filledBuffer(b, n, kNaN);
        b.batchNormForward(dX.view(rows, cols), dG.view(1, cols), dB.view(1, cols),
                           il::normmath::kEps, momentum, true, rm.view(1, cols), rv.view(1, cols),
                           y.view(rows, cols));
        Buffer dDy = toDevice(b, dy), dx = filledBuffer(b, n, kNaN);
        Buffer dg = filledBuffer(b, static_cast<size_t>(cols), 777.f); // overwritten
        Buffer db = filledBuffer(b, static_cast<size_t>(cols), 777.f);
        b.batchNormBackward(dX.view(rows, cols), dG.view(1, cols), il::normmath::kEps,
                            dDy.view(rows, cols), dx.view(rows, cols), dg.view(1, cols),
                            db.view(1, cols));
        b.batchNormForward(dX.view(rows, cols), dG.view(1, cols), dB.view(1, cols),
                           il::normmath::kEps, momentum, false, rm.view(1, cols), rv.view(1, cols),
                           yi.view(rows, cols));
        return {{"y", toHost(b, y.view(rows, cols))},
                {"running mean", toHost(b, rm.view(1, cols))},
                {"running var", toHost(b, rv.view(1, cols))},
                {"dx", toHost(b, dx.view(rows, cols))},
                {"dgamma", toHost(b, dg.view(1, cols))},
                {"dbeta", toHost(b, db.view(1, cols))},
                {"y (inference)", toHost(b, yi.view(rows, cols))}};
    };
    c.checks = {normCheck("y", train.y, rows),
                normCheck("running mean", runMeanRef, rows),
                normCheck("running var", runVarRef, rows),
                normCheck("dx", train.dx, rows),
                normCheck("dgamma", train.dgamma, rows),
                normCheck("dbeta", train.dbeta, rows),
                normCheck("y (inference)", infer.y, 1)};
    return c;
}

// Dropout: the mask is a function of (seed, counter, index) only, so every backend draws the same
// one, bit for bit; the counter moves on by one.
OpCase dropoutCase(int64_t rows, int64_t cols, float p)
{
    Rng rng(static_cast<uint64_t>(rows * 31 + cols));
    const auto n = static_cast<size_t>(rows * cols);
    const auto x = randomVector(rng, n, -2, 2);
    const auto dy = randomVector(rng, n, -1, 1);
    const std::vector<float> state = {12345.f, 77.f};
    std::vector<double> yRef(n), maskRef(n), dxRef(n);
    for (size_t i = 0; i < n; ++i) {
        const float s = il::dropoutmath::scale(state[0], state[1], static_cast<int64_t>(i), p);
        maskRef[i] = s;
        yRef[i] = x[i] * s;
        dxRef[i] = dy[i] * s;
    }
    OpCase c;
    c.run = [=](Backend& b) -> std::vector<Output> {
        Buffer dX = toDevice(b, x), st = toDevice(b, state), dDy = toDevice(b, dy);
        Buffer y = filledBuffer(b, n, kNaN), mask = filledBuffer(b, n, kNaN),
               dx = filledBuffer(b, n, kNaN);
        b.dropoutForward(dX.view(rows, cols), p, st.view(1, 2), y.view(rows, cols),
                         mask.view(rows, cols));
        b.dropoutBackward(dDy.view(rows, cols), mask.view(rows, cols), dx.view(rows, cols));
        return {{"y", toHost(b, y.view(rows, cols))},
                {"mask", toHost(b, mask.view(rows, cols))},
                {"dx", toHost(b, dx.view(rows, cols))},
                {"state", toHost(b, st.view(1, 2))}};
    };
    c.checks = {exact("y", yRef), exact("mask", maskRef), exact("dx", dxRef),
                exact("state", {12345.0, 78.0})};
    return c;
}

// ---- losses and softmax ------------------------------------------------------------------------

// Predictions and targets of the right range for a loss: regression values, logits with hard
// labels and soft targets, or logits with class ids.
void lossInputs(LossKind kind, Rng& rng, int64_t rows, int64_t k, std::vector<float>& pred,
                std::vector<float>& target)
{
    const auto n = static_cast<size_t>(rows * k);
    switch (kind) {
    case LossKind::MSE:
    case LossKind::MAE:
        pred = randomVector(rng, n, -2, 2);
        target = randomVector(rng, n, -2, 2);
        break;
    case LossKind::BinaryCrossEntropy:
        pred = randomVector(rng, n, -8, 8);
        target.resize(n);
        for (size_t i = 0; i < n; ++i)
            target[i] = i % 3 == 2 ? static_cast<float>(rng.uniform()) : float(rng.below(2));
        break;
    case LossKind::CrossEntropy:
        pred = randomVector(rng, n, -5, 5);
        target.resize(static_cast<size_t>(rows));
        for (auto& t : target)
            t = static_cast<float>(rng.below(static_cast<uint64_t>(k)));
        break;
    }
}

// Class weights for a weighted loss case: BCE's two (targets 0 and 1), or one per class, spread
// over [0.2, 5] the way balanced weights of an imbalanced table are (a rare class weighs much
// more than 1), with one class at weight 0.
std::vector<float> lossWeights(LossKind kind, Rng& rng, int64_t k)
{
    if (kind == LossKind::BinaryCrossEntropy) return {0.55f, 4.5f};
    std::vector<float> w = randomVector(rng, static_cast<size_t>(k), 0.2f, 5.f);
    if (k > 2) w[1] = 0.f;
    return w;
}

// lossForwardBackward, then lossForward into another slot (with accumulate both start at 1.5
// and add to it); lossForward must leave the gradient buffer alone. weighted: with class
// weights (lossWeights).
OpCase lossCase(LossKind kind, float smoothing, int64_t rows, int64_t k, bool accumulate,
                bool weighted = false)
{
    const auto n = static_cast<size_t>(rows * k);
    Rng rng(n * 13 + static_cast<uint64_t>(kind));
    std::vector<float> pred, target;
    lossInputs(kind, rng, rows, k, pred, target);
    const bool ce = kind == LossKind::CrossEntropy, bce = kind == LossKind::BinaryCrossEntropy;
    const int64_t targetCols = ce ? 1 : k;
    const std::vector<float> weights = weighted ? lossWeights(kind, rng, k) : std::vector<float>{};
    double wMax = 1;
    for (float w : weights)
        wMax = std::max(wMax, double(w));
    std::vector<double> gRef;
    const double lRef =
        refLoss(kind, smoothing, pred, target, rows, k, &gRef, weights) + (accumulate ? 1.5 : 0.0);
    double gMax = 0;
    for (double g : gRef)
        gMax = std::max(gMax, std::fabs(g));

    // Against the CPU: the loss is a mean of non-negative terms, each a transcendental
    // expression (log-sum-exp, softplus) whose argument's rounding exp amplifies; with
    // accumulate, one more rounding of 1.5 + loss. Softmax z - max lies in [-10, 0] for logits
    // in [-5, 5]; softplus sees |z| <= 8.
    const double terms = double(ce ? rows : rows * k);
    const double maxExpArgument = ce ? 10 : 8;
    const double termTol =
        ce || bce ? kTranscendental.rtol + expArgumentError(maxExpArgument) : kElementwise.rtol;
    const Bound lossBound = [=](size_t, double want) {
        const double lossValue = accumulate ? want - 1.5 : want;
        return (termTol + reductionBound(terms, 1.0)) * std::fabs(lossValue) +
               (accumulate ? 2 * kUlp1 * std::fabs(want) : 0.0) + 1e-30;
    };
    // The gradient of the mean: (softmax - q) / rows, (sigmoid - t) / n, 2 d / n or sign(d) / n.
    // Probabilities and sigmoids are at most 1, so the absolute tolerance is that of an O(1)
    // value, divided like the gradient; softmax adds a row sum of k exponentials.
    // A weight multiplies each gradient element once more (one rounding): the bounds scale with
    // the largest weight.
    const double denom = (ce ? double(rows) : double(rows * k)) / wMax;
    Tolerance gt = kElementwise;
    if (bce)
        gt = {kTranscendental.atol + expArgumentError(maxExpArgument), kTranscendental.rtol, ""};
    if (ce)
        gt = {kTranscendental.atol + expArgumentError(maxExpArgument) +
                  reductionBound(double(k), 1.0),
              kTranscendental.rtol, ""};

    OpCase c;
    c.run = [=](Backend& b) -> std::vector<Output> {
        Buffer dp = toDevice(b, pred), dt = toDevice(b, target);
        Buffer dw = toDevice(b, weights.empty() ? std::vector<float>{0.f} : weights);
        const ConstTensor wv =
            weights.empty() ? ConstTensor() : ConstTensor(dw.view(1, int64_t(weights.size())));
        Buffer grad = filledBuffer(b, n, kNaN);
        Buffer lossOut = filledBuffer(b, 2, accumulate ? 1.5f : kNaN);
        const Tensor pv = dp.view(rows, k), tv = dt.view(rows, targetCols);
        b.lossForwardBackward(kind, smoothing, wv, pv, tv, grad.view(rows, k), lossOut.data(),
                              accumulate);
        std::vector<Output> o = {{"gradient", toHost(b, grad.view(rows, k))}};
        b.fill(grad.view(rows, k), 12345.f);
        b.lossForward(kind, smoothing, wv, pv, tv, lossOut.data() + 1, accumulate);
        const auto losses = toHost(b, lossOut.view(1, 2));
        o.push_back({"lossForwardBackward", {losses[0]}});
        o.push_back({"lossForward", {losses[1]}});
        o.push_back({"gradient after lossForward", toHost(b, grad.view(rows, k))});
        return o;
    };
    const double lossAtol = accumulate ? 1e-5 : 1e-6;
    c.checks = {{"gradient", gRef, 1e-5 * gMax, 1e-4, boundOf({gt.atol / denom, gt.rtol, ""})},
                {"lossForwardBackward", {lRef}, lossAtol, 1e-4, lossBound},
                {"lossForward", {lRef}, lossAtol, 1e-4, lossBound, false, 1},
                exact("gradient after lossForward", std::vector<double>(n, 12345.0))};
    return c;
}

OpCase softmaxRowsCase(int64_t rows, int64_t cols, float temperature)
{
    const auto n = static_cast<size_t>(rows * cols);
    Rng rng(n + 1);
    auto z = randomVector(rng, n, -10, 10);
    if (cols > 2) { // one row of huge logits: the max must be subtracted
        z[0] = 1000.f;
        z[1] = -1000.f;
        z[2] = 999.f;
    }
    std::vector<double> ref(n), argRel(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
        const float* zr = z.data() + r * cols;
        double m = -INFINITY, s = 0, largest = 0;
        for (int64_t j = 0; j < cols; ++j) {
            m = std::max(m, double(zr[j]) / temperature);
            largest = std::max(largest, std::fabs(double(zr[j]) / temperature));
        }
        for (int64_t j = 0; j < cols; ++j)
            s += std::exp(double(zr[j]) / temperature - m);
        for (int64_t j = 0; j < cols; ++j)
            ref[static_cast<size_t>(r * cols + j)] = std::exp(double(zr[j]) / temperature - m) / s;
        argRel[static_cast<size_t>(r)] = expArgumentError(2 * largest);
    }
    OpCase c;
    c.run = [=](Backend& b) -> std::vector<Output> {
        Buffer dz = toDevice(b, z);
        Buffer p = filledBuffer(b, n, kNaN);
        b.softmaxRows(dz.view(rows, cols), temperature, p.view(rows, cols));
        return {{"p", toHost(b, p.view(rows, cols))}};
    };
    // Per row against the CPU: exp's argument error (z / T reaches 2000 in the huge row), the
    // row sum of cols terms, and the division.
    c.checks = {{"p", ref, 1e-7, 1e-5, [=](size_t i, double want) {
                     const double rel = kTranscendental.rtol + argRel[i / size_t(cols)] +
                                        reductionBound(double(cols), 1.0);
                     return 1e-12 + rel * std::fabs(want);
                 }}};
    return c;
}

// ---- data movement -----------------------------------------------------------------------------

OpCase gatherRowsCase(int64_t srcRows, int64_t cols, int64_t first, int64_t dstRows)
{
    Rng rng(static_cast<uint64_t>(srcRows));
    const auto src = randomVector(rng, static_cast<size_t>(srcRows * cols), -1, 1);
    const std::vector<int32_t> index = rng.permutation(srcRows);
    std::vector<double> ref(static_cast<size_t>(dstRows * cols));
    for (int64_t i = 0; i < dstRows; ++i)
        for (int64_t j = 0; j < cols; ++j)
            ref[static_cast<size_t>(i * cols + j)] =
                src[static_cast<size_t>(index[static_cast<size_t>(first + i)] * cols + j)];
    OpCase c;
    c.run = [=](Backend& b) -> std::vector<Output> {
        Buffer dsrc = toDevice(b, src);
        IndexBuffer didx(&b, index.size());
        b.upload(didx.data(), index.data(), index.size() * sizeof(int32_t));
        Buffer dst = filledBuffer(b, static_cast<size_t>(dstRows * cols), kNaN);
        b.gatherRows(dsrc.view(srcRows, cols), didx.data(), first, dst.view(dstRows, cols));
        return {{"dst", toHost(b, dst.view(dstRows, cols))}};
    };
    c.checks = {exact("dst", ref)};
    return c;
}

// ---- the table -----------------------------------------------------------------------------

using Shapes = std::vector<std::pair<int64_t, int64_t>>;

// Odd shapes (1x1, 7x13, 1000x3) catch vectorisation tails; those above 100k elements run the
// CPU's multithreaded paths; 4096-row shapes are a SIREN batch on a device.
void addElementwise(std::vector<Row>& t)
{
    for (auto [r, c] : Shapes{{1, 1}, {7, 13}, {400, 301}, {1000, 3}, {4096, 256}})
        t.push_back({"fill " + shapeName(r, c), [=] { return fillCase(r, c); }});
    for (auto [r, c] :
         Shapes{{1, 1}, {7, 13}, {1000, 3}, {3, 1001}, {317, 331}, {100003, 1}, {4096, 256}})
        t.push_back({"broadcastRows " + shapeName(r, c), [=] { return broadcastRowsCase(r, c); }});
    for (auto [r, c] : Shapes{{1, 1},
                              {7, 13},
                              {1000, 3},
                              {3, 1001},
                              {317, 331},
                              {100003, 1},
                              {1, 100003},
                              {4096, 256},
                              {100000, 1},
                              {3, 5000}})
        for (float beta : {0.f, 1.f, 0.5f})
            t.push_back({QStringLiteral("sumRows %1 beta=%2").arg(shapeName(r, c)).arg(beta),
                         [=] { return sumRowsCase(r, c, beta); }});
    for (auto [r, c] : Shapes{{1, 1},
                              {7, 13},
                              {1000, 3},
                              {3, 1001},
                              {317, 331},
                              {100003, 1},
                              {1001, 301},
                              {1, 1000003},
                              {4096, 256}})
        t.push_back({"sumSquares " + shapeName(r, c), [=] { return sumSquaresCase(r, c); }});
    const float coeffs[][2] = {{2.f, -0.5f}, {1.f, 0.f}, {0.f, 1.f}, {-1.5f, 0.25f}};
    for (auto [r, c] : Shapes{{1, 1}, {7, 13}, {1000, 3}, {317, 331}})
        for (const auto& k : coeffs)
            t.push_back(
                {QStringLiteral("axpby %1 a=%2 b=%3").arg(shapeName(r, c)).arg(k[0]).arg(k[1]),
                 [=] { return axpbyCase(r, c, k[0], k[1]); }});
}

void addGemm(std::vector<Row>& t)
{
    // m x n x k. 4096x256x256: a SIREN layer's forward on 4096 pixels; 256x256x4096: its weight
    // gradient, summing over the batch (the longest reductions of a training step).
    const int sizes[][3] = {{1, 1, 1},        {7, 13, 5},      {1000, 3, 17},  {3, 1000, 2},
                            {65, 129, 257},   {300, 401, 33},  {257, 129, 65}, {1000, 3, 2},
                            {4096, 256, 256}, {256, 256, 4096}};
    const float ab[][2] = {{1.f, 0.f}, {0.75f, -1.5f}};
    for (const auto& s : sizes)
        for (int tr = 0; tr < 4; ++tr)
            for (const auto& p : ab) {
                const bool ta = tr & 1, tb = tr & 2;
                const int m = s[0], n = s[1], k = s[2];
                const float alpha = p[0], beta = p[1];
                t.push_back({QStringLiteral("gemm %1x%2x%3 %4%5 a=%6 b=%7")
                                 .arg(m)
                                 .arg(n)
                                 .arg(k)
                                 .arg(ta ? "T" : "N", tb ? "T" : "N")
                                 .arg(alpha)
                                 .arg(beta),
                             [=] { return gemmCase(m, n, k, ta, tb, alpha, beta); }});
            }
    // n x in -> out: SIREN's first, middle and last layers on 4096 pixels, a table's layers,
    // an empty batch and one row.
    const int64_t linear[][3] = {{4096, 2, 256}, {4096, 256, 256}, {4096, 256, 1}, {150, 4, 16},
                                 {1, 3, 5},      {0, 4, 3},        {33, 7, 9}};
    for (const auto& l : linear)
        for (int offset : {0, 1, 2, 3, 4})
            t.push_back({QStringLiteral("linear %1x%2->%3 offset %4")
                             .arg(l[0])
                             .arg(l[1])
                             .arg(l[2])
                             .arg(offset),
                         [=] { return linearCase(l[0], l[1], l[2], offset); }});
}

void addLayerOps(std::vector<Row>& t)
{
    const std::pair<Activation, float> acts[] = {
        {Activation::Identity, 0.f}, {Activation::ReLU, 0.f},    {Activation::LeakyReLU, 0.1f},
        {Activation::Tanh, 0.f},     {Activation::Sigmoid, 0.f}, {Activation::Sine, 30.f},
        {Activation::Sine, 1.f},     {Activation::Gelu, 0.f},    {Activation::Silu, 0.f}};
    for (const auto& [act, p] : acts)
        for (auto [r, c] : Shapes{{1, 1}, {7, 13}, {1000, 3}, {317, 331}})
            for (bool inPlace : {false, true})
                t.push_back({QStringLiteral("activation %1(%2) %3%4")
                                 .arg(QString::fromStdString(activationName(act)))
                                 .arg(p)
                                 .arg(shapeName(r, c), inPlace ? " in-place" : ""),
                             [=] { return activationCase(act, p, r, c, inPlace); }});
    for (auto [r, c] : Shapes{{1, 1}, {7, 13}, {1000, 3}, {301, 199}, {4096, 128}})
        for (bool inPlace : {false, true})
            t.push_back(
                {QStringLiteral("fourier %1%2").arg(shapeName(r, c), inPlace ? " in-place" : ""),
                 [=] { return fourierCase(r, c, inPlace); }});
    struct GridShape {
        int64_t rows;
        int levels, features, log2Table;
        double base, scale;
    };
    // Direct tables, hashed fine levels (collisions), the layer's defaults, odd tails.
    for (const GridShape& h :
         {GridShape{1, 1, 1, 4, 2, 1}, GridShape{1000, 4, 2, 6, 2, 2},
          GridShape{4096, 16, 2, 12, 16, 1.26}, GridShape{37, 3, 3, 8, 4, 1.5}})
        t.push_back({QStringLiteral("hashgrid %1 rows L%2 F%3 T2^%4 base %5 x%6")
                         .arg(h.rows)
                         .arg(h.levels)
                         .arg(h.features)
                         .arg(h.log2Table)
                         .arg(h.base)
                         .arg(h.scale),
                     [=] {
                         return hashGridCase(h.rows, h.levels, h.features, h.log2Table, h.base,
                                             h.scale);
                     }});
    const int64_t norms[][2] = {{1, 1}, {1, 7}, {3, 5}, {64, 24}, {2048, 128}, {37, 300}};
    for (const auto& d : norms) {
        t.push_back(
            {"layernorm " + shapeName(d[0], d[1]), [=] { return layerNormCase(d[0], d[1]); }});
        t.push_back(
            {"batchnorm " + shapeName(d[0], d[1]), [=] { return batchNormCase(d[0], d[1]); }});
    }
    for (const auto& [r, c, p] : {std::tuple{1, 1, 0.5f}, {7, 13, 0.1f}, {256, 300, 0.5f}})
        t.push_back({"dropout " + shapeName(r, c) + QStringLiteral(" p %1").arg(p),
                     [=] { return dropoutCase(r, c, p); }});
    // 3000x4 v3: ids with over 2048 positions each (the CUDA backend's scan path), 130 dims
    // (two passes of 128); v50000: a word-sized vocabulary, most rows unused.
    const int64_t emb[][4] = {{1, 1, 1, 1},       {7, 3, 27, 10},    {1000, 2, 5, 3},
                              {2000, 4, 100, 17}, {4096, 3, 28, 16}, {3000, 4, 3, 130},
                              {512, 8, 50000, 8}};
    for (const auto& e : emb)
        t.push_back(
            {QStringLiteral("embedding %1x%2 v%3 d%4").arg(e[0]).arg(e[1]).arg(e[2]).arg(e[3]),
             [=] { return embeddingCase(e[0], e[1], e[2], e[3]); }});
    // rows, cols, step, width, windows: a convolution's (step C, width K C, every window), one
    // window, windows that overlap by more than half, gaps between windows, windows that stop
    // short of the row's end, and a names batch's size.
    const int64_t win[][5] = {{1, 1, 1, 1, 1},      {3, 10, 2, 6, 3}, {1, 8, 8, 8, 1},
                              {5, 12, 1, 5, 8},     {4, 10, 4, 2, 3}, {2, 10, 2, 3, 2},
                              {512, 128, 16, 48, 6}};
    for (const auto& w : win)
        t.push_back({QStringLiteral("windows %1x%2 step %3 width %4 q%5")
                         .arg(w[0])
                         .arg(w[1])
                         .arg(w[2])
                         .arg(w[3])
                         .arg(w[4]),
                     [=] { return windowsCase(w[0], w[1], w[2], w[3], w[4]); }});
}

void addLosses(std::vector<Row>& t)
{
    const std::pair<LossKind, float> kinds[] = {{LossKind::MSE, 0.f},
                                                {LossKind::MAE, 0.f},
                                                {LossKind::BinaryCrossEntropy, 0.f},
                                                {LossKind::CrossEntropy, 0.f},
                                                {LossKind::CrossEntropy, 0.1f}};
    for (const auto& [kind, s] : kinds)
        for (auto [r, c] : Shapes{{1, 1}, {7, 13}, {1000, 3}, {401, 300}, {4096, 28}})
            for (bool acc : {false, true})
                t.push_back({QStringLiteral("loss %1 s=%2 %3%4")
                                 .arg(QString::fromStdString(lossName(kind)))
                                 .arg(s)
                                 .arg(shapeName(r, c), acc ? " accumulate" : ""),
                             [=] { return lossCase(kind, s, r, c, acc); }});
    // Class-weighted (balanced weights of an imbalanced table and the like): BCE on one logit
    // as tables train it, and on several; cross-entropy with and without smoothing.
    const std::pair<LossKind, float> weightedKinds[] = {{LossKind::BinaryCrossEntropy, 0.f},
                                                        {LossKind::CrossEntropy, 0.f},
                                                        {LossKind::CrossEntropy, 0.1f}};
    for (const auto& [kind, s] : weightedKinds)
        for (auto [r, c] : Shapes{{1, 1}, {7, 13}, {1000, 1}, {1000, 3}, {4096, 28}})
            for (bool acc : {false, true}) {
                if (kind == LossKind::CrossEntropy && c == 1)
                    continue; // one class: nothing to weigh
                t.push_back({QStringLiteral("loss %1 s=%2 %3 class-weighted%4")
                                 .arg(QString::fromStdString(lossName(kind)))
                                 .arg(s)
                                 .arg(shapeName(r, c), acc ? " accumulate" : ""),
                             [=] { return lossCase(kind, s, r, c, acc, true); }});
            }
    for (auto [r, c] : Shapes{{1, 1}, {7, 13}, {1000, 3}, {401, 300}, {4096, 28}})
        for (float temp : {1.f, 0.5f, 2.f})
            t.push_back({QStringLiteral("softmaxRows %1 T=%2").arg(shapeName(r, c)).arg(temp),
                         [=] { return softmaxRowsCase(r, c, temp); }});
}

void addDataMovement(std::vector<Row>& t)
{
    const int64_t g[][4] = {{1, 1, 0, 1},
                            {100, 13, 10, 7},
                            {1000, 3, 990, 10},
                            {50000, 3, 1000, 40000},
                            {262144, 2, 8192, 4096},
                            {50000, 27, 1000, 40000}};
    for (const auto& r : g)
        t.push_back({QStringLiteral("gatherRows %1x%2, %3 rows from %4")
                         .arg(r[0])
                         .arg(r[1])
                         .arg(r[3])
                         .arg(r[2]),
                     [=] { return gatherRowsCase(r[0], r[1], r[2], r[3]); }});
}

bool compare(const QString& what, const std::vector<float>& got, const std::vector<double>& want,
             const Bound& bound, bool exactBits, QString* why)
{
    if (got.size() != want.size()) {
        *why =
            QStringLiteral("%1: size %2, expected %3").arg(what).arg(got.size()).arg(want.size());
        return false;
    }
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        const double g = got[i], w = want[i];
        bool ok;
        if (exactBits)
            ok = std::bit_cast<uint32_t>(got[i]) == std::bit_cast<uint32_t>(static_cast<float>(w));
        else if (!std::isfinite(w) || !std::isfinite(g))
            ok = (std::isnan(g) && std::isnan(w)) || g == w;
        else
            ok = std::fabs(g - w) <= bound(i, w);
        if (!ok && bad++ == 0) first = i;
    }
    if (bad == 0) return true;
    const double g = got[first], w = want[first];
    *why = QStringLiteral("%1: %2 of %3 elements differ; first at %4: got %5, expected %6 "
                          "(difference %7, allowed %8)")
               .arg(what)
               .arg(bad)
               .arg(got.size())
               .arg(first)
               .arg(g, 0, 'g', 9)
               .arg(w, 0, 'g', 9)
               .arg(std::fabs(g - w), 0, 'g', 3)
               .arg(exactBits ? 0.0 : bound(first, w), 0, 'g', 3);
    return false;
}

bool sameCount(const OpCase& c, const std::vector<Output>& got, QString* why)
{
    if (got.size() == c.checks.size()) return true;
    *why = QStringLiteral("%1 outputs, expected %2").arg(got.size()).arg(c.checks.size());
    return false;
}

} // namespace

double refActivation(Activation a, double p, double x)
{
    switch (a) {
    case Activation::Identity:
        return x;
    case Activation::ReLU:
        return x > 0 ? x : 0;
    case Activation::LeakyReLU:
        return x > 0 ? x : p * x;
    case Activation::Tanh:
        return std::tanh(x);
    case Activation::Sigmoid:
        return 1.0 / (1.0 + std::exp(-x));
    case Activation::Sine:
        return std::sin(p * x);
    case Activation::Gelu: // tanh approximation
        return 0.5 * x *
               (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (x + 0.044715 * x * x * x)));
    case Activation::Silu:
        return x / (1.0 + std::exp(-x));
    }
    return NAN;
}

double refDerivative(Activation a, double p, double x)
{
    switch (a) {
    case Activation::Identity:
        return 1;
    case Activation::ReLU:
        return x > 0 ? 1 : 0;
    case Activation::LeakyReLU:
        return x > 0 ? 1 : p;
    case Activation::Tanh: {
        const double t = std::tanh(x);
        return 1 - t * t;
    }
    case Activation::Sigmoid: {
        const double s = 1.0 / (1.0 + std::exp(-x));
        return s * (1 - s);
    }
    case Activation::Sine:
        return p * std::cos(p * x);
    case Activation::Gelu: {
        const double k = std::sqrt(2 / std::numbers::pi);
        const double t = std::tanh(k * (x + 0.044715 * x * x * x));
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x);
    }
    case Activation::Silu: {
        const double s = 1.0 / (1.0 + std::exp(-x));
        return s * (1 + x * (1 - s));
    }
    }
    return NAN;
}

// Reference loss (mean) and gradient, in double.
double refLoss(LossKind kind, double s, const std::vector<float>& pred,
               const std::vector<float>& target, int64_t rows, int64_t k, std::vector<double>* grad,
               const std::vector<float>& weights)
{
    const bool weighted = !weights.empty();
    const size_t n = pred.size();
    grad->assign(n, 0.0);
    double sum = 0;
    if (kind == LossKind::CrossEntropy) {
        for (int64_t r = 0; r < rows; ++r) {
            const float* z = pred.data() + r * k;
            const auto cls = static_cast<int64_t>(target[static_cast<size_t>(r)]);
            const double w = weighted ? double(weights[static_cast<size_t>(cls)]) : 1.0;
            double m = z[0];
            for (int64_t j = 1; j < k; ++j)
                m = std::max(m, static_cast<double>(z[j]));
            double se = 0;
            for (int64_t j = 0; j < k; ++j)
                se += std::exp(z[j] - m);
            const double lse = m + std::log(se);
            for (int64_t j = 0; j < k; ++j) {
                const double q = (1 - s) * (j == cls ? 1.0 : 0.0) + s / static_cast<double>(k);
                const double logp = z[j] - lse;
                sum -= w * q * logp;
                (*grad)[static_cast<size_t>(r * k + j)] =
                    w * (std::exp(logp) - q) / static_cast<double>(rows);
            }
        }
        return sum / static_cast<double>(rows);
    }
    for (size_t i = 0; i < n; ++i) {
        const double p = pred[i], t = target[i], d = p - t;
        switch (kind) {
        case LossKind::MSE:
            sum += d * d;
            (*grad)[i] = 2 * d / static_cast<double>(n);
            break;
        case LossKind::MAE:
            sum += std::fabs(d);
            (*grad)[i] = (d > 0 ? 1.0 : -1.0) / static_cast<double>(n);
            break;
        case LossKind::BinaryCrossEntropy: {
            // A target t weighs w0 + t (w1 - w0).
            const double w = weighted ? weights[0] + t * (double(weights[1]) - weights[0]) : 1.0;
            sum += w * (std::max(p, 0.0) - p * t + std::log1p(std::exp(-std::fabs(p))));
            (*grad)[i] = w * (1.0 / (1.0 + std::exp(-p)) - t) / static_cast<double>(n);
            break;
        }
        case LossKind::CrossEntropy:
            break;
        }
    }
    return sum / static_cast<double>(n);
}

const std::vector<Row>& table()
{
    static const std::vector<Row> rows = [] {
        std::vector<Row> t;
        addElementwise(t);
        addGemm(t);
        addLayerOps(t);
        addLosses(t);
        addDataMovement(t);
        return t;
    }();
    return rows;
}

bool matchesReference(const OpCase& c, const std::vector<Output>& got, QString* why)
{
    if (!sameCount(c, got, why)) return false;
    for (size_t i = 0; i < got.size(); ++i) {
        const Check& k = c.checks[i];
        if (k.reference.empty()) continue;
        const Bound bound = [&k](size_t, double want) { return k.atol + k.rtol * std::fabs(want); };
        const bool exactBits = k.atol == 0 && k.rtol == 0;
        if (!compare(k.name, got[i].values, k.reference, bound, exactBits, why)) return false;
    }
    return true;
}

bool matchesCpu(const OpCase& c, const std::vector<Output>& got, const std::vector<Output>& cpu,
                QString* why)
{
    if (!sameCount(c, got, why) || !sameCount(c, cpu, why)) return false;
    for (size_t i = 0; i < got.size(); ++i) {
        const Check& k = c.checks[i];
        if (!compare(k.name + " (against the CPU backend)", got[i].values, toDouble(cpu[i].values),
                     k.parity, k.parityExact, why))
            return false;
        const auto other = static_cast<size_t>(k.sameAs);
        if (k.sameAs >= 0 &&
            !compare(k.name + " (against " + c.checks[other].name + ")", got[i].values,
                     toDouble(got[other].values), k.parity, k.parityExact, why))
            return false;
    }
    return true;
}

} // namespace opcases
