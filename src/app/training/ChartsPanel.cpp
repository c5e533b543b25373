// The loss, learning-rate and metric charts over the same steps, redrawn together by one timer
// (what is drawn over the live curves, and the colours: ChartMarks.cpp).
#include "ChartsPanel.h"
#include "FoldBand.h"
#include "ui_ChartsPanel.h"

#include "ChartViews.h"
#include "RunList.h"
#include "RunSettings.h"
#include "Session.h"

#include <QAreaSeries>
#include <QGraphicsLayout>
#include <QGraphicsRectItem>
#include <QGraphicsSimpleTextItem>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QMouseEvent>
#include <QScatterSeries>
#include <QTimer>
#include <QToolTip>
#include <QValueAxis>

#include <cmath>

namespace il::app {

namespace {

constexpr int kRedrawMs = 50; // at most 20 redraws a second

QChart* makeChart(QChartView* view)
{
    auto* chart = new QChart;
    chart->legend()->setAlignment(Qt::AlignTop);
    chart->setMargins(QMargins(4, 2, 4, 2));
    chart->layout()->setContentsMargins(0, 0, 0, 0);
    chart->setBackgroundRoundness(0);
    installChart(view, chart);
    view->setRenderHint(QPainter::Antialiasing);
    return chart;
}

QValueAxis* makeAxis(const QString& title)
{
    auto* axis = new QValueAxis;
    axis->setTitleText(title);
    axis->setLabelFormat("%.3g");
    axis->setTickCount(title.isEmpty() ? 3 : 5);
    return axis;
}

void attach(QChart* chart, QLineSeries* series, QAbstractAxis* x, QAbstractAxis* y)
{
    chart->addSeries(series);
    series->attachAxis(x);
    series->attachAxis(y);
}

// A [min, max] with some room around the values (multiplicative on a log axis).
std::pair<double, double> rangeOf(const QList<QPointF>& a, const QList<QPointF>& b, bool log)
{
    double lo = INFINITY, hi = -INFINITY;
    for (const auto* list : {&a, &b})
        for (const QPointF& p : *list) {
            lo = std::min(lo, p.y());
            hi = std::max(hi, p.y());
        }
    if (!std::isfinite(lo)) return {log ? 0.01 : 0, 1};
    if (log) return {lo / 1.15, hi * 1.15};
    const double pad = std::max({(hi - lo) * 0.06, std::fabs(hi) * 0.02, 1e-6});
    return {std::max(0.0, lo - pad) == 0.0 && lo >= 0 ? 0.0 : lo - pad, hi + pad};
}

// Ticks at 0 and every round step (1, 2 or 5 times a power of ten) across [0, max].
void setStepTicks(QValueAxis* axis, double max)
{
    max = std::max(max, 1.0);
    const double raw = max / 4;
    const double power = std::pow(10.0, std::floor(std::log10(std::max(raw, 1.0))));
    double step = power;
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * power >= raw) {
            step = m * power;
            break;
        }
    // The interval first: a new range with the old interval could mean millions of ticks.
    axis->setTickType(QValueAxis::TicksDynamic);
    axis->setTickAnchor(0);
    axis->setTickInterval(std::max(step, 1.0));
    axis->setRange(0, max);
}

} // namespace

