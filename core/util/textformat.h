#pragma once

#include <cstdint>
#include <string>

/// @brief Locale-independent number text shared by the CLI, reports and model cards (the GUI formats
/// with the user's locale from the same scaled values).
namespace spark {

/// @brief A number with @p digits after the point ("3.14"); "n/a" for NaN, "∞"/"-∞" for infinities,
/// never "-0.00".
std::string formatFixed(double value, int digits);
/// @brief A number with @p significant digits in %g style ("0.000123", "1.5e-07").
std::string formatGeneral(double value, int significant);

/// @brief A byte count in binary units: @p value in @p unit ("B", "KiB", ... "PiB").
struct ScaledBytes
{
    double value = 0;
    const char* unit = "B";
};
ScaledBytes scaleBytes(std::uint64_t bytes);
/// @brief "96 B", "512.00 KiB", "2.08 GiB".
std::string formatBytes(std::uint64_t bytes);

} // namespace spark
