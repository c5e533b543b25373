#include "ModelPanel.h"
#include "ui_ModelPanel.h"

#include "Counting.h"
#include "LayerStackModel.h"
#include "Session.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFontDatabase>
#include <QHeaderView>
#include <QLocale>
#include <QSpinBox>
#include <QStyledItemDelegate>
#include <QTimer>
#include <QUndoStack>

namespace il::app {

namespace {

// Combo boxes for the layer type and for choices (Init); spin boxes sized from the layer
// argument the cell edits (LayerRegistry.h).
class LayerDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    QWidget* createEditor(QWidget* parent, const QStyleOptionViewItem& option,
                          const QModelIndex& index) const override
    {
        const auto* model = qobject_cast<const LayerStackModel*>(index.model());
        const LayerArg* arg = model ? model->argumentAt(index) : nullptr;
        if (index.column() == LayerStackModel::TypeColumn ||
            (arg && arg->kind == LayerArg::Kind::Choice)) {
            auto* combo = new QComboBox(parent);
            if (arg)
                for (const std::string& choice : arg->choices)
                    combo->addItem(QString::fromStdString(choice));
            else
                combo->addItems(layerTypeNames());
            // Commit as soon as a choice is made, not when the editor loses focus.
            connect(combo, &QComboBox::activated, this, [this, combo] {
                emit const_cast<LayerDelegate*>(this)->commitData(combo);
                emit const_cast<LayerDelegate*>(this)->closeEditor(combo);
            });
            return combo;
        }
        QWidget* editor = QStyledItemDelegate::createEditor(parent, option, index);
        if (auto* spin = qobject_cast<QSpinBox*>(editor)) spin->setRange(1, 1'000'000);
        if (auto* spin = qobject_cast<QDoubleSpinBox*>(editor)) {
            spin->setDecimals(4);
            spin->setRange(arg && !arg->positive ? -10000 : 0.0001, 10000);
        }
        return editor;
    }
    void setEditorData(QWidget* editor, const QModelIndex& index) const override
    {
        if (auto* combo = qobject_cast<QComboBox*>(editor)) {
            combo->setCurrentText(index.data(Qt::EditRole).toString());
            return;
        }
        QStyledItemDelegate::setEditorData(editor, index);
    }
    void setModelData(QWidget* editor, QAbstractItemModel* model,
                      const QModelIndex& index) const override
    {
        if (auto* combo = qobject_cast<QComboBox*>(editor)) {
            model->setData(index, combo->currentText(), Qt::EditRole);
            return;
        }
        QStyledItemDelegate::setModelData(editor, model, index);
    }
};

} // namespace

