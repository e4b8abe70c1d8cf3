#include "core/io/floatconv.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace spark {

float f16ToFloat(std::uint16_t h)
{
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t exponent = (h >> 10) & 0x1Fu;
    const std::uint32_t mantissa = h & 0x3FFu;
    if (exponent == 0) {
        // Zero or subnormal: value = mantissa * 2^-24, exact in float.
        const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
        return sign ? -magnitude : magnitude;
    }
    if (exponent == 31) {
        return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
    }
    return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

std::uint16_t floatToF16(float value)
{
    const auto bits = std::bit_cast<std::uint32_t>(value);
    const std::uint16_t sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
    const std::uint32_t absBits = bits & 0x7FFFFFFFu;
    if (absBits > 0x7F800000u) {
        return static_cast<std::uint16_t>(sign | 0x7E00u);
    }
    if (absBits >= 0x477FF000u) { // rounds to >= 65520: overflow to infinity
        return static_cast<std::uint16_t>(sign | 0x7C00u);
    }
    const float magnitude = std::bit_cast<float>(absBits);
    if (absBits < 0x38800000u) {
        // Subnormal half: quantum 2^-24; nearbyint rounds half to even in the default mode.
        const float scaled = std::nearbyint(std::ldexp(magnitude, 24));
        return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(scaled));
    }
    std::uint32_t rounded = absBits + 0xFFFu + ((absBits >> 13) & 1u);
    rounded &= 0xFFFFE000u;
    const std::uint32_t exponent = (rounded >> 23) - 112;
    return static_cast<std::uint16_t>(sign | (exponent << 10) | ((rounded >> 13) & 0x3FFu));
}

float f8e4m3ToFloat(std::uint8_t v)
{
    const bool negative = v & 0x80u;
    const int exponent = (v >> 3) & 0xF;
    const int mantissa = v & 0x7;
    float magnitude;
    if (exponent == 0xF && mantissa == 0x7) {
        return std::numeric_limits<float>::quiet_NaN();
    }
    if (exponent == 0) {
        magnitude = std::ldexp(static_cast<float>(mantissa), -9);
    } else {
        magnitude = std::ldexp(1.0f + static_cast<float>(mantissa) / 8.0f, exponent - 7);
    }
    return negative ? -magnitude : magnitude;
}

float f8e5m2ToFloat(std::uint8_t v)
{
    // E5M2 is the top byte of an IEEE half.
    return f16ToFloat(static_cast<std::uint16_t>(v) << 8);
}

bool canConvertToFloat(DType dtype)
{
    switch (dtype) {
    case DType::BF16:
    case DType::F16:
    case DType::F32:
    case DType::F64:
    case DType::F8_E4M3:
    case DType::F8_E5M2:
        return true;
    default:
        return false;
    }
}

void toFloat(DType dtype, const std::byte* src, std::size_t count, float* out)
{
    switch (dtype) {
    case DType::BF16:
        for (std::size_t i = 0; i < count; ++i) {
            std::uint16_t b;
            std::memcpy(&b, src + 2 * i, 2);
            out[i] = bf16ToFloat(b);
        }
        break;
    case DType::F16:
        for (std::size_t i = 0; i < count; ++i) {
            std::uint16_t b;
            std::memcpy(&b, src + 2 * i, 2);
            out[i] = f16ToFloat(b);
        }
        break;
    case DType::F32:
        std::memcpy(out, src, count * 4);
        break;
    case DType::F64:
        for (std::size_t i = 0; i < count; ++i) {
            double d;
            std::memcpy(&d, src + 8 * i, 8);
            out[i] = static_cast<float>(d);
        }
        break;
    case DType::F8_E4M3:
        for (std::size_t i = 0; i < count; ++i) {
            out[i] = f8e4m3ToFloat(static_cast<std::uint8_t>(src[i]));
        }
        break;
    case DType::F8_E5M2:
        for (std::size_t i = 0; i < count; ++i) {
            out[i] = f8e5m2ToFloat(static_cast<std::uint8_t>(src[i]));
        }
        break;
    default:
        for (std::size_t i = 0; i < count; ++i) {
            out[i] = std::numeric_limits<float>::quiet_NaN();
        }
        break;
    }
}

} // namespace spark
