#include "TableDataPage.h"
#include "ui_TableDataPage.h"

#include "Counting.h"
#include "CsvPreviewModel.h"
#include "Session.h"
#include "TableMissing.h"
#include "TabularTask.h"

#include <QComboBox>
#include <QHeaderView>
#include <QLocale>
#include <QTimer>

namespace il::app {

namespace {

QString plural(qint64 n, const QString& word)
{
    return tasks::countOf(n, word, QLocale());
}

} // namespace

TableDataPage::TableDataPage(QWidget* parent)
    : StudioPage(parent), m_ui(std::make_unique<Ui::TableDataPage>()),
      m_preview(new CsvPreviewModel(this))
{
    m_ui->setupUi(this);
    setOptionWidgets({m_ui->columnsTableWidget, m_ui->missingComboBox});
    m_ui->previewTableView->setModel(m_preview);
    m_ui->taskLabel->setTextFormat(Qt::RichText);
    m_ui->previewTableView->horizontalHeader()->setDefaultAlignment(Qt::AlignCenter);
    auto* columns = m_ui->columnsTableWidget;
    columns->setColumnCount(3);
    columns->setHorizontalHeaderLabels({"Column", "Role", "Values"});
    columns->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    columns->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Fixed);
    columns->horizontalHeader()->setSectionResizeMode(2, QHeaderView::Stretch);
    columns->verticalHeader()->hide();
    connect(m_ui->missingComboBox, &QComboBox::activated, this, [this] {
        QTimer::singleShot(0, this, &TableDataPage::missingEdited); // after the combo's signal
    });
}

TableDataPage::~TableDataPage() = default;

void TableDataPage::refresh()
{
    const auto* tabular =
        m_session ? dynamic_cast<const tasks::TabularTask*>(m_session->task().get()) : nullptr;
    if (!tabular) return;
    m_updating = true;
    const io::CsvTable& table = tabular->head();
    const tasks::TabularSchema& schema = tabular->schema();
    QStringList targets = schema.targets.isEmpty() ? QStringList{schema.target} : schema.targets;
    std::vector<CsvPreviewModel::Role> roles;
    auto* w = m_ui->columnsTableWidget;
    w->setRowCount(table.columnCount());
    for (int c = 0; c < table.columnCount(); ++c) {
        const io::CsvColumn& col = table.columns[static_cast<size_t>(c)];
        auto role = CsvPreviewModel::Role::Ignore;
        if (targets.contains(col.name))
            role = CsvPreviewModel::Role::Target;
        else if (schema.features.contains(col.name))
            role = CsvPreviewModel::Role::Feature;
        roles.push_back(role);
        auto* name = new QTableWidgetItem(col.name);
        name->setFlags(Qt::ItemIsEnabled);
        w->setItem(c, 0, name);
        auto* combo = new QComboBox;
        combo->setObjectName(QString("roleComboBox%1").arg(c));
        combo->addItems({"feature", "target", "ignore"});
        combo->setCurrentIndex(static_cast<int>(role));
        combo->setToolTip("Feature: an input. Target: what to predict. Ignore: leave it out.");
        connect(combo, &QComboBox::currentIndexChanged, this, [this] {
            if (!m_updating) // after the combo's signal
                QTimer::singleShot(0, this, &TableDataPage::rolesEdited);
        });
        w->setCellWidget(c, 1, combo);
        w->setColumnWidth(1, std::max(w->columnWidth(1), combo->sizeHint().width()));
        QString values = col.isText()
                             ? QString("text, %1").arg(plural(col.categories.size(), "value"))
                             : QString("numbers");
        if (col.missingCount > 0) values += QString(", %1 missing").arg(col.missingCount);
        auto* kind = new QTableWidgetItem(values);
        kind->setFlags(Qt::ItemIsEnabled);
        w->setItem(c, 2, kind);
    }
    w->setMaximumHeight(
        w->horizontalHeader()->height() +
        std::min(table.columnCount(), 6) * w->verticalHeader()->defaultSectionSize() + 4);
    m_preview->setTable(table, static_cast<int>(tasks::kTablePreviewRows));
    m_preview->setRoles(roles);
    m_ui->previewTableView->resizeColumnsToContents();
    showMissing();

    QString task = schema.isClassification()
                       ? QString("<b>Classification</b> into %1: %2")
                             .arg(plural(schema.classes.size(), "class"),
                                  schema.classes.mid(0, 8).join(", ").toHtmlEscaped() +
                                      (schema.classes.size() > 8 ? ", …" : ""))
                       : QString("<b>Regression</b>: predict %1 as a number")
                             .arg(targets.join(", ").toHtmlEscaped());
    task += QString(" from %1.").arg(plural(schema.features.size(), "feature"));
    m_ui->taskLabel->setText(task);
    m_updating = false;
}

void TableDataPage::rolesEdited()
{
    if (!m_session) return;
    QStringList targets, ignore;
    auto* w = m_ui->columnsTableWidget;
    for (int r = 0; r < w->rowCount(); ++r) {
        const auto* combo = qobject_cast<QComboBox*>(w->cellWidget(r, 1));
        const QString name = w->item(r, 0)->text();
        if (combo->currentIndex() == 1) targets << name;
        if (combo->currentIndex() == 2) ignore << name;
    }
    tasks::TaskOptions options = m_session->taskOptions();
    options.target = targets.join(',');
    options.ignore = ignore;
    options.features.clear();
    if (!m_session->setTaskOptions(options)) refresh(); // put the roles back as they were
}

void TableDataPage::showMissing()
{
    const tasks::MissingValues& m = m_session->missingValues();
    const bool shown = m.any();
    m_ui->missingLabel->setVisible(shown);
    m_ui->missingComboBox->setVisible(shown);
    if (!shown) return;
    auto* combo = m_ui->missingComboBox;
    combo->clear();
    for (const QString& policy : missingPolicies()) {
        const QString text = missingChoiceText(m, policy);
        if (!text.isEmpty()) combo->addItem(text, policy);
    }
    combo->setCurrentIndex(combo->findData(m_session->taskOptions().missing));
}

void TableDataPage::missingEdited()
{
    if (!m_session || m_updating) return;
    tasks::TaskOptions options = m_session->taskOptions();
    const QString policy = m_ui->missingComboBox->currentData().toString();
    if (policy.isEmpty() || policy == options.missing) return;
    options.missing = policy;
    if (!m_session->setTaskOptions(options)) refresh(); // put the choice back as it was
}

} // namespace il::app
