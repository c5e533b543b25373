// What the CLI's image tests share: the small picture they train on, and the file and message
// checks around it (needs Qt Gui; CliRunner.h is for every CLI test).
#pragma once

#include "CliRunner.h"

#include <QFile>
#include <QImage>
#include <QString>

#include <cmath>

namespace clitest {

// 48 x 32 RGB: two gradients and a wave, smooth enough to learn in a second.
inline QImage gradientPicture()
{
    QImage picture(48, 32, QImage::Format_RGB32);
    for (int y = 0; y < 32; ++y)
        for (int x = 0; x < 48; ++x)
            picture.setPixel(x, y,
                             qRgb(x * 5, y * 7, static_cast<int>(128 + 100 * std::sin(x * 0.4))));
    return picture;
}

} // namespace clitest
