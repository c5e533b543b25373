// ironlearn-csv-load: how fast a large CSV table loads and how much memory it takes
// (packaging/bench/csv_load.sh runs it).
//
//   ironlearn-csv-load --generate FILE [--rows N] [--cols C]   write a numeric table
//   ironlearn-csv-load FILE                                     read it, then prepare it
//
// Memory is the process's peak resident set (VmHWM from /proc/self/status), read after each
// stage, so the figures include everything the stage kept and freed.
#include "CsvTable.h"
#include "Random.h"
#include "TabularTask.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>

#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

double peakMiB()
{
    QFile f("/proc/self/status");
    if (!f.open(QIODevice::ReadOnly)) return -1;
    for (const QByteArray& line : f.readAll().split('\n'))
        if (line.startsWith("VmHWM:"))
            return line.mid(6).trimmed().split(' ').first().toDouble() / 1024.0;
    return -1;
}

int generate(const QString& path, long long rows, int cols)
{
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) {
        std::fprintf(stderr, "%s: cannot write\n", qPrintable(path));
        return 1;
    }
    std::string block;
    for (int c = 1; c < cols; ++c) { // (appended piece by piece: GCC 12 warns on "x" + s)
        block.append("x").append(std::to_string(c)).append(",");
    }
    block.append("y\n");
    il::Rng rng(42);
    char num[32];
    for (long long r = 0; r < rows; ++r) {
        double sum = 0;
        for (int c = 1; c <= cols; ++c) {
            // Features uniform in [-10, 10); the target a noisy sum, so the table can be learned.
            const double v = c < cols ? rng.uniform(-10, 10) : sum + rng.normal();
            sum += c < cols ? v * (c % 3 - 1) : 0;
            const auto end = std::to_chars(num, num + sizeof num, v, std::chars_format::fixed, 5);
            block.append(num, end.ptr);
            block += c < cols ? ',' : '\n';
        }
        if (block.size() > (1 << 20)) {
            f.write(block.data(), static_cast<qint64>(block.size()));
            block.clear();
        }
    }
    f.write(block.data(), static_cast<qint64>(block.size()));
    std::printf("wrote %lld rows x %d columns to %s (%.1f MiB)\n", rows, cols, qPrintable(path),
                static_cast<double>(f.size()) / (1 << 20));
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    QStringList args = app.arguments().mid(1);
    if (args.size() >= 2 && args[0] == "--generate") {
        long long rows = 1000000;
        int cols = 20;
        for (int i = 2; i + 1 < args.size(); i += 2) {
            if (args[i] == "--rows") rows = args[i + 1].toLongLong();
            if (args[i] == "--cols") cols = args[i + 1].toInt();
        }
        return generate(args[1], rows, std::max(cols, 2));
    }
    if (args.size() != 1) {
        std::fprintf(stderr, "usage: ironlearn-csv-load FILE | --generate FILE [--rows N] "
                             "[--cols C]\n");
        return 2;
    }
    const double baseline = peakMiB();
    QElapsedTimer timer;
    timer.start();
    il::io::CsvReadResult r = il::io::readCsv(args[0]);
    const double readSeconds = timer.elapsed() / 1000.0;
    if (!r.ok) {
        std::fprintf(stderr, "error: %s\n", qPrintable(r.error));
        return 1;
    }
    const double readPeak = peakMiB();
    const double floatsMiB =
        static_cast<double>(r.table.rows) * r.table.columnCount() * 4 / (1 << 20);
    std::printf("read     %lld rows x %d columns in %.2f s; peak RSS %.0f MiB (%.0f MiB before "
                "reading; the floats are %.0f MiB)\n",
                static_cast<long long>(r.table.rows), r.table.columnCount(), readSeconds, readPeak,
                baseline, floatsMiB);
    timer.restart();
    il::tasks::TabularDataset ds;
    il::tasks::TabularOptions options;
    QString error;
    if (!il::tasks::prepareTabular(r.table, options, ds, &error)) {
        std::fprintf(stderr, "error: %s\n", qPrintable(error));
        return 1;
    }
    std::printf("prepare  %s, %lld train / %lld validation rows in %.2f s; peak RSS %.0f MiB "
                "(table and encoded rows side by side)\n",
                qPrintable(ds.schema.kindName()), static_cast<long long>(ds.train.rows),
                static_cast<long long>(ds.val.rows), timer.elapsed() / 1000.0, peakMiB());
    return 0;
}
