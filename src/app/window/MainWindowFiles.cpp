// MainWindow: files. Opening data and models (the dialogs, drops, recent files, the samples),
// saving models, and asking about unsaved work before it is lost.
#include "MainWindow.h"
#include "ui_MainWindow.h"

#include "DatasetPanel.h"
#include "Dialogs.h"
#include "RaceWindow.h"
#include "Samples.h"
#include "Session.h"
#include "StudioSettings.h"
#include "UnsavedModelGuard.h"

#include <QCloseEvent>
#include <QDir>
#include <QFileInfo>
#include <QMimeData>

namespace il::app {

namespace {

constexpr int kMaxRecent = 8;
const char* kModelFilter = "Iron Learn models (*.safetensors);;All files (*)";

bool isModelFile(const QString& path)
{
    return path.endsWith(".safetensors", Qt::CaseInsensitive);
}

} // namespace

QString MainWindow::displayName(const QString& path)
{
    const QString name = QFileInfo(path).fileName();
    return path.startsWith(":/") ? name + " (sample)" : name;
}

bool MainWindow::openFile(const QString& given, const QString& missing)
{
    // While training nothing opens, so there is nothing to ask: the session says why.
    if (m_session->runState() != Session::RunState::Idle) return openFileNow(given, missing);
    // Read and check the file before asking to replace anything: a file that will not open
    // says why and leaves the trained model alone.
    const QString sample = io::resolveSampleReference(given);
    const QString path = sample.isEmpty() ? given : sample;
    if (isModelFile(path)) {
        if (!m_session->checkModel(path)) return false; // modelFailed shows why
    } else if (!m_session->checkDataset(path, missing)) {
        m_ui->setupTabWidget->setCurrentWidget(m_dataPanel);
        return false;
    }
    const auto answer = m_guard->ask("Opening " + displayName(path),
                                     [this, path, missing] { openFileNow(path, missing); });
    if (answer != UnsavedModelGuard::Answer::Proceed) {
        if (answer == UnsavedModelGuard::Answer::Cancelled) m_session->forgetCheckedDataset();
        return answer == UnsavedModelGuard::Answer::AfterSave;
    }
    return openFileNow(path, missing);
}

bool MainWindow::openFileNow(const QString& given, const QString& missing)
{
    // A sample named the way earlier versions stored it (":/samples/iris.csv", in recent files)
    // opens from where the samples are now; an unknown one stays as given, to say so.
    const QString sample = io::resolveSampleReference(given);
    const QString path = sample.isEmpty() ? given : sample;
    if (isModelFile(path)) return m_session->openModel(path); // answered by modelOpened/Failed
    const bool ok = m_session->openDataset(path, missing);
    if (!ok && m_session->runState() == Session::RunState::Idle) // a file error, on the Data tab
        m_ui->setupTabWidget->setCurrentWidget(m_dataPanel);
    if (ok && !path.startsWith(":/") && !io::isSamplePath(path))
        settings::rememberFolderOf(settings::Folder::Data, path);
    updateTitle();
    return ok;
}

void MainWindow::openDatasetDialog()
{
    const QString dir = settings::folder(settings::Folder::Data);
    const QString path = Dialogs::openFileName(this, "Open Dataset", dir, tasks::dataFileFilter());
    if (!path.isEmpty()) openFile(path);
}

void MainWindow::openModelDialog()
{
    const QString dir = settings::folder(settings::Folder::Models);
    const QString path = Dialogs::openFileName(this, "Open Model", dir, kModelFilter);
    if (!path.isEmpty()) openFile(path);
}

bool MainWindow::saveModel()
{
    if (m_session->modelPath().isEmpty()) return saveModelAs();
    return m_session->saveModel(m_session->modelPath());
}

bool MainWindow::saveModelAs()
{
    const QString dir = settings::folder(settings::Folder::Models);
    QString name = m_session->modelPath();
    if (name.isEmpty())
        name = QDir(dir).filePath(QFileInfo(m_session->dataPath()).completeBaseName() +
                                  ".safetensors");
    const QString path = Dialogs::saveFileName(this, "Save Model", name, kModelFilter);
    if (path.isEmpty()) return false;
    settings::rememberFolderOf(settings::Folder::Models, path);
    return m_session->saveModel(path);
}

MainWindow::CloseAnswer MainWindow::maybeSave()
{
    const bool training = m_session->runState() != Session::RunState::Idle;
    if (!training && !m_session->hasUnsavedTraining()) return {true, {}};
    const bool wasPaused = m_session->runState() == Session::RunState::Paused;
    if (training) m_session->setPaused(true);
    const auto answer = Dialogs::question(
        this, "Save the model?",
        training ? "Training is still running. Save the model before closing?"
                 : "The model has trained since it was last saved. Save it before closing?",
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    auto resume = [&] {
        if (training && !wasPaused) m_session->setPaused(false);
        return CloseAnswer{false, {}};
    };
    if (answer == QMessageBox::Cancel) return resume();
    QString path;
    if (answer == QMessageBox::Save) {
        path = m_session->modelPath();
        if (path.isEmpty()) {
            const QString dir = settings::folder(settings::Folder::Models);
            path = Dialogs::saveFileName(
                this, "Save Model",
                QDir(dir).filePath(QFileInfo(m_session->dataPath()).completeBaseName() +
                                   ".safetensors"),
                kModelFilter);
            if (path.isEmpty()) return resume();
        }
    }
    m_session->stop(); // within one step; a save runs between two steps or after the last
    return {true, path};
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    // Saving happens on the worker: the window stays open until modelSaved closes it again.
    if (m_closing == Closing::No) {
        const CloseAnswer answer = maybeSave();
        if (!answer.close) return event->ignore();
        if (!answer.saveTo.isEmpty()) {
            m_closing = Closing::Saving;
            if (!m_session->saveModel(answer.saveTo)) { // saveFailed said why
                m_closing = Closing::No;
                return event->ignore();
            }
        }
    }
    if (m_closing == Closing::Saving) return event->ignore();
    m_closing = Closing::No;
    writeSettings();
    if (m_race) m_race->close(); // stops a race
    event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    if (event->mimeData()->hasUrls() && event->mimeData()->urls().value(0).isLocalFile())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    const QString path = event->mimeData()->urls().value(0).toLocalFile();
    if (path.isEmpty()) return;
    event->acceptProposedAction();
    openFile(path);
}

void MainWindow::addRecent(const QString& path)
{
    if (path.isEmpty()) return;
    QStringList recent = settings::recentFiles();
    const QString entry = path.startsWith(":/") ? path : QFileInfo(path).absoluteFilePath();
    recent.removeAll(entry);
    recent.prepend(entry);
    settings::setRecentFiles(recent.mid(0, kMaxRecent));
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu()
{
    m_ui->recentMenu->clear();
    const QStringList recent = settings::recentFiles();
    for (const QString& path : recent) {
        QAction* a = m_ui->recentMenu->addAction(displayName(path));
        a->setToolTip(path);
        a->setData(path);
        connect(a, &QAction::triggered, this, [this, path] { openFile(path); });
    }
    if (!recent.isEmpty()) {
        m_ui->recentMenu->addSeparator();
        m_ui->recentMenu->addAction("Clear", this, [this] {
            settings::setRecentFiles({});
            rebuildRecentMenu();
        });
    }
    m_ui->recentMenu->setEnabled(!recent.isEmpty());
}

void MainWindow::buildSamplesMenu()
{
    const QStringList files = io::sampleFiles();
    for (const tasks::TaskType* type : tasks::taskTypes()) {
        QAction* section = m_ui->samplesMenu->addSection(type->title());
        section->setObjectName("samplesSection" + type->title());
        for (const QString& file : files) {
            if (!type->supportsFile(file)) continue;
            QAction* a = m_ui->samplesMenu->addAction(file);
            a->setObjectName("actionSample_" + QFileInfo(file).completeBaseName());
            const QString path = io::samplePath(file);
            a->setData(path);
            connect(a, &QAction::triggered, this, [this, path] { openFile(path); });
        }
    }
    if (files.isEmpty()) {
        QAction* none = m_ui->samplesMenu->addAction("(no samples found)");
        none->setToolTip(io::samplesDirectoryProblem());
        none->setEnabled(false);
    }
}

} // namespace il::app
