#pragma once

#include "core/io/floatconv.h"
#include "core/quant/quantscheme.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

// One-element definitions of the compressed-tensors arithmetic (format-spec §2.3, CT-compat mode).
// They are the scalar reference and also finish the few tail elements the SIMD kernels leave over,
// so both paths share one definition of every rounding step.
namespace spark::rtn {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");

/// @brief Raw bits of element @p i with the sign cleared; for non-negative floats the integer
/// order is the numeric order, which makes absmax exact and NaN-proof.
inline std::uint32_t rawAbs(DType dtype, const std::byte* data, std::size_t i)
{
    if (dtype == DType::F32) {
        std::uint32_t bits;
        std::memcpy(&bits, data + 4 * i, 4);
        return bits & 0x7FFFFFFFu;
    }
    std::uint16_t bits;
    std::memcpy(&bits, data + 2 * i, 2);
    return bits & 0x7FFFu;
}

/// @brief rawAbs() at or above this value means Inf or NaN.
inline std::uint32_t nonFiniteRaw(DType dtype)
{
    switch (dtype) {
    case DType::F32:
        return 0x7F800000u;
    case DType::F16:
        return 0x7C00u;
    default:
        return 0x7F80u;
    }
}

/// @brief Decodes raw element bits (any sign) of @p dtype to float, exactly.
inline float rawToFloat(DType dtype, std::uint32_t bits)
{
    switch (dtype) {
    case DType::F32:
        return std::bit_cast<float>(bits);
    case DType::F16:
        return f16ToFloat(static_cast<std::uint16_t>(bits));
    default:
        return bf16ToFloat(static_cast<std::uint16_t>(bits));
    }
}

inline float loadWeight(DType dtype, const std::byte* data, std::size_t i)
{
    if (dtype == DType::F32) {
        std::uint32_t bits;
        std::memcpy(&bits, data + 4 * i, 4);
        return std::bit_cast<float>(bits);
    }
    std::uint16_t bits;
    std::memcpy(&bits, data + 2 * i, 2);
    return rawToFloat(dtype, bits);
}

/// @brief Rounds an fp32 value to the weight dtype (RNE) and back: what torch does to every bf16/f16
/// operation result, whose arithmetic runs in fp32.
inline float roundToDType(DType dtype, float x)
{
    switch (dtype) {
    case DType::F32:
        return x;
    case DType::F16:
        return f16ToFloat(floatToF16(x));
    default:
        return bf16ToFloat(floatToBf16(x));
    }
}

/// @brief The value CT substitutes for an exact-zero scale (CT >= 0.13, `_get_dtype_eps`):
/// bf16 2^-7, f16 2^-10, f32 2^-23.
inline float scaleEps(DType dtype)
{
    switch (dtype) {
    case DType::F32:
        return 0x1p-23f;
    case DType::F16:
        return 0x1p-10f;
    default:
        return 0x1p-7f;
    }
}

/// @brief s = round_to_dtype(fp32(absmax) / divisor), exact zero replaced by eps(dtype).
inline float scaleFromAbsmax(DType dtype, float absmax, float divisor)
{
    const float s = roundToDType(dtype, absmax / divisor);
    return s == 0.0f ? scaleEps(dtype) : s;
}

inline void storeScale(DType dtype, float s, std::byte* out)
{
    if (dtype == DType::F32) {
        std::memcpy(out, &s, 4);
        return;
    }
    const std::uint16_t bits = dtype == DType::F16 ? floatToF16(s) : floatToBf16(s);
    std::memcpy(out, &bits, 2);
}

inline float loadScale(DType dtype, const std::byte* scales, std::size_t i)
{
    return loadWeight(dtype, scales, i);
}

/// @brief Round half to even of |x| < 2^22 (torch.round), without a libm call: adding and removing
/// 1.5 · 2^23 rounds the fraction away in the default nearest-even mode (no fast-math here).
inline float roundHalfEven(float x)
{
    return (x + 12582912.0f) - 12582912.0f;
}

/// @brief q = round_half_even(clamp(round_to_dtype(fp32(w) / fp32(s)), qmin, qmax)).
/// The inner rounding reproduces CT's quotient in the weight dtype (format-spec G2).
inline int quantizeValue(DType dtype, float w, float s, int qMin, int qMax)
{
    const float x = roundToDType(dtype, w / s);
    const float clamped = std::clamp(x, static_cast<float>(qMin), static_cast<float>(qMax));
    return static_cast<int>(roundHalfEven(clamped));
}

/// @brief CT's dequantized weight: q * s computed in fp32, rounded to the weight dtype.
inline float dequantizeValue(DType dtype, int q, float s)
{
    return roundToDType(dtype, static_cast<float>(q) * s);
}

} // namespace spark::rtn
