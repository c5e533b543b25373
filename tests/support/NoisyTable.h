// A small noisy regression table that a large network learns by heart: rows of
// y = a + b / 2 + noise (deviation about 0.5), a and b uniform in [-1, 1], from a fixed
// generator, so every test that overfits it sees the same rows.
#pragma once

#include <QByteArray>
#include <QString>

#include <cstdint>

namespace testdata {

// The CSV text (header "a,b,y", four decimals) of `rows` rows.
inline QByteArray noisyLinearTable(int rows = 60)
{
    uint64_t state = 3;
    auto uniform = [&state] {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<double>(state >> 11) * 0x1.0p-53;
    };
    QByteArray csv = "a,b,y\n";
    for (int i = 0; i < rows; ++i) {
        const double a = 2 * uniform() - 1, b = 2 * uniform() - 1;
        const double noise = uniform() + uniform() + uniform() - 1.5; // sd 0.5
        csv += QString("%1,%2,%3\n")
                   .arg(a, 0, 'f', 4)
                   .arg(b, 0, 'f', 4)
                   .arg(a + b / 2 + noise, 0, 'f', 4)
                   .toUtf8();
    }
    return csv;
}

} // namespace testdata
