// SIMD decode of the symmetric integer schemes (dequantkernel.h): codes times their group's scale, rounded
// to the weight dtype as rtn::dequantizeValue; scalar for the tail of each group.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/quant/dequantkernel.cpp"
#include <hwy/foreach_target.h> // must precede highway.h
#include <hwy/highway.h>
#include "core/quant/rtn-inl.h"
// clang-format on

#include "core/quant/dequantkernel.h"

#include <algorithm>

HWY_BEFORE_NAMESPACE();
namespace spark::HWY_NAMESPACE {

void DequantizeIntRow(const std::int8_t* q, const std::byte* scales, DType dtype, std::size_t cols,
                      std::size_t groupWidth, float* out)
{
    WithDType(dtype, [&](auto tag) {
        constexpr DType T = decltype(tag)::value;
        const DF df;
        const hn::Rebind<std::int8_t, DF> d8;
        const std::size_t lanes = hn::Lanes(df);
        for (std::size_t begin = 0; begin < cols; begin += groupWidth) {
            const std::size_t end = std::min(cols, begin + groupWidth);
            const float s = rtn::loadScale(dtype, scales, begin / groupWidth);
            const auto vs = hn::Set(df, s);
            std::size_t k = begin;
            for (; k + lanes <= end; k += lanes) {
                const auto codes = hn::ConvertTo(df, hn::PromoteTo(DI(), hn::LoadU(d8, q + k)));
                const auto product = hn::Mul(codes, vs);
                // A NaN scale (a damaged checkpoint) stays NaN, as the scalar rounding keeps it.
                hn::StoreU(hn::IfThenElse(hn::IsNaN(product), product, RoundToDType<T>(product)), df,
                           out + k);
            }
            for (; k < end; ++k) {
                out[k] = rtn::dequantizeValue(dtype, q[k], s);
            }
        }
    });
}

} // namespace spark::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace spark::kernels {

HWY_EXPORT(DequantizeIntRow);

void dequantizeIntRow(const std::int8_t* q, const std::byte* scales, DType dtype, std::size_t cols,
                      std::size_t groupWidth, float* out)
{
    HWY_DYNAMIC_DISPATCH(DequantizeIntRow)(q, scales, dtype, cols, groupWidth, out);
}

} // namespace spark::kernels
#endif