// Long: the three charts' series added in the order each chart draws them (band, mark, curves,
// kept mark); split up, that stacking order would be spread over helpers.
ChartsPanel::ChartsPanel(QWidget* parent)
    : QWidget(parent), m_ui(std::make_unique<Ui::ChartsPanel>()), m_redrawTimer(new QTimer(this))
{
    m_ui->setupUi(this);
    m_lossTitle = m_ui->lossTitleLabel->text();
    m_lossToolTip = m_ui->lossTitleLabel->toolTip();
    m_lossChart = makeChart(m_ui->lossChartView);
    m_rateChart = makeChart(m_ui->learningRateChartView);
    m_metricChart = makeChart(m_ui->metricChartView);

    m_train = new QLineSeries;
    m_train->setName("training (every step)");
    m_trainSmooth = new QLineSeries;
    m_trainSmooth->setName("training");
    m_validation = new QLineSeries;
    m_validation->setName("validation");
    m_validation->setPointsVisible(true); // evaluations can be few: show each one
    m_lossX = makeAxis("step");
    m_lossX->setLabelFormat("%.0f");
    m_lossChart->addAxis(m_lossX, Qt::AlignBottom);
    for (QLineSeries* series : {m_train, m_trainSmooth, m_validation}) {
        m_lossChart->addSeries(series);
        series->attachAxis(m_lossX);
    }
    // The folds' band (a cross-validated table), under everything else.
    m_foldBand = std::make_unique<FoldBand>(m_lossChart, m_lossX);
    // The overfitting mark, under the curves (a chart draws its series in the order added).
    m_overfitEdge = new QLineSeries;
    m_overfitTop = new QLineSeries;
    m_overfitBottom = new QLineSeries;
    m_overfitBand = new QAreaSeries(m_overfitTop, m_overfitBottom);
    // An area series does not own its boundary lines (LeakSanitizer found them left behind).
    m_overfitTop->setParent(m_overfitBand);
    m_overfitBottom->setParent(m_overfitBand);
    m_overfitBand->setName("overfitting");
    for (QAbstractSeries* series :
         std::initializer_list<QAbstractSeries*>{m_overfitBand, m_overfitEdge}) {
        m_lossChart->addSeries(series);
        series->attachAxis(m_lossX);
        m_lossChart->legend()->markers(series).value(0)->setVisible(false);
        series->setVisible(false);
    }
    for (QLineSeries* series : {m_train, m_trainSmooth, m_validation}) { // above the mark
        m_lossChart->removeSeries(series);
        m_lossChart->addSeries(series);
        series->attachAxis(m_lossX);
    }
    m_overfitLabelBox = new QGraphicsRectItem(m_lossChart);
    m_overfitLabelBox->setPen(Qt::NoPen);
    m_overfitLabel = new QGraphicsSimpleTextItem(m_overfitLabelBox);
    QFont small = m_overfitLabel->font();
    small.setPointSizeF(small.pointSizeF() * 0.9);
    m_overfitLabel->setFont(small);
    m_overfitLabelBox->setZValue(100);
    m_overfitLabelBox->setVisible(false);
    connect(m_lossChart, &QChart::plotAreaChanged, this, &ChartsPanel::placeOverfitLabel);
    // The headroom at the top is in pixels: a taller or shorter plot redraws.
    connect(m_lossChart, &QChart::plotAreaChanged, this, [this](const QRectF& plot) {
        if (std::fabs(plot.height() - m_headroomPlotHeight) > 0.5) scheduleRedraw();
    });
    m_keptLine = new QLineSeries;
    m_keptPoint = new QScatterSeries;
    m_lossChart->addSeries(m_keptLine);
    m_lossChart->addSeries(m_keptPoint);
    for (QXYSeries* series :
         {static_cast<QXYSeries*>(m_keptLine), static_cast<QXYSeries*>(m_keptPoint)})
        series->attachAxis(m_lossX);
    m_lossChart->legend()->markers(m_train).value(0)->setVisible(false);
    setLogScale(m_ui->logScaleCheckBox->isChecked());

    m_plannedRate = new QLineSeries;
    m_plannedRate->setName("planned");
    m_rate = new QLineSeries;
    m_rate->setName("used");
    m_rateX = makeAxis(QString());
    m_rateY = makeAxis(QString());
    m_rateChart->setTitle("Learning rate");
    m_rateX->setLabelFormat("%.0f");
    m_rateChart->addAxis(m_rateX, Qt::AlignBottom);
    m_rateChart->addAxis(m_rateY, Qt::AlignLeft);
    attach(m_rateChart, m_plannedRate, m_rateX, m_rateY);
    attach(m_rateChart, m_rate, m_rateX, m_rateY);

    m_metric = new QLineSeries;
    m_metric->setName("metric");
    m_metric->setPointsVisible(true);
    m_metricX = makeAxis(QString());
    m_metricY = makeAxis(QString());
    m_metricX->setLabelFormat("%.0f");
    m_metricChart->addAxis(m_metricX, Qt::AlignBottom);
    m_metricChart->addAxis(m_metricY, Qt::AlignLeft);
    attach(m_metricChart, m_metric, m_metricX, m_metricY);
    // A names model's innovation rate at each evaluation (Task::sideMetric), on its own axis at
    // the right in its own colour: memorising shows as it falls while the loss still improves.
    m_side = new QLineSeries;
    m_side->setName("new names");
    m_side->setPointsVisible(true);
    m_sideY = makeAxis(QString());
    m_sideY->setRange(0, 100);
    m_sideY->setLabelFormat("%.0f%%");
    m_metricChart->addAxis(m_sideY, Qt::AlignRight);
    attach(m_metricChart, m_side, m_metricX, m_sideY);
    m_sideY->setVisible(false);
    m_side->setVisible(false);
    m_metricKeptLine = new QLineSeries;
    m_metricKeptPoint = new QScatterSeries;
    attach(m_metricChart, m_metricKeptLine, m_metricX, m_metricY);
    m_metricChart->addSeries(m_metricKeptPoint);
    m_metricKeptPoint->attachAxis(m_metricX);
    m_metricKeptPoint->attachAxis(m_metricY);
    for (QXYSeries* series :
         {static_cast<QXYSeries*>(m_keptLine), static_cast<QXYSeries*>(m_keptPoint),
          static_cast<QXYSeries*>(m_metricKeptLine), static_cast<QXYSeries*>(m_metricKeptPoint)}) {
        series->setVisible(false);
        // The verdict, on the mark.
        connect(series, &QXYSeries::hovered, this, [this](const QPointF&, bool over) {
            if (over && !m_keptToolTip.isEmpty())
                QToolTip::showText(QCursor::pos(), m_keptToolTip);
            else
                QToolTip::hideText();
        });
    }
    m_keptPoint->setMarkerShape(QScatterSeries::MarkerShapeRotatedRectangle);
    m_metricKeptPoint->setMarkerShape(QScatterSeries::MarkerShapeRotatedRectangle);
    m_metricChart->legend()->hide();
    applyPalette();

    m_redrawTimer->setSingleShot(true);
    m_redrawTimer->setInterval(kRedrawMs);
    connect(m_redrawTimer, &QTimer::timeout, this, &ChartsPanel::redraw);
    connect(m_ui->logScaleCheckBox, &QCheckBox::toggled, this, [this](bool on) {
        setLogScale(on);
        rebuildGhosts(); // their points: only positive ones on a log axis
        redraw();
    });
    m_ui->lossChartView->viewport()->installEventFilter(this);
    m_ui->lossChartView->viewport()->setCursor(Qt::CrossCursor);
}

