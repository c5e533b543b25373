#include "PrintableText.h"

namespace il::io {

bool isBidiOverride(char32_t c)
{
    return (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

bool isUnprintable(char32_t c)
{
    return c < 0x20 || (c >= 0x7F && c <= 0x9F) || c == 0x2028 || c == 0x2029 || c == 0x061C ||
           c == 0x200E || c == 0x200F || isBidiOverride(c);
}

QString printable(QStringView text, qsizetype maxChars)
{
    QString out;
    qsizetype shown = 0;
    for (qsizetype i = 0; i < text.size(); ++i) {
        if (maxChars > 0 && shown == maxChars) {
            out += QChar(0x2026); // …
            break;
        }
        ++shown;
        const char32_t c = text[i].unicode();
        if (text[i].isHighSurrogate() && i + 1 < text.size() && text[i + 1].isLowSurrogate()) {
            out += text.mid(i, 2);
            ++i;
            continue; // nothing above U+FFFF is unprintable
        }
        if (!isUnprintable(c)) {
            out += text[i];
            continue;
        }
        switch (c) {
        case '\n':
            out += QStringLiteral("\\n");
            break;
        case '\r':
            out += QStringLiteral("\\r");
            break;
        case '\t':
            out += QStringLiteral("\\t");
            break;
        default:
            out += c < 0x100 ? QStringLiteral("\\x%1").arg(static_cast<uint>(c), 2, 16, QChar('0'))
                             : QStringLiteral("\\u%1").arg(static_cast<uint>(c), 4, 16, QChar('0'));
        }
    }
    return out;
}

QString quoted(QStringView text, qsizetype maxChars)
{
    return u'"' + printable(text, maxChars) + u'"';
}

} // namespace il::io
