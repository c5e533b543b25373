#include "SafeTensors.h"
#include "AtomicFile.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>
#include <QSet>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

// The format is little-endian; so are all the machines we build for. A big-endian port would
// need to byte-swap the header length and every float.
static_assert(std::endian::native == std::endian::little, "safetensors io assumes little-endian");

namespace il::io {

namespace {

// Largest integer a JSON number (a double) holds exactly; offsets and dims beyond it are refused
// rather than silently rounded.
constexpr double kMaxExactInteger = 9007199254740992.0; // 2^53

// A tensor name as it appears in a message: quoted, control characters escaped and long names
// shortened, so a hostile name cannot break the one-line message.
QString quotedName(const QString& name)
{
    QString out = QStringLiteral("\"");
    const qsizetype limit = 80;
    for (qsizetype i = 0; i < name.size() && i < limit; ++i) {
        const QChar c = name.at(i);
        if (c == u'"' || c == u'\\')
            out += u'\\' + QString(c);
        else if (c.unicode() < 0x20 || c.unicode() == 0x7f)
            out += QStringLiteral("\\x%1").arg(c.unicode(), 2, 16, QLatin1Char('0'));
        else
            out += c;
    }
    if (name.size() > limit) out += QStringLiteral("...");
    return out + u'"';
}

QString quotedName(const std::string& name)
{
    return quotedName(QString::fromStdString(name));
}

// A JSON string literal, escaped by Qt's own writer.
QByteArray jsonString(const QString& s)
{
    const QByteArray a = QJsonDocument(QJsonArray{s}).toJson(QJsonDocument::Compact);
    return a.mid(1, a.size() - 2); // strip [ ]
}

// Where the bytes of a file come from: a QFile or an in-memory array.
class ByteSource {
public:
    virtual ~ByteSource() = default;
    virtual qint64 size() const = 0;
    virtual bool read(qint64 offset, char* dst, qint64 bytes) = 0;
};

class ArraySource : public ByteSource {
public:
    explicit ArraySource(const QByteArray& a) : m_a(a) {}
    qint64 size() const override { return m_a.size(); }
    bool read(qint64 offset, char* dst, qint64 bytes) override
    {
        if (offset < 0 || bytes < 0 || offset + bytes > m_a.size()) return false;
        if (bytes > 0) std::memcpy(dst, m_a.constData() + offset, static_cast<size_t>(bytes));
        return true;
    }

private:
    const QByteArray& m_a;
};

class FileSource : public ByteSource {
public:
    explicit FileSource(QFile& f) : m_f(f), m_size(f.size()) {}
    qint64 size() const override { return m_size; }
    bool read(qint64 offset, char* dst, qint64 bytes) override
    {
        if (!m_f.seek(offset)) return false;
        qint64 done = 0;
        while (done < bytes) {
            const qint64 n = m_f.read(dst + done, bytes - done);
            if (n <= 0) return false;
            done += n;
        }
        return true;
    }

private:
    QFile& m_f;
    qint64 m_size;
};

struct Entry {
    std::string name;
    std::vector<int64_t> shape;
    int64_t begin = 0;
    int64_t end = 0;
};

// A JSON number that must be an exact non-negative integer. Returns an empty string if it is,
// else what is wrong with it.
QString readCount(const QJsonValue& v, int64_t& out)
{
    if (!v.isDouble()) return QStringLiteral("is not a number");
    const double d = v.toDouble();
    if (d < 0) return QStringLiteral("is negative (%1)").arg(d);
    if (d > kMaxExactInteger || std::floor(d) != d)
        return QStringLiteral("is not an integer of at most 2^53 (%1)").arg(d);
    out = static_cast<int64_t>(d);
    return {};
}

QString knownDtypeOrEmpty(const QString& dtype)
{
    static const QSet<QString> known = {"BOOL", "U8",  "I8",  "F8_E5M2", "F8_E4M3",
                                        "I16",  "U16", "F16", "BF16",    "I32",
                                        "U32",  "F32", "F64", "I64",     "U64"};
    return known.contains(dtype) ? dtype : QString();
}

// Parses and checks one tensor entry of the header.
QString parseEntry(const QString& key, const QJsonValue& value, int64_t dataSize, Entry& e)
{
    const QString who = QStringLiteral("tensor %1").arg(quotedName(key));
    if (key.isEmpty()) return QStringLiteral("a tensor has an empty name");
    if (!value.isObject()) return who + QStringLiteral(": entry is not a JSON object");
    const QJsonObject o = value.toObject();
    e.name = key.toStdString();

    const QJsonValue dtype = o.value(QLatin1String("dtype"));
    if (!dtype.isString()) return who + QStringLiteral(": \"dtype\" is missing or not a string");
    if (dtype.toString() != QLatin1String("F32")) {
        if (knownDtypeOrEmpty(dtype.toString()).isEmpty())
            return who + QStringLiteral(": unknown dtype %1").arg(quotedName(dtype.toString()));
        return who + QStringLiteral(": dtype %1 is not supported (this build reads F32 only)")
                         .arg(dtype.toString());
    }

    const QJsonValue shape = o.value(QLatin1String("shape"));
    if (!shape.isArray()) return who + QStringLiteral(": \"shape\" is missing or not an array");
    int64_t elements = 1;
    const QJsonArray dims = shape.toArray();
    for (qsizetype i = 0; i < dims.size(); ++i) {
        int64_t d = 0;
        const QString bad = readCount(dims.at(i), d);
        if (!bad.isEmpty()) return who + QStringLiteral(": shape dimension %1 %2").arg(i).arg(bad);
        e.shape.push_back(d);
        if (__builtin_mul_overflow(elements, d, &elements))
            return who + QStringLiteral(": shape has too many elements");
    }

    const QJsonValue offsets = o.value(QLatin1String("data_offsets"));
    if (!offsets.isArray() || offsets.toArray().size() != 2)
        return who + QStringLiteral(": \"data_offsets\" is missing or not [begin, end]");
    const QJsonArray be = offsets.toArray();
    for (int i = 0; i < 2; ++i) {
        int64_t v = 0;
        const QString bad = readCount(be.at(i), v);
        if (!bad.isEmpty())
            return who + QStringLiteral(": data_offsets %1 %2").arg(i ? "end" : "begin", bad);
        (i ? e.end : e.begin) = v;
    }
    if (e.begin > e.end || e.end > dataSize)
        return who + QStringLiteral(": data_offsets [%1, %2] out of range (the data buffer "
                                    "has %3 bytes)")
                         .arg(e.begin)
                         .arg(e.end)
                         .arg(dataSize);
    int64_t bytes = 0;
    if (__builtin_mul_overflow(elements, int64_t(4), &bytes))
        return who + QStringLiteral(": shape %1 has too many elements").arg(shapeToString(e.shape));
    if (bytes != e.end - e.begin)
        return who + QStringLiteral(": shape %1 needs %2 bytes of F32 but data_offsets span %3")
                         .arg(shapeToString(e.shape))
                         .arg(bytes)
                         .arg(e.end - e.begin);
    return {};
}

// Reads the 8-byte little-endian length and the JSON header after it into json.
QString readHeaderBytes(ByteSource& src, QByteArray& json)
{
    const qint64 fileSize = src.size();
    if (fileSize < 8)
        return QStringLiteral("not a safetensors file: %1 bytes, shorter than the 8-byte "
                              "header length")
            .arg(fileSize);
    unsigned char lenBytes[8];
    if (!src.read(0, reinterpret_cast<char*>(lenBytes), 8))
        return QStringLiteral("cannot read the header length");
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i)
        n = (n << 8) | lenBytes[i];
    if (n > static_cast<uint64_t>(kMaxHeaderBytes))
        return QStringLiteral("header length %1 is over the %2 MB limit (not a safetensors "
                              "file?)")
            .arg(n)
            .arg(kMaxHeaderBytes / 1000000);
    if (n > static_cast<uint64_t>(fileSize - 8))
        return QStringLiteral("header length %1 runs past the end of the file (%2 bytes)")
            .arg(n)
            .arg(fileSize);
    json = QByteArray(static_cast<qsizetype>(n), Qt::Uninitialized);
    if (!src.read(8, json.data(), json.size()))
        return QStringLiteral("cannot read the %1-byte header").arg(n);
    return {};
}

QString readMetadata(const QJsonValue& value, SafeTensorsFile& out)
{
    if (!value.isObject()) return QStringLiteral("\"__metadata__\" is not a JSON object");
    const QJsonObject meta = value.toObject();
    for (auto m = meta.begin(); m != meta.end(); ++m) {
        if (!m.value().isString())
            return QStringLiteral("\"__metadata__\" value for %1 is not a string")
                .arg(quotedName(m.key()));
        out.metadata.insert(m.key(), m.value().toString());
    }
    return {};
}

// The tensors must tile the data buffer exactly: no overlap (one write would corrupt
// another tensor), no gap and no trailing bytes (a sign of a truncated or spliced file).
// Sorts entries by position.
QString checkTiling(std::vector<Entry>& entries, int64_t dataSize)
{
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
        return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
    });
    int64_t expected = 0;
    for (size_t i = 0; i < entries.size(); ++i) {
        const Entry& e = entries[i];
        if (e.begin < expected)
            return QStringLiteral("tensors %1 and %2 overlap in the data buffer (bytes %3 to %4)")
                .arg(quotedName(entries[i - 1].name), quotedName(e.name))
                .arg(e.begin)
                .arg(expected);
        if (e.begin > expected)
            return QStringLiteral("bytes %1 to %2 of the data buffer belong to no tensor (before "
                                  "tensor %3)")
                .arg(expected)
                .arg(e.begin)
                .arg(quotedName(e.name));
        expected = e.end;
    }
    if (expected != dataSize)
        return QStringLiteral("the data buffer has %1 bytes after the last tensor that belong "
                              "to no tensor")
            .arg(dataSize - expected);
    return {};
}

