// One picture of the race view: a title (the preset), the picture scaled to fit with its aspect
// kept, and a line under it (PSNR, steps, or what the preset is waiting for).
#pragma once

#include <QFrame>
#include <QImage>

class QLabel;

namespace il::app {

class RaceTile : public QFrame {
    Q_OBJECT
public:
    explicit RaceTile(const QString& title, QWidget* parent = nullptr);

    void setImage(const QImage& image);
    const QImage& image() const { return m_image; }
    void setCaption(const QString& text);
    QString caption() const;
    // The running preset's tile is outlined; the winner's is marked in its title.
    void setHighlighted(bool highlighted);
    void setTitle(const QString& title);

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    QLabel* m_title;
    QWidget* m_picture; // the area the image is drawn into
    QLabel* m_caption;
    QImage m_image;
};

} // namespace il::app
