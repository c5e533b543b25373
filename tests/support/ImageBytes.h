// A picture as the bytes of an image file (PNG unless told), for tests that hand a task or the
// CLI an image the way a file would.
#pragma once

#include <QBuffer>
#include <QByteArray>
#include <QImage>

namespace testsupport {

inline QByteArray encodeImage(const QImage& image, const char* format = "png")
{
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    image.save(&buffer, format);
    return bytes;
}

} // namespace testsupport
