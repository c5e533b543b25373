#include "NamesOutputPage.h"
#include "ui_NamesOutputPage.h"

#include "NamesRequests.h"
#include "NamesTask.h"
#include "NumberFormat.h"
#include "Session.h"
#include "TemperatureSweepDialog.h"

#include <QElapsedTimer>

namespace il::app {

NamesOutputPage::NamesOutputPage(QWidget* parent)
    : StudioPage(parent), m_ui(std::make_unique<Ui::NamesOutputPage>())
{
    m_ui->setupUi(this);
    connect(m_ui->temperatureSlider, &QSlider::valueChanged, this, [this] {
        m_ui->temperatureValueLabel->setText(QString::number(temperature(), 'f', 2));
        requestNextChar();
    });
    connect(m_ui->prefixLineEdit, &QLineEdit::textChanged, this, [this](const QString& text) {
        m_ui->generatePrefixButton->setEnabled(!text.isEmpty());
        requestNextChar();
    });
    connect(m_ui->generateButton, &QPushButton::clicked, this, [this] { generate(QString()); });
    connect(m_ui->sweepButton, &QPushButton::clicked, this, &NamesOutputPage::showSweep);
    connect(m_ui->generatePrefixButton, &QPushButton::clicked, this,
            [this] { generate(m_ui->prefixLineEdit->text()); });
}

void NamesOutputPage::generate(const QString& prefix)
{
    if (!m_session) return;
    tasks::GenerationOptions options;
    options.count = m_ui->countSpinBox->value();
    options.temperature = temperature();
    options.seed = m_session->config().seed * 1000003 + ++m_generation;
    options.prefix = prefix;
    m_prefix = prefix;
    m_ui->generateButton->setEnabled(false);
    m_ui->generatePrefixButton->setEnabled(false);
    NamesRequests::of(*m_session).generateNames(options);
}

NamesOutputPage::~NamesOutputPage() = default;

void NamesOutputPage::connectSession(Session* session)
{
    NamesRequests& names = NamesRequests::of(*session);
    connect(&names, &NamesRequests::namesGenerated, this, &NamesOutputPage::generated);
    connect(&names, &NamesRequests::nextCharReady, this, &NamesOutputPage::nextCharReady);
    // New data, another model or fresh weights: names from the old weights no longer apply.
    const auto clear = [this] {
        m_ui->generatedListWidget->clear();
        m_ui->innovationLabel->clear();
        requestNextChar();
    };
    connect(session, &Session::modelChanged, this, clear);
    connect(session, &Session::historyReset, this, clear);
    connect(session, &Session::trainingFinished, this, &NamesOutputPage::requestNextChar);
    connect(session, &Session::progressed, this, [this] {
        // Reshape the bars as the network learns, about twice a second.
        static QElapsedTimer clock;
        if (!clock.isValid() || clock.elapsed() > 500) {
            clock.restart();
            requestNextChar();
        }
    });
}

void NamesOutputPage::showSweep()
{
    if (!m_session) return;
    if (!m_sweep) m_sweep = new TemperatureSweepDialog(m_session, this);
    m_sweep->show();
    m_sweep->raise();
    m_sweep->sweep();
}

double NamesOutputPage::temperature() const
{
    return m_ui->temperatureSlider->value() / 100.0;
}

void NamesOutputPage::generated(const tasks::GenerationResult& result)
{
    m_ui->generateButton->setEnabled(true);
    m_ui->generatePrefixButton->setEnabled(!m_ui->prefixLineEdit->text().isEmpty());
    m_ui->generatedListWidget->clear();
    if (!result.error.isEmpty()) {
        m_ui->innovationLabel->setText(result.error);
        return;
    }
    for (const tasks::GeneratedName& name : result.names) {
        const QString mark = name.isNew ? "NEW " : name.heldOut ? "HELD" : "SEEN";
        auto* item = new QListWidgetItem(
            QString("%1   %2%3").arg(mark, name.text, name.truncated ? "…" : ""));
        item->setToolTip(name.isNew     ? "Not in the names file: invented by the network."
                         : name.heldOut ? "In the names file, but held out for validation: the "
                                          "network never trained on it and found a real name."
                                        : "One of the training names.");
        if (!name.isNew) item->setForeground(palette().brush(QPalette::Disabled, QPalette::Text));
        m_ui->generatedListWidget->addItem(item);
    }
    QString text = QString("Innovation rate: <b>%1</b> new (%2 of %3)")
                       .arg(fmt::percent(result.innovationRate()))
                       .arg(result.newCount)
                       .arg(result.names.size());
    if (!m_prefix.isEmpty()) text += ", all starting with “" + m_prefix.toHtmlEscaped() + "”";
    m_ui->innovationLabel->setText(text);
}

void NamesOutputPage::requestNextChar()
{
    if (!m_session || !m_session->isKind(tasks::namesTaskType()) || !m_session->hasModel()) return;
    NamesRequests::of(*m_session).requestNextChar(m_ui->prefixLineEdit->text(), temperature());
}

void NamesOutputPage::nextCharReady(const QString& prefix, double t,
                                    const std::vector<float>& probs, const QStringList& symbols,
                                    const QString& error)
{
    if (prefix != m_ui->prefixLineEdit->text() || t != temperature()) return; // a newer one comes
    if (!error.isEmpty()) {
        m_ui->nextCharBars->clear();
        m_ui->nextCharErrorLabel->setText(error);
        return;
    }
    m_ui->nextCharErrorLabel->setText(
        QString("After \"%1\" at temperature %2. ⏎ = end of name.").arg(prefix).arg(t, 0, 'f', 2));
    m_ui->nextCharBars->setProbabilities(symbols, probs);
}

} // namespace il::app