ChartsPanel::~ChartsPanel() = default;

void ChartsPanel::setSession(Session* session)
{
    m_session = session;
    connect(session, &Session::progressed, this, &ChartsPanel::scheduleRedraw);
    connect(session, &Session::modelChanged, this, &ChartsPanel::reset);
    connect(session, &Session::historyReset, this, &ChartsPanel::reset);
    connect(session, &Session::configChanged, this, &ChartsPanel::updatePlannedRate);
    connect(session, &Session::configChanged, this, &ChartsPanel::updateLegend);
    connect(session, &Session::trainingFinished, this, &ChartsPanel::redraw);
    connect(session, &Session::verdictChanged, this, &ChartsPanel::redraw);
    connect(session, &Session::foldsChanged, this, &ChartsPanel::scheduleRedraw);
    reset();
}

void ChartsPanel::setRuns(RunList* runs)
{
    m_runs = runs;
    connect(runs, &RunList::ghostsChanged, this, [this] {
        rebuildGhosts();
        redraw();
    });
    rebuildGhosts();
    redraw();
}

QPointF ChartsPanel::lossAxisRange() const
{
    if (const auto* log = qobject_cast<const QLogValueAxis*>(m_lossY))
        return {log->min(), log->max()};
    const auto* axis = static_cast<const QValueAxis*>(m_lossY);
    return {axis->min(), axis->max()};
}

