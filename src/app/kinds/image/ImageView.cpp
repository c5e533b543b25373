#include "ImageView.h"

#include <QGraphicsPixmapItem>
#include <QKeyEvent>
#include <QPainter>
#include <QScrollBar>
#include <QWheelEvent>

namespace il::app {

ImageView::ImageView(QWidget* parent) : QGraphicsView(parent), m_item(new QGraphicsPixmapItem)
{
    setScene(new QGraphicsScene(this));
    scene()->addItem(m_item);
    m_item->setTransformationMode(Qt::FastTransformation); // show pixels as pixels when zoomed
    setDragMode(QGraphicsView::ScrollHandDrag);
    setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
    setRenderHint(QPainter::SmoothPixmapTransform, false);
    setFrameShape(QFrame::NoFrame);
    // Scrolling repaints rather than shifts the pixels, so the focus frame stays at the edges.
    setViewportUpdateMode(QGraphicsView::FullViewportUpdate);
    setMinimumSize(120, 120);
    connect(horizontalScrollBar(), &QScrollBar::valueChanged, this, &ImageView::viewChanged);
    connect(verticalScrollBar(), &QScrollBar::valueChanged, this, &ImageView::viewChanged);
}

void ImageView::setImage(const QImage& image)
{
    m_image = image;
    m_item->setPixmap(QPixmap::fromImage(image));
    // No picture (the placeholder shows): the scene keeps the last picture's size, so the zoom
    // and scroll position still describe a place on it for the next one.
    if (!image.isNull() && image.size() != m_sceneSize) {
        const QSize old = m_sceneSize;
        const QPointF centre = mapToScene(viewport()->rect().center());
        m_sceneSize = image.size();
        scene()->setSceneRect(m_item->boundingRect());
        if (m_fitted || old.isEmpty()) {
            fit();
        } else {
            // Another resolution of the same picture (a render): the same zoom in screen pixels
            // and the same place in the middle, not the old zoom in the new picture's pixels.
            const double sx = double(image.width()) / old.width();
            const double sy = double(image.height()) / old.height();
            const QTransform t = transform();
            setTransform(QTransform::fromScale(t.m11() / sx, t.m22() / sx));
            centerOn(centre.x() * sx, centre.y() * sy);
            emit viewChanged();
        }
    }
    viewport()->update();
}

void ImageView::setPlaceholder(const QString& text)
{
    m_placeholder = text;
    viewport()->update();
}

void ImageView::fit()
{
    fitQuietly();
    emit viewChanged();
}

void ImageView::fitQuietly()
{
    m_fitted = true;
    if (!m_image.isNull()) fitInView(m_item, Qt::KeepAspectRatio);
}

void ImageView::linkTo(ImageView* other)
{
    connect(other, &ImageView::viewChanged, this, [this, other] { followTransform(other); });
    connect(this, &ImageView::viewChanged, other, [this, other] { other->followTransform(this); });
}

void ImageView::followTransform(const ImageView* other)
{
    // other->m_syncing: other is following this view, and its own change echoes back.
    if (m_syncing || other->m_syncing || other->m_image.isNull() || m_image.isNull()) return;
    m_syncing = true;
    // Whether it fits is decided before the transform changes: a zoom in shows the scroll bars,
    // and the resize that follows would fit a view still marked fitted back again.
    m_fitted = other->m_fitted;
    if (m_fitted) {
        fitQuietly();
    } else {
        // Same zoom relative to each picture's size, so different resolutions line up.
        const double ratio = static_cast<double>(other->m_image.width()) / m_image.width();
        const QTransform t = other->transform();
        setTransform(QTransform::fromScale(t.m11() * ratio, t.m22() * ratio));
        centerOn(other->mapToScene(other->viewport()->rect().center()) / ratio);
    }
    m_syncing = false;
}

void ImageView::zoomBy(double factor)
{
    if (m_image.isNull()) return;
    m_fitted = false;
    scale(factor, factor);
    emit viewChanged();
}

void ImageView::wheelEvent(QWheelEvent* event)
{
    zoomBy(std::pow(1.0015, event->angleDelta().y()));
}

void ImageView::keyPressEvent(QKeyEvent* event)
{
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        return zoomBy(1.25);
    case Qt::Key_Minus:
        return zoomBy(0.8);
    case Qt::Key_0:
        return fit();
    default:
        QGraphicsView::keyPressEvent(event); // the arrow keys pan
    }
}

void ImageView::focusInEvent(QFocusEvent* event)
{
    QGraphicsView::focusInEvent(event);
    viewport()->update(); // the focus frame
}

void ImageView::focusOutEvent(QFocusEvent* event)
{
    QGraphicsView::focusOutEvent(event);
    viewport()->update();
}

void ImageView::resizeEvent(QResizeEvent* event)
{
    QGraphicsView::resizeEvent(event);
    if (m_fitted) fit();
}

void ImageView::drawForeground(QPainter* painter, const QRectF& rect)
{
    QGraphicsView::drawForeground(painter, rect);
    painter->save();
    painter->resetTransform();
    if (hasFocus()) { // the view has no frame of its own: without this, focus is invisible
        painter->setPen(QPen(palette().color(QPalette::Highlight), 2));
        painter->setBrush(Qt::NoBrush);
        painter->drawRect(QRectF(viewport()->rect()).adjusted(1, 1, -1, -1));
    }
    if (!m_image.isNull() || m_placeholder.isEmpty()) return painter->restore();
    painter->setPen(palette().color(QPalette::Disabled, QPalette::Text));
    painter->drawText(viewport()->rect().adjusted(8, 8, -8, -8), Qt::AlignCenter | Qt::TextWordWrap,
                      m_placeholder);
    painter->restore();
}

} // namespace il::app
