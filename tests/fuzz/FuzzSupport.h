// What the fuzz targets share: the libFuzzer entry points, a check that stops the run, and
// the one-line-message rule every reader promises.
//
// Each Fuzz*.cpp defines LLVMFuzzerTestOneInput. Built with the fuzz preset it is a libFuzzer
// program (packaging/fuzz/run.sh); in the normal build TestFuzzReplay.cpp feeds it the
// committed corpus (tests/fuzz/corpus/<target>/), so every input that once broke a reader is
// checked on every test run, under the asan preset too.
#pragma once

#include <QByteArray>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>

#include <algorithm>

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

// A safetensors file from just its JSON header: the length in front and a zero data buffer
// behind, as long as the header's largest offset (at most 16 MiB), so that mutations of the
// header are not all refused for a wrong length.
inline QByteArray fileFromHeader(const QByteArray& header)
{
    int64_t dataBytes = 0;
    const QJsonObject root = QJsonDocument::fromJson(header).object();
    for (auto it = root.begin(); it != root.end(); ++it) {
        const QJsonArray offsets = it.value().toObject().value("data_offsets").toArray();
        if (offsets.size() == 2)
            dataBytes = std::max<int64_t>(dataBytes, offsets.at(1).toInteger());
    }
    dataBytes = std::min<int64_t>(dataBytes, int64_t(1) << 24);
    QByteArray out(8, '\0');
    auto n = static_cast<uint64_t>(header.size());
    for (int i = 0; i < 8; ++i, n >>= 8)
        out[i] = static_cast<char>(n & 0xff);
    return out + header + QByteArray(static_cast<qsizetype>(dataBytes), '\0');
}

// The input of the model-file targets: a whole file, or, when it starts with '{', just the JSON
// header (fileFromHeader adds the rest).
inline QByteArray fileOrHeader(const uint8_t* data, size_t size)
{
    const QByteArray bytes = bytesOf(data, size);
    return bytes.startsWith('{') ? fileFromHeader(bytes) : bytes;
}

} // namespace il::fuzz

#define FUZZ_CHECK(condition)                                                                   \
    do {                                                                                        \
        if (!(condition)) il::fuzz::broken(#condition, __FILE__, __LINE__);                      \
    } while (0)
