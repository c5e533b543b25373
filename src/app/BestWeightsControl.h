// Train > Revert to best weights, and the run bar's button for it, shown while the current
// weights are worse than the best ones kept (after a divergence, or a validation loss that rose
// from its best). Both call Session::revertToBest.
#pragma once

#include <QObject>

class QAction;
class QBoxLayout;
class QMenu;
class QPushButton;

namespace il::app {

class Session;

class BestWeightsControl : public QObject {
    Q_OBJECT
public:
    // Adds the action to menu after `after`, and the button to runLayout after `afterButton`.
    BestWeightsControl(Session* session, QMenu* menu, QAction* after, QBoxLayout* runLayout,
                       QWidget* afterButton, QObject* parent);

private:
    void update();

    Session* m_session;
    QAction* m_action;
    QPushButton* m_button;
};

} // namespace il::app