QList<QPointF> ChartsPanel::validationPoints() const
{
    return m_validation->isVisible() ? m_validation->points() : QList<QPointF>();
}

bool ChartsPanel::validationHidden() const
{
    const QRectF plot = m_lossChart->plotArea();
    const double r = m_validation->markerSize() / 2;
    const QRectF label = m_overfitLabelBox->isVisible()
                             ? m_overfitLabelBox->mapRectToParent(m_overfitLabelBox->rect())
                             : QRectF();
    for (const QPointF& p : validationPoints()) {
        const QPointF at = m_lossChart->mapToPosition(p, m_validation);
        const QRectF marker(at.x() - r, at.y() - r, 2 * r, 2 * r);
        if (marker.top() < plot.top() - 0.5 || label.intersects(marker)) return true;
    }
    return false;
}

int ChartsPanel::trainPointCount() const
{
    return static_cast<int>(m_train->count());
}

int ChartsPanel::validationPointCount() const
{
    return static_cast<int>(m_validation->count());
}

int ChartsPanel::plannedLearningRatePointCount() const
{
    return static_cast<int>(m_plannedRate->count());
}

QList<QPointF> ChartsPanel::metricPoints() const
{
    return m_metric->points();
}

void ChartsPanel::reset()
{
    const tasks::TaskType* type = m_session ? m_session->taskType() : nullptr;
    m_metricInfo = type ? type->metric(m_session->taskJson()) : tasks::MetricInfo{};
    if (!type) m_metricInfo.title = "Metric";
    m_metricChart->setTitle(m_metricInfo.title);
    m_ui->metricChartView->setToolTip(m_metricInfo.description);
    updateLegend();
    rebuildGhosts(); // other data: other earlier runs
    updatePlannedRate();
    redraw();
}

void ChartsPanel::updateLegend()
{
    QString tip = m_metricInfo.lossNote.isEmpty() ? m_lossToolTip
                                                  : m_metricInfo.lossNote + "\n\n" + m_lossToolTip;
    const auto task = m_session ? m_session->task() : nullptr;
    const bool validation = task ? task->data().valRows > 0
                                 : m_session && !m_session->history().validation(2).isEmpty();
    m_lossChart->legend()->markers(m_validation).value(0)->setVisible(validation);
    m_validation->setVisible(validation);
    // A task may say more than the form's generic title (its units, why its curve climbs).
    QString title = m_metricInfo.lossTitle.isEmpty()
                        ? m_lossTitle
                        : "<b>Loss</b> — " + m_metricInfo.lossTitle.toHtmlEscaped();
    const TrainerConfig& c = m_session ? m_session->config() : TrainerConfig{};
    if (c.loss == LossKind::CrossEntropy && c.labelSmoothing > 0) {
        // In the title, not the legend: a legend entry that long is cut short in a small window.
        const QString eps = QString("ε = %1").arg(c.labelSmoothing);
        title += "; training includes label smoothing " + eps;
        tip = QString("The training loss includes label smoothing %1; the validation loss does "
                      "not, so it can lie below the training loss.\n\n")
                  .arg(eps) +
              tip;
    }
    if (c.classWeighting != ClassWeighting::None && m_session &&
        m_session->classWeightingApplies()) {
        title += "; class-weighted";
        tip = QString("Both losses are class-weighted (%1): each row weighs n / (k · n_c), so a "
                      "rare class counts as much as a common one. Balanced accuracy, not "
                      "accuracy, tells what it bought.\n\n")
                  .arg(QString::fromStdString(classWeightingName(c.classWeighting))) +
              tip;
    }
    m_ui->lossTitleLabel->setText(title);
    m_ui->lossTitleLabel->setToolTip(tip);
}

void ChartsPanel::scheduleRedraw()
{
    if (!m_redrawTimer->isActive()) m_redrawTimer->start();
}

