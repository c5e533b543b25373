#include "Samples.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

namespace il::io {

namespace {

const QString kReference = QStringLiteral(":sample/");
const QString kLegacyResource = QStringLiteral(":/samples/");

QString executableDirectory()
{
    if (QCoreApplication::instance()) return QCoreApplication::applicationDirPath();
    return QFileInfo(QStringLiteral("/proc/self/exe")).canonicalFilePath().section('/', 0, -2);
}

bool hasSamples(const QString& dir)
{
    return !dir.isEmpty() && QFileInfo(dir).isDir() && !QDir(dir).isEmpty(QDir::Files);
}

} // namespace

QString samplesDirectory()
{
    const QString env = qEnvironmentVariable("IRONLEARN_SAMPLES_DIR");
    if (!env.isEmpty()) return hasSamples(env) ? QDir(env).absolutePath() : QString();
    const QString exe = executableDirectory();
    if (!exe.isEmpty()) {
        const QString installed =
            QDir::cleanPath(exe + QStringLiteral("/../share/ironlearn/samples"));
        if (hasSamples(installed)) return installed;
    }
    if (hasSamples(QStringLiteral(":/samples"))) return QStringLiteral(":/samples");
#ifdef IRONLEARN_SOURCE_SAMPLES_DIR
    if (hasSamples(QStringLiteral(IRONLEARN_SOURCE_SAMPLES_DIR)))
        return QStringLiteral(IRONLEARN_SOURCE_SAMPLES_DIR);
#endif
    return {};
}

QString samplesDirectoryProblem()
{
    if (!samplesDirectory().isEmpty()) return {};
    const QString env = qEnvironmentVariable("IRONLEARN_SAMPLES_DIR");
    if (!env.isEmpty())
        return QStringLiteral("no samples directory: IRONLEARN_SAMPLES_DIR names %1, which holds "
                              "no files")
            .arg(env);
    return QStringLiteral("no samples directory: %1 has none (install the ironlearn-samples "
                          "package, or set IRONLEARN_SAMPLES_DIR)")
        .arg(
            QDir::cleanPath(executableDirectory() + QStringLiteral("/../share/ironlearn/samples")));
}

QStringList sampleFiles()
{
    const QString dir = samplesDirectory();
    if (dir.isEmpty()) return {};
    QStringList files = QDir(dir).entryList(QDir::Files, QDir::Name);
    files.removeAll(QStringLiteral("SOURCES.md")); // where they come from, not a dataset
    return files;
}

QString samplePath(const QString& file)
{
    if (file.isEmpty() || file.contains('/') || file == QStringLiteral("SOURCES.md")) return {};
    const QString dir = samplesDirectory();
    if (dir.isEmpty()) return {};
    const QString path = dir + '/' + file;
    if (QFileInfo(path).isFile()) return path;
    // "iris" for iris.csv: a name without its suffix, when exactly one sample has it.
    QString only;
    for (const QString& f : sampleFiles()) {
        if (QFileInfo(f).completeBaseName() != file) continue;
        if (!only.isEmpty()) return {};
        only = dir + '/' + f;
    }
    return only;
}

QString resolveSampleReference(const QString& path)
{
    if (path.startsWith(kReference)) return samplePath(path.mid(kReference.size()));
    if (path.startsWith(kLegacyResource) && !QFileInfo::exists(path))
        return samplePath(path.mid(kLegacyResource.size()));
    return path;
}

bool isSamplePath(const QString& path)
{
    if (path.startsWith(kReference) || path.startsWith(kLegacyResource)) return true;
    const QString dir = samplesDirectory();
    return !dir.isEmpty() && QFileInfo(path).absolutePath() == QFileInfo(dir).absoluteFilePath();
}

} // namespace il::io
