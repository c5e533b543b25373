#include "CsvTable.h"

#include "CsvRecordReader.h"
#include "NumberText.h"
#include "PrintableText.h"

#include <QBuffer>
#include <QFile>
#include <QHash>
#include <QSet>
#include <QStringDecoder>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace il::io {

namespace {

constexpr int kHeadRecords = 64; // rows looked at before deciding on the header

bool equalsNoCase(const char* b, qsizetype n, const char* word)
{
    if (static_cast<size_t>(n) != std::strlen(word)) return false;
    for (qsizetype i = 0; i < n; ++i)
        if (std::tolower(static_cast<unsigned char>(b[i])) != word[i]) return false;
    return true;
}

// Builds one column while the rows stream by.
class ColumnBuilder {
public:
    CsvColumn col;

    void add(QByteArrayView cell, int64_t row, bool decimalComma)
    {
        float v = 0;
        QString why;
        const CellKind kind = classifyCell(cell, decimalComma, v, &why);
        switch (kind) {
        case CellKind::Number:
            col.numbers.push_back(v);
            ++col.numberCount;
            break;
        case CellKind::Missing:
            col.numbers.push_back(NAN);
            ++col.missingCount;
            if (!m_tracksMissing) {
                col.missing.assign(static_cast<size_t>(row), false);
                m_tracksMissing = true;
            }
            break;
        case CellKind::BadNumber:
            col.numbers.push_back(NAN);
            if (col.badCount++ == 0) col.firstBad = {row, textOf(cell), why};
            break;
        case CellKind::Text:
            col.numbers.push_back(NAN);
            if (col.textCount++ == 0) {
                col.firstText = {row, textOf(cell), {}};
                enterTextMode(row);
            }
            break;
        }
        if (m_tracksMissing) col.missing.push_back(kind == CellKind::Missing);
        if (m_textMode)
            col.codes.push_back(kind == CellKind::Missing ? CsvColumn::kMissingCode
                                                          : intern(cell, row));
    }

    void finish(int64_t rows)
    {
        m_index.clear();
        if (col.isText() && col.numberCount == 0) col.numbers = {};
        if (!col.isText()) col.codes = {}; // its text cells are errors, not categories
        if (col.numbers.capacity() > col.numbers.size() + col.numbers.size() / 16)
            col.numbers.shrink_to_fit();
        (void)rows;
    }

private:
    static QString textOf(QByteArrayView cell)
    {
        return QString::fromUtf8(cell.first(std::min<qsizetype>(cell.size(), 60)));
    }

    // The first text cell: from now on every cell gets a code. Earlier rows held numbers or
    // missing cells; they get codes from their values (the text they had is not kept).
    void enterTextMode(int64_t row)
    {
        m_textMode = true;
        col.codes.reserve(col.numbers.capacity());
        for (int64_t r = 0; r < row; ++r) {
            const float v = col.numbers[static_cast<size_t>(r)];
            if (col.isMissing(r))
                col.codes.push_back(CsvColumn::kMissingCode);
            else if (std::isnan(v))
                col.codes.push_back(intern(col.firstBad.text.toUtf8(), r));
            else
                col.codes.push_back(intern(QByteArray::number(v, 'g', 9), r));
        }
    }

    int32_t intern(QByteArrayView cell, int64_t row)
    {
        const auto it = m_index.constFind(QByteArray::fromRawData(cell.data(), cell.size()));
        if (it != m_index.constEnd()) return it.value();
        if (col.categories.size() >= CsvColumn::kMaxCategories) {
            col.moreCategories = true;
            return CsvColumn::kOtherCode;
        }
        QStringDecoder decode(QStringDecoder::Utf8);
        const QString text = decode(cell);
        if (decode.hasError() && !col.firstInvalidUtf8.isSet())
            col.firstInvalidUtf8 = {row, text.left(40), "is not valid UTF-8"};
        const auto code = static_cast<int32_t>(col.categories.size());
        m_index.insert(cell.toByteArray(), code);
        col.categories << text;
        return code;
    }

