// The Training panel: the hyperparameters of the next run (backend, optimizer, learning rate and
// schedule, budget, batch size, validation split, early stopping, clipping, weight decay, label
// smoothing, seed), each with a tooltip explaining its idea. Edits go to the Session's
// TrainerConfig at once, so the Charts panel redraws the planned learning-rate curve.
#pragma once

#include <QWidget>

#include <memory>

namespace Ui {
class TrainingPanel;
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
    void edited();
    void validationEdited();
    void updatePlan();
    void updateEnabled();

    std::unique_ptr<Ui::TrainingPanel> m_ui;
    Session* m_session = nullptr;
    bool m_loading = false;
};

} // namespace il::app
