#include "DataFileRecord.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonValue>
#include <QLocale>

namespace il::io {

namespace {

QByteArray sha256Hex(const QByteArray& bytes)
{
    return QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex();
}

bool isHexDigest(const QByteArray& s)
{
    if (s.size() != 64) return false;
    for (char c : s)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    return true;
}

} // namespace

DataFileRecord DataFileRecord::of(const QString& path, const QByteArray& bytes)
{
    DataFileRecord r;
    r.path = QFileInfo(path).absoluteFilePath();
    r.size = bytes.size();
    r.sha256 = sha256Hex(bytes);
    return r;
}

std::optional<DataFileRecord> DataFileRecord::fromTask(const QJsonObject& task)
{
    const QJsonValue v = task.value(kDataFileField);
    if (!v.isObject()) return std::nullopt;
    const QJsonObject o = v.toObject();
    DataFileRecord r;
    r.path = o.value("path").toString();
    const double size = o.value("size").toDouble(-1);
    r.sha256 = o.value("sha256").toString().toLatin1();
    // Sizes up to 2^53 are exact in a JSON double; the CLI reads at most 4 GiB.
    if (r.path.isEmpty() || !(size >= 0 && size <= 9007199254740992.0) ||
        size != static_cast<double>(static_cast<qint64>(size)) || !isHexDigest(r.sha256))
        return std::nullopt;
    r.size = static_cast<qint64>(size);
    return r;
}

QJsonObject DataFileRecord::toJson() const
{
    QJsonObject o;
    o["path"] = path;
    o["size"] = static_cast<double>(size);
    o["sha256"] = QString::fromLatin1(sha256);
    return o;
}

QJsonObject DataFileRecord::addTo(QJsonObject task) const
{
    task[kDataFileField] = toJson();
    return task;
}

bool DataFileRecord::matches(const QByteArray& bytes) const
{
    return bytes.size() == size && sha256Hex(bytes) == sha256;
}

IoResult readDataFile(const QString& path, QByteArray& bytes, const QString& shownAs)
{
    const QString name = shownAs.isEmpty() ? path : shownAs;
    if (QFileInfo(path).isDir())
        return IoResult::failure(name + ": is a directory, not a data file");
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return IoResult::failure(name + ": cannot open: " + f.errorString());
    if (f.size() > kMaxDataFileBytes)
        return IoResult::failure(QStringLiteral("%1: %2 bytes, larger than 4 GiB; too big to "
                                                "train on")
                                     .arg(name, QLocale().toString(f.size())));
    bytes = f.readAll();
    if (f.error() != QFileDevice::NoError)
        return IoResult::failure(name + ": cannot read: " + f.errorString());
    return {};
}

FoundDataFile findRecordedDataFile(const DataFileRecord& record, const QString& modelPath)
{
    FoundDataFile found;
    QStringList candidates{record.path};
    const QString beside =
        QFileInfo(modelPath).absoluteDir().filePath(QFileInfo(record.path).fileName());
    if (QFileInfo(beside).absoluteFilePath() != QFileInfo(record.path).absoluteFilePath())
        candidates << beside;
    for (const QString& candidate : candidates) {
        QFile f(candidate);
        if (!f.exists()) continue;
        const qint64 size = f.size();
        if (size != record.size) {
            if (found.problem.isEmpty())
                found.problem = QString("%1 has changed since the model was trained (now %2 "
                                        "bytes, %3 then)")
                                    .arg(QDir::toNativeSeparators(candidate),
                                         QLocale().toString(size), QLocale().toString(record.size));
            continue;
        }
        if (!f.open(QIODevice::ReadOnly)) {
            if (found.problem.isEmpty())
                found.problem = QString("%1: cannot open: %2")
                                    .arg(QDir::toNativeSeparators(candidate), f.errorString());
            continue;
        }
        QByteArray bytes = f.readAll();
        if (!record.matches(bytes)) {
            if (found.problem.isEmpty())
                found.problem =
                    QString("%1 has changed since the model was trained (same size, other content)")
                        .arg(QDir::toNativeSeparators(candidate));
            continue;
        }
        found.path = candidate;
        found.bytes = std::move(bytes);
        found.problem.clear();
        return found;
    }
    if (found.problem.isEmpty())
        found.problem = QString("%1 is no longer there").arg(QDir::toNativeSeparators(record.path));
    return found;
}

} // namespace il::io
