// The Training panel: the hyperparameters of the next run (device, optimizer, learning rate and
// schedule, the hash grid tables' own rate (for a stack with one), budget, batch size, validation
// split, early stopping, clipping, weight decay, label smoothing, balanced class weights (for a
// classification table), seed), each with a tooltip explaining its idea. Edits go to the
// Session's TrainerConfig at once, so the Charts panel redraws the planned learning-rate curve.
// The device list shows the CPU and the NVIDIA GPU; when CUDA is unavailable its item is
// disabled and a note under the list (and the item's tooltip) says why.
#pragma once

#include <QWidget>

#include <memory>

namespace Ui {
class TrainingPanel;
}

namespace il {
class OptimizerConfig;
}

namespace il::app {

class Session;

class TrainingPanel : public QWidget {
    Q_OBJECT
public:
    explicit TrainingPanel(QWidget* parent = nullptr);
    ~TrainingPanel() override;

    void setSession(Session* session);

private:
    void load();
    void loadDevices(); // the list: what there is (CUDA: available, or why not)
    void showDevice();  // the choice
    void deviceEdited();
    void tf32Edited(bool on);
    void edited();
    // The weight decay box shows the setting of that name, when the optimizer has one.
    void showWeightDecay(const OptimizerConfig& optimizer);
    // The grid tables' learning rate, shown when the stack has a hash grid.
    void showGridLr();
    void validationEdited();
    void foldsEdited();
    void showFolds(); // the cross-validation row: tables only, and what Automatic means here
    void updatePlan();
    // The budget (number and unit) as the configuration has it.
    void showBudget();
    void updateEnabled();

    std::unique_ptr<Ui::TrainingPanel> m_ui;
    Session* m_session = nullptr;
    bool m_loading = false;
    QString m_deviceToolTip; // the device list's own tooltip, from the form
};

} // namespace il::app
