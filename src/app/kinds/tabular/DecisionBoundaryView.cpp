#include "DecisionBoundaryView.h"

#include <QPaintEvent>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

namespace il::app {

namespace {

constexpr double kDotRadius = 3.5;
constexpr int kColourBarWidth = 12;

// Ticks at round numbers (1, 2 or 5 times a power of ten apart) inside [lo, hi], at most most.
std::vector<double> niceTicks(double lo, double hi, int most)
{
    std::vector<double> ticks;
    if (!(hi > lo) || most < 2) return ticks;
    const double raw = (hi - lo) / most;
    const double power = std::pow(10.0, std::floor(std::log10(raw)));
    double step = 10 * power;
    for (double m : {1.0, 2.0, 5.0})
        if (m * power >= raw) {
            step = m * power;
            break;
        }
    for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
        ticks.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v); // no "-0" or "1e-17"
    return ticks;
}

QString tickText(double v)
{
    return QString::number(v, 'g', 4);
}

QColor mix(const QColor& a, const QColor& b, double t)
{
    return QColor::fromRgbF(static_cast<float>(a.redF() + (b.redF() - a.redF()) * t),
                            static_cast<float>(a.greenF() + (b.greenF() - a.greenF()) * t),
                            static_cast<float>(a.blueF() + (b.blueF() - a.blueF()) * t));
}

} // namespace

