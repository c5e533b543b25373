// ChartsPanel: what is drawn over the live curves (the overfitting band and its label, the mark
// of the weights the run kept, other runs' curves as faint ghosts) and the colours of it all.
#include "ChartsPanel.h"
#include "ui_ChartsPanel.h"

#include "RunList.h"
#include "RunSettings.h"
#include "Session.h"

#include <QAreaSeries>
#include <QChart>
#include <QChartView>
#include <QGraphicsRectItem>
#include <QGraphicsSimpleTextItem>
#include <QLegendMarker>
#include <QLineSeries>
#include <QScatterSeries>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace il::app {

namespace {

// The point of a curve nearest to step x; none when the curve is empty.
QList<QPointF> nearestPoint(const QList<QPointF>& curve, double x)
{
    const auto at = std::min_element(curve.begin(), curve.end(), [x](QPointF a, QPointF b) {
        return std::fabs(a.x() - x) < std::fabs(b.x() - x);
    });
    return at == curve.end() ? QList<QPointF>() : QList<QPointF>{*at};
}

} // namespace

double ChartsPanel::overfitMarkStep() const
{
    return m_overfitBand->isVisible() ? m_overfitStep : NAN;
}

QString ChartsPanel::overfitMarkText() const
{
    return m_overfitBand->isVisible() ? m_overfitText : QString();
}

bool ChartsPanel::overfitLabelInsidePlot() const
{
    const QRectF box = m_overfitLabelBox->mapRectToParent(m_overfitLabelBox->rect());
    return m_overfitLabelBox->isVisible() && m_lossChart->plotArea().contains(box);
}

double ChartsPanel::keptMarkStep() const
{
    return m_keptLine->isVisible() ? m_keptLine->at(0).x() : NAN;
}

double ChartsPanel::metricKeptMarkStep() const
{
    return m_metricKeptLine->isVisible() ? m_metricKeptLine->at(0).x() : NAN;
}

QString ChartsPanel::keptMarkText() const
{
    return m_keptPoint->isVisible() ? m_keptPoint->name() : QString();
}

QString ChartsPanel::keptMarkToolTip() const
{
    return m_keptToolTip;
}

QStringList ChartsPanel::ghostSeriesNames() const
{
    QStringList names;
    for (const QLineSeries* s : m_ghosts)
        names << s->name();
    return names;
}

void ChartsPanel::rebuildGhosts()
{
    for (QLineSeries* s : m_ghosts) {
        m_lossChart->removeSeries(s);
        delete s;
    }
    m_ghosts.clear();
    m_ghostXMax = 0;
    m_ghostLo = INFINITY;
    m_ghostHi = -INFINITY;
    if (!m_runs) return;
    const bool log = m_ui->logScaleCheckBox->isChecked();
    for (int row : m_runs->ghostRows()) {
        const Run& run = m_runs->run(row);
        QColor colour = run.colour;
        colour.setAlpha(110);
        for (const auto& [points, what] :
             {std::pair{&run.train, "training"}, std::pair{&run.validation, "validation"}}) {
            QList<QPointF> shown;
            for (const QPointF& p : *points)
                if (std::isfinite(p.y()) && (!log || p.y() > 0)) shown.append(p);
            if (shown.isEmpty()) continue;
            auto* series = new QLineSeries;
            series->setName(runTitle(run) + ' ' + what);
            series->setPen(QPen(colour, 1.5, points == &run.train ? Qt::SolidLine : Qt::DashLine));
            series->replace(shown);
            m_lossChart->addSeries(series);
            series->attachAxis(m_lossX);
            series->attachAxis(m_lossY);
            m_lossChart->legend()->markers(series).value(0)->setVisible(false);
            m_ghosts.push_back(series);
            for (const QPointF& p : shown) {
                m_ghostXMax = std::max(m_ghostXMax, p.x());
                m_ghostLo = std::min(m_ghostLo, p.y());
                m_ghostHi = std::max(m_ghostHi, p.y());
            }
        }
    }
    // The live curves over the ghosts: a chart draws its series in the order they were added.
    for (QLineSeries* series : {m_train, m_trainSmooth, m_validation}) {
        m_lossChart->removeSeries(series);
        m_lossChart->addSeries(series);
        series->attachAxis(m_lossX);
        series->attachAxis(m_lossY);
    }
    m_lossChart->legend()->markers(m_train).value(0)->setVisible(false);
}

