#pragma once

#include <cmath>
#include <cstdint>

// float8_e4m3fn and FP4 e2m1 encodings as compressed-tensors writes them (schemes-spec §2.5, §2.6).
namespace spark::minifloat {

/// @brief PyTorch's `tensor.to(torch.float8_e4m3fn)` (c10 fp8e4m3fn_from_fp32_value): round to nearest,
/// ties to even, subnormals kept (steps of 2^-9), sign kept (-0.0 → 0x80), and NO saturation: |x| above
/// 464 or NaN gives the NaN code 0x7F | sign. Callers clamp to ±448 first, as CT does.
inline std::uint8_t e4m3FromFloat(float x)
{
    const std::uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
    const float a = std::fabs(x);
    if (!(a <= 464.0f)) {
        return static_cast<std::uint8_t>(sign | 0x7F);
    }
    if (a < 0x1p-6f) {
        // Subnormal grid: a multiple of 2^-9; nearbyint rounds half to even in the default mode.
        return static_cast<std::uint8_t>(sign | static_cast<std::uint8_t>(std::nearbyint(a * 512.0f)));
    }
    int exponent = 0;
    const float m = std::frexp(a, &exponent); // a = m · 2^exponent, m in [0.5, 1)
    int e = exponent - 1;                     // a = (2m) · 2^e, 2m in [1, 2)
    int mantissa = static_cast<int>(std::nearbyint((2.0f * m - 1.0f) * 8.0f)); // exact product
    if (mantissa == 8) {
        mantissa = 0;
        ++e;
    }
    return static_cast<std::uint8_t>(sign | ((e + 7) << 3) | mantissa);
}

/// @brief Magnitudes of the FP4 e2m1 codes 0..7.
inline constexpr float kE2m1Values[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

/// @brief CT's cast_to_fp4 of a value already clamped to [-6, 6], as a nibble: sign << 3 | index. Ties go
/// to the even mantissa (0.25 → 0, 0.75 → 1, 1.25 → 1, 1.75 → 2, 2.5 → 2, 3.5 → 4, 5 → 4); a negative value
/// keeps its sign bit even when it rounds to 0, while -0.0 gives +0 (torch.sign(-0.0) is 0).
inline std::uint8_t e2m1FromFloat(float x)
{
    const float a = std::fabs(x);
    std::uint8_t index = 7;
    if (a <= 0.25f) {
        index = 0;
    } else if (a < 0.75f) {
        index = 1;
    } else if (a <= 1.25f) {
        index = 2;
    } else if (a < 1.75f) {
        index = 3;
    } else if (a <= 2.5f) {
        index = 4;
    } else if (a < 3.5f) {
        index = 5;
    } else if (a <= 5.0f) {
        index = 6;
    }
    return static_cast<std::uint8_t>((x < 0.0f ? 0x8 : 0x0) | index);
}

/// @brief The value of an FP4 nibble (sign << 3 | index).
inline float e2m1ToFloat(std::uint8_t nibble)
{
    const float v = kE2m1Values[nibble & 0x7];
    return (nibble & 0x8) ? -v : v;
}

} // namespace spark::minifloat
