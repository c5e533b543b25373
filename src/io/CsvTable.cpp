#include "CsvTable.h"

#include <QFile>

#include <cmath>
#include <limits>

namespace il::io {

namespace {

constexpr qint64 kMaxLineBytes = 1 << 20;

QChar detectDelimiter(const QString& text)
{
    // Count candidates on the first line, outside quotes.
    int comma = 0, semi = 0, tab = 0;
    bool quoted = false;
    for (QChar c : text) {
        if (c == '"')
            quoted = !quoted;
        else if (!quoted && (c == '\n' || c == '\r'))
            break;
        else if (!quoted && c == ',')
            ++comma;
        else if (!quoted && c == ';')
            ++semi;
        else if (!quoted && c == '\t')
            ++tab;
    }
    if (tab > comma && tab >= semi) return '\t';
    if (semi > comma) return ';';
    return ',';
}

QString where(const QString& path, int64_t line, int column = 0)
{
    QString s = path + ":" + QString::number(line);
    if (column > 0) s += ":" + QString::number(column);
    return s;
}

} // namespace

int CsvTable::findColumn(const QString& nameOrNumber) const
{
    const int exact = static_cast<int>(columns.indexOf(nameOrNumber));
    if (exact >= 0) return exact;
    for (int i = 0; i < columns.size(); ++i)
        if (columns[i].compare(nameOrNumber, Qt::CaseInsensitive) == 0) return i;
    bool ok = false;
    const int n = nameOrNumber.toInt(&ok);
    if (ok && n >= 1 && n <= columns.size()) return n - 1;
    return -1;
}

bool parseNumber(const QString& text, float& value)
{
    const QString t = text.trimmed();
    if (t.isEmpty()) return false;
    bool ok = false;
    const double d = t.toDouble(&ok); // C locale: "1.5", "-2e3"; also accepts "nan"/"inf"
    if (!ok || !std::isfinite(d) || std::fabs(d) > std::numeric_limits<float>::max()) return false;
    value = static_cast<float>(d);
    return true;
}

CsvReadResult readCsv(const QString& path)
{
    CsvReadResult r;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        r.error = path + ": cannot open: " + f.errorString();
        return r;
    }
    return parseCsv(f.readAll(), path);
}

CsvReadResult parseCsv(const QByteArray& bytesIn, const QString& path)
{
    CsvReadResult r;
    QByteArray bytes = bytesIn;
    if (bytes.startsWith("\xEF\xBB\xBF")) bytes.remove(0, 3);
    if (bytes.trimmed().isEmpty()) {
        r.error = path + ": the file is empty";
        return r;
    }
    if (bytes.contains('\0')) {
        r.error = path + ": this is not a text file (it contains binary data)";
        return r;
    }
    const QString text = QString::fromUtf8(bytes);
    const QChar delim = detectDelimiter(text);

    // Tokenise into records of fields.
    std::vector<QStringList> records;
    std::vector<int64_t> recordLines;
    QStringList fields;
    QString field;
    bool quoted = false, fieldStarted = false, afterQuote = false;
    int64_t line = 1, recordLine = 1;
    qint64 lineBytes = 0;
    auto endField = [&] {
        fields.push_back(field);
        field.clear();
        fieldStarted = false;
        afterQuote = false;
    };
    auto endRecord = [&] {
        endField();
        bool blank = fields.size() == 1 && fields[0].trimmed().isEmpty();
        if (!blank) {
            records.push_back(fields);
            recordLines.push_back(recordLine);
        }
        fields.clear();
    };
    const qsizetype n = text.size();
    for (qsizetype i = 0; i < n; ++i) {
        const QChar c = text[i];
        if (++lineBytes > kMaxLineBytes) {
            r.error = where(path, line) + ": line longer than 1 MiB; is this a CSV file?";
            return r;
        }
        if (quoted) {
            if (c == '"') {
                if (i + 1 < n && text[i + 1] == '"') {
                    field += '"';
                    ++i;
                } else {
                    quoted = false;
                    afterQuote = true;
                }
            } else {
                if (c == '\n') {
                    ++line;
                    lineBytes = 0;
                }
                field += c;
            }
            continue;
        }
        if (c == '"' && !fieldStarted && field.trimmed().isEmpty()) {
            quoted = true;
            fieldStarted = true;
            field.clear();
        } else if (c == delim) {
            endField();
        } else if (c == '\r' || c == '\n') {
            if (c == '\r' && i + 1 < n && text[i + 1] == '\n') ++i;
            endRecord();
            ++line;
            lineBytes = 0;
            recordLine = line;
        } else {
            if (afterQuote && !c.isSpace()) {
                r.error = where(path, line) + ": text after a closing quote";
                return r;
            }
            field += c;
            fieldStarted = true;
        }
    }
    if (quoted) {
        r.error = where(path, recordLine) + ": a quoted field is never closed";
        return r;
    }
    if (!field.isEmpty() || !fields.isEmpty()) endRecord();
    if (records.empty()) {
        r.error = path + ": the file holds no rows";
        return r;
    }

    CsvTable& t = r.table;
    t.path = path;
    t.delimiter = delim;
    // Header: the first record has a cell that is not a number.
    float dummy = 0;
    for (const QString& cell : records[0])
        if (!cell.trimmed().isEmpty() && !parseNumber(cell, dummy)) t.hasHeader = true;
    const auto width = records[0].size();
    if (t.hasHeader) {
        for (const QString& name : records[0])
            t.columns << name.trimmed();
    } else {
        for (qsizetype c = 0; c < width; ++c)
            t.columns << QStringLiteral("column %1").arg(c + 1);
    }
    const size_t first = t.hasHeader ? 1 : 0;
    if (records.size() <= first) {
        r.error = path + ": the file has a header row but no data rows";
        return r;
    }
    t.rows = static_cast<int64_t>(records.size() - first);
    t.cells.reserve(static_cast<size_t>(t.rows * width));
    for (size_t i = first; i < records.size(); ++i) {
        if (records[i].size() != width) {
            r.error = where(path, recordLines[i]) + ": " + QString::number(records[i].size()) +
                      " fields, but the " + (t.hasHeader ? "header has " : "first row has ") +
                      QString::number(width);
            return r;
        }
        for (const QString& cell : records[i])
            t.cells.push_back(cell);
        t.lines.push_back(recordLines[i]);
    }
    r.ok = true;
    return r;
}

} // namespace il::io
