// Fuzz target: the CSV reader (CsvRecordReader + CsvTable).
//
// The first byte chooses the options (delimiter given or detected, header given or detected)
// and how the bytes arrive; the rest is the file. Besides "never crashes", it checks:
// - a refusal is one line naming the file; a table is rectangular, with the row lines rising;
// - reading the same bytes in small pieces (so every record may straddle a buffer refill)
//   gives the same table or the same refusal as reading them at once.
#include "FuzzSupport.h"

#include "CsvTable.h"

#include <QIODevice>

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace il::io;

namespace {

// A file that hands out at most `piece` bytes per read, like a slow pipe.
class TrickleDevice : public QIODevice {
public:
    TrickleDevice(const QByteArray& bytes, qint64 piece) : m_bytes(bytes), m_piece(piece)
    {
        open(QIODevice::ReadOnly | QIODevice::Unbuffered);
    }
    bool isSequential() const override { return true; }

protected:
    qint64 readData(char* data, qint64 maxSize) override
    {
        const qint64 n = std::min({maxSize, m_piece, qint64(m_bytes.size()) - m_at});
        if (n > 0) std::memcpy(data, m_bytes.constData() + m_at, static_cast<size_t>(n));
        m_at += n;
        return n;
    }
    qint64 writeData(const char*, qint64) override { return -1; }

private:
    QByteArray m_bytes;
    qint64 m_piece;
    qint64 m_at = 0;
};

bool sameFloat(float a, float b)
{
    return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
}

bool sameColumn(const CsvColumn& a, const CsvColumn& b)
{
    if (a.name != b.name || a.codes != b.codes || a.categories != b.categories ||
        a.missing != b.missing || a.numbers.size() != b.numbers.size() ||
        a.numberCount != b.numberCount || a.textCount != b.textCount ||
        a.missingCount != b.missingCount || a.badCount != b.badCount)
        return false;
    for (size_t i = 0; i < a.numbers.size(); ++i)
        if (!sameFloat(a.numbers[i], b.numbers[i])) return false;
    return true;
}

void checkTable(const CsvTable& t)
{
    FUZZ_CHECK(t.rows > 0);
    for (const CsvColumn& c : t.columns) {
        FUZZ_CHECK(c.numbers.empty() || static_cast<int64_t>(c.numbers.size()) == t.rows);
        FUZZ_CHECK(c.codes.empty() || static_cast<int64_t>(c.codes.size()) == t.rows);
        FUZZ_CHECK(c.missing.empty() || static_cast<int64_t>(c.missing.size()) == t.rows);
        FUZZ_CHECK(c.numberCount + c.textCount + c.missingCount + c.badCount == t.rows);
        for (int32_t code : c.codes)
            FUZZ_CHECK(code == CsvColumn::kMissingCode || code == CsvColumn::kOtherCode ||
                       (code >= 0 && code < c.categories.size()));
    }
    int64_t previous = 0;
    for (int64_t r = 0; r < t.rows; ++r) {
        const int64_t line = t.lineOf(r);
        FUZZ_CHECK(line > previous);
        previous = line;
    }
    for (int c = 0; c < t.columnCount(); ++c) {
        FUZZ_CHECK(t.findColumn(t.columns[static_cast<size_t>(c)].name) >= 0);
        (void)t.cellWhere(t.rows - 1, c);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 1) return 0;
    const uint8_t mode = data[0];
    const QByteArray bytes = il::fuzz::bytesOf(data + 1, size - 1);
    static constexpr char kDelimiters[] = {0, ',', ';', '\t'};
    CsvOptions options;
    options.delimiter = kDelimiters[mode & 3];
    options.header = static_cast<int>((mode >> 2) % 3) - 1;
    const qint64 piece = 1 + (mode >> 4); // 1..16 bytes per read

    const QString path = QStringLiteral("fuzz.csv");
    const CsvReadResult whole = parseCsv(bytes, path, options);
    if (whole.ok)
        checkTable(whole.table);
    else
        FUZZ_CHECK(il::fuzz::isOneLineNaming(whole.error, path));

    // Delimiter detection looks at the first buffer only, so compare with a given delimiter.
    if (options.delimiter == 0) options.delimiter = whole.ok ? whole.table.delimiter : ',';
    const CsvReadResult again = parseCsv(bytes, path, options);
    TrickleDevice device(bytes, piece);
    const CsvReadResult trickled = readCsv(device, path, options);
    FUZZ_CHECK(again.ok == trickled.ok);
    if (!again.ok) {
        // A sequential device has no size, so an empty one is "only blank lines".
        FUZZ_CHECK(again.error == trickled.error || again.error.endsWith("the file is empty"));
        return 0;
    }
    const CsvTable& a = again.table;
    const CsvTable& b = trickled.table;
    FUZZ_CHECK(a.rows == b.rows && a.hasHeader == b.hasHeader && a.notes == b.notes);
    FUZZ_CHECK(a.columnCount() == b.columnCount() && a.lineJumps == b.lineJumps);
    for (size_t c = 0; c < a.columns.size(); ++c)
        FUZZ_CHECK(sameColumn(a.columns[c], b.columns[c]));
    return 0;
}
