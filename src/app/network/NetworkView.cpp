#include "NetworkView.h"

#include "LayerRegistry.h"

#include <QHelpEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace il::app {

namespace {

constexpr double kMargin = 8, kHeader = 20, kGap = 40, kSpacing = 6;
constexpr double kMapCell = 44, kPictureCell = 56, kHistWidth = 72, kHistHeight = 34;
constexpr double kPlot = 360;

const QColor kPositive(31, 119, 180), kNegative(245, 130, 32);
const QColor kDead(214, 39, 40), kSaturated(230, 170, 0);

// -1..1 to orange..white..blue, as TensorFlow Playground colours a unit.
QRgb diverging(double t)
{
    if (!std::isfinite(t)) return qRgb(128, 128, 128); // a diverged network: gray
    t = std::clamp(t, -1.0, 1.0);
    const QColor& end = t >= 0 ? kPositive : kNegative;
    const double a = std::fabs(t);
    return qRgb(static_cast<int>(255 + (end.red() - 255) * a),
                static_cast<int>(255 + (end.green() - 255) * a),
                static_cast<int>(255 + (end.blue() - 255) * a));
}

// A light colour per class (the output's map).
QRgb classColour(int c)
{
    static const QRgb palette[] = {qRgb(174, 199, 232), qRgb(255, 187, 120), qRgb(152, 223, 138),
                                   qRgb(255, 152, 150), qRgb(197, 176, 213), qRgb(196, 156, 148),
                                   qRgb(247, 182, 210), qRgb(219, 219, 141), qRgb(158, 218, 229)};
    return palette[static_cast<size_t>(c) % std::size(palette)];
}

// What one unit of a layer of this kind computes, as its type says (LayerType::formula).
QString formula(const std::string& kind)
{
    const il::LayerType* type = il::findLayerType(kind);
    if (type && !type->formula.empty()) return QString::fromStdString(type->formula);
    return QString::fromStdString(kind) + "(z)";
}

QString number(double v)
{
    return QString::number(v, 'g', 3);
}

// "tanh 16/32": the layer's kind, and how many of its units are drawn.
QString columnTitle(const tasks::UnitColumn& c)
{
    QString title = QString::fromStdString(c.kind);
    if (c.stride > 1)
        title += QString(" %1 levels").arg(c.shown);
    else if (c.shown < c.units)
        title += QString(" %1/%2").arg(c.shown).arg(c.units);
    return title;
}

} // namespace

NetworkView::NetworkView(QWidget* parent) : QWidget(parent)
{
    setMouseTracking(true);
    setObjectName("networkView");
}

void NetworkView::setInside(const tasks::NetworkInside& inside)
{
    m_inside = inside;
    layOut();
    updateGeometry();
    update();
}

void NetworkView::layOut()
{
    m_cells.clear();
    m_columnX.clear();
    m_output = m_plot = {};
    using tasks::InsideView;
    const InsideView view = m_inside.view;
    if (view == InsideView::Embedding) {
        m_plot = QRectF(kMargin, kMargin, kPlot, kPlot);
        m_size =
            QSize(static_cast<int>(kPlot + 2 * kMargin), static_cast<int>(kPlot + 2 * kMargin));
        return;
    }
    if (view == InsideView::None) {
        m_size = QSize(240, 60);
        return;
    }
    const bool histograms = view == InsideView::Distributions;
    const double w = histograms                    ? kHistWidth
                     : view == InsideView::Picture ? kPictureCell
                                                   : kMapCell;
    double h = histograms ? kHistHeight : w;
    if (view == InsideView::Picture && m_inside.mapWidth > 0)
        h = w * m_inside.mapHeight / m_inside.mapWidth;
    double x = kMargin, bottom = kMargin;
    if (view == InsideView::Plane) { // the two inputs, as ramps over the plane
        m_columnX.push_back(x);
        for (int u = 0; u < 2; ++u) {
            Cell c;
            c.rect = QRectF(x, kMargin + kHeader + u * (h + kSpacing), w, h);
            c.column = -1;
            c.unit = u;
            m_cells.push_back(c);
            bottom = std::max(bottom, c.rect.bottom());
        }
        x += w + kGap;
    }
    for (size_t k = 0; k < m_inside.columns.size(); ++k) {
        m_columnX.push_back(x);
        for (int u = 0; u < m_inside.columns[k].shown; ++u) {
            Cell c;
            c.rect = QRectF(x, kMargin + kHeader + u * (h + kSpacing), w, h);
            c.column = static_cast<int>(k);
            c.unit = u;
            m_cells.push_back(c);
            bottom = std::max(bottom, c.rect.bottom());
        }
        x += w + kGap;
    }
    if (view == InsideView::Plane) {
        m_output = QRectF(x, kMargin + kHeader, 2 * w + kSpacing, 2 * w + kSpacing);
        x = m_output.right() + kMargin;
        bottom = std::max(bottom, m_output.bottom());
    } else {
        x -= kGap - kMargin;
    }
    m_size = QSize(static_cast<int>(std::ceil(x)), static_cast<int>(std::ceil(bottom + kMargin)));
}

