#include "NamesFile.h"

#include "PrintableText.h"

#include <QChar>
#include <QList>

namespace il::io {

namespace {

constexpr char32_t kByteOrderMark = 0xFEFF;

bool isContinuation(unsigned char b)
{
    return (b & 0xC0) == 0x80;
}

// C0 and C1 control characters and DEL: never part of a name, a sign of binary data.
bool isControl(char32_t c)
{
    return c < 0x20 || (c >= 0x7F && c <= 0x9F);
}

QString where(const QString& path, int64_t line)
{
    return path + ":" + QString::number(line);
}

} // namespace

bool decodeUtf8(const char* data, int64_t size, std::u32string& out, int64_t* badOffset)
{
    out.clear();
    const auto* s = reinterpret_cast<const unsigned char*>(data);
    int64_t i = 0;
    while (i < size) {
        const unsigned char b = s[i];
        if (b < 0x80) {
            out.push_back(b);
            ++i;
            continue;
        }
        // Lead byte: the sequence length and the allowed range of the second byte (the ranges
        // exclude overlong forms, UTF-16 surrogates and code points above U+10FFFF).
        int length = 0;
        unsigned char lo = 0x80, hi = 0xBF;
        char32_t c = 0;
        if (b >= 0xC2 && b <= 0xDF) {
            length = 2;
            c = b & 0x1F;
        } else if (b >= 0xE0 && b <= 0xEF) {
            length = 3;
            c = b & 0x0F;
            if (b == 0xE0) lo = 0xA0;
            if (b == 0xED) hi = 0x9F;
        } else if (b >= 0xF0 && b <= 0xF4) {
            length = 4;
            c = b & 0x07;
            if (b == 0xF0) lo = 0x90;
            if (b == 0xF4) hi = 0x8F;
        } else {
            if (badOffset) *badOffset = i;
            return false;
        }
        if (i + length > size || s[i + 1] < lo || s[i + 1] > hi) {
            if (badOffset) *badOffset = i;
            return false;
        }
        for (int k = 1; k < length; ++k) {
            if (!isContinuation(s[i + k])) {
                if (badOffset) *badOffset = i;
                return false;
            }
            c = (c << 6) | (s[i + k] & 0x3F);
        }
        out.push_back(c);
        i += length;
    }
    return true;
}

bool isNameCharacter(char32_t c)
{
    return !isControl(c) && !isBidiOverride(c) && c != kByteOrderMark;
}

QString describeCodePoint(char32_t c)
{
    const QString code = QString("U+%1").arg(static_cast<uint>(c), 4, 16, QChar('0')).toUpper();
    if (isUnprintable(c) || QChar::isSpace(c) || QChar::category(c) == QChar::Other_Format)
        return code;
    return "'" + fromCodePoints(std::u32string_view(&c, 1)) + "' (" + code + ")";
}

QString fromCodePoints(std::u32string_view text)
{
    QString out;
    out.reserve(static_cast<qsizetype>(text.size()));
    for (char32_t c : text)
        out += QChar::fromUcs4(c);
    return out;
}

namespace {

size_t leadingSpaces(const std::u32string& line)
{
    size_t first = 0;
    while (first < line.size() && QChar::isSpace(line[first]))
        ++first;
    return first;
}

// The line without Unicode white space at either end.
std::u32string trimmed(const std::u32string& line)
{
    const size_t first = leadingSpaces(line);
    size_t last = line.size();
    while (last > first && QChar::isSpace(line[last - 1]))
        --last;
    return line.substr(first, last - first);
}

// Why a trimmed line cannot be a name (binary data, a table, too long), or an empty string.
// first: where the name starts on its line, for the column in the message.
QString nameProblem(const std::u32string& name, size_t first)
{
    for (size_t i = 0; i < name.size(); ++i) {
        const char32_t c = name[i];
        if (c == 0) return "a NUL byte: this is binary data, not a text file of names";
        if (c == '\t')
            return "a tab inside the line; expected one name per line (is this a table?)";
        if (isControl(c))
            return QString("control character %1 at character %2; this is not a text file of "
                           "names")
                .arg(describeCodePoint(c))
                .arg(first + i + 1);
        if (c == kByteOrderMark)
            return QString("an invisible U+FEFF (zero-width no-break space) at character %1; no "
                           "name holds one")
                .arg(first + i + 1);
        if (isBidiOverride(c))
            return QString("bidirectional control %1 at character %2; it reorders the text "
                           "shown after it, and no name needs one")
                .arg(describeCodePoint(c))
                .arg(first + i + 1);
    }
    if (name.size() > static_cast<size_t>(kMaxNameLength))
        return QString("a line of %1 characters; a name has at most %2 (is this a names file, "
                       "one name per line?)")
            .arg(name.size())
            .arg(kMaxNameLength);
    return {};
}

// Full Unicode case mapping; it may change the length (rarely), never the script. Through
// fromCodePoints: QString::fromUcs4 would drop a leading U+FEFF as a byte-order mark (found by
// the names fuzz target: a line of just U+FEFF became an empty name).
std::u32string lowerCase(const std::u32string& name)
{
    const QList<uint> lower = fromCodePoints(name).toLower().toUcs4();
    return std::u32string(lower.begin(), lower.end());
}

} // namespace

NamesReadResult parseNames(const QByteArray& bytes, const QString& path, bool keepCase)
{
    NamesReadResult r;
    if (bytes.isEmpty()) {
        r.error = path + ": the file is empty; expected one name per line";
        return r;
    }
    const char* data = bytes.constData();
    const int64_t size = bytes.size();
    int64_t pos = 0;
    if (size >= 3 && bytes.startsWith("\xEF\xBB\xBF")) pos = 3; // UTF-8 byte-order mark
    std::u32string line;
    int64_t lineNo = 0;
    while (pos < size) {
        ++lineNo;
        int64_t end = bytes.indexOf('\n', pos);
        if (end < 0) end = size;
        int64_t len = end - pos;
        if (len > 0 && data[pos + len - 1] == '\r') --len; // CRLF
        int64_t bad = 0;
        if (!decodeUtf8(data + pos, len, line, &bad)) {
            r.error = where(path, lineNo) +
                      QString(": invalid UTF-8 (byte 0x%1 at column %2); a names file must be "
                              "UTF-8 text")
                          .arg(static_cast<unsigned char>(data[pos + bad]), 2, 16, QChar('0'))
                          .arg(bad + 1);
            return r;
        }
        pos = end + 1;
        // A byte-order mark at the start of a later line: files joined with cat, each with its
        // own. Not part of the name (a trained vocabulary would hold an invisible character).
        if (!line.empty() && line.front() == kByteOrderMark) line.erase(0, 1);

        std::u32string name = trimmed(line);
        if (name.empty()) {
            ++r.file.blankLines;
            continue;
        }
        const QString problem = nameProblem(name, leadingSpaces(line));
        if (!problem.isEmpty()) {
            r.error = where(path, lineNo) + ": " + problem;
            return r;
        }
        if (!keepCase) name = lowerCase(name);
        r.file.names.push_back(std::move(name));
        r.file.lines.push_back(lineNo);
    }
    if (r.file.names.empty()) {
        r.error = path + QString(": no names, only %1 blank line%2; expected one name per line")
                             .arg(r.file.blankLines)
                             .arg(r.file.blankLines == 1 ? "" : "s");
        return r;
    }
    r.ok = true;
    return r;
}

} // namespace il::io
