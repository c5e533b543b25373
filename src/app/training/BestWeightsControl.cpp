#include "BestWeightsControl.h"

#include "NumberFormat.h"
#include "Session.h"

#include <QAction>
#include <QBoxLayout>
#include <QFrame>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QMenu>
#include <QPushButton>

#include <cmath>

namespace il::app {

BestWeightsControl::BestWeightsControl(Session* session, QMenu* menu, QAction* after,
                                       QBoxLayout* layout, QWidget* afterWidget, QObject* parent)
    : QObject(parent), m_session(session)
{
    m_action = new QAction("Revert to &Best Weights", menu);
    m_action->setObjectName("actionRevertToBest");
    const QList<QAction*> actions = menu->actions();
    const qsizetype at = actions.indexOf(after);
    menu->insertAction(at >= 0 && at + 1 < actions.size() ? actions[at + 1] : nullptr, m_action);

    m_bar = new QFrame;
    m_bar->setObjectName("revertFrame");
    m_bar->setFrameShape(QFrame::StyledPanel);
    auto* row = new QHBoxLayout(m_bar);
    row->setContentsMargins(6, 2, 6, 2);
    m_note = new QLabel;
    m_note->setObjectName("revertNoteLabel");
    m_note->setWordWrap(true);
    m_note->setTextFormat(Qt::PlainText);
    m_button = new QPushButton("Revert to &best weights");
    m_button->setObjectName("revertButton");
    row->addWidget(m_note, 1);
    row->addWidget(m_button);
    layout->insertWidget(layout->indexOf(afterWidget) + 1, m_bar);
    m_bar->hide();

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
    const bool worse = can && best.worseThanKept();
    if (worse) {
        const QString kind = best.validation ? "validation" : "training";
        const QString step = l.toString(static_cast<qlonglong>(best.step));
        m_note->setText(best.diverged || !std::isfinite(best.currentLoss)
                            ? QString("Training diverged. The best %1 loss was %2, at step %3.")
                                  .arg(kind, fmt::loss(best.loss), step)
                            : QString("The %1 loss rose from %2 at step %3 to %4 at step %5.")
                                  .arg(kind, fmt::loss(best.loss), step,
                                       fmt::loss(best.currentLoss),
                                       l.toString(static_cast<qlonglong>(best.currentStep))));
    }
    m_bar->setVisible(worse);
}

} // namespace il::app
