#include "NamesDataPage.h"
#include "ui_NamesDataPage.h"

#include "Counting.h"
#include "NamesTask.h"
#include "Session.h"

#include <QLocale>

namespace il::app {

namespace {

QString plural(qint64 n, const QString& word)
{
    return tasks::countOf(n, word, QLocale());
}

} // namespace

NamesDataPage::NamesDataPage(QWidget* parent)
    : StudioPage(parent), m_ui(std::make_unique<Ui::NamesDataPage>())
{
    m_ui->setupUi(this);
    setOptionWidgets({m_ui->contextSpinBox, m_ui->keepCaseCheckBox});
    m_ui->namesInfoLabel->setTextFormat(Qt::RichText);
    connect(m_ui->contextSpinBox, &QSpinBox::editingFinished, this, &NamesDataPage::optionsEdited);
    connect(m_ui->keepCaseCheckBox, &QCheckBox::toggled, this, &NamesDataPage::optionsEdited);
}

NamesDataPage::~NamesDataPage() = default;

void NamesDataPage::refresh()
{
    const auto* task =
        m_session ? dynamic_cast<const tasks::NamesTask*>(m_session->task().get()) : nullptr;
    if (!task) return;
    m_updating = true;
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
    m_updating = false;
}

void NamesDataPage::optionsEdited()
{
    if (m_updating || !m_session || !m_session->task()) return;
    tasks::TaskOptions options = m_session->taskOptions();
    options.settings[tasks::kContextSetting] = m_ui->contextSpinBox->value();
    options.settings[tasks::kKeepCaseSetting] = m_ui->keepCaseCheckBox->isChecked();
    if (options.settings == m_session->taskOptions().settings) return;
    reopenWith(m_session, options);
}

} // namespace il::app
