// The Model panel: the layer stack as a table (type, size, setting, initialisation, output
// width, parameters), presets for the task, add / duplicate / remove / move, undo and redo, and
// the same stack as text in the layer language. An invalid stack explains itself inline (the
// engine's own message) and Start waits until it is fixed.
#pragma once

#include <QWidget>

#include <memory>

class QUndoStack;

namespace Ui {
class ModelPanel;
}

namespace il::app {

class LayerStackModel;
class Session;

class ModelPanel : public QWidget {
    Q_OBJECT
public:
    explicit ModelPanel(QWidget* parent = nullptr);
    ~ModelPanel() override;

    void setSession(Session* session);
    QUndoStack* undoStack() const;
    LayerStackModel* stackModel() const { return m_model; }

private:
    void reload();
    void stackChanged();
    // The preset the stack is, by name in the preset box ("Choose a preset…" when none).
    void showPreset();
    void updateNote(); // "the stack differs from the trained model", while it does
    void updateEnabled();
    int currentRow() const;
    void selectRow(int row);

    std::unique_ptr<Ui::ModelPanel> m_ui;
    Session* m_session = nullptr;
    LayerStackModel* m_model;
    bool m_loading = false;
};

} // namespace il::app
