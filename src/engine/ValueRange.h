// The values a number may take, described once next to what it is (a TrainerConfig field:
// configRange in Trainer.h; a task's split: Task.h), so the CLI's options and the model files
// refuse the same values with the same words. (The studio's spin boxes keep ranges of their
// own, inside these.)
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

namespace il {

struct ValueRange {
    double min, max;  // inclusive; -inf or +inf for a side without a bound
    const char* what; // "a learning rate": messages say "must be <describe()>"

    bool contains(double v) const { return v >= min && v <= max; } // false for NaN

    // "a learning rate from 1e-12 to 1000000", "a loss up to 1e+300"
    std::string describe() const
    {
        if (std::isinf(min)) return std::string(what) + " up to " + formatBound(max);
        if (std::isinf(max)) return std::string(what) + " of at least " + formatBound(min);
        return std::string(what) + " from " + formatBound(min) + " to " + formatBound(max);
    }

    // Whole numbers in full (1000000, 9007199254740992), others in %g form (1e-12, 0.9999).
    static std::string formatBound(double v)
    {
        char buf[40];
        if (std::floor(v) == v && std::fabs(v) < 1e16)
            std::snprintf(buf, sizeof buf, "%.0f", v);
        else
            std::snprintf(buf, sizeof buf, "%.6g", v);
        return buf;
    }
};

// Counts that files store as JSON numbers, exact up to 2^53.
inline constexpr double kMaxExactCount = 9007199254740992.0;

} // namespace il
