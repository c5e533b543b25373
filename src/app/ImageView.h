// A picture that zooms with the wheel and pans by dragging, and fits itself to the view until
// the user zooms. Two views can be linked so the original and the reconstruction move together.
#pragma once

#include <QGraphicsView>
#include <QImage>

class QGraphicsPixmapItem;

namespace il::app {

class ImageView : public QGraphicsView {
    Q_OBJECT
public:
    explicit ImageView(QWidget* parent = nullptr);

    void setImage(const QImage& image);
    const QImage& image() const { return m_image; }
    // Shown when there is no image.
    void setPlaceholder(const QString& text);
    // Back to fitting the whole picture in the view.
    void fit();
    // Follow another view's zoom and scroll position.
    void linkTo(ImageView* other);

signals:
    void viewChanged();

protected:
    void wheelEvent(QWheelEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void drawForeground(QPainter* painter, const QRectF& rect) override;

private:
    void followTransform(const ImageView* other);

    QGraphicsPixmapItem* m_item;
    QImage m_image;
    QString m_placeholder;
    bool m_fitted = true;
    bool m_syncing = false;
};

} // namespace il::app
