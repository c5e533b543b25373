#include "TableOutputPage.h"
#include "ui_TableOutputPage.h"

#include "BoundaryPanel.h"
#include "ChartViews.h"
#include "NumberFormat.h"
#include "Session.h"
#include "TabularBaselines.h"
#include "TabularTask.h"

#include <QEvent>
#include <QHeaderView>
#include <QLineSeries>
#include <QScatterSeries>
#include <QScrollBar>
#include <QValueAxis>

#include <map>

namespace il::app {

TableOutputPage::TableOutputPage(QWidget* parent)
    : StudioPage(parent), m_ui(std::make_unique<Ui::TableOutputPage>()), m_scatter(new QChart)
{
    m_ui->setupUi(this);
    m_ui->tableSplitter->setStretchFactor(0, 3);
    m_ui->tableSplitter->setStretchFactor(1, 2);
    installChart(m_ui->scatterChartView, m_scatter);
    m_ui->scatterChartView->setRenderHint(QPainter::Antialiasing);
    m_scatter->legend()->hide();
    m_scatter->setMargins(QMargins(2, 2, 2, 2));
    m_scatter->setBackgroundBrush(palette().color(QPalette::Base));
    m_ui->predictionsTableWidget->verticalHeader()->setDefaultSectionSize(fontMetrics().height() +
                                                                          6);
    m_ui->metricsLabel->setText("Train the model to see how well it predicts.");
    m_ui->tableSplitter->hide();
    connect(m_ui->evaluateButton, &QPushButton::clicked, this, [this] {
        if (m_session) m_session->evaluate();
    });
    // The splitter keeps the width it had when its tab was last on screen.
    connect(m_ui->tableOutputTabWidget, &QTabWidget::currentChanged, this, [this] {
        if (m_ui->tableOutputTabWidget->currentWidget() == m_ui->predictionsTab) fitPredictions();
    });
    m_ui->tableSplitter->installEventFilter(this);
    connect(m_ui->boundaryPanel, &BoundaryPanel::availabilityChanged, this,
            &TableOutputPage::updateBoundaryTab);
    updateBoundaryTab();
}

TableOutputPage::~TableOutputPage() = default;

void TableOutputPage::connectSession(Session* session)
{
    connect(session, &Session::evaluated, this, &TableOutputPage::evaluated);
    connect(session, &Session::modelChanged, this, &TableOutputPage::clear);
    // Fresh weights (Reset weights, a new model): the old metrics describe weights that are gone.
    connect(session, &Session::historyReset, this, &TableOutputPage::clear);
    m_ui->boundaryPanel->setSession(session);
    connect(session, &Session::datasetOpened, this, &TableOutputPage::showBoundaryForTwoFeatures);
}

void TableOutputPage::updateBoundaryTab()
{
    auto* tabs = m_ui->tableOutputTabWidget;
    const int i = tabs->indexOf(m_ui->boundaryPanel);
    const bool available = m_ui->boundaryPanel->isAvailable();
    tabs->setTabEnabled(i, available);
    tabs->setTabToolTip(i, available ? "The network's prediction over a plane of two features, "
                                       "with the rows on top: watch it bend round the data "
                                       "while it trains."
                                     : m_ui->boundaryPanel->unavailableReason());
    if (!available && tabs->currentIndex() == i) tabs->setCurrentWidget(m_ui->predictionsTab);
}

void TableOutputPage::showBoundaryForTwoFeatures()
{
    // A table of two numbers (moons, circles, spiral) is what the picture is for: it opens on
    // the boundary. Other tables keep the tab the user chose.
    const auto* table = dynamic_cast<const tasks::TabularTask*>(m_session->task().get());
    if (table && table->schema().features.size() == 2 && m_ui->boundaryPanel->isAvailable())
        m_ui->tableOutputTabWidget->setCurrentWidget(m_ui->boundaryPanel);
}

void TableOutputPage::clear()
{
    m_ui->predictionsTableWidget->clear();
    m_ui->predictionsTableWidget->setRowCount(0);
    m_ui->confusionTableWidget->clear();
    m_ui->confusionTableWidget->setRowCount(0);
    m_ui->confusionTableWidget->setColumnCount(0);
    m_scatter->removeAllSeries();
    m_ui->metricsLabel->setText("Train the model to see how well it predicts.");
    m_ui->metricsLabel->setToolTip(QString());
    m_ui->tableSplitter->hide();
}

// Long: the page refilled top to bottom from one evaluation: the headline and verdict, its
// tooltip, then the predictions table.
void TableOutputPage::evaluated(const Evaluation& ev)
{
    if (!m_session->isKind(tasks::tabularTaskType())) return;
    m_ui->tableSplitter->show();
    // The first line (the headline metric) in the label, the simple models it must beat below
    // it (and, in red, when it does not); the full report as its tooltip. After a run the
    // session's verdict says which model was kept and how it compares, in the words the status
    // bar and the charts use, instead of a judgement of its own.
    const QString headline = ev.summary.section('\n', 0, 0);
    QString text = "<b>" + headline.toHtmlEscaped() + "</b>";
    const tasks::RunVerdict& verdict = m_session->verdict();
    const QStringList baselines = tasks::describeTabularBaselines(
        ev.values.value("baselines").toObject(), ev.values, ev.where, true, !verdict.valid());
    const QString red = "<br><span style=\"color:#da3633\">%1</span>";
    const QString verdictLine =
        verdict.valid()
            ? (verdict.fallsShort ? red : QString("<br>%1")).arg(verdict.sentence().toHtmlEscaped())
            : QString();
    for (qsizetype i = 0; i < baselines.size(); ++i)
        text += i == 0 ? "<br>Baselines — " + baselines[i].toHtmlEscaped() + verdictLine
                       : red.arg(baselines[i].toHtmlEscaped());
    if (baselines.isEmpty()) text += verdictLine;
    m_ui->metricsLabel->setText(text);
    QString report = ev.summary;
    if (verdict.valid()) {
        // The full report without its own judgement of the network against the linear model
        // (on the validation and the test rows): the verdict above says it.
        QStringList lines = ev.summary.split('\n');
        const QJsonObject test = ev.values.value("test").toObject();
        for (const auto& [values, where] :
             {std::pair{&ev.values, ev.where}, std::pair{&test, QString("test")}}) {
            const QJsonObject b = values->value("baselines").toObject();
            const QStringList plain =
                tasks::describeTabularBaselines(b, *values, where, false, false);
            for (const QString& line :
                 tasks::describeTabularBaselines(b, *values, where, false, true))
                if (!plain.contains(line)) lines.removeAll(line);
        }
        report = lines.join('\n');
    }
    m_ui->metricsLabel->setToolTip("<pre>" + report.toHtmlEscaped() + "</pre>");
    auto* t = m_ui->predictionsTableWidget;
    t->clear();
    t->setRowCount(static_cast<int>(ev.rows.size()));
    t->setColumnCount(4);
    t->setHorizontalHeaderLabels(ev.classification
                                     ? QStringList{"Actual", "Predicted", "Confidence", "✓/✗"}
                                     : QStringList{"Actual", "Predicted", "Error", ""});
    const QColor good(46, 160, 67), bad(218, 54, 51);
    for (int i = 0; i < static_cast<int>(ev.rows.size()); ++i) {
        const PredictionRow& r = ev.rows[static_cast<size_t>(i)];
        t->setItem(i, 0, new QTableWidgetItem(r.actual));
        t->setItem(i, 1, new QTableWidgetItem(r.predicted));
        if (ev.classification) {
            t->setItem(i, 2, new QTableWidgetItem(fmt::percent(r.confidence)));
            auto* mark = new QTableWidgetItem(r.correct ? QString::fromUtf8("\u2713")
                                                        : QString::fromUtf8("\u2717"));
            mark->setForeground(r.correct ? good : bad);
            mark->setTextAlignment(Qt::AlignCenter);
            t->setItem(i, 3, mark);
        } else {
            t->setItem(i, 2, new QTableWidgetItem(fmt::loss(r.error)));
        }
        for (int c = 0; c < 3; ++c)
            if (auto* item = t->item(i, c))
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    }
    // Each row by its place in the file (the validation rows are spread over it).
    QStringList lines;
    for (const PredictionRow& r : ev.rows)
        lines << (r.line > 0 ? QString::number(r.line) : QString());
    t->setVerticalHeaderLabels(lines);
    t->verticalHeader()->setToolTip(m_session->dataPath().endsWith(".json", Qt::CaseInsensitive)
                                        ? "The example's number in the data file."
                                        : "The row's line in the data file.");
    t->setColumnHidden(3, !ev.classification);
    t->resizeColumnsToContents();
    if (ev.classification)
        showConfusion(ev);
    else
        showScatter(ev);
    fitPredictions();
}

bool TableOutputPage::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_ui->tableSplitter && event->type() == QEvent::Resize &&
        m_ui->tableSplitter->isVisible())
        fitPredictions();
    return QWidget::eventFilter(watched, event);
}

