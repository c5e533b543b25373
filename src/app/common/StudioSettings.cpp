#include "StudioSettings.h"

#include <QDir>
#include <QFileInfo>
#include <QSettings>

#include <algorithm>

namespace il::app::settings {

namespace {

constexpr const char* kDeviceKey = "training/device";
constexpr const char* kTf32Key = "training/tf32";
constexpr const char* kThreadsKey = "training/threads";
constexpr const char* kRecentKey = "recentFiles";
constexpr const char* kWelcomeKey = "help/welcomeSeen";

QString modelDataKey(const QString& modelPath)
{
    return "modelData/" +
           QString::fromLatin1(QFileInfo(modelPath).absoluteFilePath().toUtf8().toBase64());
}

QString folderKey(Folder kind)
{
    switch (kind) {
    case Folder::Data:
        return "folders/data";
    case Folder::Models:
        return "folders/models";
    case Folder::Export:
        return "folders/export";
    }
    return "folders/data";
}

} // namespace

QString device()
{
    return QSettings().value(kDeviceKey, "cpu").toString() == "cuda" ? "cuda" : "cpu";
}

bool tf32()
{
    return QSettings().value(kTf32Key, false).toBool();
}

void setDevice(const QString& backend, bool tf32)
{
    QSettings s;
    s.setValue(kDeviceKey, backend);
    s.setValue(kTf32Key, tf32);
}

int cpuThreads()
{
    return std::max(0, QSettings().value(kThreadsKey, 0).toInt());
}

void setCpuThreads(int threads)
{
    QSettings().setValue(kThreadsKey, threads);
}

QString modelDataFile(const QString& modelPath)
{
    return QSettings().value(modelDataKey(modelPath)).toString();
}

void setModelDataFile(const QString& modelPath, const QString& dataPath)
{
    QSettings().setValue(modelDataKey(modelPath), dataPath);
}

QString folder(Folder kind, const QString& fallback)
{
    return QSettings()
        .value(folderKey(kind), fallback.isEmpty() ? QDir::homePath() : fallback)
        .toString();
}

void rememberFolderOf(Folder kind, const QString& file)
{
    const QFileInfo info(file);
    QSettings().setValue(folderKey(kind),
                         info.isDir() ? info.absoluteFilePath() : info.absolutePath());
}

QStringList recentFiles()
{
    return QSettings().value(kRecentKey).toStringList();
}

void setRecentFiles(const QStringList& files)
{
    if (files.isEmpty())
        QSettings().remove(kRecentKey);
    else
        QSettings().setValue(kRecentKey, files);
}

bool welcomeSeen()
{
    return QSettings().value(kWelcomeKey, false).toBool();
}

void setWelcomeSeen(bool seen)
{
    QSettings().setValue(kWelcomeKey, seen);
}

WindowLayout windowLayout()
{
    const QSettings s;
    return {s.value("window/geometry").toByteArray(), s.value("window/state").toByteArray(),
            s.value("window/mainSplitter").toByteArray(),
            s.value("window/workSplitter").toByteArray()};
}

void setWindowLayout(const WindowLayout& layout)
{
    QSettings s;
    s.setValue("window/geometry", layout.geometry);
    s.setValue("window/state", layout.state);
    s.setValue("window/mainSplitter", layout.mainSplitter);
    s.setValue("window/workSplitter", layout.workSplitter);
}

} // namespace il::app::settings
