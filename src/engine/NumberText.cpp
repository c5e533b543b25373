#include "NumberText.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>

namespace il {

namespace {

// For a text that from_chars found out of range: whether its magnitude is above 1 (overflow)
// rather than below (underflow). The decimal exponent of the first nonzero digit plus the
// written exponent decides; neither needs the value itself.
bool magnitudeAboveOne(std::string_view t)
{
    size_t i = 0;
    if (i < t.size() && (t[i] == '-' || t[i] == '+')) ++i;
    int64_t lead = 0; // decimal exponent of the first nonzero digit, before the written exponent
    bool seenNonzero = false, afterPoint = false;
    int64_t zerosAfterPoint = 0;
    for (; i < t.size() && t[i] != 'e' && t[i] != 'E'; ++i) {
        const char c = t[i];
        if (c == '.') {
            afterPoint = true;
        } else if (!afterPoint) {
            if (seenNonzero)
                ++lead;
            else if (c != '0')
                seenNonzero = true;
        } else if (!seenNonzero) {
            if (c == '0')
                ++zerosAfterPoint;
            else {
                seenNonzero = true;
                lead = -(zerosAfterPoint + 1);
            }
        }
    }
    int64_t exponent = 0;
    if (i < t.size()) {
        ++i;
        bool negative = false;
        if (i < t.size() && (t[i] == '-' || t[i] == '+')) negative = t[i++] == '-';
        for (; i < t.size(); ++i)
            if (exponent < 1'000'000'000) exponent = exponent * 10 + (t[i] - '0');
        if (negative) exponent = -exponent;
    }
    return lead + exponent >= 0;
}

} // namespace

namespace {

// readDouble and readFloat: from_chars into Real, rounded once (a float read through a double
// would be rounded twice, which can differ from the nearest float in the last bit).
template <typename Real> NumberRead readReal(std::string_view text, Real& value)
{
    const char* b = text.data();
    const char* e = b + text.size();
    if (b != e && *b == '+') { // from_chars takes no plus sign
        ++b;
        if (b == e || *b == '-' || *b == '+') return NumberRead::NotANumber;
    }
    if (b == e) return NumberRead::NotANumber;
    Real v = 0;
    const auto [end, ec] = std::from_chars(b, e, v, std::chars_format::general);
    if (end != e || ec == std::errc::invalid_argument) return NumberRead::NotANumber;
    if (ec == std::errc::result_out_of_range) {
        const bool negative = *b == '-';
        if (magnitudeAboveOne(std::string_view(b, static_cast<size_t>(e - b)))) {
            value = negative ? -std::numeric_limits<Real>::infinity()
                             : std::numeric_limits<Real>::infinity();
            return NumberRead::TooLarge;
        }
        value = negative ? Real(-0.0) : Real(0.0);
        return NumberRead::TooSmall;
    }
    value = v;
    return NumberRead::Ok;
}

} // namespace

NumberRead readDouble(std::string_view text, double& value)
{
    return readReal(text, value);
}

NumberRead readFloat(std::string_view text, float& value)
{
    return readReal(text, value);
}

std::string formatGeneral(double v, int precision)
{
    char buf[64];
    const auto [end, ec] =
        std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, precision);
    return ec == std::errc() ? std::string(buf, end) : std::string("nan");
}

std::string formatFixed(double v, int decimals)
{
    char buf[400]; // 1e308 in full and the decimals
    const auto [end, ec] =
        std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
    return ec == std::errc() ? std::string(buf, end) : std::string("nan");
}

} // namespace il
