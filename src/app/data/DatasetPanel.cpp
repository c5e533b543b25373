#include "DatasetPanel.h"
#include "ui_DatasetPanel.h"

#include "Session.h"
#include "StudioKind.h"
#include "TableMissing.h"
#include "Task.h"

#include <QFileInfo>
#include <QPushButton>

namespace il::app {

DatasetPanel::DatasetPanel(QWidget* parent)
    : QWidget(parent), m_ui(std::make_unique<Ui::DatasetPanel>())
{
    m_ui->setupUi(this);
    m_ui->errorFrame->hide();
    m_ui->errorFrame->setStyleSheet(
        "QFrame#errorFrame { background: rgba(220, 50, 47, 38); "
        "border: 1px solid rgba(220, 50, 47, 150); border-radius: 4px; }");
    for (QLabel* label : {m_ui->pathLabel, m_ui->summaryLabel, m_ui->errorLabel, m_ui->hintLabel})
        label->setTextFormat(Qt::RichText);
    for (const StudioKind* kind : studioKinds()) {
        m_pages.push_back(kind->makeDataPage(m_ui->pagesStackedWidget));
        m_ui->pagesStackedWidget->addWidget(m_pages.back());
    }

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
}

DatasetPanel::~DatasetPanel() = default;

void DatasetPanel::setSession(Session* session)
{
    m_session = session;
    for (StudioPage* page : m_pages)
        page->setSession(session);
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
        if (m_editable == m_session->hasTrained()) updateEnabled();
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
        const QString text = missingChoiceText(m, missingPolicies()[i]);
        button->setText(text);
        button->setVisible(!text.isEmpty());
    }
    m_ui->errorLabel->setText(m_ui->errorLabel->text() +
                              "<br>Open it anyway, choosing what to do with the empty cells "
                              "(you can change this later in the Data tab):");
    m_ui->missingChoiceWidget->show();
}

void DatasetPanel::clearError()
{
    m_ui->missingChoiceWidget->hide();
    m_ui->errorFrame->hide();
    m_ui->errorLabel->clear();
}

void DatasetPanel::refresh()
{
    const auto task = m_session ? m_session->task() : nullptr;
    if (!task) {
        m_ui->pagesStackedWidget->setCurrentWidget(m_ui->emptyPage);
        const bool modelOnly = m_session && m_session->hasModel();
        m_ui->pathLabel->setText(modelOnly ? "Model without its data" : "No data open");
        m_ui->summaryLabel->setText(
            modelOnly ? "This model was opened without the data it was trained on. Its outputs "
                        "work; open the data file to see it here and to train further."
                      : QString());
        m_ui->summaryLabel->setVisible(modelOnly);
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
    const int kind = studioKindIndex(&task->type());
    if (kind < 0) {
        m_ui->pagesStackedWidget->setCurrentWidget(m_ui->emptyPage);
    } else {
        StudioPage* page = m_pages[size_t(kind)];
        m_ui->pagesStackedWidget->setCurrentWidget(page);
        page->refresh();
    }
    updateEnabled();
}

void DatasetPanel::updateEnabled()
{
    if (!m_session) return;
    const bool editable =
        m_session->runState() == Session::RunState::Idle && !m_session->hasTrained();
    const QString why = editable ? QString()
                                 : QString("The model has trained on the data as it is read now. "
                                           "Reset weights to change this.");
    m_editable = editable;
    for (StudioPage* page : m_pages)
        page->setEditable(editable, why);
    m_ui->openButton->setEnabled(m_session->runState() == Session::RunState::Idle);
}

} // namespace il::app
