#pragma once

// The fake quantization of one group under a candidate range, as the rounding search scores it
// (internal to core/quant). Each family follows CT's _quantize_dequantize in the weight dtype with the
// parameters calculate_qparams gives the candidate range; NVFP4 without FP8 scale rounding and without a
// global scale (LC sets scale_dtype to None for the search, rounding.md §1.2 step 1).

#include "core/quant/schemecodecs.h"
#include "core/quant/weightscheme.h"

namespace spark::candidate {

/// @brief The arithmetic of one scheme family for one weight dtype.
struct Arith
{
    SchemeFamily family = SchemeFamily::IntSymmetric;
    DType dtype = DType::BF16;
    float divisor = 7.5f; ///< absmax / divisor = scale (symmetric families)
    float qMin = -8.0f;
    float qMax = 7.0f;
};

/// @brief The arithmetic of @p scheme on weights of @p dtype.
inline Arith arithFor(const WeightScheme& scheme, DType dtype)
{
    Arith a;
    a.family = scheme.family;
    a.dtype = dtype;
    switch (scheme.family) {
    case SchemeFamily::IntSymmetric:
        a.divisor = scheme.intScheme().scaleDivisor();
        a.qMin = static_cast<float>(scheme.intScheme().qMin());
        a.qMax = static_cast<float>(scheme.intScheme().qMax());
        break;
    case SchemeFamily::Fp8:
        a.divisor = 448.0f;
        break;
    case SchemeFamily::Nvfp4:
        a.divisor = 6.0f;
        break;
    default:
        break;
    }
    return a;
}

/// @brief CT's calculate_qparams of a candidate range: the scale, and the zero point (asymmetric only,
/// else 0) as a float holding a small integer.
struct Params
{
    float scale = 1.0f;
    float zeroPoint = 0.0f;
};

/// @brief The parameters of the range [@p mn, @p mx] (mn <= 0 <= mx) under @p a. Computed once per
/// candidate, then shared by every weight of the group (scalar path and SIMD kernel alike).
inline Params paramsFor(const Arith& a, float mn, float mx)
{
    if (a.family == SchemeFamily::IntAsymmetric) {
        const auto p = codec::asymGroupParams(a.dtype, mn, mx);
        return {p.scale, static_cast<float>(p.zeroPoint)};
    }
    return {rtn::scaleFromAbsmax(a.dtype, std::max(-mn, mx), a.divisor), 0.0f};
}

/// @brief CT's dequantized value in the weight dtype of one weight @p w under the parameters @p p.
inline float dequantize(const Arith& a, const Params& p, float w)
{
    const DType dt = a.dtype;
    const float s = p.scale;
    switch (a.family) {
    case SchemeFamily::IntAsymmetric: {
        const float x = rtn::roundToDType(dt, rtn::roundToDType(dt, w / s) + p.zeroPoint);
        const float q = rtn::roundHalfEven(std::clamp(x, -8.0f, 7.0f));
        // q and the zero point are small integers: their difference is exact in float.
        return rtn::roundToDType(dt, (q - p.zeroPoint) * s);
    }
    case SchemeFamily::Fp8:
        return rtn::roundToDType(dt, minifloat::e4m3ToFloat(codec::fp8Code(dt, w, s)) * s);
    case SchemeFamily::Nvfp4: {
        const float x = std::clamp(rtn::roundToDType(dt, w / s), -6.0f, 6.0f);
        return rtn::roundToDType(dt, minifloat::e2m1ToFloat(minifloat::e2m1FromFloat(x)) * s);
    }
    default: {
        const float x = rtn::roundToDType(dt, w / s);
        return rtn::roundToDType(dt, rtn::roundHalfEven(std::clamp(x, a.qMin, a.qMax)) * s);
    }
    }
}

/// @brief Calls @p f(k, deq) for every weight @p w[k] of a group of @p n under the range [@p mn, @p mx]
/// (mn <= 0 <= mx), deq being CT's dequantized value in the weight dtype.
template <class F>
inline void fakeQuantize(const Arith& a, float mn, float mx, const float* w, std::size_t n, F&& f)
{
    const Params p = paramsFor(a, mn, mx);
    for (std::size_t k = 0; k < n; ++k) {
        f(k, dequantize(a, p, w[k]));
    }
}

} // namespace spark::candidate
