// SIMD kernels of the rounding search, all candidates of one L1-resident group per call. F32L2 (range)
// compares float64 sums exactly, so there the lanes are candidates: each lane adds its own terms in the
// weights' order, as the scalar loop does. DTypeLp (mse) rounds its sums to the dtype, so any order that the
// caller can check will do: there the lanes are weights, which wastes no lane on padding and fills each
// table gather.
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

constexpr std::size_t kMaxFloatLanes = HWY_MAX_BYTES / sizeof(float);
constexpr std::size_t kBuffer = kernels::kMaxCandidates + kMaxFloatLanes;

/// The quotient w / s as the dtype is about to round it: from the reciprocals @p r = 1/s when kReciprocal, a
/// product being much cheaper than a division. For bf16 weights and bf16 scales in float's normal range this
/// rounds to the same bf16 as the quotient: w = a·2^i and s = b·2^j with 8-bit a and b put w/s at least
/// 2^-18 (relative) away from every bf16 rounding midpoint (a 9-bit c·2^l; w − c·s is a non-zero multiple
/// of 2^min(i, l+j) since c·b has more than 8 significant bits), while the product is within two roundings
/// (2^-23) of it. An exhaustive check over every normal bf16 weight and scale mantissa agreed.
template <bool kReciprocal, class V> HWY_INLINE V Quotient(V w, V s, V r)
{
    if constexpr (kReciprocal) {
        (void)s;
        return hn::Mul(w, r);
    } else {
        (void)r;
        return hn::Div(w, s);
    }
}

/// candidate::dequantize() of the weights @p w under the candidates' scales @p s (1/s in @p r) and zero
/// points @p zp, lane by lane (one candidate per lane for F32L2, one for all lanes for DTypeLp). @p lo and @p
/// hi are the family's clamp bounds (integer code range, ±448 for FP8, ±6 for FP4).
template <DType T, SchemeFamily F, bool kReciprocal, class V>
HWY_INLINE V Dequantize(V w, V s, V r, V zp, V lo, V hi)
{
    const auto x = RoundToDType<T>(Quotient<kReciprocal>(w, s, r));
    if constexpr (F == SchemeFamily::IntAsymmetric) {
        const auto q = hn::Round(hn::Min(hn::Max(RoundToDType<T>(hn::Add(x, zp)), lo), hi));
        return RoundToDType<T>(hn::Mul(hn::Sub(q, zp), s));
    } else if constexpr (F == SchemeFamily::Fp8) {
        return RoundToDType<T>(hn::Mul(E4m3Round(hn::Min(hn::Max(x, lo), hi)), s));
    } else if constexpr (F == SchemeFamily::Nvfp4) {
        return RoundToDType<T>(hn::Mul(E2m1Round(hn::Min(hn::Max(x, lo), hi)), s));
    } else {
        // hn::Round may give -0 where rtn::roundHalfEven gives +0; the sign of a zero never reaches a term
        // (|.| or a square of deq - w).
        return RoundToDType<T>(hn::Mul(hn::Round(hn::Min(hn::Max(x, lo), hi)), s));
    }
}

/// One weight's DTypeLp term per lane: the pow table entry of |rnd(deq - w)| (16-bit dtypes only).
template <DType T, class V> HWY_INLINE V LpTerm(V deq, V w, const float* table)
{
    static_assert(T != DType::F32, "DTypeLp on F32 weights has no table");
    const hn::DFromV<V> df;
    const hn::RebindToSigned<decltype(df)> di;
    const auto a = hn::Abs(RoundToDType<T>(hn::Sub(deq, w)));
    hn::Vec<decltype(di)> index;
    if constexpr (T == DType::BF16) {
        index = hn::ShiftRight<16>(hn::BitCast(di, a));
    } else {
        // a is a half value (or +Inf): its half bits from the float's, subnormals counted in 2^-24 steps;
        // the Min maps float Inf to half Inf.
        const auto normal = hn::Sub(hn::ShiftRight<13>(hn::BitCast(di, a)), hn::Set(di, 112 << 10));
        const auto sub = hn::ConvertTo(di, hn::Mul(a, hn::Set(df, 0x1p24f)));
        const auto isSub = hn::RebindMask(di, hn::Lt(a, hn::Set(df, 0x1p-14f)));
        index = hn::Min(hn::IfThenElse(isSub, sub, normal), hn::Set(di, 0x7C00));
    }
    return hn::GatherIndex(df, table, index);
}

