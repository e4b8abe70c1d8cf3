#pragma once

#include "core/io/dtype.h"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>

namespace spark {

/// @brief bf16 bits → float (exact).
inline float bf16ToFloat(std::uint16_t bits)
{
    return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

/// @brief float → bf16 bits, round to nearest even (NaN stays a quiet NaN), as torch's .to(bfloat16).
inline std::uint16_t floatToBf16(float value)
{
    auto bits = std::bit_cast<std::uint32_t>(value);
    if ((bits & 0x7FFFFFFFu) > 0x7F800000u) {
        return static_cast<std::uint16_t>((bits >> 16) | 0x0040u);
    }
    bits += 0x7FFFu + ((bits >> 16) & 1u);
    return static_cast<std::uint16_t>(bits >> 16);
}

/// @brief IEEE half bits → float (exact, subnormals included).
float f16ToFloat(std::uint16_t bits);
/// @brief float → IEEE half bits, round to nearest even, overflow to inf.
std::uint16_t floatToF16(float value);
/// @brief OCP FP8 E4M3 (fn: no inf, 0x7F/0xFF NaN) → float.
float f8e4m3ToFloat(std::uint8_t bits);
/// @brief FP8 E5M2 (IEEE-like) → float.
float f8e5m2ToFloat(std::uint8_t bits);

/// @brief True for the dtypes toFloat() converts: BF16, F16, F32, F64, F8_E4M3, F8_E5M2.
bool canConvertToFloat(DType dtype);

/// @brief Converts @p count elements of @p dtype at @p src to float. F64 is narrowed (RNE).
void toFloat(DType dtype, const std::byte* src, std::size_t count, float* out);

} // namespace spark
