#include "RunListPanel.h"
#include "ui_RunListPanel.h"

#include "RunCompareDialog.h"
#include "RunList.h"
#include "RunSettings.h"

#include <QHeaderView>
#include <QItemSelectionModel>

#include <algorithm>

namespace il::app {

namespace {

constexpr int kPanelPictureSide = 96;

} // namespace

RunListPanel::RunListPanel(QWidget* parent)
    : QWidget(parent), m_ui(std::make_unique<Ui::RunListPanel>())
{
    m_ui->setupUi(this);
    connect(m_ui->compareButton, &QPushButton::clicked, this, &RunListPanel::compareSelected);
    connect(m_ui->removeRunButton, &QPushButton::clicked, this, &RunListPanel::removeSelected);
}

RunListPanel::~RunListPanel() = default;

void RunListPanel::setRuns(RunList* runs)
{
    m_runs = runs;
    m_ui->showEarlierRunsCheckBox->setChecked(runs->ghostsShown());
    connect(m_ui->showEarlierRunsCheckBox, &QCheckBox::toggled, runs, &RunList::setGhostsShown);
    QTableView* view = m_ui->runsTableView;
    view->setModel(runs);
    view->verticalHeader()->hide();
    QHeaderView* header = view->horizontalHeader();
    header->setSectionResizeMode(QHeaderView::ResizeToContents);
    header->setSectionResizeMode(RunList::SettingsColumn, QHeaderView::Stretch);
    connect(view->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        updateButtons();
        showDetails();
    });
    connect(runs, &RunList::runChanged, this, [this](int row) {
        updateButtons(); // the current run cannot be removed; an earlier one can
        if (selectedRows().contains(row)) showDetails();
    });
    // A new run is selected, so its details show as it trains.
    connect(runs, &QAbstractItemModel::rowsInserted, this,
            [view](const QModelIndex&, int, int last) { view->selectRow(last); });
    connect(runs, &QAbstractItemModel::rowsRemoved, this, &RunListPanel::updateButtons);
    connect(runs, &RunList::ghostsChanged, this, &RunListPanel::updateButtons);
}

QList<int> RunListPanel::selectedRows() const
{
    QList<int> rows;
    if (!m_runs) return rows;
    for (const QModelIndex& index : m_ui->runsTableView->selectionModel()->selectedRows())
        rows << index.row();
    std::sort(rows.begin(), rows.end());
    return rows;
}

void RunListPanel::updateButtons()
{
    const QList<int> rows = selectedRows();
    m_ui->compareButton->setEnabled(rows.size() == 2);
    m_ui->removeRunButton->setEnabled(
        std::any_of(rows.begin(), rows.end(), [this](int r) { return r != m_runs->currentRow(); }));
}

void RunListPanel::showDetails()
{
    const QList<int> rows = selectedRows();
    if (rows.size() != 1) {
        m_ui->runDetailsGroupBox->setTitle(rows.isEmpty() ? "Selected run" : "Selected runs");
        m_ui->runDetailsLabel->setText(rows.size() == 2 ? "Press Compare to see them side by side."
                                                        : "Select a run to see what it did.");
        m_ui->runPictureLabel->clear();
        return;
    }
    const Run& run = m_runs->run(rows.first());
    m_ui->runDetailsGroupBox->setTitle(runTitle(run) + (run.running ? " (training)" : ""));
    QString html = "<b>" + run.dataName.toHtmlEscaped() + "</b> · " +
                   runSummary(run).toHtmlEscaped() + "<br><i>" +
                   QString(run.spec).replace(',', ", ").toHtmlEscaped() + "</i><br>";
    for (const RunRow& r : runResults(run))
        if (r.value != QStringLiteral("—"))
            html += r.label.toHtmlEscaped() + ": " + r.value.toHtmlEscaped() + "<br>";
    if (!run.changes.isEmpty())
        html += "Changed on Continue: " + run.changes.join("; ").toHtmlEscaped() + "<br>";
    if (!run.names.isEmpty())
        html += "Sample names: " + run.names.mid(0, 8).join(", ").toHtmlEscaped();
    m_ui->runDetailsLabel->setText(html);
    m_ui->runPictureLabel->setPixmap(run.picture.isNull()
                                         ? QPixmap()
                                         : QPixmap::fromImage(run.picture.scaled(
                                               kPanelPictureSide, kPanelPictureSide,
                                               Qt::KeepAspectRatio, Qt::SmoothTransformation)));
}

void RunListPanel::removeSelected()
{
    QList<int> rows = selectedRows();
    std::reverse(rows.begin(), rows.end()); // the later rows first: the earlier keep their rows
    for (int row : rows)
        m_runs->removeRun(row);
}

RunCompareDialog* RunListPanel::compareDialog() const
{
    return m_compare;
}

RunCompareDialog* RunListPanel::compareSelected()
{
    const QList<int> rows = selectedRows();
    if (rows.size() != 2) return nullptr;
    m_runs->captureCurrent(); // a run still training: its curve so far
    if (m_compare) m_compare->close();
    m_compare = new RunCompareDialog(m_runs->run(rows[0]), m_runs->run(rows[1]), this);
    m_compare->setAttribute(Qt::WA_DeleteOnClose);
    m_compare->show();
    return m_compare;
}

} // namespace il::app