// Reads and validates the header; fills out.tensors (shapes, no data), out.metadata and the
// absolute position of each tensor's bytes. Returns an error without the file prefix.
QString parseHeader(ByteSource& src, SafeTensorsFile& out, std::vector<Entry>& entries,
                    int64_t& dataStart)
{
    QByteArray json;
    if (QString bad = readHeaderBytes(src, json); !bad.isEmpty()) return bad;
    dataStart = 8 + static_cast<int64_t>(json.size());
    const int64_t dataSize = src.size() - dataStart;

    QJsonParseError perr;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &perr);
    if (perr.error != QJsonParseError::NoError)
        return QStringLiteral("header is not valid JSON (%1 at byte %2 of the header)")
            .arg(perr.errorString())
            .arg(perr.offset);
    if (!doc.isObject()) return QStringLiteral("header is not a JSON object");
    const QJsonObject root = doc.object();

    for (auto it = root.begin(); it != root.end(); ++it) {
        if (it.key() == QLatin1String("__metadata__")) {
            if (QString bad = readMetadata(it.value(), out); !bad.isEmpty()) return bad;
            continue;
        }
        Entry e;
        const QString bad = parseEntry(it.key(), it.value(), dataSize, e);
        if (!bad.isEmpty()) return bad;
        entries.push_back(std::move(e));
    }
    if (QString bad = checkTiling(entries, dataSize); !bad.isEmpty()) return bad;

    for (const Entry& e : entries)
        out.tensors.push_back({e.name, e.shape, {}});
    return {};
}

