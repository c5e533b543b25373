// What the fuzz targets share: the libFuzzer entry points, a check that stops the run, and
// the one-line-message rule every reader promises.
//
// Each Fuzz*.cpp defines LLVMFuzzerTestOneInput. Built with the fuzz preset it is a libFuzzer
// program (packaging/fuzz/run.sh); in the normal build TestFuzzReplay.cpp feeds it the
// committed corpus (tests/fuzz/corpus/<target>/), so every input that once broke a reader is
// checked on every test run, under the asan preset too.
#pragma once

#include <QByteArray>
#include <QString>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace il::fuzz {

// A broken promise of the code under test: say which, then abort so libFuzzer saves the input
// (and a replay test fails).
[[noreturn]] inline void broken(const char* what, const char* file, int line)
{
    std::fprintf(stderr, "%s:%d: fuzz check failed: %s\n", file, line, what);
    std::abort();
}

// Every reader's errors are one line that names the file.
inline bool isOneLineNaming(const QString& error, const QString& path)
{
    return !error.isEmpty() && error.startsWith(path) && !error.contains(u'\n');
}

inline QByteArray bytesOf(const uint8_t* data, size_t size)
{
    return QByteArray(reinterpret_cast<const char*>(data), static_cast<qsizetype>(size));
}

} // namespace il::fuzz

#define FUZZ_CHECK(condition)                                                                   \
    do {                                                                                        \
        if (!(condition)) il::fuzz::broken(#condition, __FILE__, __LINE__);                      \
    } while (0)
