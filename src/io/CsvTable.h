// Tables read from CSV files (and from Iron Learn's JSON datasets, see JsonDataset.h), as
// typed columns.
//
// The reader streams (CsvRecordReader): each cell is classified as it is read, numbers are
// stored as floats at once, and text is kept only as a code per row into the column's list of
// distinct values. So a 1,000,000 x 20 numeric file costs about the 80 MB of its floats, not
// the gigabytes of one string per cell. Nothing is refused here because of a cell: which
// columns matter (and so which bad cells are errors) is the task's decision, so every column
// records its first problem cell with its line, and the task names it.
//
// Header detection: the first row is a header when one of its cells is text over a column of
// numbers, or when none of its cells is a number. Delimiter detection: see CsvRecordReader.
#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <utility>
#include <vector>

class QIODevice;

namespace il::io {

// What a cell holds. Missing: empty, NA, N/A, NaN or null (any case). BadNumber: a number we
// cannot keep as a float (Inf, or beyond +-3.4e38).
enum class CellKind { Number, Missing, BadNumber, Text };

// Classifies one cell (already trimmed) and, for a number, returns it in value. C locale;
// decimalComma also accepts "1,5" (semicolon tables). why: for BadNumber, what is wrong.
CellKind classifyCell(QByteArrayView cell, bool decimalComma, float& value, QString* why = nullptr);

// One notable cell: where it is and what it says.
struct CsvCell {
    int64_t row = -1; // -1: none
    QString text;
    QString why;
    bool isSet() const { return row >= 0; }
};

struct CsvColumn {
    static constexpr int kMaxCategories = 1000; // distinct texts remembered per column
    static constexpr int32_t kMissingCode = -1;
    static constexpr int32_t kOtherCode = -2; // a text beyond kMaxCategories

    QString name;
    std::vector<float> numbers; // one per row: the number, NaN if not a number (or no numbers)
    std::vector<bool> missing;  // one per row, or empty when no cell is missing
    // Text: once the column holds a text cell, one code per row into `categories` (every
    // non-missing cell from then on, numbers included, by its text). Empty otherwise.
    std::vector<int32_t> codes;
    QStringList categories;      // distinct texts in order of first appearance
    bool moreCategories = false; // over kMaxCategories distinct texts (the rest are kOtherCode)
    int64_t numberCount = 0, textCount = 0, missingCount = 0, badCount = 0;
    CsvCell firstText, firstBad, firstInvalidUtf8;

    // A text column: more text cells than numbers. A numeric column with some text cells has
    // errors (firstText) rather than categories.
    bool isText() const { return textCount > numberCount + badCount; }
    bool isMissing(int64_t row) const
    {
        return !missing.empty() && missing[static_cast<size_t>(row)];
    }
};

struct CsvTable {
    // Columns a table may have (CSV and JSON datasets): far more than any table a network here
    // learns from, and each column costs a few hundred bytes of bookkeeping before its values,
    // so a 2 MB file of a million empty columns is refused rather than built.
    static constexpr qsizetype kMaxColumns = 100'000;

    QString path; // as given (for messages)
    bool hasHeader = false;
    char delimiter = ',';
    int64_t rows = 0;
    std::vector<CsvColumn> columns;
    // JSON datasets: rows from here on are the file's own test split; -1 for CSV.
    int64_t testStart = -1;
    bool jsonRows = false; // rows are JSON examples, not lines
    QStringList notes;     // e.g. renamed duplicate headers

    int columnCount() const { return static_cast<int>(columns.size()); }
    QStringList columnNames() const;
    // Column index by name (exact, then case-insensitive) or by 1-based number; -1 if none.
    int findColumn(const QString& nameOrNumber) const;

    // The file line where a row starts (CSV), for messages.
    int64_t lineOf(int64_t row) const;
    // "data.csv:12" (CSV) or "data.json: example 12" / "data.json: test example 3" (JSON).
    QString where(int64_t row) const;
    // where(row) + ": column 3 (\"bmi\")"
    QString cellWhere(int64_t row, int column) const;

    // Rows mostly sit one line after the previous one; only the exceptions (after blank lines
    // or quoted newlines) are stored, as (row, line), sorted by row. Keeps 8 bytes per row off.
    std::vector<std::pair<int64_t, int64_t>> lineJumps;
};

struct CsvOptions {
    char delimiter = 0; // 0: detect
    int header = -1;    // -1: detect, 0: no header row, 1: the first row is the header
};

struct CsvReadResult {
    bool ok = false;
    QString error; // one line: "file:line: what is wrong"
    CsvTable table;
};

// Reads a table from a file (streamed), a device, or bytes in memory (tests, samples). Refuses
// (ok = false) an empty file, a file of blank lines, a header without rows, ragged rows, an
// unclosed quote, binary data, lines over 1 MiB and headers that are not UTF-8; never crashes.
CsvReadResult readCsv(const QString& path, const CsvOptions& options = {});
CsvReadResult readCsv(QIODevice& device, const QString& pathForMessages,
                      const CsvOptions& options = {});
CsvReadResult parseCsv(const QByteArray& bytes, const QString& pathForMessages,
                       const CsvOptions& options = {});

// Parses a number the way the tables need it (see classifyCell). false if not a number.
bool parseNumber(const QString& text, float& value);

} // namespace il::io
