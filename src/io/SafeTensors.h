// Reading and writing the safetensors format (https://github.com/huggingface/safetensors):
//
//   [ u64 little-endian N ][ N bytes of JSON header ][ data buffer ]
//
// The header maps each tensor name to {"dtype", "shape", "data_offsets": [begin, end]} with
// offsets relative to the start of the data buffer, plus an optional "__metadata__" object of
// string values. We write F32 only, tensors contiguous and in the order given, and pad the
// header with spaces so the data buffer starts 8-byte aligned (readers may then map it).
//
// Files come from users and the internet, so the reader trusts nothing: every length, offset
// and shape is checked before a byte of data is touched, and a bad file is refused with one
// line naming the file and the tensor or field at fault. Nothing here throws or aborts.
#pragma once

#include "IoResult.h"

#include <QByteArray>
#include <QMap>
#include <QString>

#include <cstdint>
#include <string>
#include <vector>

namespace il::io {

// The outcome of an io operation: ok, or a one-line message for the user.
struct StoredTensor {
    std::string name;
    std::vector<int64_t> shape; // any rank; [] is a scalar (one element)
    std::vector<float> data;    // row-major, product(shape) floats (empty after a header read)

    int64_t elementCount() const;
};

struct SafeTensorsFile {
    std::vector<StoredTensor> tensors; // reading: in data-buffer order
    QMap<QString, QString> metadata;   // "__metadata__"

    const StoredTensor* find(const std::string& name) const;
};

// The largest header we accept. Real headers are kilobytes; this bounds what a hostile file
// can make us allocate before anything has been validated.
inline constexpr qint64 kMaxHeaderBytes = 100 * 1000 * 1000;

// Serialises to the bytes of a file. Fails (without output) if a tensor's data does not match
// its shape, a name is empty, duplicated or "__metadata__".
IoResult encodeSafeTensors(const SafeTensorsFile& file, QByteArray& out);

// Parses the bytes of a file. `source` names the file in error messages.
IoResult decodeSafeTensors(const QByteArray& bytes, const QString& source, SafeTensorsFile& out);

// Writes atomically (AtomicFile: a temporary file in the same directory, synced and renamed
// over the target once complete), so an interrupted or failed save leaves any previous file
// untouched and a save that did not reach the disk reports why.
IoResult writeSafeTensors(const QString& path, const SafeTensorsFile& file);

// Reads and validates a whole file.
IoResult readSafeTensors(const QString& path, SafeTensorsFile& out);

// Validates the header against the file size and fills names, shapes and metadata without
// reading tensor data (for showing what a model is without loading its weights).
IoResult readSafeTensorsHeader(const QString& path, SafeTensorsFile& out);

// "[16, 3]" for messages.
QString shapeToString(const std::vector<int64_t>& shape);

} // namespace il::io
