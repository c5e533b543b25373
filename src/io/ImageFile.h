// Reading images for training: any format Qt reads (PNG, JPEG, BMP, GIF...), from bytes in
// memory (files and bundled samples alike). The size is checked from the header before any
// pixel is decoded, so a small file that claims 30000x30000 is refused at once instead of
// allocating gigabytes. PNG and JPEG files are also checked for truncation first: Qt and
// libpng would otherwise print their own warnings, or hand back a half-grey picture.
#pragma once

#include "IoResult.h"

#include <QByteArray>
#include <QImage>
#include <QSize>
#include <QString>

namespace il::io {

// Limits on what is decoded: an 8192x8192 photo is fine, 30000x30000 is not.
inline constexpr int kMaxImageSide = 16384;
inline constexpr qint64 kMaxImagePixels = qint64(8192) * 8192;
// QImageReader's allocation limit (MiB) while decoding: 8 bytes per pixel (16-bit RGBA) at
// kMaxImagePixels. Qt's default (128 MiB) would refuse images the limits above allow.
inline constexpr int kImageAllocationLimitMb = 512;

struct LoadedImage {
    // Format_Grayscale8 when grayscale, otherwise Format_RGB32; alpha is composited on white.
    QImage image;
    bool grayscale = false;  // every pixel gray (or grayscale was forced)
    bool forcedGray = false; // colour converted to luminance because grayscale was asked for
    bool hadAlpha = false;   // the file had transparency (now composited on white)
    QByteArray format;       // "png", "jpeg", ... as Qt names it
};

// The checks loadImage makes before decoding a pixel: not empty, a PNG's chunks and checksums,
// a JPEG's end-of-image marker, a format this build reads, and the size its header states
// against the limits above. *size: that size (invalid when the format does not state one).
// Returns false with loadImage's one-line *error. Cheap: nothing is decoded.
bool checkImageHeader(const QByteArray& bytes, const QString& pathForMessages, QSize* size,
                      QString* error);

// Decodes bytes. forceGrayscale: colour is converted to luminance (Rec. 601 weights).
// Returns false with one line in *error naming pathForMessages and the reason: empty file,
// not an image, truncated, 0x0, too large, or a decoder failure. Never crashes.
bool loadImage(const QByteArray& bytes, const QString& pathForMessages, bool forceGrayscale,
               LoadedImage& out, QString* error);

// Encodes `image` as PNG and writes it atomically (AtomicFile): no partial file on failure. The
// encoder writes through the file's buffer: memory holds the picture, not its PNG as well.
IoResult writePng(const QString& path, const QImage& image);

} // namespace il::io
