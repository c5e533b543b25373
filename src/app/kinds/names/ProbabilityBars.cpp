#include "ProbabilityBars.h"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>

namespace il::app {

namespace {

constexpr int kLabelHeight = 18;
constexpr int kTop = 16;

} // namespace

ProbabilityBars::ProbabilityBars(QWidget* parent) : QWidget(parent)
{
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void ProbabilityBars::setProbabilities(const QStringList& symbols, const std::vector<float>& probs)
{
    m_symbols = symbols;
    m_probs = probs;
    update();
}

void ProbabilityBars::clear()
{
    m_symbols.clear();
    m_probs.clear();
    update();
}

int ProbabilityBars::barAt(QPoint pos) const
{
    if (m_probs.empty()) return -1;
    const double w = static_cast<double>(width()) / static_cast<double>(m_probs.size());
    const int i = static_cast<int>(pos.x() / w);
    return i >= 0 && i < static_cast<int>(m_probs.size()) ? i : -1;
}

bool ProbabilityBars::event(QEvent* event)
{
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const int i = barAt(help->pos());
        if (i >= 0)
            QToolTip::showText(help->globalPos(),
                               QString("%1: %2%")
                                   .arg(i == 0 ? "end of name" : m_symbols.value(i))
                                   .arg(100.0 * m_probs[static_cast<size_t>(i)], 0, 'f', 1),
                               this);
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(event);
}

void ProbabilityBars::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.fillRect(rect(), palette().color(QPalette::Base));
    if (m_probs.empty()) {
        p.setPen(palette().color(QPalette::Disabled, QPalette::Text));
        p.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap,
                   "Train a names model, then type "
                   "the start of a name above.");
        return;
    }
    const auto n = static_cast<int>(m_probs.size());
    const double w = static_cast<double>(width()) / n;
    const double plot = height() - kLabelHeight - kTop;
    const float top = *std::max_element(m_probs.begin(), m_probs.end());
    std::vector<float> sorted = m_probs;
    std::sort(sorted.begin(), sorted.end(), std::greater<>());
    const float third = sorted[static_cast<size_t>(std::min(2, n - 1))];
    const QColor strong = palette().color(QPalette::Highlight);
    QColor weak = strong;
    weak.setAlpha(110);
    QFont small = font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    p.setFont(small);
    for (int i = 0; i < n; ++i) {
        const float v = m_probs[static_cast<size_t>(i)];
        const double h = top > 0 ? plot * v / top : 0;
        const QRectF bar(i * w + w * 0.12, kTop + plot - h, w * 0.76, h);
        p.fillRect(bar, v >= third ? strong : weak);
        p.setPen(palette().color(QPalette::Text));
        const QRectF label(i * w, height() - kLabelHeight, w, kLabelHeight);
        p.drawText(label, Qt::AlignCenter,
                   i == 0 ? QString::fromUtf8("\u23ce") : m_symbols.value(i));
        if (v >= third && v > 0.02)
            p.drawText(QRectF(i * w - 10, kTop + plot - h - 15, w + 20, 14), Qt::AlignCenter,
                       QString::number(static_cast<int>(v * 100 + 0.5)) + "%");
    }
}

} // namespace il::app
