// File > Export Model: the saved model as a PyTorch module (a folder: model.py, train_more.py,
// model.safetensors) or an ONNX graph (io/ModelExport.h does the work). The export reads the
// model file, so a model with training no file holds is saved first (the user is asked); the
// export itself runs off the GUI thread, and its outcome goes to the status bar (exported) or a
// warning naming what is wrong (failed). An export that would refuse the model is not offered:
// its action is disabled before any dialog, its tool tip and status tip saying why.
#pragma once

#include <QObject>
#include <QString>

#include <functional>

class QAction;
class QMainWindow;

namespace il::app {

class Session;

class ModelExporter : public QObject {
    Q_OBJECT
public:
    enum class Format { PyTorch, Onnx };
    // save: saves the model as File > Save Model does (false: cancelled or failed at once).
    ModelExporter(QMainWindow* window, Session* session, std::function<bool()> save);

    // Asks where (and to save first, when needed), then exports. A refused model (refusal) is
    // refused before any dialog.
    void start(Format format);
    // Why exporting the model now to `format` would be refused, one line; "" when it would not.
    // The export's own checks, asked before it runs: io::exportRefusal on the stack the save
    // writes (Session::specToSave, built without weights), and for PyTorch
    // tasks::savedTaskProblem on the model's file.
    QString refusal(Format format) const;
    // Keeps `action` enabled only while refusal(format) is "" (and there is a model), the
    // reason in its tool tip and status tip, updated as the model, its stack or its file change.
    void offer(QAction* action, Format format);
    bool busy() const { return m_busy; }

signals:
    // path: the folder or file written; summary: what it holds (for ONNX its inputs/outputs).
    void exported(const QString& path, const QString& summary);
    void failed(const QString& error);

private:
    void exportSaved(Format format, const QString& model);
    void updateAction(QAction* action, Format format, const QString& tip);

    QMainWindow* m_window;
    Session* m_session;
    std::function<bool()> m_save;
    bool m_busy = false;
};

} // namespace il::app
