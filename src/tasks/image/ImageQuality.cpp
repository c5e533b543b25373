// Images: coordinates, intensities, tiled rendering, PSNR and SSIM (declared in ImageTask.h).
#include "ImageTask.h"

#include "Counting.h"
#include "ImageFile.h"
#include "Limits.h"
#include "PrintableText.h"

#include <QJsonObject>

#include <algorithm>
#include <cmath>
#include <functional>

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
        return value >= 1 && value <= max ? QString()
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

void imageCoordinateRows(const ImageGeometry& g, QSize size, int firstRow, int rows, float* out)
{
    const int w = size.width(), h = size.height();
    const double l = std::max(g.width, g.height);
    // Pixel i of n samples the training image's extent [-n_train / L, n_train / L]; at the
    // training size this is exactly (2i + 1 - W) / L.
    const double ex = g.width / l, ey = g.height / l;
    size_t k = 0;
    for (int j = firstRow; j < firstRow + rows; ++j) {
        const auto y = static_cast<float>(((2.0 * j + 1) / h - 1) * ey);
        for (int i = 0; i < w; ++i) {
            out[k++] = static_cast<float>(((2.0 * i + 1) / w - 1) * ex);
            out[k++] = y;
        }
    }
}

std::vector<float> imageCoordinates(const ImageGeometry& g, QSize size)
{
    std::vector<float> out(static_cast<size_t>(size.width()) * static_cast<size_t>(size.height()) *
                           2);
    imageCoordinateRows(g, size, 0, size.height(), out.data());
    return out;
}

