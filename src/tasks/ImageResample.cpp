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

QImage resizeBicubic(const QImage& image, QSize size, int channels)
{
    if (image.isNull() || size.isEmpty()) return {};
    const int sw = image.width(), sh = image.height(), dw = size.width(), dh = size.height();
    const std::vector<float> src = imageIntensities(image, channels);
    const auto across = tapsFor(sw, dw), down = tapsFor(sh, dh);
    // Rows: sh x dw.
    std::vector<float> rows(static_cast<size_t>(sh) * dw * channels);
    for (int y = 0; y < sh; ++y)
        for (int x = 0; x < dw; ++x)
            for (int c = 0; c < channels; ++c) {
                const Taps& t = across[static_cast<size_t>(x)];
                float v = 0;
                for (int k = 0; k < 4; ++k)
                    v += t.weight[static_cast<size_t>(k)] *
                         src[(static_cast<size_t>(y) * sw + t.index[static_cast<size_t>(k)]) *
                                 channels +
                             c];
                rows[(static_cast<size_t>(y) * dw + x) * channels + c] = v;
            }
    // Columns: dh x dw.
    std::vector<float> out(static_cast<size_t>(dh) * dw * channels);
    for (int y = 0; y < dh; ++y) {
        const Taps& t = down[static_cast<size_t>(y)];
        for (int x = 0; x < dw; ++x)
            for (int c = 0; c < channels; ++c) {
                float v = 0;
                for (int k = 0; k < 4; ++k)
                    v += t.weight[static_cast<size_t>(k)] *
                         rows[(static_cast<size_t>(t.index[static_cast<size_t>(k)]) * dw + x) *
                                  channels +
                              c];
                out[(static_cast<size_t>(y) * dw + x) * channels + c] = v;
            }
    }
    return imageFromIntensities(out.data(), size, channels); // clamps to [0, 1], 8 bits
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
