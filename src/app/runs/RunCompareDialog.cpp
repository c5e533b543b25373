#include "RunCompareDialog.h"
#include "ui_RunCompareDialog.h"

#include "ChartViews.h"
#include "RunSettings.h"

#include <QHeaderView>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace il::app {

namespace {

constexpr int kOutputSide = 150; // the reconstructions side by side
constexpr int kNamesShown = 10;  // sample names per run

} // namespace

RunCompareDialog::RunCompareDialog(const Run& a, const Run& b, QWidget* parent)
    : QDialog(parent), m_ui(std::make_unique<Ui::RunCompareDialog>()), m_a(a), m_b(b)
{
    m_ui->setupUi(this);
    setWindowTitle("Compare " + runTitle(a) + " and " + runTitle(b));
    std::vector<RowPair> settings = pairRows(runSettings(a), runSettings(b));
    // What differs first: with some thirty settings, a difference further down is easy to miss.
    std::stable_partition(settings.begin(), settings.end(),
                          [](const RowPair& p) { return p.differs; });
    fillTable(m_ui->settingsTableWidget, settings, true);
    fillTable(m_ui->resultsTableWidget, pairRows(runResults(a), runResults(b)), false);

    QStringList differ;
    for (const RowPair& p : settings)
        if (p.differs) differ << p.label;
    const QString names = runTitle(a) + " and " + runTitle(b);
    m_ui->differenceLabel->setText(
        differ.isEmpty()
            ? names + " have the same settings: any difference in their results is chance."
            : QString("%1 differ in %2: <b>%3</b>.")
                  .arg(names,
                       differ.size() == 1 ? "one setting"
                                          : QString("%1 settings").arg(differ.size()),
                       differ.join(", ").toHtmlEscaped()));
    connect(m_ui->onlyDifferencesCheckBox, &QCheckBox::toggled, this,
            &RunCompareDialog::showOnlyDifferences);
    drawCurves();
    showOutputs();
    m_ui->compareSplitter->setSizes({520, 400});
}

RunCompareDialog::~RunCompareDialog() = default;

void RunCompareDialog::fillTable(QTableWidget* table, const std::vector<RowPair>& rows,
                                 bool highlight)
{
    table->setColumnCount(3);
    table->setHorizontalHeaderLabels({QString(), runTitle(m_a), runTitle(m_b)});
    table->setRowCount(static_cast<int>(rows.size()));
    table->verticalHeader()->hide();
    QColor marked = palette().color(QPalette::Highlight);
    marked.setAlpha(60);
    for (int r = 0; r < table->rowCount(); ++r) {
        const RowPair& p = rows[static_cast<size_t>(r)];
        const QString values[] = {p.label, p.a, p.b};
        for (int c = 0; c < 3; ++c) {
            auto* item = new QTableWidgetItem(QString(values[c]).replace('\n', "; "));
            item->setToolTip(values[c]);
            item->setData(Qt::UserRole, highlight && p.differs);
            if (highlight && p.differs) {
                QFont f = item->font();
                f.setBold(true);
                item->setFont(f);
                item->setBackground(marked);
            }
            table->setItem(r, c, item);
        }
    }
    // Long values (the data's summary, the stack, the device) wrap (the form's wordWrap) rather
    // than end in "…": rows grow to their text as the columns change width.
    connect(table->horizontalHeader(), &QHeaderView::sectionResized, table,
            &QTableView::resizeRowsToContents, Qt::UniqueConnection);
    table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    table->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
    table->horizontalHeader()->setSectionResizeMode(2, QHeaderView::Stretch);
}

void RunCompareDialog::showOnlyDifferences(bool only)
{
    QTableWidget* table = m_ui->settingsTableWidget;
    for (int r = 0; r < table->rowCount(); ++r)
        table->setRowHidden(r, only && !table->item(r, 0)->data(Qt::UserRole).toBool());
}

QStringList RunCompareDialog::differingSettings() const
{
    QStringList labels;
    const QTableWidget* table = m_ui->settingsTableWidget;
    for (int r = 0; r < table->rowCount(); ++r)
        if (table->item(r, 0)->data(Qt::UserRole).toBool() && table->item(r, 0)->font().bold())
            labels << table->item(r, 0)->text();
    return labels;
}