QImage NetworkView::mapImage(const tasks::UnitColumn& c, int unit) const
{
    const int mw = m_inside.mapWidth, mh = m_inside.mapHeight;
    QImage image(mw, mh, QImage::Format_RGB32);
    const double scale = std::max(std::fabs(c.lo), std::fabs(c.hi));
    const float* v = c.maps.data() + static_cast<size_t>(unit) * mw * mh;
    for (int j = 0; j < mh; ++j) {
        auto* line = reinterpret_cast<QRgb*>(image.scanLine(j));
        for (int i = 0; i < mw; ++i)
            line[i] = diverging(scale > 0 ? v[j * mw + i] / scale : 0);
    }
    return image;
}

QImage NetworkView::outputImage() const
{
    const int mw = m_inside.mapWidth, mh = m_inside.mapHeight;
    QImage image(mw, mh, QImage::Format_RGB32);
    const double mid = 0.5 * (m_inside.outputLo + m_inside.outputHi);
    const double half = 0.5 * (m_inside.outputHi - m_inside.outputLo);
    for (int j = 0; j < mh; ++j) {
        auto* line = reinterpret_cast<QRgb*>(image.scanLine(j));
        for (int i = 0; i < mw; ++i) {
            const float v = m_inside.output[static_cast<size_t>(j * mw + i)];
            line[i] = m_inside.classes > 0 ? (std::isfinite(v) ? classColour(static_cast<int>(v))
                                                               : qRgb(128, 128, 128))
                                           : diverging(half > 0 ? (v - mid) / half : 0);
        }
    }
    return image;
}

void NetworkView::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    paint(p);
}

QImage NetworkView::picture() const
{
    QImage image(m_size, QImage::Format_RGB32);
    image.fill(Qt::white);
    QPainter p(&image);
    paint(p);
    return image;
}

void NetworkView::paint(QPainter& p) const
{
    p.setRenderHint(QPainter::Antialiasing);
    switch (m_inside.view) {
    case tasks::InsideView::Plane:
    case tasks::InsideView::Picture:
        paintMaps(p);
        break;
    case tasks::InsideView::Distributions:
        paintHistograms(p);
        break;
    case tasks::InsideView::Embedding:
        paintEmbedding(p);
        break;
    case tasks::InsideView::None:
        break;
    }
}

