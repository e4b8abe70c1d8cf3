#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

// float8_e4m3fn and FP4 e2m1 encodings as compressed-tensors writes them (schemes-spec §2.5, §2.6).
namespace spark::minifloat {

/// @brief PyTorch's `tensor.to(torch.float8_e4m3fn)` (c10 fp8e4m3fn_from_fp32_value): round to nearest,
/// ties to even, subnormals kept (steps of 2^-9), sign kept (-0.0 → 0x80), and NO saturation: |x| above
/// 464 or NaN gives the NaN code 0x7F | sign. Callers clamp to ±448 first, as CT does.
inline std::uint8_t e4m3FromFloat(float x)
{
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
    const auto sign = static_cast<std::uint8_t>((bits >> 24) & 0x80u);
    const std::uint32_t magnitude = bits & 0x7FFFFFFFu;
    if (!(magnitude <= 0x43E80000u)) { // above 464 (or NaN): the cast's NaN code
        return static_cast<std::uint8_t>(sign | 0x7F);
    }
    if (magnitude < 0x3C800000u) { // below 2^-6: a multiple of 2^-9, rounded half to even
        // Adding 1.5 * 2^23 leaves the integer part rounded in the default (nearest-even) mode.
        const float scaled = std::bit_cast<float>(magnitude) * 512.0f + 12582912.0f;
        return static_cast<std::uint8_t>(sign | static_cast<std::uint8_t>(scaled - 12582912.0f));
    }
    // Normal: keep 3 mantissa bits, nearest even; a carry moves into the exponent as it should. The
    // float exponent bias is 127, e4m3's is 7: subtract 120 from the exponent field.
    const std::uint32_t rounded = (magnitude + 0x7FFFFu + ((magnitude >> 20) & 1u)) >> 20;
    return static_cast<std::uint8_t>(sign | (rounded - (120u << 3)));
}

/// @brief float8_e4m3fn code → value, from a table built once (exact: every code is a float).
float e4m3ToFloat(std::uint8_t code);

/// @brief Magnitudes of the FP4 e2m1 codes 0..7.
inline constexpr float kE2m1Values[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

/// @brief CT's cast_to_fp4 of a value already clamped to [-6, 6], as a nibble: sign << 3 | index. Ties go
/// to the even mantissa (0.25 → 0, 0.75 → 1, 1.25 → 1, 1.75 → 2, 2.5 → 2, 3.5 → 4, 5 → 4); a negative value
/// keeps its sign bit even when it rounds to 0, while -0.0 gives +0 (torch.sign(-0.0) is 0).
inline std::uint8_t e2m1FromFloat(float x)
{
    // The index is the number of rounding boundaries below |x|; "<" or "<=" at each boundary sends its
    // tie to the even neighbour. Comparisons, not branches: the data decides them at random.
    const float a = std::fabs(x);
    const int index =
        (a > 0.25f) + (a >= 0.75f) + (a > 1.25f) + (a >= 1.75f) + (a > 2.5f) + (a >= 3.5f) + (a > 5.0f);
    return static_cast<std::uint8_t>((x < 0.0f ? 0x8 : 0x0) | index);
}

/// @brief The value of an FP4 nibble (sign << 3 | index).
inline float e2m1ToFloat(std::uint8_t nibble)
{
    const float v = kE2m1Values[nibble & 0x7];
    return (nibble & 0x8) ? -v : v;
}

} // namespace spark::minifloat
