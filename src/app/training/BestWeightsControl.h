// Train > Revert to Best Weights, and a bar under the run bar, shown while the current weights are
// worse than the best ones kept (after a divergence, or a loss that rose from its best), that says
// so in numbers and offers the way back. Both call Session::revertToBest. The bar takes a row of
// its own, so the run bar keeps its width in a small window.
#pragma once

#include <QObject>

class QAction;
class QBoxLayout;
class QFrame;
class QLabel;
class QMenu;
class QPushButton;
class QWidget;

namespace il::app {

class Session;

class BestWeightsControl : public QObject {
    Q_OBJECT
public:
    // Adds the action to menu after `after`, and the bar to layout after `afterWidget`.
    BestWeightsControl(Session* session, QMenu* menu, QAction* after, QBoxLayout* layout,
                       QWidget* afterWidget, QObject* parent);

private:
    void update();

    Session* m_session;
    QAction* m_action;
    QFrame* m_bar;
    QLabel* m_note;
    QPushButton* m_button;
};

} // namespace il::app