void ChartsPanel::updateKeptMark(const QList<QPointF>& validation, const QList<QPointF>& metric,
                                 double lo, double hi)
{
    const tasks::RunVerdict& verdict = m_session->verdict();
    const bool show = verdict.restored();
    m_keptToolTip = show ? verdict.sentence() : QString();
    const auto x = static_cast<double>(verdict.keptStep);
    struct Mark {
        QChart* chart;
        QLineSeries* line;
        QScatterSeries* point;
        const QList<QPointF>& curve;
        double lo, hi;
    };
    for (const Mark& m : {Mark{m_lossChart, m_keptLine, m_keptPoint, validation, lo, hi},
                          Mark{m_metricChart, m_metricKeptLine, m_metricKeptPoint, metric,
                               m_metricY->min(), m_metricY->max()}}) {
        m.line->setVisible(show);
        m.point->setVisible(show);
        if (show) {
            m.line->replace({QPointF(x, m.lo), QPointF(x, m.hi)});
            m.point->replace(nearestPoint(m.curve, x));
            m.point->setName(verdict.label());
        }
        // Showing a series shows its legend marker again: only the point's name is wanted.
        for (QLegendMarker* marker : m.chart->legend()->markers(m.line))
            marker->setVisible(false);
    }
    // The metric chart stays without a legend (a line of it costs a small chart most of its
    // plot): the loss chart's legend names the mark, the chart's tooltip says it.
}

void ChartsPanel::updateOverfitMark(double lo, double hi)
{
    const LossHistory& h = m_session->history();
    const OverfitSighting& s = h.overfitting();
    const bool show = s.valid() && m_validation->isVisible();
    m_overfitBand->setVisible(show);
    m_overfitEdge->setVisible(show);
    // Showing a series shows its legend marker again: the label says what the band is.
    for (QAbstractSeries* series : {static_cast<QAbstractSeries*>(m_overfitBand),
                                    static_cast<QAbstractSeries*>(m_overfitEdge)})
        for (QLegendMarker* marker : m_lossChart->legend()->markers(series))
            marker->setVisible(false);
    m_overfitLabelBox->setVisible(show);
    m_overfitText.clear();
    if (!show) return;
    const auto x0 = static_cast<double>(s.bestStep);
    const double x1 = std::max(static_cast<double>(h.lastStep()), x0 + 1);
    m_overfitTop->replace({QPointF(x0, hi), QPointF(x1, hi)});
    m_overfitBottom->replace({QPointF(x0, lo), QPointF(x1, lo)});
    m_overfitEdge->replace({QPointF(x0, lo), QPointF(x0, hi)});
    m_overfitStep = x0;
    m_overfitHi = hi;
    m_overfitText =
        QString("validation loss rising since step %1: the network is memorising").arg(s.bestStep);
    m_overfitLabelBox->setToolTip(
        QString::fromStdString(OverfitWatch::describe(s)) +
        QString(" (noticed at step %1). Early stopping (the Patience setting) ends such a run "
                "and keeps the weights of step %2.")
            .arg(s.noticedStep)
            .arg(s.bestStep));
    placeOverfitLabel();
}

void ChartsPanel::placeOverfitLabel()
{
    if (m_overfitText.isEmpty() || !m_overfitLabelBox->isVisible()) return;
    const QRectF plot = m_lossChart->plotArea();
    constexpr double pad = kLabelPad;
    const QFontMetricsF metrics(m_overfitLabel->font());
    // A small window still shows where and what: the full line, else a shorter one that keeps
    // the step, else the word; cut short only where not even that fits (the tooltip has it all).
    const double room = std::max(0.0, plot.width() - 4 * pad);
    const QString step = QString::number(static_cast<qlonglong>(m_overfitStep));
    QString shown = metrics.elidedText(tr("memorising"), Qt::ElideRight, room);
    for (const QString& candidate : {m_overfitText, tr("memorising since step %1").arg(step)})
        if (metrics.horizontalAdvance(candidate) <= room) {
            shown = candidate;
            break;
        }
    m_overfitLabel->setText(shown);
    const QRectF text = m_overfitLabel->boundingRect();
    const QSizeF box(text.width() + 2 * pad, text.height() + 2 * pad);
    const QPointF edge =
        m_lossChart->mapToPosition(QPointF(m_overfitStep, m_overfitHi), m_validation);
    // Right of the band's edge, at the top of the plot; moved left where it would leave it.
    const double left = std::clamp(edge.x() + pad, plot.left() + pad,
                                   std::max(plot.left() + pad, plot.right() - pad - box.width()));
    m_overfitLabelBox->setRect(QRectF(QPointF(0, 0), box));
    m_overfitLabelBox->setPos(left, plot.top() + pad);
    m_overfitLabel->setPos(pad, pad);
}