    QHash<QByteArray, int32_t> m_index;
    bool m_tracksMissing = false;
    bool m_textMode = false;
};

struct HeadRecord {
    QList<QByteArray> fields;
    int64_t line = 0;
};

// The first row is a header when one of its cells is text above a column of numbers, or when
// none of its cells is a number (a table of text, or a header over a single row).
bool looksLikeHeader(const std::vector<HeadRecord>& head, bool decimalComma)
{
    const QList<QByteArray>& first = head.front().fields;
    bool anyNumber = false;
    for (qsizetype c = 0; c < first.size(); ++c) {
        float v = 0;
        const CellKind kind = classifyCell(first[c], decimalComma, v);
        anyNumber = anyNumber || kind == CellKind::Number;
        if (kind != CellKind::Text) continue;
        int numbers = 0, texts = 0;
        for (size_t r = 1; r < head.size(); ++r) {
            if (head[r].fields.size() <= c) continue;
            const CellKind k = classifyCell(head[r].fields[c], decimalComma, v);
            numbers += k == CellKind::Number;
            texts += k == CellKind::Text;
        }
        if (numbers > texts) return true;
    }
    return !anyNumber;
}

QString withLine(const QString& path, int64_t line, const QString& why)
{
    return path + ":" + QString::number(line) + ": " + why;
}

} // namespace

CellKind classifyCell(QByteArrayView cell, bool decimalComma, float& value, QString* why)
{
    const char* b = cell.data();
    const char* e = b + cell.size();
    while (b < e && (*b == ' ' || *b == '\t'))
        ++b;
    while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
        --e;
    const qsizetype n = e - b;
    if (n == 0) return CellKind::Missing;
    const char c = *b;
    const bool digitLike = (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.';
    if (!digitLike) {
        if (equalsNoCase(b, n, "na") || equalsNoCase(b, n, "n/a") || equalsNoCase(b, n, "nan") ||
            equalsNoCase(b, n, "null"))
            return CellKind::Missing;
        // "inf" and "infinity" go on to from_chars, which reads them; other text stops here.
        if (c != 'i' && c != 'I') return CellKind::Text;
    }
    char local[64];
    if (decimalComma && n < 64 && std::memchr(b, ',', static_cast<size_t>(n))) {
        for (qsizetype i = 0; i < n; ++i)
            local[i] = b[i] == ',' ? '.' : b[i];
        b = local;
        e = local + n;
    }
    double d = 0;
    switch (readDouble(std::string_view(b, static_cast<size_t>(e - b)), d)) {
    case NumberRead::NotANumber:
        return CellKind::Text;
    case NumberRead::TooSmall: // below the smallest double: zero, as a float would hold it
        value = 0.f;
        return CellKind::Number;
    case NumberRead::TooLarge:
        if (why) *why = "outside the float range (+-3.4e38)";
        return CellKind::BadNumber;
    case NumberRead::Ok:
        break;
    }
    if (std::isnan(d)) return CellKind::Missing;
    if (std::isinf(d)) {
        if (why) *why = "infinite value";
        return CellKind::BadNumber;
    }
    if (!(std::fabs(d) <= static_cast<double>(std::numeric_limits<float>::max()))) {
        if (why) *why = "outside the float range (+-3.4e38)";
        return CellKind::BadNumber;
    }
    value = static_cast<float>(d);
    return CellKind::Number;
}

bool parseNumber(const QString& text, float& value)
{
    const QByteArray bytes = text.toUtf8();
    return classifyCell(bytes, false, value) == CellKind::Number;
}

QStringList CsvTable::columnNames() const
{
    QStringList names;
    for (const CsvColumn& c : columns)
        names << c.name;
    return names;
}

int CsvTable::findColumn(const QString& nameOrNumber) const
{
    const QString wanted = nameOrNumber.trimmed();
    for (int i = 0; i < columnCount(); ++i)
        if (columns[static_cast<size_t>(i)].name == wanted) return i;
    for (int i = 0; i < columnCount(); ++i)
        if (columns[static_cast<size_t>(i)].name.compare(wanted, Qt::CaseInsensitive) == 0)
            return i;
    bool ok = false;
    const int n = wanted.toInt(&ok);
    if (ok && n >= 1 && n <= columnCount()) return n - 1;
    return -1;
}

int64_t CsvTable::lineOf(int64_t row) const
{
    const auto it = std::upper_bound(lineJumps.begin(), lineJumps.end(), row,
                                     [](int64_t r, const auto& jump) { return r < jump.first; });
    if (it == lineJumps.begin()) return row + 1 + (hasHeader ? 1 : 0);
    const auto& jump = *(it - 1);
    return jump.second + (row - jump.first);
}

QString CsvTable::where(int64_t row) const
{
    if (jsonRows) {
        if (testStart >= 0 && row >= testStart)
            return path + ": test example " + QString::number(row - testStart + 1);
        return path + ": example " + QString::number(row + 1);
    }
    return path + ":" + QString::number(lineOf(row));
}

QString CsvTable::cellWhere(int64_t row, int column) const
{
    return where(row) + ": column " + QString::number(column + 1) + " (" +
           quoted(columns[static_cast<size_t>(column)].name, 60) + ")";
}

CsvReadResult readCsv(const QString& path, const CsvOptions& options)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        CsvReadResult r;
        r.error = path + ": cannot open: " + f.errorString();
        return r;
    }
    return readCsv(f, path, options);
}

