// SIMD kernels of the rounding search, all candidates of one L1-resident group per call. F32L2 (range)
// compares float64 sums exactly, so there the lanes are candidates: each lane adds its own terms in the
// weights' order, as the scalar loop does. DTypeLp (mse) rounds its sums to the dtype, so any order that the
// caller can check will do: there the lanes are weights, which wastes no lane on padding and fills each
// pow lookup (a gather, or permutes of small factor tables on AVX-512).
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

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
/// Entry (index & 127) of the 128 floats in the eight registers @p t, per lane: two-table permutes read
/// index bits 0-4, blends pick by bits 5 and 6 (Highway 1.0.3 has no two-table lookup).
HWY_INLINE __m512 Lookup128(const __m512* t, __m512i index)
{
    const __mmask16 bit5 = _mm512_test_epi32_mask(index, _mm512_set1_epi32(32));
    const __mmask16 bit6 = _mm512_test_epi32_mask(index, _mm512_set1_epi32(64));
    const __m512 low = _mm512_mask_blend_ps(bit5, _mm512_permutex2var_ps(t[0], index, t[1]),
                                            _mm512_permutex2var_ps(t[2], index, t[3]));
    const __m512 high = _mm512_mask_blend_ps(bit5, _mm512_permutex2var_ps(t[4], index, t[5]),
                                             _mm512_permutex2var_ps(t[6], index, t[7]));
    return _mm512_mask_blend_ps(bit6, low, high);
}
#endif

/// pow(a, n) rounded to the dtype, per lane of non-negative dtype values a (16-bit dtypes only): a gather
/// from the table by bits; on AVX-512 for bf16 the product of the factor tables (PowLookup), held in
/// registers and looked up by permutes, a gather being the kernel's most expensive instruction there. A
/// vector with a lane outside the factors' exponent range (zero aside) takes the gather.
template <DType T> class LanePow
{
  public:
    explicit LanePow(const kernels::PowLookup& pow) : m_pow(pow)
    {
        static_assert(T != DType::F32, "DTypeLp on F32 weights has no table");
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
        m_permute = T == DType::BF16 && pow.mantissaPowers != nullptr;
        if (m_permute) {
            for (std::size_t i = 0; i < 8; ++i) {
                m_mantissa[i] = _mm512_loadu_ps(pow.mantissaPowers + 16 * i);
            }
            m_fraction[0] = _mm512_loadu_ps(pow.fractionPowers);
            m_fraction[1] = _mm512_loadu_ps(pow.fractionPowers + 16);
            m_numerator = _mm512_set1_epi32(pow.numerator);
            m_belowRange = _mm512_set1_epi32(pow.minExponent - 1);
            m_aboveRange = _mm512_set1_epi32(pow.maxExponent + 1);
        }
#endif
    }

    HWY_INLINE VF operator()(VF a) const
    {
        const DF df;
        const hn::RebindToSigned<DF> di;
        const auto bits = hn::BitCast(di, a);
        if constexpr (T == DType::BF16) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
            if (m_permute) {
                const auto e = hn::ShiftRight<23>(bits);
                const auto x = hn::Mul(hn::Sub(e, hn::Set(di, 127)), VI{m_numerator}); // 32k + f
                // The permutes read f = x mod 32 from x's low bits and m from the bits' 16-22.
                const VF c{_mm512_mul_ps(Lookup128(m_mantissa, _mm512_srli_epi32(bits.raw, 16)),
                                         _mm512_permutex2var_ps(m_fraction[0], x.raw, m_fraction[1]))};
                const auto p =
                    hn::BitCast(df, hn::Add(hn::BitCast(di, c), hn::ShiftLeft<23>(hn::ShiftRight<5>(x))));
                const auto zero = hn::Eq(a, hn::Zero(df));
                const auto inRange = hn::And(hn::Gt(e, VI{m_belowRange}), hn::Lt(e, VI{m_aboveRange}));
                if (hn::AllTrue(di, hn::Or(inRange, hn::RebindMask(di, zero)))) {
                    return hn::IfThenZeroElse(zero, RoundToDType<T>(p));
                }
            }
#endif
            return hn::GatherIndex(df, m_pow.byBits, hn::ShiftRight<16>(bits));
        } else {
            // a is a half value (or +Inf): its half bits from the float's, subnormals counted in 2^-24
            // steps; the Min maps float Inf to half Inf.
            const auto normal = hn::Sub(hn::ShiftRight<13>(bits), hn::Set(di, 112 << 10));
            const auto sub = hn::ConvertTo(di, hn::Mul(a, hn::Set(df, 0x1p24f)));
            const auto isSub = hn::RebindMask(di, hn::Lt(a, hn::Set(df, 0x1p-14f)));
            const auto index = hn::Min(hn::IfThenElse(isSub, sub, normal), hn::Set(di, 0x7C00));
            return hn::GatherIndex(df, m_pow.byBits, index);
        }
    }

  private:
    const kernels::PowLookup& m_pow;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
    using VI = hn::Vec<hn::RebindToSigned<DF>>;
    bool m_permute = false;
    __m512 m_mantissa[8];
    __m512 m_fraction[2];
    __m512i m_numerator, m_belowRange, m_aboveRange; // PowLookup's numbers, broadcast
