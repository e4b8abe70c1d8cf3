#include "core/util/textformat.h"

#include <array>
#include <charconv>
#include <cmath>

namespace spark {

namespace {

/// NaN and infinities as words; nullptr for finite values.
const char* nonFiniteText(double value)
{
    if (std::isnan(value)) {
        return "n/a";
    }
    if (std::isinf(value)) {
        return value > 0 ? "∞" : "-∞";
    }
    return nullptr;
}

} // namespace

std::string formatFixed(double value, int digits)
{
    if (const char* word = nonFiniteText(value)) {
        return word;
    }
    std::array<char, 64> buffer{};
    const auto [end, ec] =
        std::to_chars(buffer.data(), buffer.data() + buffer.size(), value, std::chars_format::fixed, digits);
    std::string text = ec == std::errc() ? std::string(buffer.data(), end) : std::string("?");
    // "-0.000" reads as a sign where there is none.
    if (text.front() == '-' && text.find_first_not_of("-0.") == std::string::npos) {
        text.erase(0, 1);
    }
    return text;
}

std::string formatGeneral(double value, int significant)
{
    if (const char* word = nonFiniteText(value)) {
        return word;
    }
    std::array<char, 64> buffer{};
    const auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value,
                                         std::chars_format::general, significant);
    return ec == std::errc() ? std::string(buffer.data(), end) : std::string("?");
}

ScaledBytes scaleBytes(std::uint64_t bytes)
{
    static constexpr std::array<const char*, 6> kUnits{"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    ScaledBytes scaled{static_cast<double>(bytes), kUnits[0]};
    for (std::size_t unit = 1; scaled.value >= 1024.0 && unit < kUnits.size(); ++unit) {
        scaled.value /= 1024.0;
        scaled.unit = kUnits[unit];
    }
    return scaled;
}

std::string formatBytes(std::uint64_t bytes)
{
    const auto scaled = scaleBytes(bytes);
    return bytes < 1024 ? std::to_string(bytes) + " B" : formatFixed(scaled.value, 2) + " " + scaled.unit;
}

} // namespace spark
