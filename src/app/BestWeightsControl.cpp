#include "BestWeightsControl.h"

#include "NumberFormat.h"
#include "Session.h"

#include <QAction>
#include <QBoxLayout>
#include <QLocale>
#include <QMenu>
#include <QPushButton>

#include <cmath>

namespace il::app {

BestWeightsControl::BestWeightsControl(Session* session, QMenu* menu, QAction* after,
                                       QBoxLayout* runLayout, QWidget* afterButton, QObject* parent)
    : QObject(parent), m_session(session)
{
    m_action = new QAction("Revert to &Best Weights", menu);
    m_action->setObjectName("actionRevertToBest");
    const QList<QAction*> actions = menu->actions();
    const qsizetype at = actions.indexOf(after);
    menu->insertAction(at >= 0 && at + 1 < actions.size() ? actions[at + 1] : nullptr, m_action);

    m_button = new QPushButton("Revert to &best");
    m_button->setObjectName("revertButton");
    runLayout->insertWidget(runLayout->indexOf(afterButton) + 1, m_button);
    m_button->hide();

    connect(m_action, &QAction::triggered, session, &Session::revertToBest);
    connect(m_button, &QPushButton::clicked, session, &Session::revertToBest);
    connect(session, &Session::bestChanged, this, &BestWeightsControl::update);
    connect(session, &Session::runStateChanged, this, &BestWeightsControl::update);
    connect(session, &Session::historyReset, this, &BestWeightsControl::update);
    update();
}

void BestWeightsControl::update()
{
    const BestWeightsInfo& best = m_session->best();
    const bool can = m_session->canRevertToBest();
    const QLocale l;
    QString tip = "Go back to the weights with the lowest validation loss (training loss when "
                  "there is no validation) seen in this model's training. Nothing is kept yet.";
    if (best.kept()) {
        const QString kind = best.validation ? "validation" : "training";
        tip = QString("Go back to the weights of step %1, the best %2 loss seen (%3)")
                  .arg(l.toString(static_cast<qlonglong>(best.step)), kind, fmt::loss(best.loss));
        if (best.diverged)
            tip += "; the run since diverged (a non-finite loss)";
        else if (std::isfinite(best.currentLoss) && best.currentStep > best.step)
            tip += QString("; at step %1 it is %2")
                       .arg(l.toString(static_cast<qlonglong>(best.currentStep)),
                            fmt::loss(best.currentLoss));
        tip += ". Continue then trains on from there; the model is unsaved until you save it.";
    }
    m_action->setEnabled(can);
    m_action->setToolTip(tip);
    m_action->setStatusTip(tip);
    m_button->setToolTip(tip);
    m_button->setVisible(can && best.worseThanKept());
}

} // namespace il::app
