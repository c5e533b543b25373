// Bicubic resampling (Keys 1981 cubic convolution, a = -0.5, the kernel of most image
// editors' "bicubic"), for the honest zoom: a network rendered at 2x-8x next to the classic
// upscale of the same training image shows what the continuous representation adds.
//
// Both sample the same field of view: destination pixel i of D has its centre at source
// position (i + 0.5) S / D - 0.5 (the pixel-centre convention of imageCoordinates()), edges
// clamped. Separable: rows first, then columns, in float; the result is rounded to 8 bits.
#include "ImageTask.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace il::tasks {

namespace {

constexpr double kA = -0.5;

double keys(double t)
{
    t = std::fabs(t);
    if (t <= 1) return ((kA + 2) * t - (kA + 3)) * t * t + 1;
    if (t < 2) return ((kA * t - 5 * kA) * t + 8 * kA) * t - 4 * kA;
    return 0;
}

// For each destination index: the four source taps (clamped) and their weights.
struct Taps {
    std::array<int, 4> index;
    std::array<float, 4> weight;
};

std::vector<Taps> tapsFor(int source, int destination)
{
    std::vector<Taps> taps(static_cast<size_t>(destination));
    const double step = static_cast<double>(source) / destination;
    for (int i = 0; i < destination; ++i) {
        const double s = (i + 0.5) * step - 0.5;
        const int base = static_cast<int>(std::floor(s));
        Taps& t = taps[static_cast<size_t>(i)];
        double sum = 0;
        for (int k = 0; k < 4; ++k) {
            const int at = base - 1 + k;
            t.index[static_cast<size_t>(k)] = std::clamp(at, 0, source - 1);
            const double w = keys(s - at);
            t.weight[static_cast<size_t>(k)] = static_cast<float>(w);
            sum += w;
        }
        for (float& w : t.weight) // the weights sum to 1 already; keep it exact in float
            w = static_cast<float>(w / sum);
    }
    return taps;
}

} // namespace

void drawBicubic(const QImage& image, int channels, QImage& target, QPoint at, QSize size)
{
    if (image.isNull() || size.isEmpty()) return;
    const int sw = image.width(), sh = image.height(), dw = size.width(), dh = size.height();
    const auto across = tapsFor(sw, dw), down = tapsFor(sh, dh);
    const size_t rowFloats = static_cast<size_t>(dw) * static_cast<size_t>(channels);
    // Rows first: a source row resized across to dw, kept in one of four slots while the
    // destination rows that tap it are drawn (their taps move down monotonically, four at most
    // at a time); then columns, one destination row at a time.
    std::vector<float> source(static_cast<size_t>(sw) * static_cast<size_t>(channels));
    std::vector<float> rowCache(4 * rowFloats), out(rowFloats);
    std::array<int, 4> held{-1, -1, -1, -1};
    const auto resizedRow = [&](int sy, const std::array<int, 4>& needed) -> const float* {
        for (size_t s = 0; s < 4; ++s)
            if (held[s] == sy) return rowCache.data() + s * rowFloats;
        size_t free = 0; // a slot the current destination row does not tap
        while (std::find(needed.begin(), needed.end(), held[free]) != needed.end())
            ++free;
        held[free] = sy;
        float* row = rowCache.data() + free * rowFloats;
        imageIntensityRows(image, channels, sy, 1, source.data());
        for (int x = 0; x < dw; ++x) {
            const Taps& t = across[static_cast<size_t>(x)];
            for (int c = 0; c < channels; ++c) {
                float v = 0;
                for (size_t k = 0; k < 4; ++k)
                    v += t.weight[k] * source[static_cast<size_t>(t.index[k]) * channels + c];
                row[static_cast<size_t>(x) * channels + c] = v;
            }
        }
        return row;
    };
    for (int y = 0; y < dh; ++y) {
        const Taps& t = down[static_cast<size_t>(y)];
        std::array<const float*, 4> rows{};
        for (size_t k = 0; k < 4; ++k)
            rows[k] = resizedRow(t.index[k], t.index);
        for (size_t i = 0; i < rowFloats; ++i) {
            float v = 0;
            for (size_t k = 0; k < 4; ++k)
                v += t.weight[k] * rows[k][i];
            out[i] = v;
        }
        writeIntensityRows(target, at + QPoint(0, y), dw, 1, out.data(), channels); // clamps
    }
}

QImage resizeBicubic(const QImage& image, QSize size, int channels)
{
    if (image.isNull() || size.isEmpty()) return {};
    QImage out(size, channels == 1 ? QImage::Format_Grayscale8 : QImage::Format_RGB32);
    if (out.isNull()) return {};
    drawBicubic(image, channels, out, {0, 0}, size);
    return out;
}

QImage sideBySide(const QImage& left, const QImage& right, int gap)
{
    const int w = left.width() + gap + right.width();
    const int h = std::max(left.height(), right.height());
    QImage out(w, h, QImage::Format_RGB32);
    out.fill(Qt::white);
    const QImage a = left.convertToFormat(QImage::Format_RGB32);
    const QImage b = right.convertToFormat(QImage::Format_RGB32);
    for (int y = 0; y < a.height(); ++y)
        std::copy_n(reinterpret_cast<const QRgb*>(a.constScanLine(y)), a.width(),
                    reinterpret_cast<QRgb*>(out.scanLine(y)));
    for (int y = 0; y < b.height(); ++y)
        std::copy_n(reinterpret_cast<const QRgb*>(b.constScanLine(y)), b.width(),
                    reinterpret_cast<QRgb*>(out.scanLine(y)) + a.width() + gap);
    return out;
}

} // namespace il::tasks
