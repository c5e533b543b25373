#include "ScreenFit.h"

#include <QEvent>
#include <QGuiApplication>
#include <QPointer>
#include <QScreen>
#include <QTimer>
#include <QWidget>

#include <algorithm>

namespace il::app {

namespace {

class FitWhenShown : public QObject {
public:
    using QObject::QObject;
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (event->type() == QEvent::Show && !event->spontaneous())
            QTimer::singleShot(0, this, [window = QPointer(static_cast<QWidget*>(watched))] {
                if (window && window->isVisible()) fitToScreen(window);
            });
        return false;
    }
};

} // namespace

QRect fitFrameInto(const QRect& frame, const QRect& available)
{
    if (!available.isValid()) return frame;
    QRect fitted(frame.topLeft(), frame.size().boundedTo(available.size()));
    // Moved in from the right and the bottom first, so the top-left corner (the title bar)
    // wins when both stick out.
    fitted.moveRight(std::min(fitted.right(), available.right()));
    fitted.moveBottom(std::min(fitted.bottom(), available.bottom()));
    fitted.moveLeft(std::max(fitted.left(), available.left()));
    fitted.moveTop(std::max(fitted.top(), available.top()));
    return fitted;
}

void fitToScreen(QWidget* window)
{
    const QRect frame = window->frameGeometry();
    QScreen* screen = QGuiApplication::screenAt(frame.center());
    if (!screen) screen = window->screen();
    if (!screen) return;
    const QRect geometry = window->geometry();
    // The frame's margins: zero until the window system has framed the window once.
    const QMargins margins(geometry.left() - frame.left(), geometry.top() - frame.top(),
                           frame.right() - geometry.right(), frame.bottom() - geometry.bottom());
    const QRect fitted = fitFrameInto(frame, screen->availableGeometry());
    if (fitted == frame) return;
    window->resize(fitted.marginsRemoved(margins).size());
    window->move(fitted.topLeft()); // a window's position is its frame's
}

void fitToScreenWhenShown(QWidget* window)
{
    window->installEventFilter(new FitWhenShown(window));
}

} // namespace il::app
