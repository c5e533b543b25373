// Helpers shared by the table task tests.
#pragma once

#include "TabularTask.h"

#include <QByteArray>
#include <QString>

#include <cmath>

namespace il::tasks::test {

inline io::CsvTable tableOf(const QByteArray& bytes, const QString& path = "t.csv")
{
    io::CsvTable t;
    QString error;
    if (!readTable(path, bytes, t, &error)) qWarning("%s", qPrintable(error));
    return t;
}

inline bool prepare(const QByteArray& csv, const TabularOptions& o, TabularDataset& ds,
                    QString* error, const QString& path = "t.csv")
{
    io::CsvTable t;
    return readTable(path, csv, t, error) && prepareTabular(t, o, ds, error);
}

// rows lines of "x1,x2,label": x1 = i, x2 = i % 7, label one of three words.
inline QByteArray threeClasses(int rows)
{
    QByteArray csv = "x1,x2,label\n";
    const char* names[] = {"cat", "dog", "emu"};
    for (int i = 0; i < rows; ++i)
        csv += QByteArray::number(i) + "," + QByteArray::number(i % 7) + "," + names[i % 3] + "\n";
    return csv;
}

inline QByteArray linear(int rows)
{
    QByteArray csv = "a,b,y\n";
    for (int i = 0; i < rows; ++i)
        csv += QByteArray::number(i) + "," + QByteArray::number(i * i % 13) + "," +
               QByteArray::number(2.0 * i + 0.5) + "\n";
    return csv;
}

inline bool near(double a, double b, double tol = 1e-9)
{
    return std::fabs(a - b) <= tol;
}

} // namespace il::tasks::test
