#include "DatasetPanel.h"
#include "ui_DatasetPanel.h"

#include "Counting.h"
#include "CsvPreviewModel.h"
#include "ImageTask.h"
#include "NamesTask.h"
#include "Session.h"
#include "TabularTask.h"

#include <QComboBox>
#include <QFileInfo>
#include <QHeaderView>
#include <QLocale>
#include <QPushButton>
#include <QTimer>

namespace il::app {

namespace {

enum Page { EmptyPage, TablePage, ImagePage, NamesPage };

QString plural(qint64 n, const QString& word)
{
    return tasks::countOf(n, word, QLocale());
}

// The missing-value policies the studio offers, in the order of its buttons and combo box.
const QStringList kMissingPolicies = {"drop", "ignore", "mean"};

// A choice for a table's missing cells, with the rows it affects ("" when it does not apply:
// no feature column to ignore, no number to fill).
QString missingChoiceText(const tasks::MissingValues& m, const QString& policy)
{
    const QLocale locale;
    if (policy == "drop")
        return QString("Drop rows with missing values: drops %1 of %2")
            .arg(locale.toString(m.incompleteRows), plural(m.rows, "row"));
    if (policy == "ignore") {
        if (m.features.isEmpty()) return {};
        QStringList names;
        for (const QString& f : m.features)
            names << "“" + f + "”";
        const QString kept =
            m.targetRows == 0
                ? QString("keeps all %1").arg(plural(m.rows, "row"))
                : QString("drops %1 without a target").arg(plural(m.targetRows, "row"));
        return QString("%1 %2: %3")
            .arg(m.features.size() == 1 ? "Ignore this column" : "Ignore these columns",
                 names.join(", "), kept);
    }
    if (m.filledRows == 0) return {};
    QString text = QString("Fill with the column mean (train rows only): fills %1")
                       .arg(plural(m.filledRows, "row"));
    if (m.unfillableRows > 0)
        text += QString(", drops %1 with a missing target or text")
                    .arg(plural(m.unfillableRows, "row"));
    return text;
}

} // namespace

DatasetPanel::DatasetPanel(QWidget* parent)
    : QWidget(parent), m_ui(std::make_unique<Ui::DatasetPanel>()),
      m_preview(new CsvPreviewModel(this))
{
    m_ui->setupUi(this);
    m_ui->errorFrame->hide();
    m_ui->errorFrame->setStyleSheet(
        "QFrame#errorFrame { background: rgba(220, 50, 47, 38); "
        "border: 1px solid rgba(220, 50, 47, 150); border-radius: 4px; }");
    m_ui->previewTableView->setModel(m_preview);
    for (QLabel* label : {m_ui->pathLabel, m_ui->summaryLabel, m_ui->errorLabel, m_ui->taskLabel,
                          m_ui->imageInfoLabel, m_ui->namesInfoLabel, m_ui->hintLabel})
        label->setTextFormat(Qt::RichText);
    m_ui->previewTableView->horizontalHeader()->setDefaultAlignment(Qt::AlignCenter);
    m_ui->columnsTableWidget->setColumnCount(3);
    m_ui->columnsTableWidget->setHorizontalHeaderLabels({"Column", "Role", "Values"});
    m_ui->columnsTableWidget->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_ui->columnsTableWidget->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Fixed);
    m_ui->columnsTableWidget->horizontalHeader()->setSectionResizeMode(2, QHeaderView::Stretch);
    m_ui->columnsTableWidget->verticalHeader()->hide();

    connect(m_ui->openButton, &QPushButton::clicked, this, &DatasetPanel::openRequested);
    connect(m_ui->errorCloseButton, &QToolButton::clicked, this, &DatasetPanel::clearError);
    const std::pair<QPushButton*, QString> choices[] = {{m_ui->missingDropButton, "drop"},
                                                        {m_ui->missingIgnoreButton, "ignore"},
                                                        {m_ui->missingMeanButton, "mean"}};
    for (const auto& [button, policy] : choices)
        connect(button, &QPushButton::clicked, this, [this, policy] {
            if (m_session && !m_session->failedMissingPath().isEmpty())
                emit missingChoiceMade(m_session->failedMissingPath(), policy);
        });
    connect(m_ui->missingComboBox, &QComboBox::activated, this, [this] {
        QTimer::singleShot(0, this, &DatasetPanel::missingEdited); // after the combo's signal
    });
    connect(m_ui->trainingSizeSpinBox, &QSpinBox::editingFinished, this,
            &DatasetPanel::optionsEdited);
    connect(m_ui->grayscaleCheckBox, &QCheckBox::toggled, this, &DatasetPanel::optionsEdited);
    connect(m_ui->contextSpinBox, &QSpinBox::editingFinished, this, &DatasetPanel::optionsEdited);
    connect(m_ui->keepCaseCheckBox, &QCheckBox::toggled, this, &DatasetPanel::optionsEdited);
}

DatasetPanel::~DatasetPanel() = default;

