// Splits a CSV stream into records (RFC 4180: quoted fields with embedded delimiters, quotes
// and newlines; CRLF, LF or CR line ends; an optional UTF-8 byte-order mark) without holding
// the file: it reads the device in chunks and hands out one record at a time, so a table of
// any length costs one chunk of memory here. CsvTable builds typed columns on top of it;
// `predict` uses it again to copy the input rows into its output unchanged.
#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

#include <cstdint>
#include <string>
#include <vector>

class QIODevice;

namespace il::io {

class CsvRecordReader {
public:
    // A record (with its quoted newlines) longer than this is refused: no table has one, and
    // a binary file or a runaway quote would otherwise be read whole.
    static constexpr qsizetype kMaxRecordBytes = qsizetype(1) << 20;

    // The device must stay open while the reader is used; messages name pathForMessages.
    CsvRecordReader(QIODevice& device, QString pathForMessages);

    // Reads the first chunk, skips a byte-order mark and detects the delimiter (comma,
    // semicolon or tab, from the first lines) unless one is given. false + error() if the
    // device cannot be read. totalBytes() is then known for an empty-file check.
    bool start(char delimiter = 0);
    char delimiter() const { return m_delimiter; }

    // Moves to the next record that is not blank. false at the end of the data or on an
    // error (then error() is not empty).
    bool next();
    const QString& error() const { return m_error; }

    // The current record. Fields are views into the reader's buffer, valid until next().
    // Unquoted fields are trimmed of surrounding spaces; quoted ones are kept as written.
    qsizetype size() const { return static_cast<qsizetype>(m_fields.size()); }
    QByteArrayView field(qsizetype i) const;
    int64_t line() const { return m_recordLine; }            // 1-based line where it starts
    int64_t lastLine() const { return m_line - 1; }          // line where it ends
    int64_t bytesRead() const { return m_consumed + m_pos; } // for size estimates
    int64_t totalBytes() const { return m_total; }           // the device's size, or -1

private:
    enum class Parse { Record, Blank, NeedMore, Error };
    // How a field ended: at a delimiter (another field follows), at the end of the record,
    // at the end of the buffer inside the record, or with an error (m_error set).
    enum class FieldEnd { Delimiter, Record, NeedMore, Error };
    struct Field;
    struct Cursor { // where parseRecord is, and what it has seen so far
        qsizetype i;
        int64_t newlines = 0; // line ends inside the record, its own included
        bool anyQuoted = false;
    };
    Parse parseRecord();
    FieldEnd parseQuotedField(Cursor& at);
    FieldEnd readQuotedText(Cursor& at, Field& f);
    FieldEnd parseUnquotedField(Cursor& at);
    FieldEnd binaryData(const Cursor& at);
    Parse finishRecord(const Cursor& at);
    bool consumeLineEnd(Cursor& at) const;
    void skipSpaces(Cursor& at) const;
    bool isSpace(char c) const;
    bool fill(); // compacts the buffer and reads the next chunk; false on a read error
    void detectDelimiter();
    void fail(int64_t line, const QString& why);

    struct Field {
        qsizetype begin = 0, end = 0;
        bool inScratch = false; // quoted with "" escapes: unescaped into m_scratch
    };

    QIODevice& m_device;
    QString m_path;
    QByteArray m_buf;
    qsizetype m_pos = 0, m_end = 0;
    bool m_eof = false;
    char m_delimiter = ',';
    std::vector<Field> m_fields;
    std::string m_scratch;
    int64_t m_line = 1, m_recordLine = 1;
    int64_t m_consumed = 0, m_total = -1;
    QString m_error;
};

} // namespace il::io
