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

/// @brief Calls @p f(k, deq) for every weight @p w[k] of a group of @p n under the range [@p mn, @p mx]
/// (mn <= 0 <= mx), deq being CT's dequantized value in the weight dtype.
template <class F>
inline void fakeQuantize(const Arith& a, float mn, float mx, const float* w, std::size_t n, F&& f)
{
    const DType dt = a.dtype;
    switch (a.family) {
    case SchemeFamily::IntAsymmetric: {
        const auto p = codec::asymGroupParams(dt, mn, mx);
        for (std::size_t k = 0; k < n; ++k) {
            const int q = codec::quantizeAsym(dt, w[k], p);
            f(k, rtn::roundToDType(dt, static_cast<float>(q - p.zeroPoint) * p.scale));
        }
        return;
    }
    case SchemeFamily::Fp8: {
        const float s = rtn::scaleFromAbsmax(dt, std::max(-mn, mx), a.divisor);
        for (std::size_t k = 0; k < n; ++k) {
            f(k, rtn::roundToDType(dt, minifloat::e4m3ToFloat(codec::fp8Code(dt, w[k], s)) * s));
        }
        return;
    }
    case SchemeFamily::Nvfp4: {
        const float s = rtn::scaleFromAbsmax(dt, std::max(-mn, mx), a.divisor);
        for (std::size_t k = 0; k < n; ++k) {
            const float x = std::clamp(rtn::roundToDType(dt, w[k] / s), -6.0f, 6.0f);
            f(k, rtn::roundToDType(dt, minifloat::e2m1ToFloat(minifloat::e2m1FromFloat(x)) * s));
        }
        return;
    }
    default: {
        const float s = rtn::scaleFromAbsmax(dt, std::max(-mn, mx), a.divisor);
        for (std::size_t k = 0; k < n; ++k) {
            const float x = rtn::roundToDType(dt, w[k] / s);
            f(k, rtn::roundToDType(dt, rtn::roundHalfEven(std::clamp(x, a.qMin, a.qMax)) * s));
        }
        return;
    }
    }
}

} // namespace spark::candidate