void NetworkView::paintMaps(QPainter& p) const
{
    const bool plane = m_inside.view == tasks::InsideView::Plane;
    const int first = plane ? 1 : 0; // m_columnX index of column 0
    // The weights first, under the units: from each unit of the column before to each here.
    double maxAbs = 0;
    for (const tasks::UnitColumn& c : m_inside.columns)
        for (float w : c.weights)
            maxAbs = std::max(maxAbs, static_cast<double>(std::fabs(w)));
    for (size_t k = 0; k < m_inside.columns.size() && maxAbs > 0; ++k) {
        const tasks::UnitColumn& c = m_inside.columns[k];
        if (c.weights.empty()) continue;
        const int before = static_cast<int>(k) - 1;
        if (before < 0 && !plane) continue; // a picture's coordinates are not drawn
        for (int o = 0; o < c.shown; ++o) {
            const QRectF to = unitRect(static_cast<int>(k), o);
            for (int i = 0; i < c.fanIn; ++i) {
                const QRectF from = unitRect(before, i);
                if (from.isEmpty()) continue;
                const float w = c.weights[static_cast<size_t>(o * c.fanIn + i)];
                QColor colour = w >= 0 ? kPositive : kNegative;
                colour.setAlphaF(0.25 + 0.6 * std::fabs(w) / maxAbs);
                p.setPen(QPen(colour, 0.3 + 3.2 * std::fabs(w) / maxAbs));
                p.drawLine(QPointF(from.right(), from.center().y()),
                           QPointF(to.left(), to.center().y()));
            }
        }
    }
    p.setRenderHint(QPainter::SmoothPixmapTransform, false);
    QFont small = font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    p.setFont(small);
    p.setPen(palette().color(QPalette::Text));
    // Column titles.
    if (plane)
        p.drawText(QRectF(m_columnX[0] - 4, 0, kMapCell + 8, kHeader + kMargin),
                   Qt::AlignHCenter | Qt::AlignVCenter, "inputs");
    for (size_t k = 0; k < m_inside.columns.size(); ++k) {
        const tasks::UnitColumn& c = m_inside.columns[k];
        const QString title = columnTitle(c);
        const double left = std::max(0.0, m_columnX[k + first] - kGap / 2);
        p.drawText(QRectF(left, 0, kGap + kPictureCell, kHeader + kMargin),
                   Qt::AlignHCenter | Qt::AlignVCenter, title);
    }
    for (const Cell& cell : m_cells) {
        if (cell.column < 0) { // an input: its value rises along its axis
            QImage ramp(2, 2, QImage::Format_RGB32);
            const bool x = cell.unit == 0;
            ramp.setPixel(0, 0, diverging(x ? -1 : 1));
            ramp.setPixel(1, 0, diverging(1));
            ramp.setPixel(0, 1, diverging(-1));
            ramp.setPixel(1, 1, diverging(x ? 1 : -1));
            p.setRenderHint(QPainter::SmoothPixmapTransform, true);
            p.drawImage(cell.rect, ramp);
            p.setRenderHint(QPainter::SmoothPixmapTransform, false);
            p.setPen(palette().color(QPalette::Text));
            p.drawText(cell.rect, Qt::AlignCenter, m_inside.inputNames.value(cell.unit).left(6));
            continue;
        }
        const tasks::UnitColumn& c = m_inside.columns[static_cast<size_t>(cell.column)];
        p.drawImage(cell.rect, mapImage(c, cell.unit));
        const bool dead = c.dead.size() > static_cast<size_t>(cell.unit) &&
                          c.dead[static_cast<size_t>(cell.unit)];
        const bool saturated = c.saturated.size() > static_cast<size_t>(cell.unit) &&
                               c.saturated[static_cast<size_t>(cell.unit)];
        p.setPen(dead ? QPen(kDead, 2.5) : saturated ? QPen(kSaturated, 2.5) : QPen(Qt::gray, 0.8));
        p.setBrush(Qt::NoBrush);
        p.drawRect(cell.rect);
    }
    if (!m_output.isEmpty()) {
        // The last column's units feed the output: its lines are not drawn (a skip may join).
        p.drawImage(m_output, outputImage());
        p.setPen(QPen(Qt::gray, 0.8));
        p.drawRect(m_output);
        p.setPen(palette().color(QPalette::Text));
        p.drawText(QRectF(m_output.left(), 0, m_output.width(), kHeader + kMargin),
                   Qt::AlignHCenter | Qt::AlignVCenter, "output");
    }
}

void NetworkView::paintHistograms(QPainter& p) const
{
    QFont small = font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    p.setFont(small);
    for (size_t k = 0; k < m_inside.columns.size(); ++k) {
        const tasks::UnitColumn& c = m_inside.columns[k];
        const QString title = columnTitle(c);
        p.setPen(palette().color(QPalette::Text));
        p.drawText(
            QRectF(std::max(0.0, m_columnX[k] - kGap / 2), 0, kGap + kHistWidth, kHeader + kMargin),
            Qt::AlignHCenter | Qt::AlignVCenter, title);
    }
    for (const Cell& cell : m_cells) {
        const tasks::UnitColumn& c = m_inside.columns[static_cast<size_t>(cell.column)];
        const int* counts =
            c.histograms.data() + static_cast<size_t>(cell.unit) * tasks::kInsideBins;
        const int most = std::max(1, *std::max_element(counts, counts + tasks::kInsideBins));
        const double bw = cell.rect.width() / tasks::kInsideBins;
        p.setPen(Qt::NoPen);
        p.setBrush(kPositive);
        for (int b = 0; b < tasks::kInsideBins; ++b) {
            const double bh = (cell.rect.height() - 2) * counts[b] / most;
            p.drawRect(QRectF(cell.rect.left() + b * bw, cell.rect.bottom() - bh, bw * 0.9, bh));
        }
        const bool dead = c.dead[static_cast<size_t>(cell.unit)] != 0;
        const bool saturated = c.saturated[static_cast<size_t>(cell.unit)] != 0;
        p.setPen(dead ? QPen(kDead, 2.5) : saturated ? QPen(kSaturated, 2.5) : QPen(Qt::gray, 0.8));
        p.setBrush(Qt::NoBrush);
        p.drawRect(cell.rect);
    }
}

QPointF NetworkView::letterPoint(int index) const
{
    if (m_inside.view != tasks::InsideView::Embedding || index < 0 ||
        static_cast<size_t>(index) >= m_inside.x.size())
        return {};
    const auto [xLo, xHi] = std::minmax_element(m_inside.x.begin(), m_inside.x.end());
    const auto [yLo, yHi] = std::minmax_element(m_inside.y.begin(), m_inside.y.end());
    const double xs = std::max(1e-9, static_cast<double>(*xHi - *xLo));
    const double ys = std::max(1e-9, static_cast<double>(*yHi - *yLo));
    const QRectF r = m_plot.adjusted(16, 16, -16, -16);
    return {r.left() + r.width() * (m_inside.x[static_cast<size_t>(index)] - *xLo) / xs,
            r.bottom() - r.height() * (m_inside.y[static_cast<size_t>(index)] - *yLo) / ys};
}