CsvReadResult parseCsv(const QByteArray& bytes, const QString& path, const CsvOptions& options)
{
    QByteArray shared = bytes; // implicitly shared: no copy
    QBuffer buffer(&shared);
    buffer.open(QIODevice::ReadOnly);
    return readCsv(buffer, path, options);
}

namespace {

// The first records, kept while the header is decided.
std::vector<HeadRecord> readHead(CsvRecordReader& reader)
{
    std::vector<HeadRecord> head;
    while (static_cast<int>(head.size()) < kHeadRecords && reader.next()) {
        HeadRecord rec;
        rec.line = reader.line();
        for (qsizetype i = 0; i < reader.size(); ++i)
            rec.fields << reader.field(i).toByteArray();
        head.push_back(std::move(rec));
    }
    return head;
}

// Streams rows into one ColumnBuilder per column and notes where line numbers jump (quoted
// newlines, blank lines) so a row can be traced back to its line.
class TableBuilder {
public:
    TableBuilder(CsvTable& table, qsizetype width, bool decimalComma)
        : m_table(table), m_width(width), m_decimalComma(decimalComma),
          m_builders(static_cast<size_t>(width)), m_unnamed(static_cast<size_t>(width), false)
    {
    }

    // Names the columns from the header row (or "column N"), renaming duplicates (in linear
    // time: a header of 100,000 columns is read in milliseconds). false + *error if the header
    // is not UTF-8.
    bool nameColumns(const HeadRecord& header, QString* error)
    {
        CsvTable& t = m_table;
        QSet<QString> used;
        used.reserve(m_width);
        qsizetype renamedCount = 0;
        for (qsizetype c = 0; c < m_width; ++c) {
            QString name = QStringLiteral("column %1").arg(c + 1);
            if (t.hasHeader) {
                QStringDecoder decode(QStringDecoder::Utf8);
                const QString given = QString(decode(header.fields[c])).trimmed();
                if (decode.hasError()) {
                    *error = withLine(t.path, header.line,
                                      "column " + QString::number(c + 1) +
                                          ": the header is not valid UTF-8 text");
                    return false;
                }
                if (given.isEmpty())
                    m_unnamed[static_cast<size_t>(c)] = true;
                else
                    name = given;
            }
            if (used.contains(name)) {
                // "name_7" for column 7; should that be taken too, "name_7_2", "name_7_3", ...
                const QString base = name + "_" + QString::number(c + 1);
                QString renamed = base;
                for (int k = 2; used.contains(renamed); ++k)
                    renamed = base + "_" + QString::number(k);
                if (++renamedCount <= kNotesPerKind)
                    t.notes << "two columns are named " + quoted(name, 60) + "; column " +
                                   QString::number(c + 1) + " is called " + quoted(renamed, 60);
                name = renamed;
            }
            used.insert(name);
            m_builders[static_cast<size_t>(c)].col.name = name;
        }
        if (renamedCount > kNotesPerKind)
            t.notes << QString::number(renamedCount - kNotesPerKind) +
                           " more columns renamed the same way";
        return true;
    }

    // Reserves from the size of the file and of the first rows, so the columns do not grow by
    // doubling (which could leave them half empty).
    void reserve(const CsvRecordReader& reader, size_t headRecords, size_t first)
    {
        if (reader.totalBytes() <= 0 || reader.bytesRead() <= 0 || headRecords <= first) return;
        const double perRow = static_cast<double>(reader.bytesRead()) /
                              static_cast<double>(std::max<size_t>(headRecords, 1));
        const auto estimate = static_cast<size_t>(
            std::min(1e9, 1.05 * static_cast<double>(reader.totalBytes()) / std::max(perRow, 1.0)));
        for (ColumnBuilder& b : m_builders)
            b.col.numbers.reserve(estimate + 16);
    }

