// A picture that zooms with the wheel and pans by dragging, and fits itself to the view until
// the user zooms. Two views can be linked so the original and the reconstruction move together.
// From the keyboard (it takes focus with Tab, and draws a frame in the highlight colour while it
// has it): + and - zoom, 0 fits, the arrow keys pan.
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
    void keyPressEvent(QKeyEvent* event) override;
    void focusInEvent(QFocusEvent* event) override;
    void focusOutEvent(QFocusEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void drawForeground(QPainter* painter, const QRectF& rect) override;

private:
    void followTransform(const ImageView* other);
    // fit() without telling the linked view (it is following, or fits itself).
    void fitQuietly();
    void zoomBy(double factor);

    QGraphicsPixmapItem* m_item;
    QImage m_image;
    QSize m_sceneSize; // the picture the scene, zoom and scroll position are for (kept while none)
    QString m_placeholder;
    bool m_fitted = true;
    bool m_syncing = false;
};

} // namespace il::app
