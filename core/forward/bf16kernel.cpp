// FP32 → BF16 rounding a vector at a time (bf16kernel.h); the scalar floatToBf16 finishes each tail.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/forward/bf16kernel.cpp"
#include <hwy/foreach_target.h> // must precede highway.h
#include <hwy/highway.h>
// clang-format on

#include "core/forward/bf16kernel.h"

#include "core/io/floatconv.h"

HWY_BEFORE_NAMESPACE();
namespace spark::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace {

using DF = hn::ScalableTag<float>;
using DU = hn::RebindToUnsigned<DF>;

/// The BF16 value of each lane in the upper 16 bits (lower 16 zero): nearest even, a NaN quieted.
HWY_INLINE hn::Vec<DU> RoundedBits(hn::Vec<DF> x)
{
    const DU du;
    const auto bits = hn::BitCast(du, x);
    const auto rounded =
        hn::Add(bits, hn::Add(hn::Set(du, 0x7FFFu), hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 1u))));
    const auto quiet = hn::Or(bits, hn::Set(du, 0x00400000u));
    return hn::And(hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(x)), quiet, rounded),
                   hn::Set(du, 0xFFFF0000u));
}

} // namespace

void ToBf16(const float* in, std::size_t count, std::uint16_t* out)
{
    const DF df;
    const hn::Rebind<std::uint16_t, DF> d16;
    const std::size_t lanes = hn::Lanes(df);
    std::size_t i = 0;
    for (; i + lanes <= count; i += lanes) {
        const auto bits = RoundedBits(hn::LoadU(df, in + i));
        // Each lane's BF16 bits as a non-negative int32, narrowed without saturating anything.
        const auto high = hn::BitCast(hn::RebindToSigned<DF>(), hn::ShiftRight<16>(bits));
        hn::StoreU(hn::DemoteTo(d16, high), d16, out + i);
    }
    for (; i < count; ++i) {
        out[i] = floatToBf16(in[i]);
    }
}

void RoundToBf16(float* values, std::size_t count)
{
    const DF df;
    const std::size_t lanes = hn::Lanes(df);
    std::size_t i = 0;
    for (; i + lanes <= count; i += lanes) {
        hn::StoreU(hn::BitCast(df, RoundedBits(hn::LoadU(df, values + i))), df, values + i);
    }
    for (; i < count; ++i) {
        values[i] = bf16ToFloat(floatToBf16(values[i]));
    }
}

} // namespace spark::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace spark::kernels {

HWY_EXPORT(ToBf16);
HWY_EXPORT(RoundToBf16);

void toBf16(const float* in, std::size_t count, std::uint16_t* out)
{
    HWY_DYNAMIC_DISPATCH(ToBf16)(in, count, out);
}

void roundToBf16(float* values, std::size_t count)
{
    HWY_DYNAMIC_DISPATCH(RoundToBf16)(values, count);
}

} // namespace spark::kernels
#endif