    // field(c) gives the row's cell c. false + *error if the row has the wrong width.
    template <typename FieldOf>
    bool addRow(qsizetype fields, FieldOf field, int64_t line, QString* error)
    {
        CsvTable& t = m_table;
        if (fields != m_width) {
            *error = withLine(t.path, line,
                              QString::number(fields) + (fields == 1 ? " field" : " fields") +
                                  ", but the " + (t.hasHeader ? "header has " : "first row has ") +
                                  QString::number(m_width));
            return false;
        }
        const int64_t expected =
            t.lineJumps.empty() ? -1
                                : t.lineJumps.back().second + (m_row - t.lineJumps.back().first);
        if (line != expected) t.lineJumps.emplace_back(m_row, line);
        for (qsizetype c = 0; c < m_width; ++c)
            m_builders[static_cast<size_t>(c)].add(field(c), m_row, m_decimalComma);
        ++m_row;
        return true;
    }

    int64_t rows() const { return m_row; }

    // Moves the finished columns into the table.
    void finish()
    {
        CsvTable& t = m_table;
        t.rows = m_row;
        qsizetype leftOut = 0;
        for (size_t c = 0; c < m_builders.size(); ++c) {
            m_builders[c].finish(m_row);
            // A trailing delimiter on every line makes a last column with no name and no values.
            if (m_unnamed[c] && m_builders[c].col.missingCount == m_row) {
                if (++leftOut <= kNotesPerKind)
                    t.notes << "column " + QString::number(c + 1) +
                                   " has no name and no values; left out";
                continue;
            }
            t.columns.push_back(std::move(m_builders[c].col));
        }
        if (leftOut > kNotesPerKind)
            t.notes << QString::number(leftOut - kNotesPerKind) +
                           " more columns without name or values left out";
    }

private:
    static constexpr qsizetype kNotesPerKind = 5; // then one line says how many more

    CsvTable& m_table;
    const qsizetype m_width;
    const bool m_decimalComma;
    std::vector<ColumnBuilder> m_builders;
    std::vector<bool> m_unnamed; // header cells left empty
    int64_t m_row = 0;
};

} // namespace

CsvReadResult readCsv(QIODevice& device, const QString& path, const CsvOptions& options)
{
    CsvReadResult r;
    CsvTable& t = r.table;
    t.path = path;
    CsvRecordReader reader(device, path);
    auto fail = [&](const QString& why) {
        r.error = why;
        r.table = CsvTable{};
        return r;
    };
    if (!reader.start(options.delimiter)) return fail(reader.error());
    t.delimiter = reader.delimiter();
    const bool decimalComma = t.delimiter == ';';

    // Look ahead a few rows to decide on the header, then stream the rest into the columns.
    std::vector<HeadRecord> head = readHead(reader);
    if (!reader.error().isEmpty()) return fail(reader.error());
    if (head.empty())
        return fail(path + (reader.totalBytes() >= 0 && reader.totalBytes() <= 3
                                ? ": the file is empty"
                                : ": the file holds only blank lines; no rows"));
    if (head.front().fields.size() > CsvTable::kMaxColumns)
        return fail(withLine(path, head.front().line,
                             QString("%1 columns; a table may have at most %2")
                                 .arg(head.front().fields.size())
                                 .arg(CsvTable::kMaxColumns)));
    t.hasHeader = options.header < 0 ? looksLikeHeader(head, decimalComma) : options.header == 1;
    TableBuilder builder(t, head.front().fields.size(), decimalComma);
    QString error;
    if (!builder.nameColumns(head.front(), &error)) return fail(error);
    const size_t first = t.hasHeader ? 1 : 0;
    builder.reserve(reader, head.size(), first);

    for (size_t i = first; i < head.size(); ++i) {
        const auto& rec = head[i];
        if (!builder.addRow(
                rec.fields.size(), [&](qsizetype c) { return QByteArrayView(rec.fields[c]); },
                rec.line, &error))
            return fail(error);
    }
    head.clear();
    while (reader.next())
        if (!builder.addRow(
                reader.size(), [&](qsizetype c) { return reader.field(c); }, reader.line(), &error))
            return fail(error);
    if (!reader.error().isEmpty()) return fail(reader.error());
    if (builder.rows() == 0) return fail(path + ": the file has a header row but no data rows");
    builder.finish();
    r.ok = true;
    return r;
}

} // namespace il::io
