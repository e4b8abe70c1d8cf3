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

/// float8_e4m3fn round-to-nearest-even of |x| <= 448 (minifloat::e4m3FromFloat, then its value): three
/// mantissa bits by the usual carry trick for normals, a multiple of 2^-9 below 2^-6.
HWY_INLINE VF E4m3Round(VF x)
{
    const DF df;
    const DU du;
    const auto a = hn::Abs(x);
    auto bits = hn::BitCast(du, a);
    bits = hn::Add(bits, hn::Add(hn::Set(du, 0x7FFFFu), hn::And(hn::ShiftRight<20>(bits), hn::Set(du, 1u))));
    const auto normal = hn::BitCast(df, hn::And(bits, hn::Set(du, 0xFFF00000u)));
    const auto sub = hn::Mul(hn::Round(hn::Mul(a, hn::Set(df, 512.0f))), hn::Set(df, 1.0f / 512.0f));
    return hn::CopySignToAbs(hn::IfThenElse(hn::Lt(a, hn::Set(df, 0x1p-6f)), sub, normal), x);
}

/// FP4 e2m1 value of x in [-6, 6] (minifloat::e2m1FromFloat, then its value): the magnitude is the sum
/// of the steps whose threshold it passes, each tie going to the even mantissa as CT's cast_to_fp4 does.
HWY_INLINE VF E2m1Round(VF x)
{
    const DF df;
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

/// minifloat::e4m3FromFloat of |x| <= 448: three mantissa bits by the carry trick for normals (the float
/// exponent bias 127 becomes e4m3's 7), a multiple of 2^-9 below 2^-6, the sign in bit 7.
HWY_INLINE VI E4m3Code(VF x)
{
    const DF df;
    const DU du;
    const auto bits = hn::BitCast(du, x);
    const auto magnitude = hn::And(bits, hn::Set(du, 0x7FFFFFFFu));
    const auto carry =
        hn::Add(hn::Set(du, 0x7FFFFu), hn::And(hn::ShiftRight<20>(magnitude), hn::Set(du, 1u)));
    const auto normal = hn::Sub(hn::ShiftRight<20>(hn::Add(magnitude, carry)), hn::Set(du, 120u << 3));
    const auto a = hn::BitCast(df, magnitude);
    const auto sub = hn::BitCast(du, hn::ConvertTo(DI(), hn::Round(hn::Mul(a, hn::Set(df, 512.0f)))));
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

/// codec::asymGroupParams for a vector of groups from their min(w, 0) and max(w, 0). A zero scale gives
/// 0/0 = NaN for the zero point, which becomes 0 (the clamp must not see the NaN: SIMD min/max would
/// swallow it).
} // namespace spark::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif // SPARK_QUANT_MINIFLOAT_INL_H_
