// The Model panel: the layer stack as a table (type, size, setting, initialisation, output
// width, parameters), presets for the task, add / duplicate / remove / move, undo and redo, and
// the same stack as text in the layer language. An invalid stack explains itself inline (the
// engine's own message) and Start waits until it is fixed; so does layer text that does not
// parse (textError), while the stack keeps its last valid layers. An output width written in the
// text is taken out (it comes from the data) with a note under the text that says so.
#pragma once

#include "LayerStack.h"

#include <QWidget>

#include <memory>

class QTimer;
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
    // Why the layer text as typed cannot be read (the engine's message, naming the item), or ""
    // when it can. Start waits while it is not empty.
    QString textError() const { return m_textError; }
    // Takes the typed layer text as the stack, as Enter does (Start calls it, so that what runs
    // is what the text says); false, with textError set and shown, when it does not parse.
    bool applyText();

signals:
    void textErrorChanged();

private:
    void reload();
    void stackChanged();
    // The preset the stack is, by name in the preset box ("Choose a preset…" when none).
    void showPreset();
    void updateNote(); // "the stack differs from the trained model", while it does
    void updateEnabled();
    // The text's error ("" none) for Start; shown under the table when show is true, or while
    // one is shown already.
    void setTextError(const QString& error, bool show);
    // The text as edited now: whether it can be read (Start follows it), and the notes.
    void textEdited();
    // The note for an output width the text gave (item: the output layer as typed), or "".
    QString outputWidthNote(const LayerRow& typed) const;
    int currentRow() const;
    void selectRow(int row);

    std::unique_ptr<Ui::ModelPanel> m_ui;
    Session* m_session = nullptr;
    LayerStackModel* m_model;
    bool m_loading = false;
    QString m_textError;
    bool m_textErrorShown = false; // the error box shows m_textError
    QTimer* m_textCheck;           // a pause in typing unreadable text: show why
};

} // namespace il::app
