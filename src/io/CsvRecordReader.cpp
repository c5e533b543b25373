#include "CsvRecordReader.h"

#include <QIODevice>

#include <algorithm>
#include <array>
#include <cstring>

namespace il::io {

namespace {

constexpr qsizetype kChunk = qsizetype(1) << 20;

} // namespace

// The per-field helpers of parseRecord, inlined into it as when they were one function (a
// call per field costs about a tenth of the read time of a numeric table).
#define IL_CSV_INLINE [[gnu::always_inline]] inline

CsvRecordReader::CsvRecordReader(QIODevice& device, QString pathForMessages)
    : m_device(device), m_path(std::move(pathForMessages))
{
}

QByteArrayView CsvRecordReader::field(qsizetype i) const
{
    const Field& f = m_fields[static_cast<size_t>(i)];
    if (f.inScratch) return QByteArrayView(m_scratch.data() + f.begin, f.end - f.begin);
    return QByteArrayView(m_buf.constData() + f.begin, f.end - f.begin);
}

void CsvRecordReader::fail(int64_t line, const QString& why)
{
    m_error = m_path + ":" + QString::number(line) + ": " + why;
}

bool CsvRecordReader::fill()
{
    // Keep the unfinished record at the front, then append a chunk after it.
    m_consumed += m_pos;
    const qsizetype keep = m_end - m_pos;
    if (keep > 0 && m_pos > 0) std::memmove(m_buf.data(), m_buf.constData() + m_pos, keep);
    m_pos = 0;
    m_end = keep;
    if (m_buf.size() < keep + kChunk) m_buf.resize(keep + kChunk);
    const qint64 n = m_device.read(m_buf.data() + keep, kChunk);
    if (n < 0) {
        m_error = m_path + ": cannot read: " + m_device.errorString();
        return false;
    }
    if (n == 0) m_eof = true;
    m_end += static_cast<qsizetype>(n);
    return true;
}

bool CsvRecordReader::start(char delimiter)
{
    m_total = m_device.isSequential() ? -1 : m_device.size();
    // A pipe may hand out fewer bytes than a byte-order mark in its first read.
    do {
        if (!fill()) return false;
    } while (m_end < 3 && !m_eof);
    if (m_end >= 3 && std::memcmp(m_buf.constData(), "\xEF\xBB\xBF", 3) == 0) m_pos = 3;
    // Spreadsheets save "Unicode text" as UTF-16: say so rather than "binary data".
    if (m_end >= 2 && (std::memcmp(m_buf.constData(), "\xFF\xFE", 2) == 0 ||
                       std::memcmp(m_buf.constData(), "\xFE\xFF", 2) == 0)) {
        m_error = m_path + ": the file is UTF-16 text; save it as UTF-8 (CSV UTF-8)";
        return false;
    }
    if (delimiter != 0)
        m_delimiter = delimiter;
    else
        detectDelimiter();
    return true;
}

void CsvRecordReader::detectDelimiter()
{
    // Count each candidate outside quotes on the first (up to) 20 non-blank lines of the
    // first chunk. The delimiter is the candidate found the same number of times on every line;
    // a tie goes to tab, then semicolon (a semicolon table may use decimal commas).
    static constexpr std::array<char, 3> kCandidates = {'\t', ';', ','};
    constexpr int kLines = 20;
    std::array<std::array<int, kLines>, 3> counts{};
    std::array<int, 3> current{};
    int lines = 0;
    bool quoted = false, lineHasText = false;
    const char* d = m_buf.constData();
    auto endLine = [&] { // lines of nothing but spaces and tabs do not count
        for (size_t k = 0; k < 3; ++k) {
            if (lineHasText) counts[k][static_cast<size_t>(lines)] = current[k];
            current[k] = 0;
        }
        lines += lineHasText ? 1 : 0;
        lineHasText = false;
    };
    for (qsizetype i = m_pos; i < m_end && lines < kLines; ++i) {
        const char c = d[i];
        if (c == '"') quoted = !quoted;
        if (quoted) continue;
        if (c == '\n' || c == '\r') {
            endLine();
            continue;
        }
        if (c != ' ' && c != '\t') lineHasText = true;
        for (size_t k = 0; k < 3; ++k)
            current[k] += c == kCandidates[k];
    }
    if (m_eof && lines < kLines) endLine();
    if (lines == 0) return;
    int best = -1;
    bool bestConsistent = false;
    for (size_t k = 0; k < 3; ++k) {
        const int first = counts[k][0];
        if (first == 0) continue;
        bool consistent = true;
        for (int l = 1; l < lines; ++l)
            consistent = consistent && counts[k][static_cast<size_t>(l)] == first;
        const bool better = best < 0 || (consistent && !bestConsistent) ||
                            (consistent == bestConsistent && first > counts[best][0]);
        if (better) {
            best = static_cast<int>(k);
            bestConsistent = consistent;
        }
    }
    if (best >= 0) m_delimiter = kCandidates[static_cast<size_t>(best)];
}

bool CsvRecordReader::next()
{
    if (!m_error.isEmpty()) return false;
    for (;;) {
        if (m_pos >= m_end) {
            if (m_eof) return false;
            if (!fill()) return false;
            continue;
        }
        switch (parseRecord()) {
        case Parse::Record:
            return true;
        case Parse::Blank:
            continue;
        case Parse::Error:
            return false;
        case Parse::NeedMore:
            if (m_end - m_pos >= kMaxRecordBytes) {
                fail(m_line, "a line longer than 1 MiB; is this a CSV table? (an unclosed "
                             "quote also makes one long line)");
                return false;
            }
            if (!fill()) return false;
            continue;
        }
    }
}

IL_CSV_INLINE void CsvRecordReader::skipSpaces(Cursor& at) const
{
    const char* d = m_buf.constData();
    while (at.i < m_end && isSpace(d[at.i]))
        ++at.i;
}

IL_CSV_INLINE bool CsvRecordReader::isSpace(char c) const
{
    return c == ' ' || (c == '\t' && m_delimiter != '\t');
}

// Consumes the line end at at.i (CR, LF or CRLF); false if a CR ends the buffer.
IL_CSV_INLINE bool CsvRecordReader::consumeLineEnd(Cursor& at) const
{
    const char* d = m_buf.constData();
    if (d[at.i] == '\r') {
        if (at.i + 1 >= m_end && !m_eof) return false;
        at.i += (at.i + 1 < m_end && d[at.i + 1] == '\n') ? 2 : 1;
    } else {
        ++at.i;
    }
    ++at.newlines;
    return true;
}

IL_CSV_INLINE CsvRecordReader::Parse CsvRecordReader::finishRecord(const Cursor& at)
{
    m_recordLine = m_line;
    m_line += at.newlines;
    m_pos = at.i;
    const bool blank =
        m_fields.size() == 1 && !at.anyQuoted && m_fields[0].begin == m_fields[0].end;
    return blank ? Parse::Blank : Parse::Record;
}

CsvRecordReader::FieldEnd CsvRecordReader::binaryData(const Cursor& at)
{
    fail(m_line + at.newlines, "binary data (a NUL byte); this is not a text table");
    return FieldEnd::Error;
}

// A quoted field from the opening quote at at.i, then what follows its closing quote.
CsvRecordReader::FieldEnd CsvRecordReader::parseQuotedField(Cursor& at)
{
    const char* d = m_buf.constData();
    at.anyQuoted = true;
    Field f;
    if (const FieldEnd e = readQuotedText(at, f); e != FieldEnd::Delimiter) return e;
    skipSpaces(at);
    m_fields.push_back(f);
    if (at.i >= m_end) return m_eof ? FieldEnd::Record : FieldEnd::NeedMore;
    if (d[at.i] == m_delimiter) {
        ++at.i;
        return FieldEnd::Delimiter;
    }
    if (d[at.i] == '\n' || d[at.i] == '\r')
        return consumeLineEnd(at) ? FieldEnd::Record : FieldEnd::NeedMore;
    fail(m_line + at.newlines, "column " + QString::number(m_fields.size()) +
                                   ": text after a closing quote (a quote inside a "
                                   "quoted field is written \"\")");
    return FieldEnd::Error;
}

// The text between the quotes, from the opening quote at at.i to just past the closing one.
// A field without "" escapes stays a view of the buffer; one with them is unescaped into
// m_scratch. Delimiter here means the field was read.
CsvRecordReader::FieldEnd CsvRecordReader::readQuotedText(Cursor& at, Field& f)
{
    const char* d = m_buf.constData();
    qsizetype& i = at.i;
    ++i;
    qsizetype segment = i;
    bool escaped = false;
    for (;;) {
        if (i >= m_end) {
            if (!m_eof) return FieldEnd::NeedMore;
            fail(m_line, "a quoted field is never closed");
            return FieldEnd::Error;
        }
        const char c = d[i];
        if (c == '"') {
            if (i + 1 >= m_end && !m_eof) return FieldEnd::NeedMore;
            if (i + 1 < m_end && d[i + 1] == '"') { // "" inside quotes: one quote
                if (!escaped) {
                    escaped = true;
                    f.inScratch = true;
                    f.begin = static_cast<qsizetype>(m_scratch.size());
                }
                m_scratch.append(d + segment, static_cast<size_t>(i + 1 - segment));
                i += 2;
                segment = i;
                continue;
            }
            if (escaped) {
                m_scratch.append(d + segment, static_cast<size_t>(i - segment));
                f.end = static_cast<qsizetype>(m_scratch.size());
            } else {
                f.begin = segment;
                f.end = i;
            }
            ++i;
            return FieldEnd::Delimiter;
        }
        if (c == '\0') return binaryData(at);
        if (c == '\n' || (c == '\r' && (i + 1 >= m_end || d[i + 1] != '\n'))) {
            if (c == '\r' && i + 1 >= m_end && !m_eof) return FieldEnd::NeedMore;
            ++at.newlines;
        }
        ++i;
    }
}

// Unquoted: up to the delimiter or the line end. A quote inside is kept as text.
IL_CSV_INLINE CsvRecordReader::FieldEnd CsvRecordReader::parseUnquotedField(Cursor& at)
{
    const char* d = m_buf.constData();
    const char delim = m_delimiter;
    Field f;
    f.begin = at.i;
    qsizetype i = at.i;
    while (i < m_end) {
        const char c = d[i];
        if (c == delim || c == '\n' || c == '\r') break;
        if (c == '\0') return binaryData(at);
        ++i;
    }
    at.i = i;
    if (i >= m_end && !m_eof) return FieldEnd::NeedMore;
    f.end = i;
    while (f.end > f.begin && isSpace(d[f.end - 1]))
        --f.end;
    m_fields.push_back(f);
    if (i >= m_end) return FieldEnd::Record;
    if (d[i] == delim) {
        ++at.i;
        return FieldEnd::Delimiter;
    }
    return consumeLineEnd(at) ? FieldEnd::Record : FieldEnd::NeedMore;
}

// Parses one record from m_pos. NeedMore: the buffer ends inside it (the caller reads more
// and starts over; records are short next to a chunk, so re-parsing costs nothing).
CsvRecordReader::Parse CsvRecordReader::parseRecord()
{
    m_fields.clear();
    m_scratch.clear();
    Cursor at{m_pos};
    for (;;) {
        skipSpaces(at);
        const bool quoted = at.i < m_end && m_buf.constData()[at.i] == '"';
        switch (quoted ? parseQuotedField(at) : parseUnquotedField(at)) {
        case FieldEnd::Delimiter:
            continue;
        case FieldEnd::Record:
            return finishRecord(at);
        case FieldEnd::NeedMore:
            return Parse::NeedMore;
        case FieldEnd::Error:
            return Parse::Error;
        }
    }
}

} // namespace il::io
