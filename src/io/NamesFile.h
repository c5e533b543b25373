// Reading a names file: UTF-8 text, one name per line.
//
// Each line is trimmed (Unicode white space) and lowercased unless keepCase is set; blank lines
// are skipped. A name is a sequence of Unicode code points (char32_t), so Devanagari or Bengali
// names work exactly like a-z. The bytes are checked by hand because QString::fromUtf8 silently
// replaces invalid sequences: a file that is not UTF-8 text is refused with the line at fault.
// Refused, with one line "file:line: reason": invalid UTF-8, NUL or other control characters
// (binary data), the bidirectional overrides and isolates (U+202A to U+202E, U+2066 to U+2069:
// they would reorder how generated names print), a tab inside a line (a table, not a list of
// names), a line longer than
// kMaxNameLength code points, an empty file, a file of blank lines only.
#pragma once

#include <QByteArray>
#include <QString>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace il::io {

// Longer lines are refused: no name is this long, and a huge line usually means a wrong file.
constexpr int kMaxNameLength = 256;

struct NamesFile {
    std::vector<std::u32string> names; // trimmed, lowercased unless keepCase; never empty
    std::vector<int64_t> lines;        // 1-based file line of each name (for messages)
    int64_t blankLines = 0;
};

struct NamesReadResult {
    bool ok = false;
    QString error; // "file:line: what is wrong"
    NamesFile file;
};

// Parses the bytes of a names file; pathForMessages names it in every error.
NamesReadResult parseNames(const QByteArray& bytes, const QString& pathForMessages, bool keepCase);

// Strict UTF-8 decoding (no overlong forms, no surrogates, nothing above U+10FFFF). Returns
// false and the 0-based offset of the first bad byte if the bytes are not valid UTF-8.
bool decodeUtf8(const char* data, int64_t size, std::u32string& out, int64_t* badOffset);

// Whether c may be part of a name: not a control character (C0, C1, DEL) and not a
// bidirectional override or isolate (isBidiOverride, PrintableText.h). parseNames refuses a
// file with others, and a names model whose vocabulary holds one is refused too.
bool isNameCharacter(char32_t c);

// A code point as a learner reads it: 'é' (U+00E9), or just U+0009 for invisible ones
// (controls, spaces and format characters such as U+FEFF or U+200B).
QString describeCodePoint(char32_t c);

// Code points as a QString, every one kept. (QString::fromUcs4 drops a leading U+FEFF as a
// byte-order mark, and a name or vocabulary symbol may be just that.)
QString fromCodePoints(std::u32string_view text);

} // namespace il::io