void TableOutputPage::fitPredictions()
{
    // The predictions get the width their columns need, so no column hides behind the scroll
    // bar; the confusion matrix or scatter plot takes the rest.
    auto* t = m_ui->predictionsTableWidget;
    // (+2: the grid line after the last column, and the splitter rounding.)
    const int need = t->verticalHeader()->sizeHint().width() + t->horizontalHeader()->length() +
                     2 * t->frameWidth() + t->verticalScrollBar()->sizeHint().width() + 2;
    const int total = m_ui->tableSplitter->width();
    if (total <= 0) return;
    // The confusion matrix wants its columns in view too; when both cannot have their width,
    // each gets a share in proportion to what it needs.
    const auto* side = m_ui->confusionTableWidget;
    const int sideNeed = m_ui->sideStackedWidget->currentWidget() == side
                             ? side->verticalHeader()->sizeHint().width() +
                                   side->horizontalHeader()->length() + 2 * side->frameWidth() + 1
                             : total / 3;
    const int left = need + sideNeed <= total
                         ? need
                         : static_cast<int>(int64_t(total) * need / (need + sideNeed));
    m_ui->tableSplitter->setSizes({left, total - left});
}

void TableOutputPage::showConfusion(const Evaluation& ev)
{
    m_ui->sideStackedWidget->setCurrentWidget(m_ui->confusionTableWidget);
    QStringList classes;
    for (const PredictionRow& r : ev.rows)
        for (const QString& c : {r.actual, r.predicted})
            if (!classes.contains(c)) classes << c;
    classes.sort();
    std::map<std::pair<int, int>, int> counts;
    for (const PredictionRow& r : ev.rows)
        ++counts[{static_cast<int>(classes.indexOf(r.actual)),
                  static_cast<int>(classes.indexOf(r.predicted))}];
    auto* t = m_ui->confusionTableWidget;
    t->clear();
    t->setRowCount(static_cast<int>(classes.size()));
    t->setColumnCount(static_cast<int>(classes.size()));
    // Rows are the true classes, columns (→) the predicted ones; the headers say so on hover.
    for (int i = 0; i < classes.size(); ++i) {
        auto* row = new QTableWidgetItem(classes[i]);
        row->setToolTip(QString("Examples whose true class is %1").arg(classes[i]));
        t->setVerticalHeaderItem(i, row);
        auto* column = new QTableWidgetItem("→ " + classes[i]);
        column->setToolTip(QString("Examples the model predicted as %1").arg(classes[i]));
        t->setHorizontalHeaderItem(i, column);
    }
    const QColor highlight = palette().color(QPalette::Highlight);
    for (int a = 0; a < classes.size(); ++a)
        for (int p = 0; p < classes.size(); ++p) {
            const int n = counts.count({a, p}) ? counts[{a, p}] : 0;
            auto* item = new QTableWidgetItem(QString::number(n));
            item->setTextAlignment(Qt::AlignCenter);
            if (n > 0) {
                QColor c = a == p ? highlight : QColor(218, 54, 51);
                c.setAlpha(a == p ? 90 : 70);
                item->setBackground(c);
            }
            t->setItem(a, p, item);
        }
    t->resizeColumnsToContents();
}

