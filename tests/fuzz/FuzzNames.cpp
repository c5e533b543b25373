// Fuzz target: names files (parseNames, decodeUtf8). Besides "never crashes":
// - decodeUtf8 is exact: bytes it accepts are the UTF-8 of the code points it returns, the
//   bytes before a refusal decode and those from the bad byte on do not;
// - a refusal is one line naming the file; accepted names are non-empty, free of control
//   characters and tabs, at most kMaxNameLength long, on rising lines.
#include "FuzzSupport.h"

#include "NamesFile.h"


using namespace il::io;

namespace {

// UTF-8 by the book (Qt's fromUcs4 would drop a leading U+FEFF as a byte-order mark).
QByteArray encode(const std::u32string& s)
{
    QByteArray out;
    for (char32_t c : s) {
        if (c < 0x80) {
            out += static_cast<char>(c);
        } else if (c < 0x800) {
            out += static_cast<char>(0xC0 | (c >> 6));
            out += static_cast<char>(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            out += static_cast<char>(0xE0 | (c >> 12));
            out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (c & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (c >> 18));
            out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (c & 0x3F));
        }
    }
    return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 1) return 0;
    const bool keepCase = data[0] & 1;
    const QByteArray bytes = il::fuzz::bytesOf(data + 1, size - 1);

    std::u32string decoded;
    int64_t bad = -1;
    if (decodeUtf8(bytes.constData(), bytes.size(), decoded, &bad)) {
        FUZZ_CHECK(encode(decoded) == bytes);
    } else {
        FUZZ_CHECK(bad >= 0 && bad < bytes.size());
        // The bytes before the bad one decode; from it on they do not.
        std::u32string prefix;
        FUZZ_CHECK(decodeUtf8(bytes.constData(), bad, prefix, nullptr));
        FUZZ_CHECK(!decodeUtf8(bytes.constData() + bad, bytes.size() - bad, prefix, nullptr));
    }

    const QString path = QStringLiteral("fuzz.txt");
    const NamesReadResult r = parseNames(bytes, path, keepCase);
    if (!r.ok) {
        FUZZ_CHECK(il::fuzz::isOneLineNaming(r.error, path));
        return 0;
    }
    FUZZ_CHECK(!r.file.names.empty() && r.file.names.size() == r.file.lines.size());
    int64_t previous = 0;
    for (size_t i = 0; i < r.file.names.size(); ++i) {
        const std::u32string& name = r.file.names[i];
        FUZZ_CHECK(!name.empty());
        // Lowercasing may lengthen a name a little (U+0130 becomes two code points).
        FUZZ_CHECK(name.size() <= static_cast<size_t>(3 * kMaxNameLength));
        for (char32_t c : name)
            FUZZ_CHECK(c >= 0x20 && !(c >= 0x7F && c <= 0x9F));
        FUZZ_CHECK(r.file.lines[i] > previous);
        previous = r.file.lines[i];
    }
    return 0;
}
