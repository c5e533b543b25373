// Which data file a model was trained on, saved in its task metadata under "data_file", so that
// a model trained by the CLI opens in the studio with its data: the absolute path, the size and
// the SHA-256 of the bytes read. A file found at that path (or, for a folder that moved, under
// the same name beside the model file) is the model's data only when its size and hash match;
// an edited file is reported, never silently taken for the data the model saw.
#pragma once

#include "IoResult.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>

#include <optional>

namespace il::io {

inline constexpr const char* kDataFileField = "data_file";

struct DataFileRecord {
    QString path;      // absolute, as it was when the model was trained
    qint64 size = 0;   // bytes
    QByteArray sha256; // lower-case hex

    // The record of BYTES read from PATH (made absolute).
    static DataFileRecord of(const QString& path, const QByteArray& bytes);
    // The record in a model's task metadata; nullopt when there is none or it is malformed (a
    // record is a convenience: a bad one never stops a model from opening).
    static std::optional<DataFileRecord> fromTask(const QJsonObject& task);
    QJsonObject toJson() const;
    // TASK with this record under kDataFileField.
    QJsonObject addTo(QJsonObject task) const;
    // True when BYTES are the recorded file's content.
    bool matches(const QByteArray& bytes) const;
};

// The largest data file the studio and the CLI read (the whole file is read into memory).
inline constexpr qint64 kMaxDataFileBytes = qint64(4) << 30;

// The bytes of the data file at PATH, for the studio and the CLI alike. Refused, with a message
// that names the file as shownAs (PATH when empty): a file that cannot be opened or read, a
// directory, a file larger than kMaxDataFileBytes (before any of it is read).
IoResult readDataFile(const QString& path, QByteArray& bytes, const QString& shownAs = {});

// Where the recorded data is now, for the model saved at MODELPATH.
struct FoundDataFile {
    QString path;     // the file to open ("" when none fits)
    QByteArray bytes; // its content, when found
    QString problem;  // why no file was taken ("" when one was)
};
// Looks for RECORD's file at its path, then under its name in MODELPATH's folder, and takes the
// first whose size and hash match. A file that exists but differs is named in `problem`, with
// what differs, so the caller can say why the model opened without its data.
FoundDataFile findRecordedDataFile(const DataFileRecord& record, const QString& modelPath);

} // namespace il::io