void ChartsPanel::applyPalette()
{
    const QPalette pal = palette();
    const bool dark = pal.color(QPalette::Window).lightness() < 128;
    const QColor text = pal.color(QPalette::WindowText);
    const QColor grid = dark ? QColor(255, 255, 255, 40) : QColor(0, 0, 0, 30);
    for (QChart* chart : {m_lossChart, m_rateChart, m_metricChart}) {
        chart->setBackgroundBrush(pal.color(QPalette::Base));
        chart->setPlotAreaBackgroundVisible(false);
        chart->legend()->setLabelColor(text);
        chart->setTitleBrush(text);
        QFont titleFont = chart->titleFont();
        titleFont.setBold(true);
        chart->setTitleFont(titleFont);
        for (QAbstractAxis* axis : chart->axes()) {
            axis->setLabelsColor(text);
            axis->setTitleBrush(text);
            axis->setGridLineColor(grid);
            axis->setMinorGridLineColor(grid);
            axis->setLinePenColor(grid);
            QFont f = axis->titleFont();
            f.setPointSizeF(f.pointSizeF() * 0.9);
            f.setBold(false);
            axis->setTitleFont(f);
        }
    }
    const QColor blue = dark ? QColor(100, 170, 255) : QColor(31, 119, 180);
    const QColor orange = dark ? QColor(255, 170, 80) : QColor(230, 120, 20);
    QColor faint = blue;
    faint.setAlpha(70);
    m_train->setPen(QPen(faint, 1));
    m_trainSmooth->setPen(QPen(blue, 2));
    m_validation->setPen(QPen(orange, 2));
    const QColor red = dark ? QColor(255, 110, 110) : QColor(200, 40, 40);
    QColor band = red;
    band.setAlpha(dark ? 45 : 30);
    m_overfitBand->setBrush(band);
    m_overfitBand->setPen(Qt::NoPen);
    m_overfitEdge->setPen(QPen(red, 1.5, Qt::DashLine));
    QColor backing = pal.color(QPalette::Base);
    backing.setAlpha(220);
    m_overfitLabelBox->setBrush(backing);
    m_overfitLabel->setBrush(red);
    QPen planned(text, 1.2, Qt::DashLine);
    planned.setColor(QColor(text.red(), text.green(), text.blue(), 140));
    m_plannedRate->setPen(planned);
    m_rate->setPen(QPen(blue, 2));
    m_metric->setPen(QPen(dark ? QColor(120, 220, 140) : QColor(44, 160, 44), 2));
    if (!m_side) return; // still being built
    // Purple: orange is the validation loss's colour on the loss chart beside it.
    const QColor purple = dark ? QColor(197, 160, 235) : QColor(148, 103, 189);
    m_side->setPen(QPen(purple, 1.5));
    m_side->setColor(purple);
    m_sideY->setLabelsColor(purple);
    for (QChartView* view :
         {m_ui->lossChartView, m_ui->learningRateChartView, m_ui->metricChartView})
        view->setBackgroundBrush(pal.color(QPalette::Base));
    // The kept weights' mark in the text's colour: apart from the curves' blue, orange and
    // green and the overfitting red.
    QColor mark = text;
    mark.setAlpha(170);
    for (QLineSeries* line : {m_keptLine, m_metricKeptLine})
        line->setPen(QPen(mark, 1.5, Qt::DashDotLine));
    for (QScatterSeries* point : {m_keptPoint, m_metricKeptPoint}) {
        point->setColor(text);
        point->setBorderColor(pal.color(QPalette::Base));
        point->setMarkerSize(11);
    }
}

} // namespace il::app
