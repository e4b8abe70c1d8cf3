// SIMD scale and quantize+pack kernels (format-spec §2.2, §2.3), one copy per Highway target.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/quant/rtnkernels.cpp"
#include <hwy/foreach_target.h> // must precede highway.h
#include <hwy/highway.h>
#include "core/quant/rtn-inl.h"
// clang-format on

#include "core/quant/rtnkernels.h"

#include "core/quant/packing.h"

#include <vector>

HWY_BEFORE_NAMESPACE();
namespace spark::HWY_NAMESPACE {

template <DType T>
std::size_t ScalesT(const WeightRows& rows, const QuantScheme& scheme, std::byte* scalesOut)
{
    const std::size_t cols = rows.cols;
    const std::size_t width = scheme.groupWidth(cols);
    const std::size_t groups = scheme.groupsPerRow(cols);
    const std::uint32_t limit = rtn::nonFiniteRaw(T);
    const float divisor = scheme.scaleDivisor();
    for (std::size_t r = 0; r < rows.rowCount; ++r) {
        const std::byte* row = rows.row(r);
        for (std::size_t g = 0; g < groups; ++g) {
            const std::size_t begin = g * width;
            const std::size_t end = std::min(cols, begin + width);
            const std::uint32_t m = GroupAbsmaxRaw<T>(row, begin, end);
            if (m >= limit) {
                return r * cols + FirstNonFinite(T, row, begin, end);
            }
            const float s = rtn::scaleFromAbsmax(T, rtn::rawToFloat(T, m), divisor);
            rtn::storeScale(T, s, scalesOut + (r * groups + g) * kElementBytes<T>);
        }
    }
    return kernels::kNoIndex;
}

template <DType T>
std::size_t QuantizeT(const WeightRows& rows, const QuantScheme& scheme, const std::byte* scales,
                      std::int32_t* packedOut)
{
    const DF df;
    const std::size_t n = hn::Lanes(df);
    const std::size_t cols = rows.cols;
    const std::size_t width = scheme.groupWidth(cols);
    const std::size_t groups = scheme.groupsPerRow(cols);
    const std::size_t words = scheme.packedWordsPerRow(cols);
    const std::uint32_t limit = rtn::nonFiniteRaw(T);
    const auto qMin = hn::Set(df, static_cast<float>(scheme.qMin()));
    const auto qMax = hn::Set(df, static_cast<float>(scheme.qMax()));
    const auto offset = hn::Set(DI(), scheme.packOffset());
    const hn::Rebind<std::uint8_t, DF> du8;
    // Unsigned codes of one row; packUnsignedRow() folds them into words.
    std::vector<std::uint8_t> u(cols + n);
    for (std::size_t r = 0; r < rows.rowCount; ++r) {
        const std::byte* row = rows.row(r);
        for (std::size_t g = 0; g < groups; ++g) {
            const std::size_t begin = g * width;
            const std::size_t end = std::min(cols, begin + width);
            const float s = rtn::loadScale(T, scales, r * groups + g);
            const auto vs = hn::Set(df, s);
            auto vmax = hn::Zero(DI());
            std::size_t k = begin;
            for (; k + n <= end; k += n) {
                const std::byte* p = row + k * kElementBytes<T>;
                vmax = hn::Max(vmax, RawAbs<T>(p));
                const auto q = hn::ConvertTo(DI(), QuantizeToFloat<T>(LoadWeights<T>(p), vs, qMin, qMax));
                hn::StoreU(hn::DemoteTo(du8, hn::Add(q, offset)), du8, u.data() + k);
            }
            auto m = static_cast<std::uint32_t>(hn::GetLane(hn::MaxOfLanes(DI(), vmax)));
            for (; k < end; ++k) {
                m = std::max(m, rtn::rawAbs(T, row, k));
                const int q =
                    rtn::quantizeValue(T, rtn::loadWeight(T, row, k), s, scheme.qMin(), scheme.qMax());
                u[k] = static_cast<std::uint8_t>(q + scheme.packOffset());
            }
            if (m >= limit) {
                return r * cols + FirstNonFinite(T, row, begin, end);
            }
        }
        packUnsignedRow(u.data(), cols, scheme.bits, packedOut + r * words);
    }
    return kernels::kNoIndex;
}

template <DType T> bool LoadFiniteT(const std::byte* data, std::size_t n, float* out)
{
    const DF df;
    const std::size_t lanes = hn::Lanes(df);
    auto vmax = hn::Zero(DI());
    std::size_t k = 0;
    for (; k + lanes <= n; k += lanes) {
        const std::byte* p = data + k * kElementBytes<T>;
        vmax = hn::Max(vmax, RawAbs<T>(p));
        hn::StoreU(LoadWeights<T>(p), df, out + k);
    }
    auto m = static_cast<std::uint32_t>(hn::GetLane(hn::MaxOfLanes(DI(), vmax)));
    for (; k < n; ++k) {
        m = std::max(m, rtn::rawAbs(T, data, k));
        out[k] = rtn::loadWeight(T, data, k);
    }
    return m < rtn::nonFiniteRaw(T);
}

bool LoadFiniteWeights(DType dtype, const std::byte* data, std::size_t n, float* out)
{
    return WithDType(dtype, [&](auto t) { return LoadFiniteT<decltype(t)::value>(data, n, out); });
}

std::size_t ComputeScalesRows(const WeightRows& rows, const QuantScheme& scheme, std::byte* scalesOut)
{
    return WithDType(rows.dtype,
                     [&](auto t) { return ScalesT<decltype(t)::value>(rows, scheme, scalesOut); });
}

std::size_t QuantizeRowsPacked(const WeightRows& rows, const QuantScheme& scheme, const std::byte* scales,
                               std::int32_t* packedOut)
{
    return WithDType(rows.dtype,
                     [&](auto t) { return QuantizeT<decltype(t)::value>(rows, scheme, scales, packedOut); });
}

} // namespace spark::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace spark::kernels {

HWY_EXPORT(ComputeScalesRows);
HWY_EXPORT(QuantizeRowsPacked);
HWY_EXPORT(LoadFiniteWeights);

bool loadFiniteWeights(DType dtype, const std::byte* data, std::size_t n, float* out)
{
    return HWY_DYNAMIC_DISPATCH(LoadFiniteWeights)(dtype, data, n, out);
}

std::size_t computeScales(const WeightRows& rows, const QuantScheme& scheme, std::byte* scalesOut)
{
    return HWY_DYNAMIC_DISPATCH(ComputeScalesRows)(rows, scheme, scalesOut);
}

std::size_t quantizeRows(const WeightRows& rows, const QuantScheme& scheme, const std::byte* scales,
                         std::int32_t* packedOut)
{
    return HWY_DYNAMIC_DISPATCH(QuantizeRowsPacked)(rows, scheme, scales, packedOut);
}

const char* targetName()
{
    // Lower bits are better targets; dynamic dispatch picks the lowest supported one.
    const auto targets = hwy::SupportedAndGeneratedTargets();
    return targets.empty() ? "none" : hwy::TargetName(targets.front());
}

} // namespace spark::kernels
#endif