void DatasetPanel::setSession(Session* session)
{
    m_session = session;
    connect(session, &Session::datasetOpened, this, [this] {
        clearError();
        refresh();
    });
    connect(session, &Session::datasetFailed, this, [this](const QString& error) {
        showError(error);
        showMissingChoices();
    });
    // A model that opened (with its data or without) answers an earlier failure to open.
    connect(session, &Session::modelOpened, this, &DatasetPanel::clearError);
    connect(session, &Session::modelChanged, this, [this] {
        if (!m_session->task()) refresh();
        updateEnabled();
    });
    connect(session, &Session::runStateChanged, this, &DatasetPanel::updateEnabled);
    // Reset weights (or a new model) leaves nothing trained on the data: the options unlock.
    connect(session, &Session::historyReset, this, &DatasetPanel::updateEnabled);
    connect(session, &Session::progressed, this, [this] {
        if (m_ui->trainingSizeSpinBox->isEnabled() == m_session->hasTrained()) updateEnabled();
    });
    refresh();
}

void DatasetPanel::showError(const QString& message, const QString& title)
{
    m_ui->errorLabel->setText("<b>" + title.toHtmlEscaped() + "</b> " + message.toHtmlEscaped());
    m_ui->errorLabel->setToolTip(message);
    m_ui->missingChoiceWidget->hide();
    m_ui->errorFrame->show();
}

void DatasetPanel::showMissingChoices()
{
    if (!m_session || m_session->failedMissingPath().isEmpty()) return;
    const tasks::MissingValues& m = m_session->failedMissingValues();
    QPushButton* const buttons[] = {m_ui->missingDropButton, m_ui->missingIgnoreButton,
                                    m_ui->missingMeanButton};
    for (int i = 0; i < 3; ++i) {
        QPushButton* button = buttons[i];
        const QString text = missingChoiceText(m, kMissingPolicies[i]);
        button->setText(text);
        button->setVisible(!text.isEmpty());
    }
    m_ui->errorLabel->setText(m_ui->errorLabel->text() +
                              "<br>Open it anyway, choosing what to do with the empty cells "
                              "(you can change this later in the Data tab):");
    m_ui->missingChoiceWidget->show();
}

void DatasetPanel::showMissing()
{
    const tasks::MissingValues& m = m_session->missingValues();
    const bool shown = m.any();
    m_ui->missingLabel->setVisible(shown);
    m_ui->missingComboBox->setVisible(shown);
    if (!shown) return;
    auto* combo = m_ui->missingComboBox;
    combo->clear();
    for (const QString& policy : kMissingPolicies) {
        const QString text = missingChoiceText(m, policy);
        if (!text.isEmpty()) combo->addItem(text, policy);
    }
    combo->setCurrentIndex(combo->findData(m_session->taskOptions().missing));
}

void DatasetPanel::missingEdited()
{
    if (!m_session || m_updating) return;
    tasks::TaskOptions options = m_session->taskOptions();
    const QString policy = m_ui->missingComboBox->currentData().toString();
    if (policy.isEmpty() || policy == options.missing) return;
    options.missing = policy;
    if (!m_session->setTaskOptions(options)) refresh(); // put the choice back as it was
}

void DatasetPanel::clearError()
{
    m_ui->missingChoiceWidget->hide();
    m_ui->errorFrame->hide();
    m_ui->errorLabel->clear();
}

void DatasetPanel::refresh()
{
    m_updating = true;
    const auto task = m_session ? m_session->task() : nullptr;
    if (!task) {
        m_ui->pagesStackedWidget->setCurrentIndex(EmptyPage);
        const bool modelOnly = m_session && m_session->hasModel();
        m_ui->pathLabel->setText(modelOnly ? "Model without its data" : "No data open");
        m_ui->summaryLabel->setText(
            modelOnly ? "This model was opened without the data it was trained on. Its outputs "
                        "work; open the data file to see it here and to train further."
                      : QString());
        m_ui->summaryLabel->setVisible(modelOnly);
        m_updating = false;
        return;
    }
    const QString path = m_session->dataPath();
    const bool sample = path.startsWith(":/");
    m_ui->pathLabel->setText("<b>" + QFileInfo(path).fileName().toHtmlEscaped() + "</b>" +
                             (sample ? " (bundled sample)" : ""));
    m_ui->pathLabel->setToolTip(sample ? "A sample bundled with the studio" : path);
    QString summary = task->description().replace("->", "\u2192").toHtmlEscaped();
    for (const QString& note : task->notes())
        summary += "<br><i>Note: " + note.toHtmlEscaped() + "</i>";
    m_ui->summaryLabel->setText(summary);
    m_ui->summaryLabel->setVisible(true);
    switch (task->type().output()) {
    case tasks::TaskOutput::Table:
        showTable();
        break;
    case tasks::TaskOutput::Image:
        showImage();
        break;
    case tasks::TaskOutput::Names:
        showNames();
        break;
    case tasks::TaskOutput::None:
        break;
    }
    updateEnabled();
    m_updating = false;
}