void NetworkView::paintEmbedding(QPainter& p) const
{
    p.setPen(QPen(Qt::gray, 0.8));
    p.setBrush(Qt::NoBrush);
    p.drawRect(m_plot);
    QFont letter = font();
    letter.setPointSizeF(letter.pointSizeF() * 1.2);
    letter.setBold(true);
    p.setFont(letter);
    static const QString vowels = "aeiouyAEIOUYäöüéèáàíóúåæø";
    for (int i = 0; i < m_inside.letters.size(); ++i) {
        const QPointF at = letterPoint(i);
        const QString& l = m_inside.letters[i];
        p.setPen(vowels.contains(l) ? kNegative.darker(120) : kPositive.darker(130));
        p.drawText(QRectF(at.x() - 10, at.y() - 10, 20, 20), Qt::AlignCenter, l);
    }
}

QRectF NetworkView::unitRect(int column, int unit) const
{
    for (const Cell& c : m_cells)
        if (c.column == column && c.unit == unit) return c.rect;
    return {};
}

QString NetworkView::unitText(int column, int unit) const
{
    if (column < 0)
        return QString("Input: %1 (its value rises along its axis)")
            .arg(m_inside.inputNames.value(unit));
    const tasks::UnitColumn& c = m_inside.columns[static_cast<size_t>(column)];
    QString text = QString("<b>Layer %1 (%2), unit %3 of %4</b><br>")
                       .arg(c.layer + 1)
                       .arg(QString::fromStdString(c.kind))
                       .arg(unit + 1)
                       .arg(c.units);
    if (c.stride > 1)
        text = QString("<b>Layer %1 (%2), level %3 of %4</b> (coarse to fine)<br>Computes its "
                       "first feature, looked up in that level's grid around the point")
                   .arg(c.layer + 1)
                   .arg(QString::fromStdString(c.kind))
                   .arg(unit + 1)
                   .arg(c.units / c.stride);
    else if (c.kind == "fourier" || c.kind == "hashgrid")
        text += "Computes " + formula(c.kind);
    else
        text += "Computes " + formula(c.kind) +
                ", where z is the weighted sum of the layer before's outputs plus a bias";
    if (!c.weights.empty()) {
        QStringList w;
        for (int i = 0; i < c.fanIn && i < 8; ++i)
            w << number(c.weights[static_cast<size_t>(unit * c.fanIn + i)]);
        if (c.fanIn > 8) w << "…";
        text += QString("<br>Incoming weights (%1): %2").arg(c.fanIn).arg(w.join(", "));
    }
    if (static_cast<size_t>(unit) < c.dead.size() && c.dead[static_cast<size_t>(unit)])
        text += "<br><span style='color:#d62728'><b>Dead:</b> the same output for every row; "
                "it no longer learns (a ReLU stuck at 0 after a too-high learning rate).</span>";
    else if (static_cast<size_t>(unit) < c.saturated.size() &&
             c.saturated[static_cast<size_t>(unit)])
        text += "<br><span style='color:#b8860b'><b>Saturated:</b> at its ends on nearly "
                "every row, where its gradient is close to 0.</span>";
    return text;
}

QString NetworkView::toolTipAt(QPointF at) const
{
    if (m_inside.view == tasks::InsideView::Embedding) {
        for (int i = 0; i < m_inside.letters.size(); ++i)
            if (QLineF(at, letterPoint(i)).length() <= 10) {
                QString text = QString("<b>%1</b>").arg(m_inside.letters[i].toHtmlEscaped());
                if (static_cast<size_t>(i) < m_inside.nearest.size())
                    text += "<br>Nearest letters: " +
                            m_inside.nearest[static_cast<size_t>(i)].join(", ").toHtmlEscaped();
                return text;
            }
        return {};
    }
    for (const Cell& c : m_cells)
        if (c.rect.contains(at)) return unitText(c.column, c.unit);
    if (m_output.contains(at))
        return m_inside.classes > 0 ? "<b>Output</b>: the class the network predicts at each "
                                      "point of the plane"
                                    : "<b>Output</b>: the value the network predicts at each "
                                      "point of the plane";
    return {};
}

bool NetworkView::event(QEvent* event)
{
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const QString text = toolTipAt(help->pos());
        if (text.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(help->globalPos(), text, this);
        return true;
    }
    return QWidget::event(event);
}

} // namespace il::app
