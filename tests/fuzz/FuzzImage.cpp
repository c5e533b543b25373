// Fuzz target: the image checks made before decoding (checkImageHeader: PNG chunks and
// checksums, a JPEG's end marker, the size a header states) and, for small pictures, the
// whole load (decode, alpha over white, gray detection). Besides "never crashes": a refusal
// is one line naming the file; an accepted picture is within the limits, in the promised
// pixel format, and within the limits once decoded too.
#include "FuzzSupport.h"

#include "ImageFile.h"

using namespace il::io;

namespace {

// Larger pictures are only checked, not decoded: decoding is Qt's and libpng's work, and a
// 64-megapixel decode per input would leave no time for the checks.
constexpr qint64 kDecodePixels = 256 * 256;

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 1) return 0;
    const bool gray = data[0] & 1;
    const QByteArray bytes = il::fuzz::bytesOf(data + 1, size - 1);
    const QString path = QStringLiteral("fuzz.img");

    QSize header;
    QString error;
    if (!checkImageHeader(bytes, path, &header, &error)) {
        FUZZ_CHECK(il::fuzz::isOneLineNaming(error, path));
        return 0;
    }
    FUZZ_CHECK(!header.isValid() ||
               (header.width() > 0 && header.height() > 0 && header.width() <= kMaxImageSide &&
                header.height() <= kMaxImageSide));
    if (!header.isValid() || qint64(header.width()) * header.height() > kDecodePixels) return 0;

    LoadedImage image;
    if (!loadImage(bytes, path, gray, image, &error)) {
        FUZZ_CHECK(il::fuzz::isOneLineNaming(error, path));
        return 0;
    }
    const QSize got = image.image.size();
    FUZZ_CHECK(!got.isEmpty() && got.width() <= kMaxImageSide && got.height() <= kMaxImageSide &&
               qint64(got.width()) * got.height() <= kMaxImagePixels);
    FUZZ_CHECK(image.image.format() ==
               (image.grayscale ? QImage::Format_Grayscale8 : QImage::Format_RGB32));
    FUZZ_CHECK(!gray || image.grayscale);
    return 0;
}
