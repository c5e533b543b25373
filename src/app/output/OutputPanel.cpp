#include "OutputPanel.h"

#include "Session.h"
#include "StudioKind.h"

#include <QLabel>
#include <QStackedWidget>
#include <QVBoxLayout>

namespace il::app {

OutputPanel::OutputPanel(QWidget* parent)
    : QWidget(parent), m_stack(new QStackedWidget(this)),
      m_empty(new QLabel("The network's output appears here once there is data or a model."))
{
    m_empty->setAlignment(Qt::AlignCenter);
    m_empty->setWordWrap(true);
    m_empty->setEnabled(false);
    m_stack->addWidget(m_empty);
    for (const StudioKind* kind : studioKinds()) {
        m_pages.push_back(kind->makeOutputPage(m_stack));
        m_stack->addWidget(m_pages.back());
    }
    m_stack->setObjectName("outputStackedWidget");
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 4, 0, 0);
    layout->addWidget(m_stack);
}

void OutputPanel::setSession(Session* session)
{
    m_session = session;
    for (StudioPage* page : m_pages)
        page->setSession(session);
    connect(session, &Session::modelChanged, this, &OutputPanel::switchPage);
    connect(session, &Session::datasetOpened, this, &OutputPanel::switchPage);
    switchPage();
}

void OutputPanel::switchPage()
{
    const int kind = studioKindIndex(m_session->taskType());
    m_stack->setCurrentWidget(kind < 0 ? static_cast<QWidget*>(m_empty) : m_pages[size_t(kind)]);
}

} // namespace il::app