/// The float64 vectors that hold the sums of one float vector of @p D: its lower lanes, then its upper.
template <class D>
#if HWY_TARGET == HWY_SCALAR
using SumTag = hn::Rebind<double, D>;
#else
using SumTag = hn::Rebind<double, hn::Half<D>>;
#endif

/// Adds the float terms @p t to the float64 sums, exactly (lower lanes into @p lo, upper into @p hi).
template <class D, class VD> HWY_INLINE void AddPromoted(D, hn::Vec<D> t, VD& lo, VD& hi)
{
    const SumTag<D> dd;
#if HWY_TARGET == HWY_SCALAR
    (void)hi;
    lo = hn::Add(lo, hn::PromoteTo(dd, t));
#else
    const hn::Half<D> dh;
    lo = hn::Add(lo, hn::PromoteTo(dd, hn::LowerHalf(dh, t)));
    hi = hn::Add(hi, hn::PromoteTo(dd, hn::UpperHalf(dh, t)));
#endif
}

template <class D, class VD> HWY_INLINE void StoreSums(D, VD lo, VD hi, double* out)
{
    const SumTag<D> dd;
    hn::StoreU(lo, dd, out);
#if HWY_TARGET == HWY_SCALAR
    (void)hi;
#else
    hn::StoreU(hi, dd, out + hn::Lanes(dd));
#endif
}

/// What one call scores: the candidates' parameters (padded to whole vectors) and the group.
struct Candidates
{
    const float* scales;
    const float* reciprocals;
    const float* zeros;
    const float* w;
    std::size_t n;
    float lo, hi; // the family's clamp bounds
    const float* table;
};

/// F32L2: scores kVectors vectors of candidates of @p d, from candidate @p j on, into @p out + j; each pass
/// over the group broadcasts a weight once to all of them.
template <DType T, SchemeFamily F, bool kReciprocal, std::size_t kVectors, class D>
HWY_INLINE void ScoreVectors(D d, const Candidates& c, std::size_t j, double* out)
{
    // Named vectors, not arrays: SVE vectors cannot be array elements.
    static_assert(kVectors == 1 || kVectors == 2);
    const std::size_t lanes = hn::Lanes(d);
    const std::size_t j1 = kVectors == 2 ? j + lanes : j;
    const auto s0 = hn::LoadU(d, c.scales + j), s1 = hn::LoadU(d, c.scales + j1);
    const auto r0 = hn::LoadU(d, c.reciprocals + j), r1 = hn::LoadU(d, c.reciprocals + j1);
    const auto z0 = hn::LoadU(d, c.zeros + j), z1 = hn::LoadU(d, c.zeros + j1);
    auto lo0 = hn::Zero(SumTag<D>());
    auto hi0 = lo0, lo1 = lo0, hi1 = lo0;
    const auto vlo = hn::Set(d, c.lo);
    const auto vhi = hn::Set(d, c.hi);
    for (std::size_t k = 0; k < c.n; ++k) {
        const auto wk = hn::Set(d, c.w[k]);
        const auto d0 = hn::Sub(Dequantize<T, F, kReciprocal>(wk, s0, r0, z0, vlo, vhi), wk);
        AddPromoted(d, hn::Mul(d0, d0), lo0, hi0);
        if constexpr (kVectors == 2) {
            const auto d1 = hn::Sub(Dequantize<T, F, kReciprocal>(wk, s1, r1, z1, vlo, vhi), wk);
            AddPromoted(d, hn::Mul(d1, d1), lo1, hi1);
        }
    }
    StoreSums(d, lo0, hi0, out + j);
    if constexpr (kVectors == 2) {
        StoreSums(d, lo1, hi1, out + j1);
    }
}

/// F32L2: scores all @p count candidates, one per lane, two full vectors per pass, then one, then the rest
/// in the narrowest vector that holds it (4 or 8 lanes) rather than a full vector of padding.
template <DType T, SchemeFamily F, bool kReciprocal>
void L2Sums(const Candidates& c, std::size_t count, double* out)
{
    const DF df;
    const std::size_t lanes = hn::Lanes(df);
    std::size_t j = 0;
    for (; j + 2 * lanes <= count; j += 2 * lanes) {
        ScoreVectors<T, F, kReciprocal, 2>(df, c, j, out);
    }
    if (j + lanes <= count) {
        ScoreVectors<T, F, kReciprocal, 1>(df, c, j, out);
        j += lanes;
    }
    const std::size_t rest = count - j;
    if (rest == 0) {
        return;
    }
    if (rest <= 4 && lanes > 4) {
        ScoreVectors<T, F, kReciprocal, 1>(hn::CappedTag<float, 4>(), c, j, out);
    } else if (rest <= 8 && lanes > 8) {
        ScoreVectors<T, F, kReciprocal, 1>(hn::CappedTag<float, 8>(), c, j, out);
    } else {
        ScoreVectors<T, F, kReciprocal, 1>(df, c, j, out);
    }
}

