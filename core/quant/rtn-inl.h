// Per-target SIMD building blocks of RTN (format-spec §2.3), compiled once per Highway target by the
// kernel files that include it after hwy/foreach_target.h. Each function mirrors one function of
// rtnscalar.h and must give bit-identical results (tests compare them on random data).
#if defined(SPARK_QUANT_RTN_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SPARK_QUANT_RTN_INL_H_
#undef SPARK_QUANT_RTN_INL_H_
#else
#define SPARK_QUANT_RTN_INL_H_
#endif

#include "core/quant/rtnscalar.h"

#include <hwy/highway.h>
#include <type_traits>

HWY_BEFORE_NAMESPACE();
namespace spark::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using DI = hn::RebindToSigned<DF>;
using DU = hn::RebindToUnsigned<DF>;
using DH = hn::Rebind<std::uint16_t, DF>;
using VF = hn::Vec<DF>;
using VI = hn::Vec<DI>;

template <DType T> constexpr std::size_t kElementBytes = T == DType::F32 ? 4 : 2;

/// Calls @p kernel with the weight dtype as a template argument (std::integral_constant), so each
/// kernel is instantiated once per quantizable dtype: F32, F16, BF16 (anything else was rejected by
/// WeightRows::validate()).
template <class Kernel> HWY_INLINE auto WithDType(DType dtype, const Kernel& kernel)
{
    switch (dtype) {
    case DType::F32:
        return kernel(std::integral_constant<DType, DType::F32>{});
    case DType::F16:
        return kernel(std::integral_constant<DType, DType::F16>{});
    default:
        return kernel(std::integral_constant<DType, DType::BF16>{});
    }
}

template <DType T> HWY_INLINE hn::Vec<DU> LoadRaw(const std::byte* p)
{
    if constexpr (T == DType::F32) {
        return hn::LoadU(DU(), reinterpret_cast<const std::uint32_t*>(p));
    } else {
        return hn::PromoteTo(DU(), hn::LoadU(DH(), reinterpret_cast<const std::uint16_t*>(p)));
    }
}

/// Sign-cleared raw bits as non-negative int32 lanes (rtn::rawAbs).
template <DType T> HWY_INLINE VI RawAbs(const std::byte* p)
{
    const auto mask = T == DType::F32 ? 0x7FFFFFFF : 0x7FFF;
    return hn::And(hn::BitCast(DI(), LoadRaw<T>(p)), hn::Set(DI(), mask));
}

/// Exact conversion of finite weights to float (rtn::loadWeight). F16 Inf/NaN are rejected before.
template <DType T> HWY_INLINE VF LoadWeights(const std::byte* p)
{
    const DU du;
    const auto raw = LoadRaw<T>(p);
    if constexpr (T == DType::F32) {
        return hn::BitCast(DF(), raw);
    } else if constexpr (T == DType::BF16) {
        return hn::BitCast(DF(), hn::ShiftLeft<16>(raw));
    } else {
        const auto sign = hn::ShiftLeft<16>(hn::And(raw, hn::Set(du, 0x8000u)));
        const auto t = hn::ShiftLeft<13>(hn::And(raw, hn::Set(du, 0x7FFFu)));
        const auto normal = hn::Add(t, hn::Set(du, 112u << 23));
        // Zero and subnormals: mantissa * 2^-24 via an exact magic-number subtraction.
        const auto magic = hn::Set(du, 113u << 23);
        const auto sub =
            hn::BitCast(du, hn::Sub(hn::BitCast(DF(), hn::Add(t, magic)), hn::BitCast(DF(), magic)));
        const auto isSub = hn::Eq(hn::And(t, hn::Set(du, 0x0F800000u)), hn::Zero(du));
        return hn::BitCast(DF(), hn::Or(hn::IfThenElse(isSub, sub, normal), sign));
    }
}

/// Round-to-nearest-even into the weight dtype and back (rtn::roundToDType).
template <DType T, class V> HWY_INLINE V RoundToDType(V x)
{
    // Any float vector, not only VF: the rounding search also runs narrower vectors for its last candidates.
    const hn::DFromV<V> df;
    const hn::RebindToUnsigned<decltype(df)> du;
    if constexpr (T == DType::F32) {
        return x;
    } else if constexpr (T == DType::BF16) {
        // Inputs are never NaN here (finite weights, positive finite scales), so no quieting needed.
        auto bits = hn::BitCast(du, x);
        bits =
            hn::Add(bits, hn::Add(hn::Set(du, 0x7FFFu), hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 1u))));
        return hn::BitCast(df, hn::And(bits, hn::Set(du, 0xFFFF0000u)));
    } else {
        const auto a = hn::Abs(x);
        auto bits = hn::BitCast(du, a);
        bits =
            hn::Add(bits, hn::Add(hn::Set(du, 0xFFFu), hn::And(hn::ShiftRight<13>(bits), hn::Set(du, 1u))));
        auto normal = hn::BitCast(df, hn::And(bits, hn::Set(du, 0xFFFFE000u)));
        normal = hn::IfThenElse(hn::Ge(a, hn::Set(df, 65520.0f)), hn::Set(df, HUGE_VALF), normal);
        // Half subnormals have a fixed quantum of 2^-24.
        const auto sub = hn::Mul(hn::Round(hn::Mul(a, hn::Set(df, 0x1p24f))), hn::Set(df, 0x1p-24f));
        const auto r = hn::IfThenElse(hn::Lt(a, hn::Set(df, 0x1p-14f)), sub, normal);
        return hn::CopySignToAbs(r, x);
    }
}

/// q as float (an integer value): rtn::quantizeValue before the int conversion.
template <DType T> HWY_INLINE VF QuantizeToFloat(VF w, VF s, VF qMin, VF qMax)
{
    const auto x = RoundToDType<T>(hn::Div(w, s));
    return hn::Round(hn::Min(hn::Max(x, qMin), qMax));
}

/// Largest rawAbs() of elements [begin, end) of @p row.
template <DType T>
HWY_INLINE std::uint32_t GroupAbsmaxRaw(const std::byte* row, std::size_t begin, std::size_t end)
{
    const DF df;
    const std::size_t n = hn::Lanes(df);
    auto vmax = hn::Zero(DI());
    std::size_t k = begin;
    for (; k + n <= end; k += n) {
        vmax = hn::Max(vmax, RawAbs<T>(row + k * kElementBytes<T>));
    }
    auto m = static_cast<std::uint32_t>(hn::GetLane(hn::MaxOfLanes(DI(), vmax)));
    for (; k < end; ++k) {
        m = std::max(m, rtn::rawAbs(T, row, k));
    }
    return m;
}

/// First element of [begin, end) that is NaN or Inf (there must be one).
inline std::size_t FirstNonFinite(DType dtype, const std::byte* row, std::size_t begin, std::size_t end)
{
    const auto limit = rtn::nonFiniteRaw(dtype);
    for (std::size_t k = begin; k < end; ++k) {
        if (rtn::rawAbs(dtype, row, k) >= limit) {
            return k;
        }
    }
    return end;
}

} // namespace spark::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif // SPARK_QUANT_RTN_INL_H_
