// Fuzz target: Iron Learn's JSON datasets (readJsonDataset). Besides "never crashes": a
// refusal is one line naming the file; an accepted dataset is a rectangular table whose
// columns hold finite floats or missing cells, with the test split after the training rows.
#include "FuzzSupport.h"

#include "JsonDataset.h"

#include <cmath>

using namespace il::io;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const QByteArray bytes = il::fuzz::bytesOf(data, size);
    const QString path = QStringLiteral("fuzz.json");
    FUZZ_CHECK(isJsonDataset(path, bytes));
    const CsvReadResult r = readJsonDataset(bytes, path);
    if (!r.ok) {
        FUZZ_CHECK(il::fuzz::isOneLineNaming(r.error, path));
        return 0;
    }
    const CsvTable& t = r.table;
    FUZZ_CHECK(t.rows > 0 && t.columnCount() >= 2 && t.jsonRows);
    FUZZ_CHECK(t.testStart == -1 || (t.testStart > 0 && t.testStart < t.rows));
    for (const CsvColumn& c : t.columns) {
        FUZZ_CHECK(static_cast<int64_t>(c.numbers.size()) == t.rows);
        FUZZ_CHECK(c.missing.empty() || static_cast<int64_t>(c.missing.size()) == t.rows);
        for (size_t i = 0; i < c.numbers.size(); ++i)
            FUZZ_CHECK(std::isfinite(c.numbers[i]) || c.isMissing(static_cast<int64_t>(i)));
        FUZZ_CHECK(c.numberCount + c.missingCount == t.rows);
        FUZZ_CHECK(t.findColumn(c.name) >= 0);
    }
    (void)t.where(t.rows - 1);
    return 0;
}