void TableOutputPage::showScatter(const Evaluation& ev)
{
    m_ui->sideStackedWidget->setCurrentWidget(m_ui->scatterChartView);
    m_scatter->removeAllSeries();
    for (QAbstractAxis* axis : m_scatter->axes()) {
        m_scatter->removeAxis(axis);
        delete axis;
    }
    auto* points = new QScatterSeries;
    points->setMarkerSize(6);
    points->setColor(palette().color(QPalette::Highlight));
    points->setBorderColor(Qt::transparent);
    double lo = INFINITY, hi = -INFINITY;
    QList<QPointF> list;
    for (const PredictionRow& r : ev.rows) {
        const double a = r.actual.toDouble(), p = r.predicted.toDouble();
        list.append(QPointF(a, p));
        lo = std::min({lo, a, p});
        hi = std::max({hi, a, p});
    }
    points->replace(list);
    auto* diagonal = new QLineSeries;
    diagonal->append(lo, lo);
    diagonal->append(hi, hi);
    diagonal->setPen(QPen(palette().color(QPalette::Disabled, QPalette::Text), 1, Qt::DashLine));
    auto* x = new QValueAxis;
    auto* y = new QValueAxis;
    x->setTitleText("actual");
    y->setTitleText("predicted");
    for (QValueAxis* axis : {x, y}) {
        setNiceTicks(axis, lo, hi);
        axis->setLabelsColor(palette().color(QPalette::Text));
        axis->setTitleBrush(palette().color(QPalette::Text));
    }
    m_scatter->addAxis(x, Qt::AlignBottom);
    m_scatter->addAxis(y, Qt::AlignLeft);
    for (QXYSeries* s : {static_cast<QXYSeries*>(diagonal), static_cast<QXYSeries*>(points)}) {
        m_scatter->addSeries(s);
        s->attachAxis(x);
        s->attachAxis(y);
    }
}

} // namespace il::app
