#include "JsonDataset.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <cmath>
#include <limits>

namespace il::io {

namespace {

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
                                (v.isString() ? "\"" + v.toString().left(40) + "\" is text"
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
};

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
    int64_t m = 0, n = 0, mTest = -1;
    if (!rd.count(o, "m", m, true) || !rd.count(o, "n", n, true) ||
        !rd.count(o, "m_test", mTest, false))
        return fail();
    if (m < 1 || n < 1) {
        rd.fail("\"m\" and \"n\" must be at least 1");
        return fail();
    }
    if (!o.value("x").isArray() || !o.value("y").isArray()) {
        rd.fail("\"x\" and \"y\" must be arrays of numbers");
        return fail();
    }
    const QJsonArray x = o.value("x").toArray(), y = o.value("y").toArray();
    if (x.size() != m * n) {
        rd.fail(QString("\"x\" has %1 values, but m x n = %2 x %3 = %4")
                    .arg(x.size())
                    .arg(m)
                    .arg(n)
                    .arg(m * n));
        return fail();
    }
    if (y.isEmpty() || y.size() % m != 0) {
        rd.fail(QString("\"y\" has %1 values; it needs m = %2 (or a multiple: several targets)")
                    .arg(y.size())
                    .arg(m));
        return fail();
    }
    const int64_t k = y.size() / m;
    const bool hasTest = o.contains("x_test") || o.contains("y_test");
    QJsonArray xTest, yTest;
    if (hasTest) {
        if (!o.value("x_test").isArray() || !o.value("y_test").isArray()) {
            rd.fail("\"x_test\" and \"y_test\" come together, as arrays of numbers");
            return fail();
        }
        xTest = o.value("x_test").toArray();
        yTest = o.value("y_test").toArray();
        if (xTest.size() % n != 0 || (mTest >= 0 && xTest.size() != mTest * n)) {
            rd.fail(QString("\"x_test\" has %1 values, not a multiple of n = %2%3")
                        .arg(xTest.size())
                        .arg(n)
                        .arg(mTest >= 0 ? QString(" times m_test = %1").arg(mTest) : QString()));
            return fail();
        }
        mTest = xTest.size() / n;
        if (yTest.size() != mTest * k) {
            rd.fail(QString("\"y_test\" has %1 values, but the %2 test rows need %3")
                        .arg(yTest.size())
                        .arg(mTest)
                        .arg(mTest * k));
            return fail();
        }
    } else {
        mTest = 0;
    }

    CsvTable& t = result.table;
    t.path = path;
    t.hasHeader = true;
    t.jsonRows = true;
    t.rows = m + mTest;
    t.testStart = mTest > 0 ? m : -1;
    for (int64_t c = 0; c < n + k; ++c) {
        CsvColumn col;
        col.name = c < n ? "x" + QString::number(c + 1)
                         : (k == 1 ? QString("y") : "y" + QString::number(c - n + 1));
        col.numbers.assign(static_cast<size_t>(t.rows), 0.f);
        t.columns.push_back(std::move(col));
    }
    if (!rd.fill(x, "x", m, n, 0, 0, t) || !rd.fill(y, "y", m, k, static_cast<int>(n), 0, t) ||
        !rd.fill(xTest, "x_test", mTest, n, 0, m, t) ||
        !rd.fill(yTest, "y_test", mTest, k, static_cast<int>(n), m, t)) {
        result.table = CsvTable{};
        return fail();
    }
    result.ok = true;
    return result;
}

} // namespace il::io