/// DTypeLp: the lanes are weights, the candidates go one after another, so no lane is padding and each
/// candidate's gathers fill whole vectors. The float sums come in the vector's order: the caller rounds
/// them to the dtype and recomputes the rare candidate whose rounding the order could change.
template <DType T, SchemeFamily F, bool kReciprocal>
void LpSums(const Candidates& c, std::size_t count, double* out)
{
    const DF df;
    const std::size_t lanes = hn::Lanes(df);
    const std::size_t whole = c.n / lanes * lanes;
    // Zero weights pad the last vector: their term is pow(0) = 0 under every family's arithmetic.
    HWY_ALIGN float tail[kMaxFloatLanes] = {};
    std::copy(c.w + whole, c.w + c.n, tail);
    const auto vlo = hn::Set(df, c.lo);
    const auto vhi = hn::Set(df, c.hi);
    for (std::size_t i = 0; i < count; ++i) {
        const auto s = hn::Set(df, c.scales[i]);
        const auto r = hn::Set(df, c.reciprocals[i]);
        const auto z = hn::Set(df, c.zeros[i]);
        auto term = [&](VF wk) HWY_ATTR {
            return LpTerm<T>(Dequantize<T, F, kReciprocal>(wk, s, r, z, vlo, vhi), wk, c.table);
        };
        auto sum = hn::Zero(df);
        for (std::size_t k = 0; k < whole; k += lanes) {
            sum = hn::Add(sum, term(hn::LoadU(df, c.w + k)));
        }
        if (whole < c.n) {
            sum = hn::Add(sum, term(hn::Load(df, tail)));
        }
        out[i] = hn::GetLane(hn::SumOfLanes(df, sum));
    }
}

template <DType T, SchemeFamily F, RoundingError E>
void SumsT(const candidate::Arith& a, const float* table, const float* w, std::size_t n,
           const candidate::Params* params, std::size_t count, double* sums)
{
    // Padding lanes repeat the last candidate (a valid scale); their sums are dropped.
    const std::size_t padded = count + hn::Lanes(DF());
    float scales[kBuffer];
    float reciprocals[kBuffer];
    float zeros[kBuffer];
    double out[kBuffer];
    bool bf16Scales = true; // bf16 values in float's normal range (Quotient)
    for (std::size_t i = 0; i < padded; ++i) {
        const auto& p = params[std::min(i, count - 1)];
        scales[i] = p.scale;
        reciprocals[i] = 1.0f / p.scale;
        zeros[i] = p.zeroPoint;
        bf16Scales = bf16Scales && std::fabs(p.scale) >= 0x1p-126f && std::fabs(p.scale) <= 0x1p126f &&
                     rtn::roundToDType(DType::BF16, p.scale) == p.scale;
    }
    Candidates c{scales, reciprocals, zeros, w, n, a.qMin, a.qMax, table};
    if constexpr (F == SchemeFamily::IntAsymmetric) {
        c.lo = -8.0f;
        c.hi = 7.0f;
    } else if constexpr (F == SchemeFamily::Fp8) {
        c.lo = -448.0f;
        c.hi = 448.0f;
    } else if constexpr (F == SchemeFamily::Nvfp4) {
        c.lo = -6.0f;
        c.hi = 6.0f;
    }
    auto score = [&](auto reciprocal) {
        constexpr bool kReciprocal = decltype(reciprocal)::value;
        if constexpr (E == RoundingError::F32L2) {
            L2Sums<T, F, kReciprocal>(c, count, out);
        } else {
            LpSums<T, F, kReciprocal>(c, count, out);
        }
    };
    if constexpr (T == DType::BF16) {
        if (bf16Scales) {
            score(std::true_type{});
            std::copy(out, out + count, sums);
            return;
        }
    }
    score(std::false_type{});
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