// Long: the layer table's setup, then one short handler per button, the preset list and the
// text field; each is a few lines used only here.
ModelPanel::ModelPanel(QWidget* parent)
    : QWidget(parent), m_ui(std::make_unique<Ui::ModelPanel>()), m_model(new LayerStackModel(this))
{
    m_ui->setupUi(this);
    m_ui->layersTableView->setModel(m_model);
    m_ui->layersTableView->setItemDelegate(new LayerDelegate(this));
    m_ui->layersTableView->setEditTriggers(QAbstractItemView::DoubleClicked |
                                           QAbstractItemView::SelectedClicked |
                                           QAbstractItemView::EditKeyPressed);
    auto* header = m_ui->layersTableView->horizontalHeader();
    // Every column as wide as its widest cell, so no layer name or count is ever cut short; a long
    // name ("Hash grid encoding") wraps onto a second line instead of widening the table.
    header->setSectionResizeMode(QHeaderView::ResizeToContents);
    header->setStretchLastSection(true);
    header->setMaximumSectionSize(fontMetrics().horizontalAdvance("Hash grid ") + 16);
    m_ui->layersTableView->setWordWrap(true);
    m_ui->layersTableView->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_ui->layersTableView->verticalHeader()->setMinimumSectionSize(fontMetrics().height() + 12);
    m_ui->specLineEdit->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_ui->newLayerComboBox->addItems(layerTypeNames());
    m_ui->stackErrorLabel->setStyleSheet(
        "QLabel { background: rgba(220, 50, 47, 38); border: 1px solid rgba(220, 50, 47, 150); "
        "border-radius: 4px; padding: 4px; }");
    m_ui->stackErrorLabel->hide();
    m_ui->outputWidthNoteLabel->setStyleSheet(
        "QLabel { background: rgba(38, 139, 210, 30); border: 1px solid rgba(38, 139, 210, 130); "
        "border-radius: 4px; padding: 4px; }");
    m_ui->outputWidthNoteLabel->hide();

    connect(m_ui->addButton, &QPushButton::clicked, this, [this] {
        const int at = currentRow() < 0 ? m_model->rowCount() : currentRow() + 1;
        m_model->insertLayer(at, m_ui->newLayerComboBox->currentText());
        selectRow(at);
    });
    connect(m_ui->duplicateButton, &QPushButton::clicked, this, [this] {
        const int row = currentRow();
        m_model->duplicateLayer(row);
        selectRow(row + 1);
    });
    connect(m_ui->removeButton, &QPushButton::clicked, this, [this] {
        const int row = currentRow();
        m_model->removeLayer(row);
        selectRow(std::min(row, m_model->rowCount() - 1));
    });
    connect(m_ui->moveUpButton, &QToolButton::clicked, this, [this] {
        const int row = currentRow();
        m_model->moveLayer(row, -1);
        selectRow(row - 1);
    });
    connect(m_ui->moveDownButton, &QToolButton::clicked, this, [this] {
        const int row = currentRow();
        m_model->moveLayer(row, +1);
        selectRow(row + 1);
    });
    connect(m_ui->undoButton, &QToolButton::clicked, m_model->undoStack(), &QUndoStack::undo);
    connect(m_ui->redoButton, &QToolButton::clicked, m_model->undoStack(), &QUndoStack::redo);
    connect(m_model->undoStack(), &QUndoStack::canUndoChanged, m_ui->undoButton,
            &QToolButton::setEnabled);
    connect(m_model->undoStack(), &QUndoStack::canRedoChanged, m_ui->redoButton,
            &QToolButton::setEnabled);
    connect(m_ui->presetComboBox, &QComboBox::activated, this, [this] {
        if (!m_session || !m_session->task()) return;
        const QString preset = m_ui->presetComboBox->currentData().toString();
        // The settings a preset's result was measured with come with it (and go with it); the
        // data may be read again (a names context), so the stack follows.
        const QString said = m_session->applyPresetRecipe(preset);
        m_model->setSpec(m_session->task()->presetSpec(preset));
        m_ui->recipeNoteLabel->setText(said);
        m_ui->recipeNoteLabel->setVisible(!said.isEmpty());
    });
    // Enter, or leaving the text (for the run button, say), takes it as the stack.
    connect(m_ui->specLineEdit, &QLineEdit::returnPressed, this, &ModelPanel::applyText);
    connect(m_ui->specLineEdit, &QLineEdit::editingFinished, this, &ModelPanel::applyText);
    connect(m_ui->specLineEdit, &QLineEdit::textEdited, this, &ModelPanel::textEdited);
    // Text that stays unreadable for a moment after the last key says why, as if it were taken.
    m_textCheck = new QTimer(this);
    m_textCheck->setSingleShot(true);
    m_textCheck->setInterval(800);
    connect(m_textCheck, &QTimer::timeout, this, [this] {
        if (!m_textError.isEmpty()) setTextError(m_textError, true);
    });
    connect(m_model, &LayerStackModel::stackChanged, this, &ModelPanel::stackChanged);
    connect(m_ui->layersTableView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &ModelPanel::updateEnabled);
    updateEnabled();
}

ModelPanel::~ModelPanel() = default;

QUndoStack* ModelPanel::undoStack() const
{
    return m_model->undoStack();
}

void ModelPanel::setSession(Session* session)
{
    m_session = session;
    connect(session, &Session::modelChanged, this, &ModelPanel::reload);
    // The session's stack changed under the editor (the folds' averaged networks became the
    // model): show it.
    connect(session, &Session::specChanged, this, [this] {
        if (m_model->spec() == m_session->spec()) return;
        m_loading = true;
        m_model->resetSpec(m_session->spec());
        m_loading = false;
        stackChanged();
    });
    connect(session, &Session::runStateChanged, this, &ModelPanel::updateEnabled);
    // Start builds the edited stack afresh, and Reset weights leaves nothing trained: either way
    // (both reset the history) the stack no longer differs from a trained model.
    connect(session, &Session::historyReset, this, &ModelPanel::updateNote);
    reload();
}

