// Reading CSV tables (RFC 4180: quoted fields with embedded delimiters, quotes and newlines,
// CRLF or LF, an optional UTF-8 byte-order mark). The delimiter (comma, semicolon or tab) is
// detected from the first line. The first row is a header when any of its cells is not a
// number. Every cell is kept as text; numeric conversion is the task's job, so an error can
// name the line and column of the cell at fault.
#pragma once

#include <QString>
#include <QStringList>

#include <cstdint>
#include <vector>

namespace il::io {

struct CsvTable {
    QString path;        // as given (for messages)
    QStringList columns; // header names, or "column 1", "column 2"... without a header
    bool hasHeader = false;
    QChar delimiter = ',';
    int64_t rows = 0;
    std::vector<QString> cells; // rows x columns, row-major
    std::vector<int64_t> lines; // 1-based file line where each row starts

    const QString& cell(int64_t row, int col) const
    {
        return cells[static_cast<size_t>(row * columns.size() + col)];
    }
    // Column index by name (exact, then case-insensitive) or by 1-based number; -1 if none.
    int findColumn(const QString& nameOrNumber) const;
};

struct CsvReadResult {
    bool ok = false;
    QString error; // "file:line:column: what is wrong"
    CsvTable table;
};

// Reads a whole table. Refuses (ok = false) an empty file, a file with no data rows, ragged
// rows, an unterminated quote, binary data, and lines over 1 MiB; never crashes.
CsvReadResult readCsv(const QString& path);
// The same from bytes already in memory (tests, bundled samples).
CsvReadResult parseCsv(const QByteArray& bytes, const QString& pathForMessages);

// Parses a number the way the tables need it: C locale, optional surrounding spaces; NaN, Inf
// and values outside the float range are refused. Returns false if the text is not a number.
bool parseNumber(const QString& text, float& value);

} // namespace il::io
