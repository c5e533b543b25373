#include "CsvRecordReader.h"

#include <QIODevice>

#include <algorithm>
#include <array>
#include <cstring>

namespace il::io {

namespace {

constexpr qsizetype kChunk = qsizetype(1) << 20;

} // namespace

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
    if (!fill()) return false;
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

// Parses one record from m_pos. NeedMore: the buffer ends inside it (the caller reads more
// and starts over; records are short next to a chunk, so re-parsing costs nothing).
CsvRecordReader::Parse CsvRecordReader::parseRecord()
{
    m_fields.clear();
    m_scratch.clear();
    const char* d = m_buf.constData();
    const char delim = m_delimiter;
    const bool tabIsSpace = delim != '\t';
    auto isSpace = [&](char c) { return c == ' ' || (c == '\t' && tabIsSpace); };
    qsizetype i = m_pos;
    int64_t newlines = 0;
    bool anyQuoted = false;

    // Consumes the line end at i (CR, LF or CRLF); false if a CR ends the buffer.
    auto lineEnd = [&]() {
        if (d[i] == '\r') {
            if (i + 1 >= m_end && !m_eof) return false;
            i += (i + 1 < m_end && d[i + 1] == '\n') ? 2 : 1;
        } else {
            ++i;
        }
        ++newlines;
        return true;
    };
    auto finish = [&]() {
        m_recordLine = m_line;
        m_line += newlines;
        m_pos = i;
        const bool blank =
            m_fields.size() == 1 && !anyQuoted && m_fields[0].begin == m_fields[0].end;
        return blank ? Parse::Blank : Parse::Record;
    };
    auto binary = [&]() {
        fail(m_line + newlines, "binary data (a NUL byte); this is not a text table");
        return Parse::Error;
    };

    for (;;) {
        Field f;
        while (i < m_end && isSpace(d[i]))
            ++i;
        if (i < m_end && d[i] == '"') {
            anyQuoted = true;
            ++i;
            qsizetype segment = i;
            bool escaped = false;
            for (;;) {
                if (i >= m_end) {
                    if (!m_eof) return Parse::NeedMore;
                    fail(m_line, "a quoted field is never closed");
                    return Parse::Error;
                }
                const char c = d[i];
                if (c == '"') {
                    if (i + 1 >= m_end && !m_eof) return Parse::NeedMore;
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
                    break;
                }
                if (c == '\0') return binary();
                if (c == '\n' || (c == '\r' && (i + 1 >= m_end || d[i + 1] != '\n'))) {
                    if (c == '\r' && i + 1 >= m_end && !m_eof) return Parse::NeedMore;
                    ++newlines;
                }
                ++i;
            }
            while (i < m_end && isSpace(d[i]))
                ++i;
            m_fields.push_back(f);
            if (i >= m_end) {
                if (!m_eof) return Parse::NeedMore;
                return finish();
            }
            if (d[i] == delim) {
                ++i;
                continue;
            }
            if (d[i] == '\n' || d[i] == '\r') {
                if (!lineEnd()) return Parse::NeedMore;
                return finish();
            }
            fail(m_line + newlines, "column " + QString::number(m_fields.size()) +
                                        ": text after a closing quote (a quote inside a "
                                        "quoted field is written \"\")");
            return Parse::Error;
        }

        // Unquoted: up to the delimiter or the line end. A quote inside is kept as text.
        f.begin = i;
        while (i < m_end) {
            const char c = d[i];
            if (c == delim || c == '\n' || c == '\r') break;
            if (c == '\0') return binary();
            ++i;
        }
        if (i >= m_end && !m_eof) return Parse::NeedMore;
        f.end = i;
        while (f.end > f.begin && isSpace(d[f.end - 1]))
            --f.end;
        m_fields.push_back(f);
        if (i >= m_end) return finish();
        if (d[i] == delim) {
            ++i;
            continue;
        }
        if (!lineEnd()) return Parse::NeedMore;
        return finish();
    }
}

} // namespace il::io
