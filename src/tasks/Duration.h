// Durations as the CLI and the studio print them: "m:ss", or "h:mm:ss" from an hour up.
#pragma once

#include <QString>

#include <cmath>

namespace il::tasks {

// unknown: what a negative or non-finite duration (no estimate yet) prints as.
inline QString formatDuration(double seconds, const QString& unknown = QStringLiteral("--:--"))
{
    if (!std::isfinite(seconds) || seconds < 0) return unknown;
    const auto total = static_cast<long long>(std::llround(seconds));
    const long long h = total / 3600, m = (total / 60) % 60, s = total % 60;
    if (h > 0) return QString::asprintf("%lld:%02lld:%02lld", h, m, s);
    return QString::asprintf("%lld:%02lld", m, s);
}

} // namespace il::tasks
