// The JSON datasets of the original Iron Learn project:
//   {"m": rows, "n": columns, "x": [m*n floats, row-major], "y": [m*k floats],
//    "x_test": [...], "y_test": [...], "m_test": rows (optional)}
// read as a table with columns x1..xn and y (or y1..yk when y holds k values per row), so
// the table task treats them like a CSV file. x_test/y_test rows follow the others and
// become the test split (CsvTable::testStart). null is a missing value.
#pragma once

#include "CsvTable.h"

namespace il::io {

// True when the file is JSON: a .json name, or text that starts with '{'.
bool isJsonDataset(const QString& path, const QByteArray& bytes);

// Refuses (ok = false), naming the file and the field (or the line of a JSON syntax error):
// invalid JSON, a missing or non-integer m or n, arrays whose lengths do not match m and n,
// x_test without y_test, values that are not numbers or beyond the float range.
CsvReadResult readJsonDataset(const QByteArray& bytes, const QString& pathForMessages);

} // namespace il::io