void DatasetPanel::showTable()
{
    m_ui->pagesStackedWidget->setCurrentIndex(TablePage);
    const auto* tabular = dynamic_cast<const tasks::TabularTask*>(m_session->task().get());
    if (!tabular) return;
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
            if (!m_updating)
                QTimer::singleShot(0, this, &DatasetPanel::rolesEdited); // after the combo's signal
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
}

void DatasetPanel::rolesEdited()
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

void DatasetPanel::showImage()
{
    m_ui->pagesStackedWidget->setCurrentIndex(ImagePage);
    const auto* task = dynamic_cast<const tasks::ImageTask*>(m_session->task().get());
    if (!task) return;
    m_pixmap = QPixmap::fromImage(task->originalImage());
    fitImage();
    const QSize o = task->originalImage().size(), t = task->trainingImage().size();
    const bool gray = task->geometry().channels == 1;
    m_ui->imageInfoLabel->setText(
        QString("%1 × %2 pixels, %3. Trains at <b>%4 × %5</b>: %6 → %7.")
            .arg(o.width())
            .arg(o.height())
            .arg(gray ? "gray" : "colour")
            .arg(t.width())
            .arg(t.height())
            .arg(plural(static_cast<qint64>(t.width()) * t.height(), "example"))
            .arg(gray ? "one brightness each" : "three colour values each"));
    m_ui->trainingSizeSpinBox->setValue(m_session->taskOptions().trainingSize);
    // A gray picture has no gray version to offer; one trained gray keeps the box to go back.
    const bool colour = !gray || m_session->taskOptions().grayscale;
    m_ui->grayscaleCheckBox->setChecked(m_session->taskOptions().grayscale || gray);
    m_ui->grayscaleCheckBox->setEnabled(colour);
    m_ui->grayscaleCheckBox->setVisible(colour);
}

void DatasetPanel::showNames()
{
    m_ui->pagesStackedWidget->setCurrentIndex(NamesPage);
    const auto* task = dynamic_cast<const tasks::NamesTask*>(m_session->task().get());
    if (!task) return;
    const tasks::NamesSchema& schema = task->schema();
    m_ui->namesListWidget->clear();
    m_ui->namesListWidget->addItems(task->firstNames());
    const int64_t count = task->nameCount();
    const QStringList vocabulary = schema.vocabulary();
    m_ui->namesInfoLabel->setText(QString("<b>%1</b> · vocabulary of %2: <tt>%3</tt> · longest %4")
                                      .arg(plural(count, "name"))
                                      .arg(vocabulary.size())
                                      .arg(vocabulary.join(' ').toHtmlEscaped())
                                      .arg(plural(schema.longestName, "character")));
    m_ui->namesInfoLabel->setToolTip(
        QString("\"%1\" marks the start and the end of a name.").arg(schema.boundarySymbol));
    m_ui->contextSpinBox->setValue(schema.context);
    m_ui->keepCaseCheckBox->setChecked(schema.keepCase);
}

void DatasetPanel::optionsEdited()
{
    if (m_updating || !m_session || !m_session->task()) return;
    tasks::TaskOptions options = m_session->taskOptions();
    options.trainingSize = m_ui->trainingSizeSpinBox->value();
    options.grayscale =
        m_ui->grayscaleCheckBox->isChecked() && m_ui->grayscaleCheckBox->isEnabled();
    options.context = m_ui->contextSpinBox->value();
    options.keepCase = m_ui->keepCaseCheckBox->isChecked();
    const tasks::TaskOptions& now = m_session->taskOptions();
    if (options.trainingSize == now.trainingSize && options.grayscale == now.grayscale &&
        options.context == now.context && options.keepCase == now.keepCase)
        return;
    QTimer::singleShot(0, this, [this, options] {
        if (!m_session->setTaskOptions(options)) refresh();
    });
}

void DatasetPanel::updateEnabled()
{
    if (!m_session) return;
    const bool editable =
        m_session->runState() == Session::RunState::Idle && !m_session->hasTrained();
    const QString why = editable ? QString()
                                 : QString("The model has trained on the data as it is read now. "
                                           "Reset weights to change this.");
    for (QWidget* w : {static_cast<QWidget*>(m_ui->columnsTableWidget),
                       static_cast<QWidget*>(m_ui->missingComboBox),
                       static_cast<QWidget*>(m_ui->trainingSizeSpinBox),
                       static_cast<QWidget*>(m_ui->grayscaleCheckBox),
                       static_cast<QWidget*>(m_ui->contextSpinBox),
                       static_cast<QWidget*>(m_ui->keepCaseCheckBox)}) {
        w->setEnabled(editable);
        w->setStatusTip(why);
    }
    m_ui->openButton->setEnabled(m_session->runState() == Session::RunState::Idle);
}

void DatasetPanel::fitImage()
{
    if (m_pixmap.isNull()) return;
    const QSize box = m_ui->imagePreviewLabel->size();
    m_ui->imagePreviewLabel->setPixmap(
        m_pixmap.scaled(box, Qt::KeepAspectRatio, Qt::SmoothTransformation));
}

void DatasetPanel::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    fitImage();
}

} // namespace il::app
