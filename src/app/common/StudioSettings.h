// The studio's remembered settings, typed: the one place that knows the QSettings keys. Each
// call reads or writes the application's QSettings (organisation and application names as set
// in main.cpp, or by a test).
#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

namespace il::app::settings {

// The device the user chose for training ("cpu" or "cuda") and whether TF32 is wanted.
QString device();
bool tf32();
void setDevice(const QString& backend, bool tf32);
// The CPU threads a run uses (0: one per core).
int cpuThreads();
void setCpuThreads(int threads);

// The data file a model was trained on, by the model's path ("" when not known).
QString modelDataFile(const QString& modelPath);
void setModelDataFile(const QString& modelPath, const QString& dataPath);

// The folder the last file dialog of a kind was in (until then: fallback, or the home folder when
// it is empty).
enum class Folder { Data, Models, Export };
QString folder(Folder kind, const QString& fallback = {});
// Remembers the folder that holds file (or, when it is a folder, the folder itself).
void rememberFolderOf(Folder kind, const QString& file);

// Recently opened files, most recent first.
QStringList recentFiles();
void setRecentFiles(const QStringList& files);

// Whether the welcome page has been shown once (it shows by itself on the first start only).
bool welcomeSeen();
void setWelcomeSeen(bool seen);

// The main window's geometry, dock state and splitter positions.
struct WindowLayout {
    QByteArray geometry, state, mainSplitter, workSplitter;
};
WindowLayout windowLayout();
void setWindowLayout(const WindowLayout& layout);

} // namespace il::app::settings