void ModelPanel::reload()
{
    m_loading = true;
    m_ui->recipeNoteLabel->hide();
    m_ui->presetComboBox->clear();
    if (const auto task = m_session->task()) {
        // Each preset's note as its tooltip: what it is for (the ensemble's folds averaged).
        for (const tasks::LayerPreset& preset : task->type().presets()) {
            m_ui->presetComboBox->addItem(preset.name + "  —  " + task->presetSpec(preset.name),
                                          preset.name);
            if (!preset.note.isEmpty())
                m_ui->presetComboBox->setItemData(m_ui->presetComboBox->count() - 1, preset.note,
                                                  Qt::ToolTipRole);
        }
        m_ui->presetComboBox->setPlaceholderText("Choose a preset…");
    }
    m_model->setDataShape(m_session->inputWidth(), m_session->outputWidth(), m_session->vocab());
    m_model->resetSpec(m_session->spec());
    m_loading = false;
    stackChanged();
}

void ModelPanel::stackChanged()
{
    const QString spec = m_model->spec();
    if (m_ui->specLineEdit->text() != spec) m_ui->specLineEdit->setText(spec);
    const bool haveData = m_session && m_session->outputWidth() > 0;
    // The text is the stack's now: nothing in it is wrong, and a note about earlier text goes.
    m_ui->outputWidthNoteLabel->hide();
    m_textErrorShown = false;
    if (!m_textError.isEmpty()) {
        m_textError.clear();
        emit textErrorChanged();
    }
    if (!m_model->isValid()) {
        m_ui->stackErrorLabel->setText("<b>This stack cannot be built.</b> " +
                                       m_model->errorString().toHtmlEscaped());
        m_ui->stackErrorLabel->show();
        m_ui->totalLabel->clear();
    } else {
        m_ui->stackErrorLabel->hide();
        m_ui->totalLabel->setText(
            haveData
                ? QString("<b>%1</b> trainable %2 · %3 → %4")
                      .arg(QLocale().toString(static_cast<qlonglong>(m_model->totalParameters())),
                           m_model->totalParameters() == 1 ? "parameter" : "parameters",
                           tasks::countOf(m_session->inputWidth(), "input", QLocale()),
                           tasks::countOf(m_session->outputWidth(), "output", QLocale()))
                : QString("Open data to see sizes and parameter counts."));
    }
    if (m_session && !m_loading) m_session->setSpec(spec, m_model->errorString());
    showPreset();
    updateNote();
    updateEnabled();
}

bool ModelPanel::applyText()
{
    const QString text = m_ui->specLineEdit->text();
    if (text == m_model->spec()) return true; // as the stack has it (Enter, then leaving)
    LayerRows rows;
    QString error;
    if (!parseLayerRows(text, rows, &error)) {
        setTextError(error, true);
        return false;
    }
    const int output = outputLayerIndex(rows);
    const QString note =
        output < 0 ? QString() : outputWidthNote(rows[static_cast<size_t>(output)]);
    m_model->setSpec(text); // stackChanged, when the layers change, writes the text back
    // The text as the stack writes it, also when the layers stayed ("dense:3" for "dense").
    if (m_ui->specLineEdit->text() != m_model->spec()) m_ui->specLineEdit->setText(m_model->spec());
    setTextError({}, false);
    m_ui->outputWidthNoteLabel->setText(note);
    m_ui->outputWidthNoteLabel->setVisible(!note.isEmpty());
    return true;
}

void ModelPanel::textEdited()
{
    m_ui->outputWidthNoteLabel->hide(); // it spoke of the text before this edit
    // Start follows the text as typed; the message, once shown, follows it too. A new one
    // waits for the text to be taken or a pause in typing (m_textCheck), rather than flashing
    // up at every half-typed item.
    LayerRows rows;
    QString error;
    const bool read = parseLayerRows(m_ui->specLineEdit->text(), rows, &error);
    setTextError(read ? QString() : error, false);
    if (read)
        m_textCheck->stop();
    else if (!m_textErrorShown)
        m_textCheck->start();
}

void ModelPanel::setTextError(const QString& error, bool show)
{
    m_textErrorShown = !error.isEmpty() && (show || m_textErrorShown);
    if (m_textErrorShown) {
        m_ui->stackErrorLabel->setText(
            "<b>This text cannot be read:</b> " + error.toHtmlEscaped() +
            "<br>The layers above are the last ones that could; Start waits until the text is "
            "fixed.");
        m_ui->stackErrorLabel->show();
    } else if (m_model->isValid()) {
        m_ui->stackErrorLabel->hide();
    } else { // the stack's own error, as stackChanged shows it
        m_ui->stackErrorLabel->setText("<b>This stack cannot be built.</b> " +
                                       m_model->errorString().toHtmlEscaped());
        m_ui->stackErrorLabel->show();
    }
    if (error == m_textError) return;
    m_textError = error;
    emit textErrorChanged();
}

