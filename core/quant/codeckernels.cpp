// SIMD encoders of the asymmetric, FP8 and NVFP4 codecs, one copy per Highway target. Each vector
// function mirrors a scalar definition of schemecodecs.h / fp8e4m3.h; the scalar ones finish the tails.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/quant/codeckernels.cpp"
#include <hwy/foreach_target.h> // must precede highway.h
#include <hwy/highway.h>
#include "core/quant/rtn-inl.h"
#include "core/quant/minifloat-inl.h"
// clang-format on

#include "core/quant/codeckernels.h"

#include "core/quant/packing.h"
#include "core/quant/schemecodecs.h"

#include <cstring>
#include <vector>

HWY_BEFORE_NAMESPACE();
namespace spark::HWY_NAMESPACE {
namespace {

constexpr std::size_t kNvfp4Group = 16;

/// codec::asymGroupParams of a vector of groups from their min(w, 0) and max(w, 0). A zero scale gives
/// 0/0 = NaN for the zero point, which becomes 0 (the clamp must not see the NaN: SIMD min/max would
/// swallow it).
template <DType T> HWY_INLINE void AsymParams(VF mn, VF mx, VF& scale, VI& zeroPoint)
{
    const DF df;
    scale = RoundToDType<T>(hn::Div(RoundToDType<T>(hn::Sub(mx, mn)), hn::Set(df, 15.0f)));
    const auto zf = RoundToDType<T>(hn::Sub(hn::Set(df, -8.0f), RoundToDType<T>(hn::Div(mn, scale))));
    const auto clamped = hn::Round(hn::Min(hn::Max(zf, hn::Set(df, -8.0f)), hn::Set(df, 7.0f)));
    zeroPoint = hn::ConvertTo(DI(), hn::IfThenZeroElse(hn::IsNaN(zf), clamped));
    scale = hn::IfThenElse(hn::Eq(scale, hn::Zero(df)), hn::Set(df, rtn::scaleEps(T)), scale);
}

template <DType T>
std::size_t EncodeAsymT(const WeightRows& rows, std::size_t width, std::int32_t* packedOut,
                        std::byte* scalesOut, std::int8_t* zeroPoints)
{
    const DF df;
    const hn::Rebind<std::uint8_t, DF> du8;
    const std::size_t n = hn::Lanes(df);
    const std::size_t cols = rows.cols;
    const std::size_t groups = cols / width;
    const std::size_t words = (cols + 7) / 8;
    const auto lo = hn::Set(df, -8.0f);
    const auto hi = hn::Set(df, 7.0f);
    const auto offset = hn::Set(DI(), 8);
    std::vector<std::uint8_t> u(cols + n);
    // Per group of the row: min(w, 0), max(w, 0), then the scale and zero point.
    std::vector<float> mins(groups + n), maxs(groups + n), scales(groups + n);
    std::vector<std::int32_t> zps(groups + n);
    for (std::size_t r = 0; r < rows.rowCount; ++r) {
        const std::byte* row = rows.row(r);
        auto vraw = hn::Zero(DI()); // the largest raw |w| of the row: one NaN/Inf check per row
        for (std::size_t g = 0; g < groups; ++g) {
            const std::size_t end = (g + 1) * width;
            auto vmn = hn::Zero(df);
            auto vmx = hn::Zero(df);
            std::size_t k = g * width;
            for (; k + n <= end; k += n) {
                const std::byte* p = row + k * kElementBytes<T>;
                const auto w = LoadWeights<T>(p);
                vmn = hn::Min(vmn, w);
                vmx = hn::Max(vmx, w);
                vraw = hn::Max(vraw, RawAbs<T>(p));
            }
            float mn = hn::GetLane(hn::MinOfLanes(df, vmn));
            float mx = hn::GetLane(hn::MaxOfLanes(df, vmx));
            for (; k < end; ++k) {
                vraw = hn::Max(vraw, hn::Set(DI(), static_cast<std::int32_t>(rtn::rawAbs(T, row, k))));
                mn = std::min(mn, rtn::loadWeight(T, row, k));
                mx = std::max(mx, rtn::loadWeight(T, row, k));
            }
            mins[g] = mn;
            maxs[g] = mx;
        }
        if (static_cast<std::uint32_t>(hn::GetLane(hn::MaxOfLanes(DI(), vraw))) >= rtn::nonFiniteRaw(T)) {
            return r * cols + FirstNonFinite(T, row, 0, cols);
        }
        std::size_t g = 0;
        for (; g + n <= groups; g += n) {
            VF vs;
            VI vzp;
            AsymParams<T>(hn::LoadU(df, mins.data() + g), hn::LoadU(df, maxs.data() + g), vs, vzp);
            hn::StoreU(vs, df, scales.data() + g);
            hn::StoreU(vzp, DI(), zps.data() + g);
        }
        for (; g < groups; ++g) {
            const auto p = codec::asymGroupParams(T, mins[g], maxs[g]);
            scales[g] = p.scale;
            zps[g] = p.zeroPoint;
        }
        for (g = 0; g < groups; ++g) {
            rtn::storeScale(T, scales[g], scalesOut + (r * groups + g) * kElementBytes<T>);
            zeroPoints[r * groups + g] = static_cast<std::int8_t>(zps[g]);
        }
        if (packedOut == nullptr) {
            continue;
        }
        for (g = 0; g < groups; ++g) {
            const std::size_t end = (g + 1) * width;
            const auto vs = hn::Set(df, scales[g]);
            const auto vzp = hn::Set(df, static_cast<float>(zps[g]));
            std::size_t k = g * width;
            for (; k + n <= end; k += n) {
                const auto w = LoadWeights<T>(row + k * kElementBytes<T>);
                const auto x = RoundToDType<T>(hn::Add(RoundToDType<T>(hn::Div(w, vs)), vzp));
                const auto q = hn::ConvertTo(DI(), hn::Round(hn::Min(hn::Max(x, lo), hi)));
                hn::StoreU(hn::DemoteTo(du8, hn::Add(q, offset)), du8, u.data() + k);
            }
            const codec::AsymGroupParams p{scales[g], zps[g], false};
            for (; k < end; ++k) {
                u[k] = static_cast<std::uint8_t>(codec::quantizeAsym(T, rtn::loadWeight(T, row, k), p) + 8);
            }
        }
        packUnsignedRow(u.data(), cols, 4, packedOut + r * words);
    }
    return kernels::kNoIndex;
}

template <DType T>
std::size_t EncodeFp8T(const WeightRows& rows, std::uint8_t* codesOut, std::byte* scalesOut)
{
    const DF df;
    const hn::Rebind<std::uint8_t, DF> du8;
    const std::size_t n = hn::Lanes(df);
    const std::size_t cols = rows.cols;
    const auto lo = hn::Set(df, -448.0f);
    const auto hi = hn::Set(df, 448.0f);
    for (std::size_t r = 0; r < rows.rowCount; ++r) {
        const std::byte* row = rows.row(r);
        const std::uint32_t raw = GroupAbsmaxRaw<T>(row, 0, cols);
        if (raw >= rtn::nonFiniteRaw(T)) {
            return r * cols + FirstNonFinite(T, row, 0, cols);
        }
        const float s = rtn::scaleFromAbsmax(T, rtn::rawToFloat(T, raw), 448.0f);
        rtn::storeScale(T, s, scalesOut + r * kElementBytes<T>);
        if (codesOut == nullptr) {
            continue;
        }
        std::uint8_t* out = codesOut + r * cols;
        const auto vs = hn::Set(df, s);
        std::size_t k = 0;
        for (; k + n <= cols; k += n) {
            const auto w = LoadWeights<T>(row + k * kElementBytes<T>);
            const auto x = hn::Min(hn::Max(RoundToDType<T>(hn::Div(w, vs)), lo), hi);
            hn::StoreU(hn::DemoteTo(du8, E4m3Code(x)), du8, out + k);
        }
        for (; k < cols; ++k) {
            out[k] = codec::fp8Code(T, rtn::loadWeight(T, row, k), s);
        }
    }
    return kernels::kNoIndex;
}

template <DType T>
std::size_t EncodeNvfp4T(const WeightRows& rows, float globalScale, std::uint8_t* packedOut,
                         std::uint8_t* scaleCodesOut)
{
    const DF df;
    const DI di;
    const hn::Rebind<std::uint8_t, DF> du8;
    const std::size_t n = hn::Lanes(df);
    const std::size_t cols = rows.cols;
    const std::size_t groups = cols / kNvfp4Group;
    const std::uint32_t limit = rtn::nonFiniteRaw(T);
    const auto vgs = hn::Set(df, globalScale);
    const auto lo = hn::Set(df, -6.0f);
    const auto hi = hn::Set(df, 6.0f);
    std::vector<float> effective(groups + n);
    std::vector<std::uint8_t> u(cols + n);
    std::vector<std::int32_t> words(cols / 8); // cols is a multiple of 16
    for (std::size_t r = 0; r < rows.rowCount; ++r) {
        const std::byte* row = rows.row(r);
        std::uint8_t* codes = scaleCodesOut + r * groups;
        for (std::size_t g = 0; g < groups; ++g) {
            const std::uint32_t raw = GroupAbsmaxRaw<T>(row, g * kNvfp4Group, (g + 1) * kNvfp4Group);
            if (raw >= limit) {
                return r * cols + FirstNonFinite(T, row, g * kNvfp4Group, (g + 1) * kNvfp4Group);
            }
            effective[g] = rtn::rawToFloat(T, raw);
        }
        // The group scales, vectorised across groups: code = e4m3(min(gs · rnd(absmax / 6), 448)), zero
        // replaced by eps (0x20 = 0.125), effective = value(code) / gs.
        std::size_t g = 0;
        for (; g + n <= groups; g += n) {
            const auto local =
                RoundToDType<T>(hn::Div(hn::LoadU(df, effective.data() + g), hn::Set(df, 6.0f)));
            const auto product = hn::Min(hn::Mul(vgs, local), hn::Set(df, 448.0f));
            auto code = E4m3Code(product);
            code = hn::IfThenElse(hn::Eq(code, hn::Zero(di)), hn::Set(di, 0x20), code);
            hn::StoreU(hn::DemoteTo(du8, code), du8, codes + g);
            auto value = E4m3Round(product);
            value = hn::IfThenElse(hn::Eq(value, hn::Zero(df)), hn::Set(df, 0.125f), value);
            hn::StoreU(hn::Div(value, vgs), df, effective.data() + g);
        }
        for (; g < groups; ++g) {
            const auto s = codec::nvfp4GroupScale(T, effective[g], globalScale);
            codes[g] = s.code;
            effective[g] = s.effective;
        }
        if (packedOut == nullptr) {
            continue;
        }
        for (g = 0; g < groups; ++g) {
            const float eff = effective[g];
            const auto veff = hn::Set(df, eff);
            std::size_t k = g * kNvfp4Group;
            const std::size_t end = k + kNvfp4Group;
            for (; k + n <= end; k += n) {
                const auto w = LoadWeights<T>(row + k * kElementBytes<T>);
                hn::StoreU(hn::DemoteTo(du8, E2m1Code(hn::Min(hn::Max(hn::Div(w, veff), lo), hi))), du8,
                           u.data() + k);
            }
            for (; k < end; ++k) {
                u[k] = codec::nvfp4Nibble(rtn::loadWeight(T, row, k), eff);
            }
        }
        // Two nibbles per byte, the first low: exactly the little-endian bytes of 4-bit packed words.
        packUnsignedRow(u.data(), cols, 4, words.data());
        std::memcpy(packedOut + r * (cols / 2), words.data(), cols / 2);
    }
    return kernels::kNoIndex;
}

} // namespace

std::size_t EncodeAsymRows(const WeightRows& rows, std::size_t groupSize, std::int32_t* packedOut,
                           std::byte* scalesOut, std::int8_t* zeroPoints)
{
    return WithDType(rows.dtype, [&](auto t) {
        return EncodeAsymT<decltype(t)::value>(rows, groupSize, packedOut, scalesOut, zeroPoints);
    });
}

std::size_t EncodeFp8Rows(const WeightRows& rows, std::uint8_t* codesOut, std::byte* scalesOut)
{
    return WithDType(rows.dtype,
                     [&](auto t) { return EncodeFp8T<decltype(t)::value>(rows, codesOut, scalesOut); });
}

std::size_t EncodeNvfp4Rows(const WeightRows& rows, float globalScale, std::uint8_t* packedOut,
                            std::uint8_t* scaleCodesOut)
{
    return WithDType(rows.dtype, [&](auto t) {
        return EncodeNvfp4T<decltype(t)::value>(rows, globalScale, packedOut, scaleCodesOut);
    });
}

} // namespace spark::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace spark::kernels {

HWY_EXPORT(EncodeAsymRows);
HWY_EXPORT(EncodeFp8Rows);
HWY_EXPORT(EncodeNvfp4Rows);

std::size_t encodeAsymRows(const WeightRows& rows, std::size_t groupSize, std::int32_t* packedOut,
                           std::byte* scalesOut, std::int8_t* zeroPoints)
{
    return HWY_DYNAMIC_DISPATCH(EncodeAsymRows)(rows, groupSize, packedOut, scalesOut, zeroPoints);
}

std::size_t encodeFp8Rows(const WeightRows& rows, std::uint8_t* codesOut, std::byte* scalesOut)
{
    return HWY_DYNAMIC_DISPATCH(EncodeFp8Rows)(rows, codesOut, scalesOut);
}

std::size_t encodeNvfp4Rows(const WeightRows& rows, float globalScale, std::uint8_t* packedOut,
                            std::uint8_t* scaleCodesOut)
{
    return HWY_DYNAMIC_DISPATCH(EncodeNvfp4Rows)(rows, globalScale, packedOut, scaleCodesOut);
}

} // namespace spark::kernels
#endif
