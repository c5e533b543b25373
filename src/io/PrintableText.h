// Text that came from a file (a CSV cell, a JSON string, a layer spec in a model file), made
// safe to quote in a one-line message. Such text may hold a newline that breaks the line, an
// escape sequence (ESC [ ...) that drives the terminal, or a right-to-left override (U+202E)
// that shows the rest of the line backwards. Every message that quotes file content passes it
// through printable() or quoted(); the CLI also passes whole messages through printable()
// before printing them.
#pragma once

#include <QString>
#include <QStringView>

namespace il::io {

// Characters shown escaped: C0 and C1 controls and DEL, the line and paragraph separators
// (U+2028, U+2029), and the bidirectional controls (U+061C, U+200E, U+200F, U+202A to U+202E,
// U+2066 to U+2069).
bool isUnprintable(char32_t c);
// The bidirectional embedding, override and isolate controls (U+202A to U+202E, U+2066 to
// U+2069): they reorder the text after them, and no name or label needs them.
bool isBidiOverride(char32_t c);

// text with each unprintable character escaped (\n, \r, \t, \x1b, \u202e) and, when it is
// longer than maxChars characters (maxChars > 0), cut to maxChars with "…" after.
QString printable(QStringView text, qsizetype maxChars = 0);
// printable(text, maxChars) in double quotes: "a\nb".
QString quoted(QStringView text, qsizetype maxChars = 60);

} // namespace il::io
