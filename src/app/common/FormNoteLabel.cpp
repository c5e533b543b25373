#include "FormNoteLabel.h"

#include <QEvent>

namespace il::app {

FormNoteLabel::FormNoteLabel(QWidget* parent) : QLabel(parent)
{
    setWordWrap(true);
}

void FormNoteLabel::setNote(const QString& text)
{
    setText(text);
    setToolTip(text);
    setVisible(!text.isEmpty());
    fitHeight();
}

void FormNoteLabel::resizeEvent(QResizeEvent* event)
{
    QLabel::resizeEvent(event);
    fitHeight();
}

void FormNoteLabel::changeEvent(QEvent* event)
{
    QLabel::changeEvent(event);
    if (event->type() == QEvent::FontChange || event->type() == QEvent::StyleChange) fitHeight();
}

void FormNoteLabel::fitHeight()
{
    // The width is the form's to give; the height follows from it. Setting only the height
    // leaves the width alone, so the next resize asks for the same height and this settles.
    const QMargins margins = contentsMargins();
    const int width = this->width() - margins.left() - margins.right() - 2 * margin();
    if (width <= 0) return;
    const int height =
        fontMetrics()
            .boundingRect(QRect(0, 0, width, QWIDGETSIZE_MAX), Qt::TextWordWrap, text())
            .height() +
        margins.top() + margins.bottom() + 2 * margin();
    if (maximumHeight() != height) setFixedHeight(height);
}

} // namespace il::app
