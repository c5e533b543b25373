// A small black-and-white line drawing made in code: black strokes about two pixels wide
// (straight lines and rings) on white, no grey at all, the kind of hard-edged picture on which
// SIREN at too high a learning rate stalls at the mean. The same pixels on every machine.
#pragma once

#include <QImage>

#include <algorithm>
#include <cmath>

namespace testsupport {

// side x side pixels (the strokes are placed for 64 and scale with side), Format_Grayscale8.
inline QImage lineDrawing(int side = 64)
{
    const double s = side / 64.0, halfWidth = 1.0 * s;
    struct Segment {
        double x0, y0, x1, y1;
    };
    struct Ring {
        double cx, cy, r;
    };
    const Segment segments[] = {{6, 8, 58, 10}, {10, 56, 54, 20}, {48, 30, 48, 60}};
    const Ring rings[] = {{32, 36, 16}, {18, 22, 6}};
    auto onSegment = [&](const Segment& g, double x, double y) {
        const double x0 = g.x0 * s, y0 = g.y0 * s, dx = (g.x1 - g.x0) * s, dy = (g.y1 - g.y0) * s;
        const double t =
            std::clamp(((x - x0) * dx + (y - y0) * dy) / (dx * dx + dy * dy), 0.0, 1.0);
        return std::hypot(x - (x0 + t * dx), y - (y0 + t * dy)) <= halfWidth;
    };
    auto onRing = [&](const Ring& g, double x, double y) {
        return std::abs(std::hypot(x - g.cx * s, y - g.cy * s) - g.r * s) <= halfWidth;
    };
    QImage image(side, side, QImage::Format_Grayscale8);
    for (int py = 0; py < side; ++py) {
        uchar* row = image.scanLine(py);
        for (int px = 0; px < side; ++px) {
            const double x = px + 0.5, y = py + 0.5; // the pixel's centre
            bool black = false;
            for (const Segment& g : segments)
                black = black || onSegment(g, x, y);
            for (const Ring& g : rings)
                black = black || onRing(g, x, y);
            row[px] = black ? 0 : 255;
        }
    }
    return image;
}

} // namespace testsupport
