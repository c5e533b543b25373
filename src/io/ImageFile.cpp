#include "ImageFile.h"
#include "AtomicFile.h"

#include <QImageWriter>

#include <QBuffer>
#include <QImageReader>
#include <QtEndian>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

namespace il::io {

namespace {

bool fail(QString* error, const QString& path, const QString& why)
{
    if (error) *error = path + ": " + why;
    return false;
}

quint32 crc32(const char* data, qint64 size)
{
    static const std::array<quint32, 256> table = [] {
        std::array<quint32, 256> t{};
        for (quint32 n = 0; n < 256; ++n) {
            quint32 c = n;
            for (int k = 0; k < 8; ++k)
                c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            t[n] = c;
        }
        return t;
    }();
    quint32 c = 0xFFFFFFFFu;
    for (qint64 i = 0; i < size; ++i)
        c = table[(c ^ static_cast<quint8>(data[i])) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

QString sizeProblem(qint64 w, qint64 h)
{
    if (w <= 0 || h <= 0) return QString("the image is %1x%2 pixels (empty)").arg(w).arg(h);
    if (w > kMaxImageSide || h > kMaxImageSide || w * h > kMaxImagePixels)
        return QString("the image is %1x%2 pixels; the limit is %3 pixels a side and %4 "
                       "megapixels (8192x8192)")
            .arg(w)
            .arg(h)
            .arg(kMaxImageSide)
            .arg(kMaxImagePixels / (1 << 20));
    return {};
}

// A chunk's four-letter type for messages; other bytes as \xNN, so a corrupt one (a newline, a
// terminal escape) cannot break the one-line message (found by the image fuzz target).
QString chunkType(const char* p)
{
    QString type;
    for (int i = 0; i < 4; ++i) {
        const auto c = static_cast<quint8>(p[i]);
        type += c > 0x20 && c < 0x7F ? QString(QChar(c))
                                     : QStringLiteral("\\x%1").arg(c, 2, 16, QLatin1Char('0'));
    }
    return type;
}

// Walks the PNG chunks (length, type, data, CRC) up to IEND. libpng would report the same
// problems, but on stderr and after allocating the image; here each is one clear line.
QString checkPng(const QByteArray& bytes)
{
    const qint64 size = bytes.size();
    const char* p = bytes.constData();
    qint64 pos = 8;
    bool first = true, sawData = false;
    while (true) {
        if (pos + 8 > size)
            return QString("truncated PNG: it ends at byte %1 before the end-of-image chunk (IEND)")
                .arg(size);
        const qint64 length = qFromBigEndian<quint32>(p + pos);
        const QString type = chunkType(p + pos + 4);
        if (pos + 12 + length > size)
            return QString("truncated PNG: chunk %1 at byte %2 runs past the end of the file "
                           "(%3 bytes)")
                .arg(type)
                .arg(pos)
                .arg(size);
        if (first) {
            if (type != "IHDR" || length != 13)
                return "corrupt PNG: the first chunk is not a valid header (IHDR)";
            const QString problem = sizeProblem(qFromBigEndian<quint32>(p + pos + 8),
                                                qFromBigEndian<quint32>(p + pos + 12));
            if (!problem.isEmpty()) return problem;
            first = false;
        }
        const quint32 stored = qFromBigEndian<quint32>(p + pos + 8 + length);
        if (crc32(p + pos + 4, length + 4) != stored)
            return QString("corrupt PNG: chunk %1 at byte %2 fails its checksum")
                .arg(type)
                .arg(pos);
        if (type == "IDAT") sawData = true;
        if (type == "IEND")
            return sawData ? QString() : QString("corrupt PNG: no image data (IDAT chunk)");
        pos += 12 + length;
    }
}

// A JPEG ends with the EOI marker after its scan data; a cut file lacks it, and Qt would
// decode it "successfully" with the missing part grey. Segments before the first scan are
// skipped by their lengths, so an EXIF thumbnail's own EOI is not mistaken for the image's.
QString checkJpeg(const QByteArray& bytes)
{
    const qint64 size = bytes.size();
    const auto* p = reinterpret_cast<const quint8*>(bytes.constData());
    qint64 pos = 2;
    while (pos < size) {
        if (p[pos] != 0xFF) return QString("corrupt JPEG: no segment marker at byte %1").arg(pos);
        while (pos < size && p[pos] == 0xFF)
            ++pos;
        if (pos >= size) break;
        const quint8 marker = p[pos++];
        if (marker == 0xD9) return "corrupt JPEG: it ends before any image data";
        if ((marker >= 0xD0 && marker <= 0xD7) || marker == 0x01) continue;
        if (pos + 2 > size) break;
        const qint64 length = qFromBigEndian<quint16>(p + pos);
        if (length < 2 || pos + length > size) break;
        pos += length;
        if (marker == 0xDA) {
            for (qint64 i = pos; i + 1 < size; ++i)
                if (p[i] == 0xFF && p[i + 1] == 0xD9) return {};
            break;
        }
    }
    return QString("truncated JPEG: no end-of-image marker (%1 bytes)").arg(size);
}

} // namespace

bool checkImageHeader(const QByteArray& bytes, const QString& path, QSize* size, QString* error)
{
    if (size) *size = QSize();
    if (bytes.isEmpty()) return fail(error, path, "the file is empty");
    if (bytes.startsWith("\x89PNG\r\n\x1a\n")) {
        const QString problem = checkPng(bytes);
        if (!problem.isEmpty()) return fail(error, path, problem);
    } else if (bytes.startsWith("\xFF\xD8\xFF")) {
        const QString problem = checkJpeg(bytes);
        if (!problem.isEmpty()) return fail(error, path, problem);
    }
    QBuffer buffer;
    buffer.setData(bytes);
    buffer.open(QIODevice::ReadOnly);
    QImageReader reader(&buffer);
    reader.setAutoTransform(true);
    if (!reader.canRead())
        return fail(error, path, "not an image this build can read (PNG, JPEG, BMP, GIF, ...)");
    // The header's size, before decoding: refuse huge images without allocating them.
    const QSize header = reader.size();
    if (header.isValid()) {
        const QString problem = sizeProblem(header.width(), header.height());
        if (!problem.isEmpty()) return fail(error, path, problem);
    }
    if (size) *size = header;
    return true;
}

bool loadImage(const QByteArray& bytes, const QString& path, bool forceGrayscale, LoadedImage& out,
               QString* error)
{
    out = LoadedImage{};
    if (!checkImageHeader(bytes, path, nullptr, error)) return false;

    QBuffer buffer;
    buffer.setData(bytes);
    buffer.open(QIODevice::ReadOnly);
    QImageReader reader(&buffer);
    reader.setAutoTransform(true); // photos: honour the EXIF orientation
    out.format = reader.format();
    // Formats that cannot tell their size up front are bounded by Qt's allocation limit.
    QImageReader::setAllocationLimit(kImageAllocationLimitMb);
    QImage decoded;
    if (!reader.read(&decoded) || decoded.isNull())
        return fail(error, path,
                    "cannot decode the " + QString::fromLatin1(out.format) +
                        " image: " + reader.errorString());
    const QString problem = sizeProblem(decoded.width(), decoded.height());
    if (!problem.isEmpty()) return fail(error, path, problem);

    // Composite on white in straight (non-premultiplied) alpha, then look for colour; a row at a
    // time, so that memory holds the decoded picture and the result only (converting the whole
    // picture to ARGB32 and then to RGB32 first took 9 bytes a pixel more: 600 MB for an
    // 8192x8192 gray PNG).
    out.hadAlpha = decoded.hasAlphaChannel();
    const int w = decoded.width(), h = decoded.height();
    std::vector<QRgb> row(static_cast<size_t>(w));
    const auto compositeRow = [&](int y) {
        const QImage argb = decoded.copy(0, y, w, 1).convertToFormat(QImage::Format_ARGB32);
        const auto* src = reinterpret_cast<const QRgb*>(argb.constScanLine(0));
        for (int x = 0; x < w; ++x) {
            const int a = qAlpha(src[x]);
            auto over = [a](int c) { return (c * a + 255 * (255 - a) + 127) / 255; };
            row[static_cast<size_t>(x)] =
                qRgb(over(qRed(src[x])), over(qGreen(src[x])), over(qBlue(src[x])));
        }
    };
    bool gray = true;
    for (int y = 0; y < h && gray; ++y) {
        compositeRow(y);
        for (const QRgb p : row)
            gray = gray && qRed(p) == qGreen(p) && qGreen(p) == qBlue(p);
    }
    out.grayscale = gray || forceGrayscale;
    out.forcedGray = forceGrayscale && !gray;
    out.image = QImage(w, h, out.grayscale ? QImage::Format_Grayscale8 : QImage::Format_RGB32);
    if (out.image.isNull()) return fail(error, path, "out of memory decoding the image");
    for (int y = 0; y < h; ++y) {
        compositeRow(y);
        if (!out.grayscale) {
            std::copy(row.begin(), row.end(), reinterpret_cast<QRgb*>(out.image.scanLine(y)));
            continue;
        }
        uchar* dst = out.image.scanLine(y);
        for (int x = 0; x < w; ++x) {
            const QRgb p = row[static_cast<size_t>(x)];
            // Rec. 601 luma; exact for pixels that are already gray.
            const double v = 0.299 * qRed(p) + 0.587 * qGreen(p) + 0.114 * qBlue(p);
            dst[x] = static_cast<uchar>(std::clamp(static_cast<int>(std::lround(v)), 0, 255));
        }
    }
    return true;
}

namespace {

// The encoder's bytes straight into an AtomicFile (its own buffer, every flush checked), so a
// large picture is never held twice, decoded and encoded.
class AtomicFileDevice final : public QIODevice {
public:
    explicit AtomicFileDevice(AtomicFile& file) : m_file(file) { open(QIODevice::WriteOnly); }

protected:
    qint64 readData(char*, qint64) override { return -1; }
    qint64 writeData(const char* data, qint64 size) override
    {
        return m_file.write(data, size) ? size : -1;
    }

private:
    AtomicFile& m_file;
};

} // namespace

IoResult writePng(const QString& path, const QImage& image)
{
    AtomicFile file(path);
    if (!file.open()) return IoResult::failure(file.errorString());
    AtomicFileDevice device(file);
    QImageWriter writer(&device, "png");
    if (!writer.write(image)) {
        QString why = file.errorString(); // a write that failed says why
        if (why.isEmpty())
            why = path + QStringLiteral(": cannot encode the PNG: ") + writer.errorString();
        file.cancel();
        return IoResult::failure(why);
    }
    if (!file.commit()) return IoResult::failure(file.errorString());
    return IoResult::success();
}

} // namespace il::io
