#include "RaceTile.h"

#include <QLabel>
#include <QPainter>
#include <QVBoxLayout>

namespace il::app {

RaceTile::RaceTile(const QString& title, QWidget* parent)
    : QFrame(parent), m_title(new QLabel(this)), m_picture(new QWidget(this)),
      m_caption(new QLabel(this))
{
    setFrameShape(QFrame::StyledPanel);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->addWidget(m_title);
    layout->addWidget(m_picture, 1);
    layout->addWidget(m_caption);
    m_title->setAlignment(Qt::AlignHCenter);
    m_caption->setAlignment(Qt::AlignHCenter);
    m_caption->setWordWrap(true);
    m_picture->setMinimumSize(96, 96);
    m_picture->setObjectName("pictureArea");
    setTitle(title);
}

void RaceTile::setTitle(const QString& title)
{
    m_title->setText("<b>" + title.toHtmlEscaped() + "</b>");
}

void RaceTile::setImage(const QImage& image)
{
    m_image = image;
    update();
}

void RaceTile::setCaption(const QString& text)
{
    m_caption->setText(text);
}

QString RaceTile::caption() const
{
    return m_caption->text();
}

void RaceTile::setHighlighted(bool highlighted)
{
    setStyleSheet(highlighted ? "il--app--RaceTile { border: 2px solid palette(highlight); }"
                              : QString());
}

void RaceTile::paintEvent(QPaintEvent* event)
{
    QFrame::paintEvent(event);
    const QRect area = m_picture->geometry();
    QPainter p(this);
    if (m_image.isNull()) {
        p.fillRect(area, palette().alternateBase());
        return;
    }
    QSize size = m_image.size().scaled(area.size(), Qt::KeepAspectRatio);
    const QRect target(area.x() + (area.width() - size.width()) / 2,
                       area.y() + (area.height() - size.height()) / 2, size.width(), size.height());
    p.setRenderHint(QPainter::SmoothPixmapTransform);
    p.drawImage(target, m_image);
}

} // namespace il::app
