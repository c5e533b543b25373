#include "JsonDataset.h"
#include "PrintableText.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <cmath>
#include <limits>

namespace il::io {

namespace {

// The arrays of a dataset and their sizes: m training rows and mTest test rows of n inputs
// and k targets.
struct DatasetArrays {
    int64_t m = 0, n = 0, k = 0, mTest = -1;
    QJsonArray x, y, xTest, yTest;
};

struct Reader {
    QString path;
    QString error;

    bool fail(const QString& why)
    {
        error = path + ": " + why;
        return false;
    }

    // A whole, positive number field (m, n, m_test).
    bool count(const QJsonObject& o, const char* key, int64_t& out, bool required)
    {
        const QJsonValue v = o.value(key);
        if (v.isUndefined()) {
            out = -1;
            return required ? fail(QString("no \"%1\" field").arg(key)) : true;
        }
        const double d = v.toDouble(-1);
        if (!v.isDouble() || d < 0 || d != std::floor(d) || d > 1e12)
            return fail(QString("\"%1\" must be a whole number of rows or columns").arg(key));
        out = static_cast<int64_t>(d);
        return true;
    }

    // Copies values [row * width, ...) of an array into the columns, row by row.
    bool fill(const QJsonArray& a, const char* key, int64_t rows, int64_t width, int firstColumn,
              int64_t firstRow, CsvTable& t)
    {
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < width; ++c) {
                const qsizetype i = static_cast<qsizetype>(r * width + c);
                const QJsonValue v = a.at(i);
                CsvColumn& col = t.columns[static_cast<size_t>(firstColumn + c)];
                const int64_t row = firstRow + r;
                auto at = [&] { // "x"[17] (example 5: column 3 ("x3")), built only on error
                    return QString("\"%1\"[%2] (%3)")
                        .arg(key)
                        .arg(i)
                        .arg(t.cellWhere(row, firstColumn + static_cast<int>(c))
                                 .mid(path.size() + 2));
                };
                if (v.isNull()) {
                    if (col.missing.empty()) col.missing.assign(static_cast<size_t>(t.rows), false);
                    col.missing[static_cast<size_t>(row)] = true;
                    col.numbers[static_cast<size_t>(row)] = NAN;
                    ++col.missingCount;
                    continue;
                }
                if (!v.isDouble())
                    return fail(at() + ": " +
                                (v.isString() ? quoted(v.toString(), 40) + " is text"
                                              : QString("not a number")) +
                                ", not a number");
                const double d = v.toDouble();
                if (!(std::fabs(d) <= static_cast<double>(std::numeric_limits<float>::max())))
                    return fail(at() + ": " + QString::number(d) +
                                " is outside the float range (+-3.4e38)");
                col.numbers[static_cast<size_t>(row)] = static_cast<float>(d);
                ++col.numberCount;
            }
        return true;
    }

    // The training part: m rows of n inputs ("x") and k targets ("y").
    bool trainingArrays(const QJsonObject& o, DatasetArrays& d)
    {
        if (!count(o, "m", d.m, true) || !count(o, "n", d.n, true) ||
            !count(o, "m_test", d.mTest, false))
            return false;
        if (d.m < 1 || d.n < 1) return fail("\"m\" and \"n\" must be at least 1");
        if (!o.value("x").isArray() || !o.value("y").isArray())
            return fail("\"x\" and \"y\" must be arrays of numbers");
        d.x = o.value("x").toArray();
        d.y = o.value("y").toArray();
        // m and n are the file's word (up to 1e12 each): their product is compared as a double,
        // where it cannot overflow, and is exact whenever it could equal an array's length.
        const double cells = static_cast<double>(d.m) * static_cast<double>(d.n);
        if (static_cast<double>(d.x.size()) != cells)
            return fail(QString("\"x\" has %1 values, but m x n = %2 x %3 = %4")
                            .arg(d.x.size())
                            .arg(d.m)
                            .arg(d.n)
                            .arg(cells <= 9007199254740992.0
                                     ? QString::number(static_cast<qint64>(cells))
                                     : QString::number(cells, 'g', 3)));
        if (d.y.isEmpty() || d.y.size() % d.m != 0)
            return fail(
                QString("\"y\" has %1 values; it needs m = %2 (or a multiple: several targets)")
                    .arg(d.y.size())
                    .arg(d.m));
        d.k = d.y.size() / d.m;
        if (static_cast<double>(d.n) + static_cast<double>(d.k) >
            static_cast<double>(CsvTable::kMaxColumns))
            return fail(QString("n = %1 inputs and %2 target%3 make %4 columns; a table may "
                                "have at most %5")
                            .arg(d.n)
                            .arg(d.k)
                            .arg(d.k == 1 ? "" : "s")
                            .arg(d.n + d.k)
                            .arg(CsvTable::kMaxColumns));
        return true;
    }

