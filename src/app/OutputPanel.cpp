#include "OutputPanel.h"

#include "ImageOutputPage.h"
#include "NamesOutputPage.h"
#include "Session.h"
#include "TableOutputPage.h"

#include <QLabel>
#include <QStackedWidget>
#include <QVBoxLayout>

namespace il::app {

OutputPanel::OutputPanel(QWidget* parent)
    : QWidget(parent), m_stack(new QStackedWidget(this)),
      m_empty(new QLabel("The network's output appears here once there is data or a model.")),
      m_image(new ImageOutputPage), m_names(new NamesOutputPage), m_table(new TableOutputPage)
{
    m_empty->setAlignment(Qt::AlignCenter);
    m_empty->setWordWrap(true);
    m_empty->setEnabled(false);
    m_image->setObjectName("imageOutputPage");
    m_names->setObjectName("namesOutputPage");
    m_table->setObjectName("tableOutputPage");
    for (QWidget* page : {static_cast<QWidget*>(m_empty), static_cast<QWidget*>(m_image),
                          static_cast<QWidget*>(m_names), static_cast<QWidget*>(m_table)})
        m_stack->addWidget(page);
    m_stack->setObjectName("outputStackedWidget");
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 4, 0, 0);
    layout->addWidget(m_stack);
}

void OutputPanel::setSession(Session* session)
{
    m_session = session;
    m_image->setSession(session);
    m_names->setSession(session);
    m_table->setSession(session);
    connect(session, &Session::modelChanged, this, &OutputPanel::switchPage);
    connect(session, &Session::datasetOpened, this, &OutputPanel::switchPage);
    switchPage();
}

void OutputPanel::switchPage()
{
    switch (m_session->output()) {
    case tasks::TaskOutput::Image:
        m_stack->setCurrentWidget(m_image);
        break;
    case tasks::TaskOutput::Names:
        m_stack->setCurrentWidget(m_names);
        break;
    case tasks::TaskOutput::Table:
        m_stack->setCurrentWidget(m_table);
        break;
    case tasks::TaskOutput::None:
        m_stack->setCurrentWidget(m_empty);
        break;
    }
}

} // namespace il::app
