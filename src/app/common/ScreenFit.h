// Windows that fit the screen they open on: a restored geometry saved on a bigger screen, or a
// form's default size, kept inside the screen's available area (the desktop less its panels).
#pragma once

#include <QRect>

class QWidget;

namespace il::app {

// frame (a window's frame geometry, title bar included) inside available: shrunk only where it
// is bigger, then moved only where it sticks out. Pure, for the tests.
QRect fitFrameInto(const QRect& frame, const QRect& available);

// Fits a top-level window into the available area of its screen (the one its centre is on,
// else its own): resized and moved as fitFrameInto says, its frame margins counted when the
// window system knows them. Nothing happens without a screen.
void fitToScreen(QWidget* window);

// fitToScreen each time window is shown (not when the window system restores it), once the
// event loop has placed and framed it; the filter is a child of window.
void fitToScreenWhenShown(QWidget* window);

} // namespace il::app
