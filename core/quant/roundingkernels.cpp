// SIMD kernel of the rounding search. The lanes of a vector are candidates of one group, not weights: each
// lane then adds its own terms in the weights' order, exactly as the scalar loop does, so the float64 sums
// (and the winners chosen from them) stay bit-identical while all candidates run off one L1-resident group.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/quant/roundingkernels.cpp"
#include <hwy/foreach_target.h> // must precede highway.h
#include <hwy/highway.h>
#include "core/quant/rtn-inl.h"
#include "core/quant/minifloat-inl.h"
// clang-format on

#include "core/quant/roundingkernels.h"

#include <algorithm>
#include <cmath>

HWY_BEFORE_NAMESPACE();
namespace spark::HWY_NAMESPACE {
namespace {

using DD = hn::Repartition<double, DF>;
using VD = hn::Vec<DD>;

constexpr std::size_t kMaxFloatLanes = HWY_MAX_BYTES / sizeof(float);
constexpr std::size_t kBuffer = kernels::kMaxCandidates + kMaxFloatLanes;

/// candidate::dequantize() of one weight @p w (all lanes) under one candidate per lane. @p lo and @p hi
/// are the family's clamp bounds (integer code range, ±448 for FP8, ±6 for FP4).
template <DType T, SchemeFamily F> HWY_INLINE VF Dequantize(VF w, VF s, VF zp, VF lo, VF hi)
{
    if constexpr (F == SchemeFamily::IntAsymmetric) {
        const auto x = RoundToDType<T>(hn::Add(RoundToDType<T>(hn::Div(w, s)), zp));
        const auto q = hn::Round(hn::Min(hn::Max(x, lo), hi));
        return RoundToDType<T>(hn::Mul(hn::Sub(q, zp), s));
    } else if constexpr (F == SchemeFamily::Fp8) {
        const auto x = hn::Min(hn::Max(RoundToDType<T>(hn::Div(w, s)), lo), hi);
        return RoundToDType<T>(hn::Mul(E4m3Round(x), s));
    } else if constexpr (F == SchemeFamily::Nvfp4) {
        const auto x = hn::Min(hn::Max(RoundToDType<T>(hn::Div(w, s)), lo), hi);
        return RoundToDType<T>(hn::Mul(E2m1Round(x), s));
    } else {
        // hn::Round may give -0 where rtn::roundHalfEven gives +0; the sign of a zero never reaches a term
        // (|.| or a square of deq - w).
        return RoundToDType<T>(hn::Mul(QuantizeToFloat<T>(w, s, lo, hi), s));
    }
}

/// One weight's error term per lane: the pow table entry of |rnd(deq - w)| (16-bit dtypes), or the float
/// square of deq - w.
template <DType T, RoundingError E> HWY_INLINE VF Term(VF deq, VF w, const float* table)
{
    const DF df;
    if constexpr (E == RoundingError::F32L2) {
        const auto d = hn::Sub(deq, w);
        return hn::Mul(d, d);
    } else {
        static_assert(T != DType::F32, "DTypeLp on F32 weights has no table");
        const DI di;
        const auto a = hn::Abs(RoundToDType<T>(hn::Sub(deq, w)));
        VI index;
        if constexpr (T == DType::BF16) {
            index = hn::ShiftRight<16>(hn::BitCast(di, a));
        } else {
            // a is a half value (or +Inf): its half bits from the float's, subnormals counted in 2^-24
            // steps; the Min maps float Inf to half Inf.
            const auto normal = hn::Sub(hn::ShiftRight<13>(hn::BitCast(di, a)), hn::Set(di, 112 << 10));
            const auto sub = hn::ConvertTo(di, hn::Mul(a, hn::Set(df, 0x1p24f)));
            const auto isSub = hn::RebindMask(di, hn::Lt(a, hn::Set(df, 0x1p-14f)));
            index = hn::Min(hn::IfThenElse(isSub, sub, normal), hn::Set(di, 0x7C00));
        }
        return hn::GatherIndex(df, table, index);
    }
}

/// Adds the float terms to the float64 sums, exactly (lower lanes into @p lo, upper into @p hi).
HWY_INLINE void AddPromoted(VF t, VD& lo, VD& hi)
{
    const DD dd;
#if HWY_TARGET == HWY_SCALAR
    (void)hi;
    lo = hn::Add(lo, hn::PromoteTo(dd, t));
#else
    const hn::Rebind<float, DD> dh;
    lo = hn::Add(lo, hn::PromoteTo(dd, hn::LowerHalf(dh, t)));
    hi = hn::Add(hi, hn::PromoteTo(dd, hn::UpperHalf(dh, t)));
#endif
}

HWY_INLINE void StoreSums(VD lo, VD hi, double* out)
{
    const DD dd;
    hn::StoreU(lo, dd, out);
#if HWY_TARGET == HWY_SCALAR
    (void)hi;
#else
    hn::StoreU(hi, dd, out + hn::Lanes(dd));
#endif
}

template <DType T, SchemeFamily F, RoundingError E>
void SumsT(const candidate::Arith& a, const float* table, const float* w, std::size_t n,
           const candidate::Params* params, std::size_t count, double* sums)
{
    const DF df;
    const DD dd;
    const std::size_t lanes = hn::Lanes(df);
    // Padding lanes repeat the last candidate (a valid scale); their sums are dropped.
    const std::size_t padded = (count + lanes - 1) / lanes * lanes;
    float scales[kBuffer];
    float zeros[kBuffer];
    double out[kBuffer];
    for (std::size_t i = 0; i < padded; ++i) {
        const auto& p = params[std::min(i, count - 1)];
        scales[i] = p.scale;
        zeros[i] = p.zeroPoint;
    }
    float lo = a.qMin, hi = a.qMax;
    if constexpr (F == SchemeFamily::IntAsymmetric) {
        lo = -8.0f;
        hi = 7.0f;
    } else if constexpr (F == SchemeFamily::Fp8) {
        lo = -448.0f;
        hi = 448.0f;
    } else if constexpr (F == SchemeFamily::Nvfp4) {
        lo = -6.0f;
        hi = 6.0f;
    }
    const auto vlo = hn::Set(df, lo);
    const auto vhi = hn::Set(df, hi);
    // Two candidate vectors per pass over the group: twice the independent work per broadcast weight.
    std::size_t j = 0;
    for (; j + 2 * lanes <= padded; j += 2 * lanes) {
        const auto s0 = hn::LoadU(df, scales + j);
        const auto z0 = hn::LoadU(df, zeros + j);
        const auto s1 = hn::LoadU(df, scales + j + lanes);
        const auto z1 = hn::LoadU(df, zeros + j + lanes);
        VD lo0 = hn::Zero(dd), hi0 = hn::Zero(dd), lo1 = hn::Zero(dd), hi1 = hn::Zero(dd);
        for (std::size_t k = 0; k < n; ++k) {
            const auto wk = hn::Set(df, w[k]);
            AddPromoted(Term<T, E>(Dequantize<T, F>(wk, s0, z0, vlo, vhi), wk, table), lo0, hi0);
            AddPromoted(Term<T, E>(Dequantize<T, F>(wk, s1, z1, vlo, vhi), wk, table), lo1, hi1);
        }
        StoreSums(lo0, hi0, out + j);
        StoreSums(lo1, hi1, out + j + lanes);
    }
    for (; j < padded; j += lanes) {
        const auto s = hn::LoadU(df, scales + j);
        const auto zp = hn::LoadU(df, zeros + j);
        VD sumLo = hn::Zero(dd);
        VD sumHi = hn::Zero(dd);
        for (std::size_t k = 0; k < n; ++k) {
            const auto wk = hn::Set(df, w[k]);
            AddPromoted(Term<T, E>(Dequantize<T, F>(wk, s, zp, vlo, vhi), wk, table), sumLo, sumHi);
        }
        StoreSums(sumLo, sumHi, out + j);
    }
    std::copy(out, out + count, sums);
}

template <DType T, RoundingError E>
void SumsFamily(const candidate::Arith& a, const float* table, const float* w, std::size_t n,
                const candidate::Params* params, std::size_t count, double* sums)
{
    switch (a.family) {
    case SchemeFamily::IntAsymmetric:
        return SumsT<T, SchemeFamily::IntAsymmetric, E>(a, table, w, n, params, count, sums);
    case SchemeFamily::Fp8:
        return SumsT<T, SchemeFamily::Fp8, E>(a, table, w, n, params, count, sums);
    case SchemeFamily::Nvfp4:
        return SumsT<T, SchemeFamily::Nvfp4, E>(a, table, w, n, params, count, sums);
    default:
        return SumsT<T, SchemeFamily::IntSymmetric, E>(a, table, w, n, params, count, sums);
    }
}

} // namespace

void CandidateErrorSums(const candidate::Arith& a, RoundingError error, const float* table, const float* w,
                        std::size_t n, const candidate::Params* params, std::size_t count, double* sums)
{
    if (count == 0) {
        return;
    }
    WithDType(a.dtype, [&](auto t) {
        constexpr DType T = decltype(t)::value;
        if (error == RoundingError::F32L2) {
            SumsFamily<T, RoundingError::F32L2>(a, table, w, n, params, count, sums);
        } else if constexpr (T != DType::F32) {
            SumsFamily<T, RoundingError::DTypeLp>(a, table, w, n, params, count, sums);
        }
    });
}

} // namespace spark::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace spark::kernels {

HWY_EXPORT(CandidateErrorSums);

bool candidateKernelSupports(RoundingError error, DType dtype)
{
    return error == RoundingError::F32L2 || dtype != DType::F32;
}

void candidateErrorSums(const candidate::Arith& arith, RoundingError error, const float* powTable,
                        const float* w, std::size_t n, const candidate::Params* params, std::size_t count,
                        double* sums)
{
    HWY_DYNAMIC_DISPATCH(CandidateErrorSums)(arith, error, powTable, w, n, params, count, sums);
}

} // namespace spark::kernels
#endif
