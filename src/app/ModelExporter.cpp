#include "ModelExporter.h"

#include "Dialogs.h"
#include "ModelExport.h"
#include "Session.h"
#include "StudioSettings.h"
#include "TaskType.h"

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

void ModelExporter::start(Format format)
{
    if (m_busy || !m_session->hasModel()) return;
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
            *result = io::exportPyTorch(model, target, &written);
            *summary = "model.py, train_more.py and model.safetensors";
        } else {
            *result = io::exportOnnx(model, target, summary.get());
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