void ChartsPanel::redraw()
{
    if (!m_session) return;
    const LossHistory& h = m_session->history();
    const bool log = m_ui->logScaleCheckBox->isChecked();
    const QList<QPointF> train = h.train(kMaxPoints, log);
    const QList<QPointF> val = h.validation(kMaxPoints, log);
    m_train->replace(train);
    m_trainSmooth->replace(h.trainSmoothed(kMaxPoints, log));
    m_validation->replace(val);
    m_foldBand->setCurves(m_session->foldCurves(), log, kMaxPoints);
    const bool band = !m_foldBand->isEmpty();
    const double lastStep = static_cast<double>(h.lastStep());
    const double planned = static_cast<double>(m_session->plannedSteps());
    // Earlier runs' curves are drawn whole, and the axes hold them; so is the folds' band.
    const double xMax =
        std::max({lastStep, planned, m_ghostXMax, band ? m_foldBand->lastStep() : 0.0, 10.0});
    setStepTicks(m_lossX, xMax);
    QList<QPointF> valAndGhosts = val;
    if (!m_ghosts.empty()) valAndGhosts << QPointF(0, m_ghostLo) << QPointF(0, m_ghostHi);
    if (band) valAndGhosts << QPointF(0, m_foldBand->low()) << QPointF(0, m_foldBand->high());
    const auto [lo, valuesHi] = rangeOf(train, valAndGhosts, log);
    const double hi = withHeadroom(lo, valuesHi, log);
    m_lossY->setRange(lo, hi);
    updateOverfitMark(lo, hi);
    if (auto* logAxis = qobject_cast<QLogValueAxis*>(m_lossY)) {
        // A log axis labels powers of its base: within less than two decades, pick a base that
        // still gives a few labels (2.2 ... 2.6 would otherwise show none).
        // Over many decades (a divergence), a label every few decades: one per decade drew
        // sixteen on a 150 px axis, which QtCharts elided to "...".
        const double span = hi / lo;
        const double decades = std::log10(span);
        logAxis->setBase(span < 100 ? std::max(1.0001, std::pow(span, 0.25))
                                    : std::pow(10.0, std::max(1.0, std::ceil(decades / 4))));
        // Minor lines split an interval evenly, base - 2 of them by default: thousands of
        // lines across a label every few decades.
        logAxis->setMinorTickCount(logAxis->base() > 10.5 ? 0 : -1);
        logAxis->setLabelFormat(span < 100 ? "%.3g" : "%.2g");
    }

    m_rate->replace(h.learningRate(kMaxPoints));
    setStepTicks(m_rateX, xMax);
    double rateMax = 0;
    for (const QPointF& p : m_plannedRate->points())
        rateMax = std::max(rateMax, p.y());
    for (const QPointF& p : m_rate->points())
        rateMax = std::max(rateMax, p.y());
    m_rateY->setRange(0, rateMax > 0 ? rateMax * 1.1 : 1);

    const QList<QPointF> metric = h.metric(kMaxPoints);
    const int64_t every = m_session->config().evalEvery;
    m_metricChart->setToolTip(QString());
    if (metric.isEmpty() && !m_metricInfo.pendingTitle.isEmpty() && every > 0)
        m_metricChart->setTitle(m_metricInfo.pendingTitle.arg(every));
    else
        m_metricChart->setTitle(m_metricInfo.title);
    m_metric->replace(metric);
    setStepTicks(m_metricX, xMax);
    const auto [mlo, mhi] = rangeOf(metric, {}, false);
    setNiceTicks(m_metricY, mlo, mhi);
    QList<QPointF> side = h.sideMetric(kMaxPoints);
    for (QPointF& p : side)
        p.setY(100 * p.y()); // a share, drawn in percent
    const bool showSide = !side.isEmpty();
    m_side->replace(side);
    m_side->setVisible(showSide);
    m_sideY->setVisible(showSide);
    updateKeptMark(val, metric, lo, hi);
    m_ui->metricChartView->setToolTip(
        showSide ? m_metricInfo.description +
                       "\n\nPurple, on the right axis: the innovation rate at each evaluation, "
                       "the share of 200 names drawn at temperature 1 (the same draws each time) "
                       "that are not in the training list. It falls as the network learns the "
                       "list by heart."
                 : m_metricInfo.description +
                       (m_keptToolTip.isEmpty() ? QString()
                                                : "\n\nThe dash-dotted line, " +
                                                      m_keptPoint->name() + ": " + m_keptToolTip));
}

