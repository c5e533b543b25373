// The values a number may take, described once next to what it is (a TrainerConfig field:
// configRange in Trainer.h; a task's split: Task.h), so the CLI's options and the model files
// refuse the same values with the same words. (The studio's spin boxes keep ranges of their
// own, inside these.)
#pragma once

#include "NumberText.h"

#include <cmath>
#include <string>

namespace il {

struct ValueRange {
    double min, max;  // inclusive; -inf or +inf for a side without a bound
    const char* what; // "a learning rate": messages say "must be <describe()>"

    bool contains(double v) const { return v >= min && v <= max; } // false for NaN

    // For a value kept as a float: in range, or the float nearest to a bound (a learning rate of
    // 1e-12, the least allowed, is 9.9999998e-13 as a float; what was accepted must reopen).
    bool containsFloat(float v) const
    {
        return contains(v) || v == static_cast<float>(min) || v == static_cast<float>(max);
    }

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
        if (std::floor(v) == v && std::fabs(v) < 1e16) return formatFixed(v, 0);
        return formatGeneral(v, 6);
    }
};

// Counts that files store as JSON numbers, exact up to 2^53.
inline constexpr double kMaxExactCount = 9007199254740992.0;

} // namespace il
