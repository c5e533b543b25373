// Images: coordinates, intensities, tiled rendering, PSNR and SSIM (declared in ImageTask.h).
#include "ImageTask.h"

#include "Counting.h"
#include "ImageFile.h"
#include "Limits.h"
#include "PrintableText.h"

#include <QJsonObject>

#include <algorithm>
#include <cmath>

namespace il::tasks {

QJsonObject ImageGeometry::toJson() const
{
    QJsonObject o;
    o["task"] = "image";
    o["width"] = width;
    o["height"] = height;
    o["original_width"] = originalWidth;
    o["original_height"] = originalHeight;
    o["channels"] = channels;
    o["color"] = channels == 1 ? "gray" : "rgb";
    o["source"] = source;
    // Spelled out so that another program can render the model without this code.
    o["coordinates"] = "inputs (x, y) at pixel centres: x = (2i + 1 - W) / L, y = (2j + 1 - H) / "
                       "L, L = max(W, H); i right, j down; outputs in [0, 1]";
    return o;
}

bool ImageGeometry::fromJson(const QJsonObject& o, ImageGeometry& g, QString* error)
{
    auto fail = [&](const QString& why) {
        if (error) *error = "task: " + why;
        return false;
    };
    if (o["task"].toString() != "image")
        return fail("this model was not trained on an image (task " +
                    io::quoted(o["task"].toString(), 40) + ")");
    g.width = o["width"].toInt(0);
    g.height = o["height"].toInt(0);
    g.originalWidth = o["original_width"].toInt(g.width);
    g.originalHeight = o["original_height"].toInt(g.height);
    g.channels = o["channels"].toInt(0);
    g.source = o["source"].toString();
    // Checked before anything is sized by them: evaluate and resume build a row per training
    // pixel (a 65536x65536 claim in a 17 KB file would ask for gigabytes). Training sizes are
    // at most kMaxRenderSide a side (--image-size), files at most io::kMaxImageSide.
    const auto side = [&](const char* key, int value, int max) {
        return value >= 1 && value <= max
                   ? QString()
                   : QString("\"%1\" %2 is outside 1 to %3 pixels")
                         .arg(QLatin1String(key))
                         .arg(value)
                         .arg(max);
    };
    for (const QString& problem :
         {side("width", g.width, kMaxRenderSide), side("height", g.height, kMaxRenderSide),
          side("original_width", g.originalWidth, io::kMaxImageSide),
          side("original_height", g.originalHeight, io::kMaxImageSide)})
        if (!problem.isEmpty()) return fail("invalid image size: " + problem);
    if (g.channels != 1 && g.channels != 3)
        return fail(QString("invalid channel count %1 (1 or 3)").arg(g.channels));
    return true;
}

std::vector<float> imageCoordinates(const ImageGeometry& g, QSize size)
{
    const int w = size.width(), h = size.height();
    const double l = std::max(g.width, g.height);
    // Pixel i of n samples the training image's extent [-n_train / L, n_train / L]; at the
    // training size this is exactly (2i + 1 - W) / L.
    const double ex = g.width / l, ey = g.height / l;
    std::vector<float> out(static_cast<size_t>(w) * static_cast<size_t>(h) * 2);
    size_t k = 0;
    for (int j = 0; j < h; ++j) {
        const auto y = static_cast<float>(((2.0 * j + 1) / h - 1) * ey);
        for (int i = 0; i < w; ++i) {
            out[k++] = static_cast<float>(((2.0 * i + 1) / w - 1) * ex);
            out[k++] = y;
        }
    }
    return out;
}

std::vector<float> imageIntensities(const QImage& image, int channels)
{
    const int w = image.width(), h = image.height();
    std::vector<float> out(static_cast<size_t>(w) * static_cast<size_t>(h) *
                           static_cast<size_t>(channels));
    size_t k = 0;
    if (image.format() == QImage::Format_Grayscale8) {
        for (int y = 0; y < h; ++y) {
            const uchar* row = image.constScanLine(y);
            for (int x = 0; x < w; ++x)
                for (int c = 0; c < channels; ++c)
                    out[k++] = row[x] / 255.f;
        }
        return out;
    }
    const QImage rgb = image.convertToFormat(QImage::Format_RGB32);
    for (int y = 0; y < h; ++y) {
        const auto* row = reinterpret_cast<const QRgb*>(rgb.constScanLine(y));
        for (int x = 0; x < w; ++x) {
            const QRgb p = row[x];
            if (channels == 1) {
                out[k++] = static_cast<float>(
                    std::lround(0.299 * qRed(p) + 0.587 * qGreen(p) + 0.114 * qBlue(p)) / 255.0);
            } else {
                out[k++] = qRed(p) / 255.f;
                out[k++] = qGreen(p) / 255.f;
                out[k++] = qBlue(p) / 255.f;
            }
        }
    }
    return out;
}

namespace {

uchar toByte(float v)
{
    // NaN (a diverged network) draws as black rather than as undefined behaviour.
    const float c = std::isnan(v) ? 0.f : std::clamp(v, 0.f, 1.f);
    return static_cast<uchar>(std::lround(c * 255.f));
}

void writeRows(QImage& image, int firstRow, int rows, const float* values, int channels)
{
    const int w = image.width();
    for (int y = 0; y < rows; ++y) {
        const float* v = values + static_cast<size_t>(y) * w * channels;
        if (channels == 1) {
            uchar* dst = image.scanLine(firstRow + y);
            for (int x = 0; x < w; ++x)
                dst[x] = toByte(v[x]);
        } else {
            auto* dst = reinterpret_cast<QRgb*>(image.scanLine(firstRow + y));
            for (int x = 0; x < w; ++x)
                dst[x] = qRgb(toByte(v[3 * x]), toByte(v[3 * x + 1]), toByte(v[3 * x + 2]));
        }
    }
}

} // namespace

QImage imageFromIntensities(const float* values, QSize size, int channels)
{
    QImage image(size, channels == 1 ? QImage::Format_Grayscale8 : QImage::Format_RGB32);
    if (!image.isNull()) writeRows(image, 0, size.height(), values, channels);
    return image;
}

QImage renderImage(Network& net, const ImageGeometry& g, QSize size, QString* error,
                   int64_t tilePixels)
{
    auto fail = [&](const QString& why) {
        if (error) *error = why;
        return QImage();
    };
    const int w = size.width(), h = size.height();
    if (w < kMinRenderSide || h < kMinRenderSide || w > kMaxRenderSide || h > kMaxRenderSide)
        return fail(QString("render size %1x%2 is outside %3x%3 to %4x%4")
                        .arg(w)
                        .arg(h)
                        .arg(kMinRenderSide)
                        .arg(kMaxRenderSide));
    if (net.inputWidth() != 2 || net.outputWidth() != g.channels)
        return fail(QString("the network takes %1 and gives %2; an image model takes 2 and "
                            "gives %3")
                        .arg(countOf(net.inputWidth(), "input"),
                             countOf(net.outputWidth(), "output"))
                        .arg(g.channels));
    QImage image(size, g.channels == 1 ? QImage::Format_Grayscale8 : QImage::Format_RGB32);
    if (image.isNull()) return fail(QString("out of memory for a %1x%2 image").arg(w).arg(h));

    // One band of rows at a time: coordinates, network outputs and activations stay within
    // tilePixels rows whatever the size: in one piece, an 8192x8192 render through a 256-wide
    // network would need tens of gigabytes of activations.
    // A wide network renders fewer pixels at a time (Limits.h).
    tilePixels = inferenceChunkRows(net, tilePixels);
    const int bandRows = static_cast<int>(std::clamp<int64_t>(tilePixels / w, 1, h));
    Backend& b = net.backend();
    Buffer in(&b, static_cast<size_t>(bandRows) * static_cast<size_t>(w) * 2);
    Buffer out(&b, static_cast<size_t>(bandRows) * static_cast<size_t>(w) *
                       static_cast<size_t>(g.channels));
    std::vector<float> coords(static_cast<size_t>(bandRows) * static_cast<size_t>(w) * 2);
    std::vector<float> values(out.floats());
    const double l = std::max(g.width, g.height);
    const double ex = g.width / l, ey = g.height / l;
    for (int first = 0; first < h; first += bandRows) {
        const int rows = std::min(bandRows, h - first);
        const int64_t n = static_cast<int64_t>(rows) * w;
        size_t k = 0;
        for (int j = first; j < first + rows; ++j) {
            const auto y = static_cast<float>(((2.0 * j + 1) / h - 1) * ey);
            for (int i = 0; i < w; ++i) {
                coords[k++] = static_cast<float>(((2.0 * i + 1) / w - 1) * ex);
                coords[k++] = y;
            }
        }
        b.upload(in.view(n, 2), coords.data());
        net.predict(in.view(n, 2), out.view(n, g.channels));
        b.download(values.data(), out.view(n, g.channels));
        writeRows(image, first, rows, values.data(), g.channels);
    }
    return image;
}

double psnrDb(const float* a, const float* b, size_t count)
{
    if (count == 0) return NAN;
    double sum = 0;
    for (size_t i = 0; i < count; ++i) {
        const double d = static_cast<double>(a[i]) - static_cast<double>(b[i]);
        sum += d * d;
    }
    const double mse = sum / static_cast<double>(count);
    if (std::isnan(mse)) return NAN;
    return mse == 0 ? INFINITY : 10.0 * std::log10(1.0 / mse);
}

double ssimIndex(const float* a, const float* b, int w, int h, int channels)
{
    if (w < 1 || h < 1 || channels < 1) return NAN;
    const int n = std::min({11, w, h}), ow = w - n + 1;
    std::vector<double> kernel(static_cast<size_t>(n));
    double total = 0;
    for (int t = 0; t < n; ++t) {
        const double d = t - (n - 1) / 2.0;
        total += kernel[t] = std::exp(-d * d / (2 * 1.5 * 1.5));
    }
    for (double& v : kernel)
        v /= total;
    const double c1 = 0.01 * 0.01, c2 = 0.03 * 0.03;
    // The Gaussian is separable: filter each row horizontally into a ring of the last n rows
    // (five quantities: a, b, a^2, b^2, ab), then combine the ring vertically. Memory stays at
    // 5 x n rows whatever the image size.
    const size_t rowFloats = static_cast<size_t>(ow);
    std::vector<double> ring(5 * static_cast<size_t>(n) * rowFloats);
    auto slot = [&](int q, int row) {
        return ring.data() + (static_cast<size_t>(q) * n + row % n) * rowFloats;
    };
    double sum = 0;
    for (int c = 0; c < channels; ++c) {
        double channelSum = 0;
        for (int y = 0; y < h; ++y) {
            const float* ra = a + static_cast<size_t>(y) * w * channels + c;
            const float* rb = b + static_cast<size_t>(y) * w * channels + c;
            double* q[5] = {slot(0, y), slot(1, y), slot(2, y), slot(3, y), slot(4, y)};
            for (int x = 0; x < ow; ++x) {
                double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
                for (int t = 0; t < n; ++t) {
                    const double va = ra[(x + t) * channels], vb = rb[(x + t) * channels];
                    sa += kernel[t] * va;
                    sb += kernel[t] * vb;
                    saa += kernel[t] * va * va;
                    sbb += kernel[t] * vb * vb;
                    sab += kernel[t] * va * vb;
                }
                q[0][x] = sa, q[1][x] = sb, q[2][x] = saa, q[3][x] = sbb, q[4][x] = sab;
            }
            if (y < n - 1) continue;
            for (int x = 0; x < ow; ++x) {
                double m[5] = {0, 0, 0, 0, 0};
                for (int t = 0; t < n; ++t)
                    for (int k = 0; k < 5; ++k)
                        m[k] += kernel[t] * slot(k, y - n + 1 + t)[x];
                const double va = m[2] - m[0] * m[0], vb = m[3] - m[1] * m[1];
                const double cov = m[4] - m[0] * m[1];
                channelSum += ((2 * m[0] * m[1] + c1) * (2 * cov + c2)) /
                              ((m[0] * m[0] + m[1] * m[1] + c1) * (va + vb + c2));
            }
        }
        sum += channelSum / (static_cast<double>(ow) * (h - n + 1));
    }
    return sum / channels;
}

namespace {

int sharedChannels(const QImage& a, const QImage& b)
{
    return a.format() == QImage::Format_Grayscale8 && b.format() == QImage::Format_Grayscale8 ? 1
                                                                                              : 3;
}

} // namespace

double psnrDb(const QImage& a, const QImage& b)
{
    if (a.size() != b.size() || a.isNull()) return NAN;
    const int c = sharedChannels(a, b);
    const auto va = imageIntensities(a, c), vb = imageIntensities(b, c);
    return psnrDb(va.data(), vb.data(), va.size());
}

double ssimIndex(const QImage& a, const QImage& b)
{
    if (a.size() != b.size() || a.isNull()) return NAN;
    const int c = sharedChannels(a, b);
    const auto va = imageIntensities(a, c), vb = imageIntensities(b, c);
    return ssimIndex(va.data(), vb.data(), a.width(), a.height(), c);
}

} // namespace il::tasks