QString readAll(ByteSource& src, bool withData, SafeTensorsFile& out)
{
    std::vector<Entry> entries;
    int64_t dataStart = 0;
    const QString bad = parseHeader(src, out, entries, dataStart);
    if (!bad.isEmpty() || !withData) return bad;
    for (size_t i = 0; i < entries.size(); ++i) {
        StoredTensor& t = out.tensors[i];
        const int64_t bytes = entries[i].end - entries[i].begin;
        try {
            t.data.resize(static_cast<size_t>(bytes / 4));
        } catch (const std::bad_alloc&) {
            return QStringLiteral("out of memory reading tensor %1 (%2 bytes)")
                .arg(quotedName(t.name))
                .arg(bytes);
        }
        if (!src.read(dataStart + entries[i].begin, reinterpret_cast<char*>(t.data.data()), bytes))
            return QStringLiteral("cannot read the data of tensor %1").arg(quotedName(t.name));
    }
    return {};
}

QString checkForWriting(const SafeTensorsFile& file)
{
    QSet<QString> seen;
    for (const StoredTensor& t : file.tensors) {
        const QString name = QString::fromStdString(t.name);
        if (name.isEmpty()) return QStringLiteral("a tensor has an empty name");
        if (name == QLatin1String("__metadata__"))
            return QStringLiteral("a tensor cannot be named \"__metadata__\"");
        if (seen.contains(name))
            return QStringLiteral("two tensors are named %1").arg(quotedName(name));
        seen.insert(name);
        for (int64_t d : t.shape)
            if (d < 0)
                return QStringLiteral("tensor %1 has a negative dimension in shape %2")
                    .arg(quotedName(name), shapeToString(t.shape));
        int64_t count = 1;
        for (int64_t d : t.shape)
            if (__builtin_mul_overflow(count, d, &count))
                return QStringLiteral("tensor %1 has too many elements").arg(quotedName(name));
        if (count != static_cast<int64_t>(t.data.size()))
            return QStringLiteral("tensor %1 has shape %2 but %3 values")
                .arg(quotedName(name), shapeToString(t.shape))
                .arg(t.data.size());
    }
    return {};
}