std::pair<QString, QString> RunCompareDialog::result(const QString& label) const
{
    const QTableWidget* table = m_ui->resultsTableWidget;
    for (int r = 0; r < table->rowCount(); ++r)
        if (table->item(r, 0)->text() == label)
            return {table->item(r, 1)->text(), table->item(r, 2)->text()};
    return {};
}

void RunCompareDialog::drawCurves()
{
    auto* chart = new QChart;
    installChart(m_ui->compareChartView, chart);
    m_ui->compareChartView->setRenderHint(QPainter::Antialiasing);
    // One legend entry a run (its colour); the title says which line is which.
    chart->setTitle("Loss — training solid, validation dashed");
    chart->legend()->setAlignment(Qt::AlignTop);
    chart->setMargins(QMargins(4, 2, 4, 2));
    // A log axis when every value can go on one (as the loss chart draws it by default).
    bool positive = true;
    double xMax = 1, lo = INFINITY, hi = -INFINITY;
    for (const Run* run : {&m_a, &m_b})
        for (const QList<QPointF>* curve : {&run->train, &run->validation})
            for (const QPointF& p : *curve)
                if (std::isfinite(p.y())) {
                    positive = positive && p.y() > 0;
                    xMax = std::max(xMax, p.x());
                    lo = std::min(lo, p.y());
                    hi = std::max(hi, p.y());
                }
    auto* x = new QValueAxis;
    x->setTitleText("step");
    setNiceTicks(x, 0, xMax);
    QAbstractAxis* y = nullptr;
    if (positive && std::isfinite(lo)) {
        auto* log = new QLogValueAxis;
        log->setLabelFormat("%.2g");
        log->setBase(hi / lo < 100 ? std::max(1.0001, std::pow(hi / lo, 0.25)) : 10.0);
        log->setRange(lo / 1.15, hi * 1.15);
        y = log;
    } else {
        auto* linear = new QValueAxis;
        if (std::isfinite(lo)) setNiceTicks(linear, lo, hi);
        y = linear;
    }
    y->setTitleText("loss");
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    for (const Run* run : {&m_a, &m_b})
        for (const auto& [curve, what] :
             {std::pair{&run->train, "training"}, std::pair{&run->validation, "validation"}}) {
            QList<QPointF> shown;
            for (const QPointF& p : *curve)
                if (std::isfinite(p.y())) shown << p;
            if (shown.isEmpty()) continue;
            auto* series = new QLineSeries;
            const bool training = curve == &run->train;
            series->setName(runTitle(*run) + ' ' + what);
            series->setPen(QPen(run->colour, 2, training ? Qt::SolidLine : Qt::DashLine));
            series->replace(shown);
            chart->addSeries(series);
            series->attachAxis(x);
            series->attachAxis(y);
            QLegendMarker* marker = chart->legend()->markers(series).value(0);
            if (training)
                marker->setLabel(runTitle(*run));
            else
                marker->setVisible(false);
        }
}

void RunCompareDialog::showOutputs()
{
    for (const auto& [run, label] :
         {std::pair{&m_a, m_ui->outputALabel}, std::pair{&m_b, m_ui->outputBLabel}}) {
        if (!run->picture.isNull()) {
            label->setPixmap(QPixmap::fromImage(run->picture.scaled(
                kOutputSide, kOutputSide, Qt::KeepAspectRatio, Qt::SmoothTransformation)));
            label->setToolTip(runTitle(*run) + ": the reconstruction at step " +
                              QString::number(run->lastStep));
        } else if (!run->names.isEmpty()) {
            label->setText(run->names.mid(0, kNamesShown).join(", "));
            label->setToolTip("Names sampled at temperature 1 after the run.");
        } else {
            label->setText(runHeadline(*run));
        }
    }
    m_ui->outputATitleLabel->setText("<b>" + runTitle(m_a) + "</b>");
    m_ui->outputBTitleLabel->setText("<b>" + runTitle(m_b) + "</b>");
}

} // namespace il::app