QList<QPointF> ChartsPanel::sideMetricPoints() const
{
    return m_side->isVisible() ? m_side->points() : QList<QPointF>();
}

double ChartsPanel::withHeadroom(double lo, double hi, bool log)
{
    const double plot = m_lossChart->plotArea().height();
    m_headroomPlotHeight = plot;
    if (!(plot > 40) || !(hi > lo)) return hi;
    // In pixels: half a point's marker, and the overfitting label's box when it shows (at the
    // top of the plot, over the steps the validation loss rose in: where the curve peaks).
    double room = m_validation->markerSize() / 2 + 1;
    if (m_session->history().overfitting().valid() && m_validation->isVisible())
        room += QFontMetricsF(m_overfitLabel->font()).height() + 3 * kLabelPad;
    const double share = std::min(room / plot, 0.5);
    return log ? lo * std::pow(hi / lo, 1 / (1 - share)) : lo + (hi - lo) / (1 - share);
}

void ChartsPanel::updatePlannedRate()
{
    QList<QPointF> points;
    const int64_t total = m_session ? m_session->plannedSteps() : 0;
    if (total > 0) {
        const ScheduleConfig& s = m_session->config().schedule;
        const int samples = static_cast<int>(std::min<int64_t>(total, 400));
        points.reserve(samples + 1);
        for (int i = 0; i <= samples; ++i) {
            const auto t = static_cast<int64_t>(static_cast<double>(i) * (total - 1) / samples);
            points.append(QPointF(static_cast<double>(t), learningRate(s, t, total)));
        }
    }
    m_plannedRate->replace(points);
    redraw();
}

void ChartsPanel::setLogScale(bool on)
{
    if (m_lossY) {
        for (QLineSeries* series : {m_train, m_trainSmooth, m_validation})
            series->detachAxis(m_lossY);
        for (QLineSeries* series : m_ghosts)
            series->detachAxis(m_lossY);
        m_overfitBand->detachAxis(m_lossY);
        m_overfitEdge->detachAxis(m_lossY);
        m_foldBand->setAxis(m_lossY, nullptr);
        m_keptLine->detachAxis(m_lossY);
        m_keptPoint->detachAxis(m_lossY);
        m_lossChart->removeAxis(m_lossY);
        delete m_lossY;
    }
    if (on) {
        auto* axis = new QLogValueAxis;
        axis->setLabelFormat("%.2g");
        axis->setBase(10);
        axis->setMinorTickCount(-1);
        m_lossY = axis;
    } else {
        auto* axis = new QValueAxis;
        axis->setLabelFormat("%.3g");
        m_lossY = axis;
    }
    m_lossY->setTitleText("loss");
    m_lossChart->addAxis(m_lossY, Qt::AlignLeft);
    for (QLineSeries* series : {m_train, m_trainSmooth, m_validation})
        series->attachAxis(m_lossY);
    m_overfitBand->attachAxis(m_lossY);
    m_overfitEdge->attachAxis(m_lossY);
    m_foldBand->setAxis(nullptr, m_lossY);
    m_keptLine->attachAxis(m_lossY);
    m_keptPoint->attachAxis(m_lossY);
    if (m_metric) applyPalette(); // not while the constructor is still building the charts
}

void ChartsPanel::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) applyPalette();
}

bool ChartsPanel::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_ui->lossChartView->viewport() && event->type() == QEvent::MouseButtonPress) {
        const auto* mouse = static_cast<QMouseEvent*>(event);
        const QPointF scene = m_ui->lossChartView->mapToScene(mouse->position().toPoint());
        const QPointF value = m_lossChart->mapToValue(m_lossChart->mapFromScene(scene), m_train);
        if (m_lossChart->plotArea().contains(m_lossChart->mapFromScene(scene)))
            emit stepClicked(static_cast<qint64>(std::llround(std::max(0.0, value.x()))));
    }
    return QWidget::eventFilter(watched, event);
}

} // namespace il::app
