// Per-target SIMD versions of the float8_e4m3fn and FP4 e2m1 casts of fp8e4m3.h (schemes-spec §2.5, §2.6),
// compiled once per Highway target by the kernel files that include it after rtn-inl.h. Each function gives
// bit for bit what its scalar counterpart gives (tst_quantsimd compares them on every target).
#if defined(SPARK_QUANT_MINIFLOAT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SPARK_QUANT_MINIFLOAT_INL_H_
#undef SPARK_QUANT_MINIFLOAT_INL_H_
#else
#define SPARK_QUANT_MINIFLOAT_INL_H_
#endif

#include "core/quant/rtn-inl.h"

HWY_BEFORE_NAMESPACE();
namespace spark::HWY_NAMESPACE {

/// The float bits of a magnitude (|x| <= 448) with its mantissa rounded half to even to e4m3's three bits by
/// the carry trick: adding 0x7FFFF plus the lowest kept bit carries into bit 20 exactly when the dropped 20
/// bits round up. The dropped bits are left as garbage for the caller to mask or shift out.
template <class VU> HWY_INLINE VU E4m3NormalBits(VU magnitude)
{
    const hn::DFromV<VU> du;
    return hn::Add(magnitude,
                   hn::Add(hn::Set(du, 0x7FFFFu), hn::And(hn::ShiftRight<20>(magnitude), hn::Set(du, 1u))));
}

/// A magnitude below e4m3's smallest normal 2^-6 in units of its subnormal step 2^-9, rounded half to even.
template <class V> HWY_INLINE V E4m3SubnormalUnits(V a)
{
    return hn::Round(hn::Mul(a, hn::Set(hn::DFromV<V>(), 512.0f)));
}

/// float8_e4m3fn round-to-nearest-even of |x| <= 448 (minifloat::e4m3FromFloat, then its value).
template <class V> HWY_INLINE V E4m3Round(V x)
{
    const hn::DFromV<V> df;
    const hn::RebindToUnsigned<decltype(df)> du;
    const auto a = hn::Abs(x);
    const auto normal =
        hn::BitCast(df, hn::And(E4m3NormalBits(hn::BitCast(du, a)), hn::Set(du, 0xFFF00000u)));
    const auto sub = hn::Mul(E4m3SubnormalUnits(a), hn::Set(df, 1.0f / 512.0f));
    return hn::CopySignToAbs(hn::IfThenElse(hn::Lt(a, hn::Set(df, 0x1p-6f)), sub, normal), x);
}

/// FP4 e2m1 value of x in [-6, 6] (minifloat::e2m1FromFloat, then its value): the magnitude is the sum
/// of the steps whose threshold it passes, each tie going to the even mantissa as CT's cast_to_fp4 does.
template <class V> HWY_INLINE V E2m1Round(V x)
{
    const hn::DFromV<V> df;
    const auto a = hn::Abs(x);
    const auto half = hn::Set(df, 0.5f);
    const auto one = hn::Set(df, 1.0f);
    auto v = hn::IfThenElseZero(hn::Gt(a, hn::Set(df, 0.25f)), half);
    v = hn::Add(v, hn::IfThenElseZero(hn::Ge(a, hn::Set(df, 0.75f)), half));
    v = hn::Add(v, hn::IfThenElseZero(hn::Gt(a, hn::Set(df, 1.25f)), half));
    v = hn::Add(v, hn::IfThenElseZero(hn::Ge(a, hn::Set(df, 1.75f)), half));
    v = hn::Add(v, hn::IfThenElseZero(hn::Gt(a, hn::Set(df, 2.5f)), one));
    v = hn::Add(v, hn::IfThenElseZero(hn::Ge(a, hn::Set(df, 3.5f)), one));
    v = hn::Add(v, hn::IfThenElseZero(hn::Gt(a, hn::Set(df, 5.0f)), hn::Set(df, 2.0f)));
    return hn::CopySignToAbs(v, x);
}

/// minifloat::e4m3FromFloat of |x| <= 448: the rounded normal's exponent and mantissa bits with float's
/// exponent bias 127 turned into e4m3's 7, or the subnormal step count below 2^-6; the sign in bit 7.
HWY_INLINE VI E4m3Code(VF x)
{
    const DF df;
    const DU du;
    const auto bits = hn::BitCast(du, x);
    const auto magnitude = hn::And(bits, hn::Set(du, 0x7FFFFFFFu));
    const auto normal = hn::Sub(hn::ShiftRight<20>(E4m3NormalBits(magnitude)), hn::Set(du, 120u << 3));
    const auto a = hn::BitCast(df, magnitude);
    const auto sub = hn::BitCast(du, hn::ConvertTo(DI(), E4m3SubnormalUnits(a)));
    const auto isSub = hn::RebindMask(du, hn::Lt(a, hn::Set(df, 0x1p-6f)));
    const auto sign = hn::And(hn::ShiftRight<24>(bits), hn::Set(du, 0x80u));
    return hn::BitCast(DI(), hn::Or(hn::IfThenElse(isSub, sub, normal), sign));
}

/// minifloat::e2m1FromFloat of x in [-6, 6]: the index counts the rounding boundaries below |x| ("<" or
/// "<=" sends each tie to the even neighbour); a mask lane is -1, so subtracting it counts.
HWY_INLINE VI E2m1Code(VF x)
{
    const DF df;
    const DI di;
    const auto a = hn::Abs(x);
    const auto step = [&](auto mask) HWY_ATTR { return hn::VecFromMask(di, hn::RebindMask(di, mask)); };
    auto index = hn::Zero(di);
    index = hn::Sub(index, step(hn::Gt(a, hn::Set(df, 0.25f))));
    index = hn::Sub(index, step(hn::Ge(a, hn::Set(df, 0.75f))));
    index = hn::Sub(index, step(hn::Gt(a, hn::Set(df, 1.25f))));
    index = hn::Sub(index, step(hn::Ge(a, hn::Set(df, 1.75f))));
    index = hn::Sub(index, step(hn::Gt(a, hn::Set(df, 2.5f))));
    index = hn::Sub(index, step(hn::Ge(a, hn::Set(df, 3.5f))));
    index = hn::Sub(index, step(hn::Gt(a, hn::Set(df, 5.0f))));
    const auto sign = hn::IfThenElseZero(hn::RebindMask(di, hn::Lt(x, hn::Zero(df))), hn::Set(di, 8));
    return hn::Or(index, sign);
}

} // namespace spark::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif // SPARK_QUANT_MINIFLOAT_INL_H_
