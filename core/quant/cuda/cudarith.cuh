#pragma once
// Device copies of the one-element definitions of core/quant/rtnscalar.h and the SIMD building blocks
// of core/quant/rtn-inl.h, operation by operation. Every float operation is an explicit
// round-to-nearest intrinsic (__fdiv_rn, __fmul_rn, __fsub_rn), which nvcc never contracts into an
// FMA nor replaces with a reciprocal multiply; the build also passes -fmad=false -prec-div=true
// -ftz=false so nothing else can differ from the CPU's strict IEEE arithmetic.

#include "core/quant/cuda/cudaengine.h"

#include <cstdint>

namespace spark::cuda::dev {

template <ElementType T> struct Raw;
template <> struct Raw<ElementType::BF16>
{
    using type = std::uint16_t;
};
template <> struct Raw<ElementType::F16>
{
    using type = std::uint16_t;
};
template <> struct Raw<ElementType::F32>
{
    using type = std::uint32_t;
};

template <ElementType T> constexpr int kElementBytes = T == ElementType::F32 ? 4 : 2;

/// rtn::rawAbs: sign-cleared bits; integer order = numeric order for non-negative floats.
template <ElementType T> __device__ __forceinline__ std::uint32_t rawAbs(std::uint32_t bits)
{
    return T == ElementType::F32 ? (bits & 0x7FFFFFFFu) : (bits & 0x7FFFu);
}

/// rtn::nonFiniteRaw: rawAbs at or above it is Inf or NaN.
template <ElementType T> __device__ __forceinline__ std::uint32_t nonFiniteRaw()
{
    return T == ElementType::F32 ? 0x7F800000u : (T == ElementType::F16 ? 0x7C00u : 0x7F80u);
}

/// rtn::rawToFloat for finite values (rtn-inl.h LoadWeights for F16: exact, subnormals included).
template <ElementType T> __device__ __forceinline__ float rawToFloat(std::uint32_t raw)
{
    if constexpr (T == ElementType::F32) {
        return __uint_as_float(raw);
    } else if constexpr (T == ElementType::BF16) {
        return __uint_as_float(raw << 16);
    } else {
        const std::uint32_t sign = (raw & 0x8000u) << 16;
        const std::uint32_t t = (raw & 0x7FFFu) << 13;
        const std::uint32_t normal = t + (112u << 23);
        // Zero and subnormals: mantissa * 2^-24 via an exact magic-number subtraction.
        const std::uint32_t magic = 113u << 23;
        const std::uint32_t sub =
            __float_as_uint(__fsub_rn(__uint_as_float(t + magic), __uint_as_float(magic)));
        const bool isSub = (t & 0x0F800000u) == 0;
        return __uint_as_float((isSub ? sub : normal) | sign);
    }
}

/// rtn::roundToDType: round to nearest even into the weight dtype and back.
template <ElementType T> __device__ __forceinline__ float roundToDType(float x)
{
    if constexpr (T == ElementType::F32) {
        return x;
    } else if constexpr (T == ElementType::BF16) {
        // floatToBf16 (NaN quieted; never reached for finite weights and positive scales) + bf16ToFloat.
        std::uint32_t bits = __float_as_uint(x);
        if ((bits & 0x7FFFFFFFu) > 0x7F800000u) {
            return __uint_as_float(((bits >> 16) | 0x0040u) << 16);
        }
        bits += 0x7FFFu + ((bits >> 16) & 1u);
        return __uint_as_float(bits & 0xFFFF0000u);
    } else {
        // rtn-inl.h RoundToDType<F16>: IEEE half RNE, overflow to inf, fixed 2^-24 quantum below 2^-14.
        const float a = fabsf(x);
        std::uint32_t bits = __float_as_uint(a);
        bits += 0xFFFu + ((bits >> 13) & 1u);
        float normal = __uint_as_float(bits & 0xFFFFE000u);
        if (a >= 65520.0f) {
            normal = __int_as_float(0x7F800000);
        }
        const float sub = __fmul_rn(rintf(__fmul_rn(a, 0x1p24f)), 0x1p-24f);
        const float r = a < 0x1p-14f ? sub : normal;
        return copysignf(r, x);
    }
}

/// rtn::scaleEps: CT >= 0.13 replaces an exact-zero scale with eps(dtype).
template <ElementType T> __device__ __forceinline__ float scaleEps()
{
    return T == ElementType::F32 ? 0x1p-23f : (T == ElementType::F16 ? 0x1p-10f : 0x1p-7f);
}

/// round_to_dtype(absmax / divisor) before the eps substitution (statskernels counts its zeros).
template <ElementType T> __device__ __forceinline__ float rawScale(float absmax, float divisor)
{
    return roundToDType<T>(__fdiv_rn(absmax, divisor));
}

/// rtn::scaleFromAbsmax.
template <ElementType T> __device__ __forceinline__ float scaleFromAbsmax(float absmax, float divisor)
{
    const float s = rawScale<T>(absmax, divisor);
    return s == 0.0f ? scaleEps<T>() : s;
}

/// rtn::storeScale: raw bits of a scale that is already exactly representable in the dtype.
template <ElementType T> __device__ __forceinline__ typename Raw<T>::type scaleBits(float s)
{
    if constexpr (T == ElementType::F32) {
        return __float_as_uint(s);
    } else if constexpr (T == ElementType::BF16) {
        return static_cast<std::uint16_t>(__float_as_uint(s) >> 16);
    } else {
        // Positive, finite and exactly a half value: re-encode without rounding.
        const std::uint32_t f = __float_as_uint(s);
        const int exponent = static_cast<int>((f >> 23) & 0xFFu) - 127;
        if (exponent >= -14) {
            return static_cast<std::uint16_t>(((exponent + 15) << 10) | ((f >> 13) & 0x3FFu));
        }
        // Half subnormal: s = m * 2^-24 with m < 1024, exact.
        return static_cast<std::uint16_t>(__float2uint_rn(__fmul_rn(s, 0x1p24f)));
    }
}

/// The clamped, rounded quotient as float: rtn::quantizeValue before its int conversion
/// (round_half_even(clamp(round_to_dtype(w / s), qMin, qMax)); std::clamp == fminf(fmaxf()) for non-NaN).
template <ElementType T>
__device__ __forceinline__ float quantizeToFloat(float w, float s, float qMin, float qMax)
{
    const float x = roundToDType<T>(__fdiv_rn(w, s));
    return rintf(fminf(fmaxf(x, qMin), qMax));
}

/// rtn::dequantizeValue: q * s rounded to the weight dtype.
template <ElementType T> __device__ __forceinline__ float dequantize(float q, float s)
{
    return roundToDType<T>(__fmul_rn(q, s));
}

} // namespace spark::cuda::dev
