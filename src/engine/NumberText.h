// Numbers as text in the one form files, layer specs and command lines use ("1.5", "1e-3",
// "-2.5E+7"), whatever the process locale says. Qt sets the C library's locale from the
// environment, so under LC_ALL=de_DE.UTF-8 std::stof("1.5") is 1 and printf("%g", 0.5) writes
// "0,5"; nothing here goes through the C locale.
#pragma once

#include <string>
#include <string_view>

namespace il {

enum class NumberRead {
    Ok,         // value holds the number (possibly +-inf or NaN if the text spelled them)
    NotANumber, // the text is not one number from its first character to its last
    TooLarge,   // beyond the double range (value: +-inf)
    TooSmall,   // a nonzero number below the smallest double (value: +-0)
};

// Reads all of `text` as a double: an optional sign, digits with an optional point, an optional
// exponent; "inf", "infinity" and "nan" in any case. No surrounding spaces, no thousands
// separators, no hexadecimal.
NumberRead readDouble(std::string_view text, double& value);

// Reads all of `text` as a float, with readDouble's rules, rounded once to the nearest float (as
// strtof does): beyond the float range is TooLarge, a nonzero value below it TooSmall.
NumberRead readFloat(std::string_view text, float& value);

// printf's "%.<precision>g" in the C locale (a point, never a comma).
std::string formatGeneral(double v, int precision = 6);

// printf's "%.<decimals>f" in the C locale.
std::string formatFixed(double v, int decimals);

} // namespace il
