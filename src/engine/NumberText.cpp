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

NumberRead readDouble(std::string_view text, double& value)
{
    const char* b = text.data();
    const char* e = b + text.size();
    if (b != e && *b == '+') { // from_chars takes no plus sign
        ++b;
        if (b == e || *b == '-' || *b == '+') return NumberRead::NotANumber;
    }
    if (b == e) return NumberRead::NotANumber;
    double d = 0;
    const auto [end, ec] = std::from_chars(b, e, d, std::chars_format::general);
    if (end != e || ec == std::errc::invalid_argument) return NumberRead::NotANumber;
    if (ec == std::errc::result_out_of_range) {
        const bool negative = *b == '-';
        if (magnitudeAboveOne(std::string_view(b, static_cast<size_t>(e - b)))) {
            value = negative ? -std::numeric_limits<double>::infinity()
                             : std::numeric_limits<double>::infinity();
            return NumberRead::TooLarge;
        }
        value = negative ? -0.0 : 0.0;
        return NumberRead::TooSmall;
    }
    value = d;
    return NumberRead::Ok;
}

NumberRead readFloat(std::string_view text, float& value)
{
    double d = 0;
    const NumberRead r = readDouble(text, d);
    if (r == NumberRead::NotANumber) return r;
    value = static_cast<float>(d);
    if (r != NumberRead::Ok) return r;
    if (std::isfinite(d) && std::fabs(d) > static_cast<double>(std::numeric_limits<float>::max()))
        return NumberRead::TooLarge;
    if (d != 0 && value == 0.f) return NumberRead::TooSmall;
    return NumberRead::Ok;
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
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
    return ec == std::errc() ? std::string(buf, end) : std::string("nan");
}

} // namespace il
