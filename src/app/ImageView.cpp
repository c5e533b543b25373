#include "ImageView.h"

#include <QGraphicsPixmapItem>
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
    setMinimumSize(120, 120);
    connect(horizontalScrollBar(), &QScrollBar::valueChanged, this, &ImageView::viewChanged);
    connect(verticalScrollBar(), &QScrollBar::valueChanged, this, &ImageView::viewChanged);
}

void ImageView::setImage(const QImage& image)
{
    const bool sizeChanged = image.size() != m_image.size();
    m_image = image;
    m_item->setPixmap(QPixmap::fromImage(image));
    if (sizeChanged) {
        scene()->setSceneRect(m_item->boundingRect());
        if (m_fitted) fit();
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
    m_fitted = true;
    if (!m_image.isNull()) fitInView(m_item, Qt::KeepAspectRatio);
    emit viewChanged();
}

void ImageView::linkTo(ImageView* other)
{
    connect(other, &ImageView::viewChanged, this, [this, other] { followTransform(other); });
    connect(this, &ImageView::viewChanged, other, [this, other] { other->followTransform(this); });
}

void ImageView::followTransform(const ImageView* other)
{
    if (m_syncing || other->m_image.isNull() || m_image.isNull()) return;
    m_syncing = true;
    // Same zoom relative to each picture's size, so different resolutions line up.
    const double ratio = static_cast<double>(other->m_image.width()) / m_image.width();
    QTransform t = other->transform();
    setTransform(QTransform::fromScale(t.m11() * ratio, t.m22() * ratio));
    m_fitted = other->m_fitted;
    const QPointF centre = other->mapToScene(other->viewport()->rect().center()) / ratio;
    centerOn(centre);
    m_syncing = false;
}

void ImageView::wheelEvent(QWheelEvent* event)
{
    if (m_image.isNull()) return;
    const double factor = std::pow(1.0015, event->angleDelta().y());
    m_fitted = false;
    scale(factor, factor);
    emit viewChanged();
}

void ImageView::resizeEvent(QResizeEvent* event)
{
    QGraphicsView::resizeEvent(event);
    if (m_fitted) fit();
}

void ImageView::drawForeground(QPainter* painter, const QRectF& rect)
{
    QGraphicsView::drawForeground(painter, rect);
    if (!m_image.isNull() || m_placeholder.isEmpty()) return;
    painter->save();
    painter->resetTransform();
    painter->setPen(palette().color(QPalette::Disabled, QPalette::Text));
    painter->drawText(viewport()->rect().adjusted(8, 8, -8, -8), Qt::AlignCenter | Qt::TextWordWrap,
                      m_placeholder);
    painter->restore();
}

} // namespace il::app