void imageIntensityRows(const QImage& image, int channels, int firstRow, int rows, float* out)
{
    const int w = image.width();
    size_t k = 0;
    if (image.format() == QImage::Format_Grayscale8) {
        for (int y = firstRow; y < firstRow + rows; ++y) {
            const uchar* row = image.constScanLine(y);
            for (int x = 0; x < w; ++x)
                for (int c = 0; c < channels; ++c)
                    out[k++] = row[x] / 255.f;
        }
        return;
    }
    // Another format than RGB32 is converted a row at a time (the tasks' images are Grayscale8
    // or RGB32 already).
    const bool rgb32 = image.format() == QImage::Format_RGB32;
    for (int y = firstRow; y < firstRow + rows; ++y) {
        const QImage converted =
            rgb32 ? QImage() : image.copy(0, y, w, 1).convertToFormat(QImage::Format_RGB32);
        const auto* row = reinterpret_cast<const QRgb*>(rgb32 ? image.constScanLine(y)
                                                              : converted.constScanLine(0));
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
}

std::vector<float> imageIntensities(const QImage& image, int channels)
{
    std::vector<float> out(static_cast<size_t>(image.width()) *
                           static_cast<size_t>(image.height()) * static_cast<size_t>(channels));
    if (image.format() == QImage::Format_Grayscale8 || image.format() == QImage::Format_RGB32)
        imageIntensityRows(image, channels, 0, image.height(), out.data());
    else
        imageIntensityRows(image.convertToFormat(QImage::Format_RGB32), channels, 0, image.height(),
                           out.data());
    return out;
}

namespace {

uchar toByte(float v)
{
    // NaN (a diverged network) draws as black rather than as undefined behaviour.
    const float c = std::isnan(v) ? 0.f : std::clamp(v, 0.f, 1.f);
    return static_cast<uchar>(std::lround(c * 255.f));
}

} // namespace

void writeIntensityRows(QImage& image, QPoint at, int width, int rows, const float* values,
                        int channels)
{
    for (int y = 0; y < rows; ++y) {
        const float* v = values + static_cast<size_t>(y) * width * channels;
        if (image.format() == QImage::Format_Grayscale8) {
            uchar* dst = image.scanLine(at.y() + y) + at.x();
            for (int x = 0; x < width; ++x)
                dst[x] = toByte(v[x * channels]);
        } else {
            auto* dst = reinterpret_cast<QRgb*>(image.scanLine(at.y() + y)) + at.x();
            for (int x = 0; x < width; ++x) {
                const float* px = v + static_cast<size_t>(x) * channels;
                dst[x] = channels == 1 ? qRgb(toByte(px[0]), toByte(px[0]), toByte(px[0]))
                                       : qRgb(toByte(px[0]), toByte(px[1]), toByte(px[2]));
            }
        }
    }
}

QImage imageFromIntensities(const float* values, QSize size, int channels)
{
    QImage image(size, channels == 1 ? QImage::Format_Grayscale8 : QImage::Format_RGB32);
    if (!image.isNull())
        writeIntensityRows(image, {0, 0}, size.width(), size.height(), values, channels);
    return image;
}

namespace {

QString renderSizeProblem(QSize size)
{
    const int w = size.width(), h = size.height();
    if (w < kMinRenderSide || h < kMinRenderSide || w > kMaxRenderSide || h > kMaxRenderSide)
        return QString("render size %1x%2 is outside %3x%3 to %4x%4")
            .arg(w)
            .arg(h)
            .arg(kMinRenderSide)
            .arg(kMaxRenderSide);
    return {};
}

} // namespace

QString imageNetworkProblem(const Network& net, int channels)
{
    if (net.inputWidth() == 2 && net.outputWidth() == channels) return {};
    return QString("the network takes %1 and gives %2; an image model takes 2 and gives %3")
        .arg(countOf(net.inputWidth(), "input"), countOf(net.outputWidth(), "output"))
        .arg(channels);
}

void predictImageBands(Network& net, const ImageGeometry& g, QSize size, int64_t tilePixels,
                       const std::function<void(int firstRow, int rows, float* outputs)>& band)
{
    const int w = size.width(), h = size.height();
    // One band of rows at a time: coordinates, network outputs and activations stay within
    // tilePixels rows whatever the size: in one piece, an 8192x8192 render through a 256-wide
    // network would need tens of gigabytes of activations.
    // A wide network renders fewer pixels at a time (Limits.h).
    tilePixels = inferenceChunkRows(net, tilePixels);
    const int bandRows = static_cast<int>(std::clamp<int64_t>(tilePixels / w, 1, h));
    const int64_t outs = net.outputWidth();
    Backend& b = net.backend();
    Buffer in(&b, static_cast<size_t>(bandRows) * static_cast<size_t>(w) * 2);
    Buffer out(&b,
               static_cast<size_t>(bandRows) * static_cast<size_t>(w) * static_cast<size_t>(outs));
    std::vector<float> coords(in.floats());
    std::vector<float> values(out.floats());
    for (int first = 0; first < h; first += bandRows) {
        const int rows = std::min(bandRows, h - first);
        const int64_t n = static_cast<int64_t>(rows) * w;
        imageCoordinateRows(g, size, first, rows, coords.data());
        b.upload(in.view(n, 2), coords.data());
        net.predict(in.view(n, 2), out.view(n, outs));
        b.download(values.data(), out.view(n, outs));
        band(first, rows, values.data());
    }
}

bool renderInto(Network& net, const ImageGeometry& g, QSize size, QImage& target, QPoint at,
                QString* error, int64_t tilePixels)
{
    QString problem = renderSizeProblem(size);
    if (problem.isEmpty()) problem = imageNetworkProblem(net, g.channels);
    if (problem.isEmpty() && !QRect(QPoint(0, 0), target.size()).contains(QRect(at, size)))
        problem = "the render does not fit its picture";
    if (!problem.isEmpty()) {
        if (error) *error = problem;
        return false;
    }
    predictImageBands(net, g, size, tilePixels, [&](int first, int rows, const float* values) {
        writeIntensityRows(target, at + QPoint(0, first), size.width(), rows, values, g.channels);
    });
    return true;
}

QImage renderImage(Network& net, const ImageGeometry& g, QSize size, QString* error,
                   int64_t tilePixels)
{
    auto fail = [&](const QString& why) {
        if (error) *error = why;
        return QImage();
    };
    QString problem = renderSizeProblem(size);
    if (problem.isEmpty()) problem = imageNetworkProblem(net, g.channels);
    if (!problem.isEmpty()) return fail(problem);
    QImage image(size, g.channels == 1 ? QImage::Format_Grayscale8 : QImage::Format_RGB32);
    if (image.isNull())
        return fail(
            QString("out of memory for a %1x%2 image").arg(size.width()).arg(size.height()));
    if (!renderInto(net, g, size, image, {0, 0}, error, tilePixels)) return {};
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

SsimAccumulator::SsimAccumulator(int width, int height, int channels)
    : m_w(width), m_h(height), m_channels(channels)
{
    if (width < 1 || height < 1 || channels < 1) return;
    m_n = std::min({11, width, height});
    m_ow = width - m_n + 1;
    m_kernel.resize(static_cast<size_t>(m_n));
    double total = 0;
    for (int t = 0; t < m_n; ++t) {
        const double d = t - (m_n - 1) / 2.0;
        total += m_kernel[static_cast<size_t>(t)] = std::exp(-d * d / (2 * 1.5 * 1.5));
    }
    for (double& v : m_kernel)
        v /= total;
    m_ring.resize(static_cast<size_t>(channels) * 5 * static_cast<size_t>(m_n) *
                  static_cast<size_t>(m_ow));
    m_channelSums.assign(static_cast<size_t>(channels), 0.0);
}

double* SsimAccumulator::slot(int c, int q, int row)
{
    return m_ring.data() +
           ((static_cast<size_t>(c) * 5 + static_cast<size_t>(q)) * static_cast<size_t>(m_n) +
            static_cast<size_t>(row % m_n)) *
               static_cast<size_t>(m_ow);
}

void SsimAccumulator::addRows(const float* a, const float* b, int rows)
{
    if (m_n == 0) return;
    const int n = m_n, ow = m_ow, w = m_w, channels = m_channels;
    const double c1 = 0.01 * 0.01, c2 = 0.03 * 0.03;
    const auto owSize = static_cast<size_t>(ow);
    m_sums.resize(5 * owSize);
    // The Gaussian is separable: each row is filtered horizontally into a ring of the last n
    // rows (five quantities: a, b, a^2, b^2, ab, per channel), and the ring is combined
    // vertically once it holds n rows. Memory stays at 5 x n rows whatever the image's height.
    // The loops run over x innermost (they vectorise); each pixel's sums add their terms in the
    // order of the taps, as a loop over the taps per pixel would.
    for (int r = 0; r < rows && m_y < m_h; ++r, ++m_y) {
        const int y = m_y;
        for (int c = 0; c < channels; ++c) {
            const float* ra = a + static_cast<size_t>(r) * w * channels + c;
            const float* rb = b + static_cast<size_t>(r) * w * channels + c;
            double* q[5] = {slot(c, 0, y), slot(c, 1, y), slot(c, 2, y), slot(c, 3, y),
                            slot(c, 4, y)};
            for (double* row : q)
                std::fill_n(row, ow, 0.0);
            for (int t = 0; t < n; ++t) {
                const double k = m_kernel[static_cast<size_t>(t)];
                for (int x = 0; x < ow; ++x) {
                    const double va = ra[(x + t) * channels], vb = rb[(x + t) * channels];
                    q[0][x] += k * va;
                    q[1][x] += k * vb;
                    q[2][x] += k * va * va;
                    q[3][x] += k * vb * vb;
                    q[4][x] += k * va * vb;
                }
            }
            if (y < n - 1) continue;
            double* m[5];
            for (size_t i = 0; i < 5; ++i) {
                m[i] = m_sums.data() + i * owSize;
                std::fill_n(m[i], ow, 0.0);
            }
            for (int t = 0; t < n; ++t) {
                const double k = m_kernel[static_cast<size_t>(t)];
                for (int i = 0; i < 5; ++i) {
                    const double* from = slot(c, i, y - n + 1 + t);
                    double* to = m[i];
                    for (int x = 0; x < ow; ++x)
                        to[x] += k * from[x];
                }
            }
            double& channelSum = m_channelSums[static_cast<size_t>(c)];
            for (int x = 0; x < ow; ++x) {
                const double ma = m[0][x], mb = m[1][x];
                const double va = m[2][x] - ma * ma, vb = m[3][x] - mb * mb;
                const double cov = m[4][x] - ma * mb;
                channelSum += ((2 * ma * mb + c1) * (2 * cov + c2)) /
                              ((ma * ma + mb * mb + c1) * (va + vb + c2));
            }
        }
    }
}

double SsimAccumulator::result() const
{
    if (m_n == 0 || m_y < m_h) return NAN;
    double sum = 0;
    for (const double channelSum : m_channelSums)
        sum += channelSum / (static_cast<double>(m_ow) * (m_h - m_n + 1));
    return sum / m_channels;
}

double ssimIndex(const float* a, const float* b, int w, int h, int channels)
{
    SsimAccumulator ssim(w, h, channels);
    ssim.addRows(a, b, h);
    return ssim.result();
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