QString ModelPanel::outputWidthNote(const LayerRow& typed) const
{
    LayerRow written = typed;
    int64_t width = 0;
    for (size_t k = 0; k < typed.args.size(); ++k)
        if (typed.type->args[k].fromData == DataValue::OutputWidth && typed.args[k] > 0) {
            width = static_cast<int64_t>(typed.args[k]);
            written.args[k] = 0;
        }
    if (width <= 0) return {};
    const QLocale l;
    const QString was = QString::fromStdString(typed.text()).toHtmlEscaped();
    const QString now = QString::fromStdString(written.text()).toHtmlEscaped();
    const int64_t data = m_session ? m_session->outputWidth() : 0;
    QString note = QString("<b>%1 %2 %3.</b> The last %4 layer gives the network's outputs, so "
                           "its width always comes from the data")
                       .arg(was, width == data ? "is written" : "became", now,
                            QString::fromStdString(typed.type->name));
    if (data <= 0) return note + " you open.";
    note += ": here " + l.toString(static_cast<qlonglong>(data));
    const QString meaning = m_session->task() ? m_session->task()->outputsMeaning() : QString();
    if (!meaning.isEmpty()) note += ", " + meaning.toHtmlEscaped();
    note += ".";
    if (width != data)
        note += QString(" A width of %1 would not fit it.")
                    .arg(l.toString(static_cast<qlonglong>(width)));
    return note;
}

void ModelPanel::showPreset()
{
    const auto task = m_session ? m_session->task() : nullptr;
    int index = -1;
    const QString spec = m_model->spec();
    for (int i = 0; task && i < m_ui->presetComboBox->count() && index < 0; ++i)
        if (canonicalSpec(task->presetSpec(m_ui->presetComboBox->itemData(i).toString())) == spec)
            index = i;
    m_ui->presetComboBox->setCurrentIndex(index);
}

void ModelPanel::updateNote()
{
    if (!m_session) return;
    const bool fresh = m_session->trainedSteps() > 0 && m_session->needsNewModel();
    m_ui->noteLabel->setText(fresh ? "The stack differs from the trained model: Start begins "
                                     "a new model from fresh weights."
                                   : QString());
    m_ui->noteLabel->setVisible(fresh);
}

void ModelPanel::updateEnabled()
{
    const bool idle = !m_session || m_session->runState() == Session::RunState::Idle;
    const int row = currentRow();
    const int rows = m_model->rowCount();
    m_ui->layersTableView->setEditTriggers(idle ? QAbstractItemView::DoubleClicked |
                                                      QAbstractItemView::SelectedClicked |
                                                      QAbstractItemView::EditKeyPressed
                                                : QAbstractItemView::NoEditTriggers);
    m_ui->presetComboBox->setEnabled(idle && m_ui->presetComboBox->count() > 0);
    m_ui->addButton->setEnabled(idle);
    m_ui->newLayerComboBox->setEnabled(idle);
    m_ui->duplicateButton->setEnabled(idle && row >= 0);
    m_ui->removeButton->setEnabled(idle && row >= 0 && rows > 1);
    m_ui->moveUpButton->setEnabled(idle && row > 0);
    m_ui->moveDownButton->setEnabled(idle && row >= 0 && row + 1 < rows);
    m_ui->undoButton->setEnabled(idle && m_model->undoStack()->canUndo());
    m_ui->redoButton->setEnabled(idle && m_model->undoStack()->canRedo());
    m_ui->specLineEdit->setReadOnly(!idle);
}

int ModelPanel::currentRow() const
{
    const QModelIndex i = m_ui->layersTableView->currentIndex();
    return i.isValid() ? i.row() : -1;
}

void ModelPanel::selectRow(int row)
{
    if (row < 0 || row >= m_model->rowCount()) return;
    m_ui->layersTableView->setCurrentIndex(m_model->index(row, 0));
    m_ui->layersTableView->selectRow(row);
    updateEnabled();
}

} // namespace il::app
