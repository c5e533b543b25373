// Rows of the Training panel made in code rather than in its form: the CPU's thread count under
// the device (the CLI's --threads), and the step decay's period and factor under the schedule,
// shown while the schedule is step decay (the CLI's --step-every and --gamma). Edits go to the
// Session at once, as the panel's own do.
#pragma once

#include <QObject>

class QDoubleSpinBox;
class QFormLayout;
class QSpinBox;
class QWidget;

namespace il::app {

class Session;

class TrainingPanelExtras : public QObject {
    Q_OBJECT
public:
    // Adds the threads row after deviceRowWidget's row and the step decay row after
    // scheduleWidget's row of form (a layout of parent).
    TrainingPanelExtras(QFormLayout* form, QWidget* deviceRowWidget, QWidget* scheduleWidget,
                        Session* session, QWidget* parent);

private:
    void load();
    void edited();

    QFormLayout* m_form;
    Session* m_session;
    QSpinBox* m_threads;
    QSpinBox* m_stepEvery;
    QDoubleSpinBox* m_gamma;
    QWidget* m_stepRow;
    bool m_loading = false;
};

} // namespace il::app