DecisionBoundaryView::DecisionBoundaryView(QWidget* parent) : QWidget(parent)
{
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

QColor DecisionBoundaryView::classColour(int c)
{
    // Tableau's ten: told apart by most colour-blind readers in the first few.
    static const QColor colours[] = {
        {31, 119, 180}, {255, 127, 14},  {44, 160, 44},   {214, 39, 40},  {148, 103, 189},
        {140, 86, 75},  {227, 119, 194}, {127, 127, 127}, {188, 189, 34}, {23, 190, 207}};
    return colours[static_cast<size_t>(std::max(c, 0)) % std::size(colours)];
}

QColor DecisionBoundaryView::rampColour(double t)
{
    // Viridis at five stops: dark to light, readable in grey and by colour-blind readers.
    static const QColor stops[] = {
        {68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
    t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0) * 4;
    const int i = std::min(3, static_cast<int>(t));
    return mix(stops[i], stops[i + 1], t - i);
}

void DecisionBoundaryView::setGrid(qint64 step, const tasks::BoundaryGrid& grid)
{
    m_grid = grid;
    m_step = step;
    m_hasGrid = true;
    m_message.clear();
    ++m_pictures;
    buildField();
    update();
}

void DecisionBoundaryView::setMessage(const QString& text)
{
    m_hasGrid = false;
    m_field = QImage();
    m_message = text;
    update();
}

void DecisionBoundaryView::buildField()
{
    const tasks::BoundaryGrid& g = m_grid;
    m_field = QImage(g.width, g.height, QImage::Format_RGB32);
    const QColor base = palette().color(QPalette::Base);
    const auto k = static_cast<size_t>(std::max<qsizetype>(g.classes.size(), 1));
    const double span = g.valueMax - g.valueMin;
    for (int j = 0; j < g.height; ++j) {
        auto* line = reinterpret_cast<QRgb*>(m_field.scanLine(j));
        for (int i = 0; i < g.width; ++i) {
            const size_t cell = static_cast<size_t>(j) * static_cast<size_t>(g.width) + i;
            QColor c;
            if (g.classification && (cell + 1) * k <= g.values.size()) {
                // The class colours weighted by probability, over the background by how sure
                // the network is: 1/k (a guess) shows the background, certainty strong colour.
                double r = 0, gr = 0, b = 0, top = 0;
                for (size_t m = 0; m < k; ++m) {
                    const double p = g.values[cell * k + m];
                    const QColor cc = classColour(static_cast<int>(m));
                    r += p * cc.redF();
                    gr += p * cc.greenF();
                    b += p * cc.blueF();
                    top = std::max(top, p);
                }
                const double sure = k > 1 ? (top - 1.0 / k) / (1 - 1.0 / k) : 1.0;
                c = mix(base, QColor::fromRgbF(float(r), float(gr), float(b)), 0.12 + 0.5 * sure);
            } else if (!g.classification && cell < g.values.size()) {
                c = mix(base, rampColour((g.values[cell] - g.valueMin) / span), 0.75);
            } else {
                c = base;
            }
            line[i] = c.rgb();
        }
    }
}

QRectF DecisionBoundaryView::plotRect() const
{
    const QFontMetrics fm = fontMetrics();
    const int line = fm.height();
    double labelWidth = fm.horizontalAdvance("-0.000");
    for (double v : {m_grid.yMin, m_grid.yMax})
        labelWidth = std::max<double>(labelWidth, fm.horizontalAdvance(tickText(v)));
    const double left = line + 6 + labelWidth + 4; // the y title, its labels
    const double bottom = 2 * line + 8;            // the x labels, its title
    double right = 8;
    if (m_hasGrid && !m_grid.classification) {
        double barLabels = 0;
        for (double v : {m_grid.valueMin, m_grid.valueMax})
            barLabels = std::max<double>(barLabels, fm.horizontalAdvance(tickText(v)));
        right += kColourBarWidth + 6 + barLabels;
    }
    const double top = line / 2.0 + 2;
    const double w = width() - left - right, h = height() - top - bottom;
    // Square, so a circle in the data stays one on screen when both axes span alike.
    const double side = std::max(10.0, std::min(w, h));
    return {left + (w - side) / 2, top + (h - side) / 2, side, side};
}

// Long: one painter pass in drawing order (field, rows, axes, colour bar); every part maps
// through the same plot rectangle and px/py.
void DecisionBoundaryView::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const QPalette& pal = palette();
    if (!m_hasGrid) {
        p.setPen(pal.color(QPalette::PlaceholderText));
        p.drawText(rect().adjusted(12, 12, -12, -12), Qt::AlignCenter | Qt::TextWordWrap,
                   m_message);
        return;
    }
    const tasks::BoundaryGrid& g = m_grid;
    const QRectF plot = plotRect();
    const QFontMetrics fm = fontMetrics();
    auto px = [&](double x) {
        return plot.left() + (x - g.xMin) / (g.xMax - g.xMin) * plot.width();
    };
    auto py = [&](double y) {
        return plot.bottom() - (y - g.yMin) / (g.yMax - g.yMin) * plot.height();
    };

    // The field: each grid value at the centre of its cell, blended between cells.
    p.setRenderHint(QPainter::SmoothPixmapTransform);
    p.drawImage(plot, m_field);

    // The rows: training as dots, validation as rings.
    p.setClipRect(plot);
    const QColor outline = pal.color(QPalette::Base);
    for (const tasks::BoundaryPoint& pt : g.points) {
        const QColor c = g.classification
                             ? classColour(pt.label)
                             : rampColour((pt.value - g.valueMin) / (g.valueMax - g.valueMin));
        const QPointF at(px(pt.x), py(pt.y));
        if (pt.validation) {
            p.setPen(QPen(g.classification ? c.darker(115) : QColor(30, 30, 30), 1.6));
            p.setBrush(outline);
            p.drawEllipse(at, kDotRadius, kDotRadius);
            p.setPen(Qt::NoPen);
            p.setBrush(c);
            p.drawEllipse(at, 1.4, 1.4);
        } else {
            p.setPen(QPen(g.classification ? outline : QColor(30, 30, 30), 0.8));
            p.setBrush(c);
            p.drawEllipse(at, kDotRadius, kDotRadius);
        }
    }
    p.setClipping(false);

    // Axes in the file's units.
    const QColor text = pal.color(QPalette::Text);
    p.setPen(QPen(pal.color(QPalette::Mid), 1));
    p.setBrush(Qt::NoBrush);
    p.drawRect(plot);
    p.setPen(text);
    const int line = fm.height();
    const int xMost =
        std::max(2, static_cast<int>(plot.width() / (fm.horizontalAdvance("-0.000") + 12)));
    for (double v : niceTicks(g.xMin, g.xMax, xMost)) {
        const double x = px(v);
        p.drawLine(QPointF(x, plot.bottom()), QPointF(x, plot.bottom() + 4));
        const QString t = tickText(v);
        p.drawText(QRectF(x - 40, plot.bottom() + 5, 80, line), Qt::AlignHCenter | Qt::AlignTop, t);
    }
    const int yMost = std::max(2, static_cast<int>(plot.height() / (2.2 * line)));
    for (double v : niceTicks(g.yMin, g.yMax, yMost)) {
        const double y = py(v);
        p.drawLine(QPointF(plot.left() - 4, y), QPointF(plot.left(), y));
        p.drawText(QRectF(0, y - line / 2.0, plot.left() - 6, line),
                   Qt::AlignRight | Qt::AlignVCenter, tickText(v));
    }
    p.drawText(QRectF(plot.left(), plot.bottom() + 5 + line, plot.width(), line + 2),
               Qt::AlignHCenter | Qt::AlignTop,
               fm.elidedText(g.xName, Qt::ElideMiddle, static_cast<int>(plot.width())));
    p.save();
    p.translate(2, plot.center().y());
    p.rotate(-90);
    p.drawText(QRectF(-plot.height() / 2, 0, plot.height(), line), Qt::AlignHCenter | Qt::AlignTop,
               fm.elidedText(g.yName, Qt::ElideMiddle, static_cast<int>(plot.height())));
    p.restore();

    // Regression: the ramp's colour bar, from the lowest target at the bottom to the highest.
    if (!g.classification) {
        const QRectF bar(plot.right() + 8, plot.top(), kColourBarWidth, plot.height());
        QLinearGradient ramp(bar.bottomLeft(), bar.topLeft());
        for (int s = 0; s <= 8; ++s)
            ramp.setColorAt(s / 8.0, rampColour(s / 8.0));
        p.fillRect(bar, ramp);
        p.setPen(QPen(pal.color(QPalette::Mid), 1));
        p.drawRect(bar);
        p.setPen(text);
        const QRectF labels(bar.right() + 4, bar.top(), width() - bar.right() - 4, bar.height());
        p.drawText(labels, Qt::AlignLeft | Qt::AlignTop, tickText(g.valueMax));
        p.drawText(labels, Qt::AlignLeft | Qt::AlignBottom, tickText(g.valueMin));
    }
}

} // namespace il::app