// The length prefix and the header, padded so that the data buffer starts 8-byte aligned.
QByteArray encodePrefix(const SafeTensorsFile& file)
{
    QByteArray h = "{";
    if (!file.metadata.isEmpty()) {
        h += "\"__metadata__\":{";
        bool first = true;
        for (auto it = file.metadata.begin(); it != file.metadata.end(); ++it) {
            if (!first) h += ',';
            first = false;
            h += jsonString(it.key()) + ':' + jsonString(it.value());
        }
        h += '}';
    }
    int64_t offset = 0;
    for (const StoredTensor& t : file.tensors) {
        if (h.size() > 1) h += ',';
        h += jsonString(QString::fromStdString(t.name));
        h += ":{\"dtype\":\"F32\",\"shape\":[";
        for (size_t i = 0; i < t.shape.size(); ++i)
            h += (i ? "," : "") + QByteArray::number(static_cast<qlonglong>(t.shape[i]));
        const int64_t end = offset + t.elementCount() * 4;
        h += "],\"data_offsets\":[" + QByteArray::number(static_cast<qlonglong>(offset)) + ',' +
             QByteArray::number(static_cast<qlonglong>(end)) + "]}";
        offset = end;
    }
    h += '}';
    // 8 + N must be a multiple of 8, and 8 is, so N must be.
    h += QByteArray((8 - h.size() % 8) % 8, ' ');

    QByteArray out(8, Qt::Uninitialized);
    auto n = static_cast<uint64_t>(h.size());
    for (int i = 0; i < 8; ++i, n >>= 8)
        out[i] = static_cast<char>(n & 0xff);
    return out + h;
}

} // namespace

int64_t StoredTensor::elementCount() const
{
    int64_t n = 1;
    for (int64_t d : shape)
        n *= d;
    return n;
}

const StoredTensor* SafeTensorsFile::find(const std::string& name) const
{
    for (const StoredTensor& t : tensors)
        if (t.name == name) return &t;
    return nullptr;
}

QString shapeToString(const std::vector<int64_t>& shape)
{
    QStringList dims;
    for (int64_t d : shape)
        dims << QString::number(d);
    return u'[' + dims.join(QStringLiteral(", ")) + u']';
}

IoResult encodeSafeTensors(const SafeTensorsFile& file, QByteArray& out)
{
    const QString bad = checkForWriting(file);
    if (!bad.isEmpty()) return IoResult::failure(bad);
    out = encodePrefix(file);
    for (const StoredTensor& t : file.tensors)
        out.append(reinterpret_cast<const char*>(t.data.data()),
                   static_cast<qsizetype>(t.data.size() * 4));
    return IoResult::success();
}

IoResult decodeSafeTensors(const QByteArray& bytes, const QString& source, SafeTensorsFile& out)
{
    out = {};
    ArraySource src(bytes);
    const QString bad = readAll(src, true, out);
    if (!bad.isEmpty()) {
        out = {};
        return IoResult::failure(source + QStringLiteral(": ") + bad);
    }
    return IoResult::success();
}

IoResult writeSafeTensors(const QString& path, const SafeTensorsFile& file)
{
    const QString bad = checkForWriting(file);
    if (!bad.isEmpty()) return IoResult::failure(path + QStringLiteral(": cannot save: ") + bad);

    AtomicFile f(path);
    f.setAction(QStringLiteral("save"));
    if (!f.open()) return IoResult::failure(f.errorString());
    // Streams the tensors straight from their vectors: no second copy of the model in memory.
    bool ok = f.write(encodePrefix(file));
    for (size_t i = 0; ok && i < file.tensors.size(); ++i) {
        const StoredTensor& t = file.tensors[i];
        ok = f.write(reinterpret_cast<const char*>(t.data.data()),
                     static_cast<qint64>(t.data.size() * 4));
    }
    if (!ok || !f.commit()) return IoResult::failure(f.errorString());
    return IoResult::success();
}

IoResult readSafeTensors(const QString& path, SafeTensorsFile& out)
{
    out = {};
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return IoResult::failure(path + QStringLiteral(": cannot open: ") + f.errorString());
    FileSource src(f);
    const QString bad = readAll(src, true, out);
    if (!bad.isEmpty()) {
        out = {};
        return IoResult::failure(path + QStringLiteral(": ") + bad);
    }
    return IoResult::success();
}

IoResult readSafeTensorsHeader(const QString& path, SafeTensorsFile& out)
{
    out = {};
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return IoResult::failure(path + QStringLiteral(": cannot open: ") + f.errorString());
    FileSource src(f);
    const QString bad = readAll(src, false, out);
    if (!bad.isEmpty()) {
        out = {};
        return IoResult::failure(path + QStringLiteral(": ") + bad);
    }
    return IoResult::success();
}

} // namespace il::io
