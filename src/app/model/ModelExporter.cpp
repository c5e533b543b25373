#include "ModelExporter.h"

#include "Dialogs.h"
#include "LayerSpec.h"
#include "ModelExport.h"
#include "Session.h"
#include "StudioSettings.h"
#include "TaskType.h"

#include <QAction>
#include <QDir>
#include <QFileInfo>
#include <QMainWindow>
#include <QStatusBar>
#include <QThread>

#include <functional>
#include <memory>

namespace il::app {

ModelExporter::ModelExporter(QMainWindow* window, Session* session, std::function<bool()> save)
    : QObject(window), m_window(window), m_session(session), m_save(std::move(save))
{
    connect(this, &ModelExporter::exported, this, [this](const QString& path, const QString&) {
        m_window->statusBar()->showMessage(
            "Exported the model to " + QDir::toNativeSeparators(path), 15000);
    });
    connect(this, &ModelExporter::failed, this,
            [this](const QString& error) { Dialogs::warning(m_window, "Export Model", error); });
}

QString ModelExporter::refusal(Format format) const
{
    if (!m_session->hasModel()) return "There is no model to export yet: open data or a model.";
    const io::ExportFormat to =
        format == Format::Onnx ? io::ExportFormat::Onnx : io::ExportFormat::PyTorch;
    const QString name = format == Format::Onnx ? "ONNX" : "PyTorch";
    QString why;
    try {
        // The layers alone, as parseLayerSpec makes them: no memory for weights.
        why = io::exportRefusal(parseLayerSpec(m_session->specToSave().toStdString(),
                                               m_session->outputWidth(), m_session->vocab()),
                                to);
    } catch (const std::exception& e) {
        why = QString::fromUtf8(e.what());
    }
    // The file the export reads; a save first rewrites it, keeping an opened model's task.
    if (why.isEmpty() && format == Format::PyTorch && !m_session->modelPath().isEmpty())
        why = tasks::savedTaskProblem(m_session->modelPath());
    return why.isEmpty() ? why : QString("Cannot export this model to %1: %2").arg(name, why);
}

void ModelExporter::offer(QAction* action, Format format)
{
    const QString tip = action->toolTip();
    const auto update = [this, action, format, tip] { updateAction(action, format, tip); };
    for (auto signal : {&Session::modelChanged, &Session::datasetOpened, &Session::specChanged,
                        &Session::historyReset})
        connect(m_session, signal, action, update);
    connect(m_session, &Session::modelSaved, action, update);
    connect(m_session, &Session::modifiedChanged, action, update);
    connect(m_session, &Session::runStateChanged, action, update);
    update();
}

void ModelExporter::updateAction(QAction* action, Format format, const QString& tip)
{
    // Without a model the Export Model menu is disabled as a whole: nothing to explain.
    const QString why = m_session->hasModel() ? refusal(format) : QString();
    action->setEnabled(m_session->hasModel() && why.isEmpty());
    action->setToolTip(why.isEmpty() ? tip : why);
    action->setStatusTip(why);
}

void ModelExporter::start(Format format)
{
    if (m_busy || !m_session->hasModel()) return;
    if (const QString why = refusal(format); !why.isEmpty()) return emit failed(why);
    const QString model = m_session->modelPath();
    if (!model.isEmpty() && !m_session->isModified()) return exportSaved(format, model);
    // The export reads the file: what trained since (or a model never saved) is saved first.
    const auto answer = Dialogs::question(
        m_window, "Export Model",
        model.isEmpty() ? "The export reads the saved model file, and this model has none yet. "
                          "Save it first?"
                        : "The model has changed since it was saved, and the export reads the "
                          "saved file. Save it first?",
        QMessageBox::Save | QMessageBox::Cancel, QMessageBox::Save);
    if (answer != QMessageBox::Save) return;
    auto connection = std::make_shared<QMetaObject::Connection>();
    auto failure = std::make_shared<QMetaObject::Connection>();
    auto done = [connection, failure] {
        QObject::disconnect(*connection);
        QObject::disconnect(*failure);
    };
    *connection =
        connect(m_session, &Session::modelSaved, this, [this, format, done](const QString& path) {
            done();
            exportSaved(format, path);
        });
    *failure = connect(m_session, &Session::saveFailed, this, [done] { done(); });
    if (!m_save()) done();
}

void ModelExporter::exportSaved(Format format, const QString& model)
{
    const QFileInfo info(model);
    const QString base = QDir(settings::folder(settings::Folder::Export, info.path()))
                             .filePath(info.completeBaseName());
    QString target;
    if (format == Format::PyTorch) {
        // A file dialog opens an existing folder rather than returning it: offer a new name.
        QString folder = base + "-pytorch";
        for (int i = 2; QFileInfo::exists(folder) && i < 1000; ++i)
            folder = base + "-pytorch-" + QString::number(i);
        target = Dialogs::saveFileName(m_window, "Export to PyTorch: a folder for the module",
                                       folder, "Folders (*)");
    } else {
        target = Dialogs::saveFileName(m_window, "Export to ONNX", base + ".onnx",
                                       "ONNX models (*.onnx)");
    }
    if (target.isEmpty()) return;
    if (format == Format::Onnx && QFileInfo(target).suffix().isEmpty()) target += ".onnx";
    settings::rememberFolderOf(settings::Folder::Export, QFileInfo(target).path());

    // Off the GUI thread: the export opens and checks the model with the engine.
    m_busy = true;
    auto result = std::make_shared<io::IoResult>();
    auto summary = std::make_shared<QString>();
    QThread* thread = QThread::create([format, model, target, result, summary] {
        if (format == Format::PyTorch) {
            // As the CLI: a task metadata model.py could not read is refused before writing.
            if (const QString problem = tasks::savedTaskProblem(model); !problem.isEmpty()) {
                *result = io::IoResult::failure(problem);
                return;
            }
            QStringList written;
            *result = io::exportPyTorch(model, target, tasks::pytorchKinds(), &written);
            *summary = "model.py, train_more.py and model.safetensors";
        } else {
            *result = io::exportOnnx(model, target, tasks::onnxGraphFor,
                                     tasks::savedTaskInCurrentForm, summary.get());
        }
    });
    connect(thread, &QThread::finished, this, [this, thread, result, summary, target] {
        thread->deleteLater();
        m_busy = false;
        if (result->ok)
            emit exported(target, *summary);
        else
            emit failed(result->error);
    });
    thread->start();
}

} // namespace il::app