#endif
};

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
    const kernels::PowLookup* pow;
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
    const LanePow<T> pow(*c.pow);
    // Two candidates per pass over the group: each weight vector is loaded once for both, and the two
    // independent chains keep more work in flight. A last odd candidate is paired with the padding.
    for (std::size_t i = 0; i < count; i += 2) {
        const auto s0 = hn::Set(df, c.scales[i]), s1 = hn::Set(df, c.scales[i + 1]);
        const auto r0 = hn::Set(df, c.reciprocals[i]), r1 = hn::Set(df, c.reciprocals[i + 1]);
        const auto z0 = hn::Set(df, c.zeros[i]), z1 = hn::Set(df, c.zeros[i + 1]);
        auto sum0 = hn::Zero(df);
        auto sum1 = sum0;
        for (std::size_t k = 0; k < c.n; k += lanes) {
            const auto wk = k < whole ? hn::LoadU(df, c.w + k) : hn::Load(df, tail);
            const auto deq0 = Dequantize<T, F, kReciprocal>(wk, s0, r0, z0, vlo, vhi);
            const auto deq1 = Dequantize<T, F, kReciprocal>(wk, s1, r1, z1, vlo, vhi);
            sum0 = hn::Add(sum0, pow(hn::Abs(RoundToDType<T>(hn::Sub(deq0, wk)))));
            sum1 = hn::Add(sum1, pow(hn::Abs(RoundToDType<T>(hn::Sub(deq1, wk)))));
        }
        out[i] = hn::GetLane(hn::SumOfLanes(df, sum0));
        out[i + 1] = hn::GetLane(hn::SumOfLanes(df, sum1));
    }
}

template <DType T, SchemeFamily F, RoundingError E>
void SumsT(const candidate::Arith& a, const kernels::PowLookup& pow, const float* w, std::size_t n,
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
    Candidates c{scales, reciprocals, zeros, w, n, a.qMin, a.qMax, &pow};
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
void SumsFamily(const candidate::Arith& a, const kernels::PowLookup& pow, const float* w, std::size_t n,
                const candidate::Params* params, std::size_t count, double* sums)
{
    switch (a.family) {
    case SchemeFamily::IntAsymmetric:
        return SumsT<T, SchemeFamily::IntAsymmetric, E>(a, pow, w, n, params, count, sums);
    case SchemeFamily::Fp8:
        return SumsT<T, SchemeFamily::Fp8, E>(a, pow, w, n, params, count, sums);
    case SchemeFamily::Nvfp4:
        return SumsT<T, SchemeFamily::Nvfp4, E>(a, pow, w, n, params, count, sums);
    default:
        return SumsT<T, SchemeFamily::IntSymmetric, E>(a, pow, w, n, params, count, sums);
    }
}

} // namespace

void CandidateErrorSums(const candidate::Arith& a, RoundingError error, const kernels::PowLookup& pow,
                        const float* w, std::size_t n, const candidate::Params* params, std::size_t count,
                        double* sums)
{
    if (count == 0) {
        return;
    }
    WithDType(a.dtype, [&](auto t) {
        constexpr DType T = decltype(t)::value;
        if (error == RoundingError::F32L2) {
            SumsFamily<T, RoundingError::F32L2>(a, pow, w, n, params, count, sums);
        } else if constexpr (T != DType::F32) {
            SumsFamily<T, RoundingError::DTypeLp>(a, pow, w, n, params, count, sums);
        }
    });
}

void GroupRange(const float* w, std::size_t n, float* lo, float* hi)
{
    const DF df;
    const std::size_t lanes = hn::Lanes(df);
    auto vlo = hn::Zero(df);
    auto vhi = vlo;
    std::size_t k = 0;
    for (; k + lanes <= n; k += lanes) {
        const auto v = hn::LoadU(df, w + k);
        vlo = hn::Min(vlo, v);
        vhi = hn::Max(vhi, v);
    }
    float l = hn::GetLane(hn::MinOfLanes(df, vlo));
    float h = hn::GetLane(hn::MaxOfLanes(df, vhi));
    for (; k < n; ++k) {
        l = std::min(l, w[k]);
        h = std::max(h, w[k]);
    }
    // A zero end is +0, as the scalar min(0, w) and max(0, w) keep it (vector Min may give -0).
    *lo = l == 0.0f ? 0.0f : l;
    *hi = h == 0.0f ? 0.0f : h;
}

void PowTerms(const kernels::PowLookup& pow, DType dtype, const float* a, std::size_t n, float* out)
{
    const DF df;
    const std::size_t lanes = hn::Lanes(df);
    const LanePow<DType::BF16> bf16(pow);
    const LanePow<DType::F16> f16(pow);
    for (std::size_t i = 0; i < n; i += lanes) {
        HWY_ALIGN float in[kMaxFloatLanes] = {};
        HWY_ALIGN float terms[kMaxFloatLanes];
        const std::size_t m = std::min(lanes, n - i);
        std::copy(a + i, a + i + m, in);
        const auto v = hn::Load(df, in);
        hn::Store(dtype == DType::F16 ? f16(v) : bf16(v), df, terms);
        std::copy(terms, terms + m, out + i);
    }
}

} // namespace spark::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace spark::kernels {

HWY_EXPORT(CandidateErrorSums);
HWY_EXPORT(PowTerms);
HWY_EXPORT(GroupRange);

bool candidateKernelSupports(RoundingError error, DType dtype)
{
    return error == RoundingError::F32L2 || dtype != DType::F32;
}

void candidateErrorSums(const candidate::Arith& arith, RoundingError error, const PowLookup& pow,
                        const float* w, std::size_t n, const candidate::Params* params, std::size_t count,
                        double* sums)
{
    HWY_DYNAMIC_DISPATCH(CandidateErrorSums)(arith, error, pow, w, n, params, count, sums);
}

void groupRange(const float* w, std::size_t n, float* lo, float* hi)
{
    HWY_DYNAMIC_DISPATCH(GroupRange)(w, n, lo, hi);
}

void powTerms(const PowLookup& pow, DType dtype, const float* a, std::size_t n, float* out)
{
    HWY_DYNAMIC_DISPATCH(PowTerms)(pow, dtype, a, n, out);
}

} // namespace spark::kernels
#endif