    // The optional test part ("x_test", "y_test"; "m_test" if given must agree). Sets d.mTest
    // to its row count, 0 without one.
    bool testArrays(const QJsonObject& o, DatasetArrays& d)
    {
        if (!o.contains("x_test") && !o.contains("y_test")) {
            d.mTest = 0;
            return true;
        }
        if (!o.value("x_test").isArray() || !o.value("y_test").isArray())
            return fail("\"x_test\" and \"y_test\" come together, as arrays of numbers");
        d.xTest = o.value("x_test").toArray();
        d.yTest = o.value("y_test").toArray();
        if (d.xTest.size() % d.n != 0 ||
            (d.mTest >= 0 && static_cast<double>(d.xTest.size()) !=
                                 static_cast<double>(d.mTest) * static_cast<double>(d.n)))
            return fail(
                QString("\"x_test\" has %1 values, not a multiple of n = %2%3")
                    .arg(d.xTest.size())
                    .arg(d.n)
                    .arg(d.mTest >= 0 ? QString(" times m_test = %1").arg(d.mTest) : QString()));
        d.mTest = d.xTest.size() / d.n;
        if (d.yTest.size() != d.mTest * d.k)
            return fail(QString("\"y_test\" has %1 values, but the %2 test rows need %3")
                            .arg(d.yTest.size())
                            .arg(d.mTest)
                            .arg(d.mTest * d.k));
        return true;
    }
};

// Columns x1..xn, then y (or y1..yk), with room for the training and test rows.
void makeColumns(const DatasetArrays& d, CsvTable& t)
{
    t.hasHeader = true;
    t.jsonRows = true;
    t.rows = d.m + d.mTest;
    t.testStart = d.mTest > 0 ? d.m : -1;
    for (int64_t c = 0; c < d.n + d.k; ++c) {
        CsvColumn col;
        col.name = c < d.n ? "x" + QString::number(c + 1)
                           : (d.k == 1 ? QString("y") : "y" + QString::number(c - d.n + 1));
        col.numbers.assign(static_cast<size_t>(t.rows), 0.f);
        t.columns.push_back(std::move(col));
    }
}

} // namespace

bool isJsonDataset(const QString& path, const QByteArray& bytes)
{
    if (QFileInfo(path).suffix().compare("json", Qt::CaseInsensitive) == 0) return true;
    for (char c : bytes) {
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
        return c == '{';
    }
    return false;
}

CsvReadResult readJsonDataset(const QByteArray& bytes, const QString& path)
{
    CsvReadResult result;
    Reader rd{path, {}};
    auto fail = [&] {
        result.error = rd.error;
        return result;
    };
    if (bytes.trimmed().isEmpty()) {
        result.error = path + ": the file is empty";
        return result;
    }
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(bytes, &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        const auto line = bytes.left(parseError.offset).count('\n') + 1;
        result.error =
            path + ":" + QString::number(line) + ": not valid JSON: " + parseError.errorString();
        return result;
    }
    if (!doc.isObject()) {
        rd.fail("a dataset is a JSON object with \"m\", \"n\", \"x\" and \"y\"");
        return fail();
    }
    const QJsonObject o = doc.object();
    DatasetArrays d;
    if (!rd.trainingArrays(o, d) || !rd.testArrays(o, d)) return fail();

    CsvTable& t = result.table;
    t.path = path;
    makeColumns(d, t);
    const auto n = static_cast<int>(d.n);
    if (!rd.fill(d.x, "x", d.m, d.n, 0, 0, t) || !rd.fill(d.y, "y", d.m, d.k, n, 0, t) ||
        !rd.fill(d.xTest, "x_test", d.mTest, d.n, 0, d.m, t) ||
        !rd.fill(d.yTest, "y_test", d.mTest, d.k, n, d.m, t)) {
        result.table = CsvTable{};
        return fail();
    }
    result.ok = true;
    return result;
}

} // namespace il::io
