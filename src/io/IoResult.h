// The outcome of a file operation: ok, or one message for people that names the file.
#pragma once

#include <QString>

namespace il::io {

struct IoResult {
    bool ok = true;
    QString error;

    static IoResult success() { return {}; }
    static IoResult failure(QString message) { return {false, std::move(message)}; }
    explicit operator bool() const { return ok; }
};

} // namespace il::io
