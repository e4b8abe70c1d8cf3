// SIMD sweep kernel: each row once, every candidate scheme on it while it is in L1, and only the float64
// error sums (no histograms), so that measuring nine schemes costs a few analyze passes, not nine.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/quant/sweepkernels.cpp"
#include <hwy/foreach_target.h> // must precede highway.h
#include <hwy/highway.h>
#include "core/quant/rtn-inl.h"
#include "core/quant/minifloat-inl.h"
// clang-format on

#include "core/quant/sweepkernels.h"

#include "core/quant/fp8e4m3.h"
#include "core/quant/schemecodecs.h"

#include <algorithm>
#include <cmath>
#include <hwy/cache_control.h>
#include <vector>

HWY_BEFORE_NAMESPACE();
namespace spark::HWY_NAMESPACE {
namespace {

using DD = hn::Repartition<double, DF>;
using VD = hn::Vec<DD>;

constexpr float kFp8Max = 448.0f;
constexpr float kFp4Max = 6.0f;
constexpr std::size_t kNvfp4Group = 16;

/// Adds (w - d)² in float64, the lower lanes to @p lo and the upper to @p hi (two dependency chains). For
/// 16-bit weights w - d is exact in float (both are values of the dtype and D is zero or within a few binades
/// of w, so the difference fits float's 24 bits; the analyze kernel relies on the same), so only the float64
/// additions round; F32 weights take the difference in float64, as the scalar trace statistics do.
template <DType T> HWY_INLINE void AddSquaredDiff(VF w, VF d, VD& lo, VD& hi)
{
    const DD dd;
#if HWY_TARGET == HWY_SCALAR
    (void)hi;
    const auto e = T == DType::F32 ? hn::Sub(hn::PromoteTo(dd, w), hn::PromoteTo(dd, d))
                                   : hn::PromoteTo(dd, hn::Sub(w, d));
    lo = hn::MulAdd(e, e, lo);
#else
    const hn::Rebind<float, DD> dh;
    if constexpr (T == DType::F32) {
        const auto a =
            hn::Sub(hn::PromoteTo(dd, hn::LowerHalf(dh, w)), hn::PromoteTo(dd, hn::LowerHalf(dh, d)));
        const auto b =
            hn::Sub(hn::PromoteTo(dd, hn::UpperHalf(dh, w)), hn::PromoteTo(dd, hn::UpperHalf(dh, d)));
        lo = hn::MulAdd(a, a, lo);
        hi = hn::MulAdd(b, b, hi);
    } else {
        const auto e = hn::Sub(w, d);
        const auto a = hn::PromoteTo(dd, hn::LowerHalf(dh, e));
        const auto b = hn::PromoteTo(dd, hn::UpperHalf(dh, e));
        lo = hn::MulAdd(a, a, lo);
        hi = hn::MulAdd(b, b, hi);
    }
#endif
}

/// Error sums of one scheme over one row, accumulated group by group.
/// An aggregate (no default member initializers: an implicit constructor would lack the target attribute).
/// Four float64 accumulators so that consecutive vectors do not wait for each other's additions. They are
/// the caller's local variables, referenced here: SVE vectors are sizeless types, which can be neither
/// class members nor array elements.
struct RowAccumulator
{
    VD& acc0;
    VD& acc1;
    VD& acc2;
    VD& acc3;
    double tail;
    std::uint32_t nonFinite;

    kernels::SweepRowError result() const
    {
        const DD dd;
        const auto sum = hn::Add(hn::Add(acc0, acc1), hn::Add(acc2, acc3));
        return {hn::GetLane(hn::SumOfLanes(dd, sum)) + tail, nonFinite};
    }
};

/// Measures elements [begin, end) of @p row: @p simd maps a vector of weights to D, @p scalar one weight
/// (the tail after the last full vector) by the codec's own scalar definitions.
template <DType T, class Simd, class Scalar>
HWY_INLINE void MeasureRange(const std::byte* row, std::size_t begin, std::size_t end, const Simd& simd,
                             const Scalar& scalar, RowAccumulator& out)
{
    const DF df;
    const std::size_t n = hn::Lanes(df);
    const auto inf = hn::Set(df, HUGE_VALF);
    const auto measure = [&](std::size_t at, VD& lo, VD& hi) HWY_ATTR {
        const auto w = LoadWeights<T>(row + at * kElementBytes<T>);
        const auto d = simd(w);
        const auto finite = hn::Lt(hn::Abs(d), inf);
        if (HWY_LIKELY(hn::AllTrue(df, finite))) {
            AddSquaredDiff<T>(w, d, lo, hi);
        } else {
            // A non-finite D (an int4 -8·s overflowing the dtype) is left out of the sums and counted.
            out.nonFinite += static_cast<std::uint32_t>(n - hn::CountTrue(df, finite));
            AddSquaredDiff<T>(w, hn::IfThenElse(finite, d, w), lo, hi);
        }
    };
    std::size_t k = begin;
    for (; k + 2 * n <= end; k += 2 * n) {
        measure(k, out.acc0, out.acc1);
        measure(k + n, out.acc2, out.acc3);
    }
    for (; k + n <= end; k += n) {
        measure(k, out.acc0, out.acc1);
    }
    for (; k < end; ++k) {
        const float w = rtn::loadWeight(T, row, k);
        const float d = scalar(w);
        if (std::fabs(d) < HUGE_VALF) {
            const double e = static_cast<double>(w) - static_cast<double>(d);
            out.tail += e * e;
        } else {
            ++out.nonFinite;
        }
    }
}

template <DType T>
void IntSymmetricRow(const std::byte* row, std::size_t cols, const kernels::SweepScheme& scheme,
                     RowAccumulator& out)
{
    const DF df;
    const QuantScheme q{scheme.bits, scheme.groupSize};
    const int qMin = q.qMin();
    const int qMax = q.qMax();
    const auto vqMin = hn::Set(df, static_cast<float>(qMin));
    const auto vqMax = hn::Set(df, static_cast<float>(qMax));
    const std::size_t width = q.groupWidth(cols);
    for (std::size_t begin = 0; begin < cols; begin += width) {
        const std::size_t end = std::min(cols, begin + width);
        const float s =
            rtn::scaleFromAbsmax(T, rtn::rawToFloat(T, GroupAbsmaxRaw<T>(row, begin, end)), q.scaleDivisor());
        const auto vs = hn::Set(df, s);
        MeasureRange<T>(
            row, begin, end,
            [&](VF w) { return RoundToDType<T>(hn::Mul(QuantizeToFloat<T>(w, vs, vqMin, vqMax), vs)); },
            [&](float w) { return rtn::dequantizeValue(T, rtn::quantizeValue(T, w, s, qMin, qMax), s); },
            out);
    }
}

template <DType T>
void IntAsymmetricRow(const std::byte* row, std::size_t cols, const kernels::SweepScheme& scheme,
                      RowAccumulator& out)
{
    const DF df;
    const std::size_t n = hn::Lanes(df);
    const std::size_t width = scheme.groupSize < 0 ? cols : static_cast<std::size_t>(scheme.groupSize);
    const auto lo = hn::Set(df, -8.0f);
    const auto hi = hn::Set(df, 7.0f);
    for (std::size_t begin = 0; begin < cols; begin += width) {
        const std::size_t end = std::min(cols, begin + width);
        // min(w, 0) and max(w, 0) of the group; the order of a min/max does not change its value.
        auto vmn = hn::Zero(df);
        auto vmx = hn::Zero(df);
        std::size_t k = begin;
        for (; k + n <= end; k += n) {
            const auto w = LoadWeights<T>(row + k * kElementBytes<T>);
            vmn = hn::Min(vmn, w);
            vmx = hn::Max(vmx, w);
        }
        float mn = hn::GetLane(hn::MinOfLanes(df, vmn));
        float mx = hn::GetLane(hn::MaxOfLanes(df, vmx));
        for (; k < end; ++k) {
            mn = std::min(mn, rtn::loadWeight(T, row, k));
            mx = std::max(mx, rtn::loadWeight(T, row, k));
        }
        const auto p = codec::asymGroupParams(T, mn, mx);
        const float zp = static_cast<float>(p.zeroPoint);
        const auto vs = hn::Set(df, p.scale);
        const auto vzp = hn::Set(df, zp);
        MeasureRange<T>(
            row, begin, end,
            [&](VF w) {
                const auto x = RoundToDType<T>(hn::Add(RoundToDType<T>(hn::Div(w, vs)), vzp));
                const auto q = hn::Round(hn::Min(hn::Max(x, lo), hi));
                return RoundToDType<T>(hn::Mul(hn::Sub(q, vzp), vs));
            },
            [&](float w) {
                const auto q = static_cast<float>(codec::quantizeAsym(T, w, p));
                return rtn::roundToDType(T, (q - zp) * p.scale);
            },
            out);
    }
}

template <DType T> void Fp8Row(const std::byte* row, std::size_t cols, float rowAbsmax, RowAccumulator& out)
{
    const DF df;
    const float s = rtn::scaleFromAbsmax(T, rowAbsmax, kFp8Max);
    const auto vs = hn::Set(df, s);
    const auto lo = hn::Set(df, -kFp8Max);
    const auto hi = hn::Set(df, kFp8Max);
    MeasureRange<T>(
        row, 0, cols,
        [&](VF w) {
            const auto x = hn::Min(hn::Max(RoundToDType<T>(hn::Div(w, vs)), lo), hi);
            return RoundToDType<T>(hn::Mul(E4m3Round(x), vs));
        },
        [&](float w) { return rtn::roundToDType(T, minifloat::e4m3ToFloat(codec::fp8Code(T, w, s)) * s); },
        out);
}

/// NVFP4: the effective scale of every group of 16 first (vectorised across groups), then the elements.
template <DType T>
void Nvfp4Row(const std::byte* row, std::size_t cols, float globalScale, std::vector<float>& effective,
              RowAccumulator& out)
{
    const DF df;
    const std::size_t n = hn::Lanes(df);
    const std::size_t groups = cols / kNvfp4Group;
    effective.resize(groups + n);
    for (std::size_t g = 0; g < groups; ++g) {
        effective[g] = rtn::rawToFloat(T, GroupAbsmaxRaw<T>(row, g * kNvfp4Group, (g + 1) * kNvfp4Group));
    }
    const auto vgs = hn::Set(df, globalScale);
    std::size_t g = 0;
    for (; g + n <= groups; g += n) {
        const auto local =
            RoundToDType<T>(hn::Div(hn::LoadU(df, effective.data() + g), hn::Set(df, kFp4Max)));
        auto f8 = E4m3Round(hn::Min(hn::Mul(vgs, local), hn::Set(df, kFp8Max)));
        // A group scale that rounds to zero becomes float8's eps, 0.125 (schemes-spec §3.4).
        f8 = hn::IfThenElse(hn::Eq(f8, hn::Zero(df)), hn::Set(df, 0.125f), f8);
        hn::StoreU(hn::Div(f8, vgs), df, effective.data() + g);
    }
    for (; g < groups; ++g) {
        effective[g] = codec::nvfp4GroupScale(T, effective[g], globalScale).effective;
    }
    const auto lo = hn::Set(df, -kFp4Max);
    const auto hi = hn::Set(df, kFp4Max);
    for (g = 0; g < groups; ++g) {
        const float eff = effective[g];
        const auto veff = hn::Set(df, eff);
        MeasureRange<T>(
            row, g * kNvfp4Group, (g + 1) * kNvfp4Group,
            [&](VF w) {
                return RoundToDType<T>(hn::Mul(E2m1Round(hn::Min(hn::Max(hn::Div(w, veff), lo), hi)), veff));
            },
            [&](float w) {
                return rtn::roundToDType(T, minifloat::e2m1ToFloat(codec::nvfp4Nibble(w, eff)) * eff);
            },
            out);
    }
}

template <DType T>
std::size_t SweepT(const WeightRows& rows, const kernels::SweepScheme* schemes, std::size_t count,
                   double* sumW2, kernels::SweepRowError* errors)
{
    const DF df;
    const std::size_t n = hn::Lanes(df);
    const std::size_t cols = rows.cols;
    std::vector<float> effective;
    for (std::size_t r = 0; r < rows.rowCount; ++r) {
        const std::byte* row = rows.row(r);
        const std::uint32_t m = GroupAbsmaxRaw<T>(row, 0, cols);
        if (m >= rtn::nonFiniteRaw(T)) {
            return r * cols + FirstNonFinite(T, row, 0, cols);
        }
        VD acc = hn::Zero(DD());
        VD accHi = hn::Zero(DD());
        std::size_t k = 0;
        for (; k + n <= cols; k += n) {
            AddSquaredDiff<T>(LoadWeights<T>(row + k * kElementBytes<T>), hn::Zero(df), acc, accHi);
        }
        acc = hn::Add(acc, accHi);
        double tail = 0;
        for (; k < cols; ++k) {
            const double w = rtn::loadWeight(T, row, k);
            tail += w * w;
        }
        sumW2[r] = hn::GetLane(hn::SumOfLanes(DD(), acc)) + tail;
        // The next row in slices, one per scheme, so that it is in cache when its absmax pass starts
        // (hardware prefetchers stop at page boundaries).
        const std::size_t rowBytes = cols * kElementBytes<T>;
        const std::size_t slice = (rowBytes / std::max<std::size_t>(count, 1) + 64) & ~std::size_t{63};
        for (std::size_t i = 0; i < count; ++i) {
            for (std::size_t line = i * slice;
                 line < std::min(rowBytes, (i + 1) * slice) && r + 1 < rows.rowCount; line += 64) {
                hwy::Prefetch(rows.row(r + 1) + line);
            }
            VD acc0 = hn::Zero(DD());
            VD acc1 = acc0;
            VD acc2 = acc0;
            VD acc3 = acc0;
            RowAccumulator out{acc0, acc1, acc2, acc3, 0.0, 0};
            switch (schemes[i].family) {
            case SchemeFamily::IntSymmetric:
                IntSymmetricRow<T>(row, cols, schemes[i], out);
                break;
            case SchemeFamily::IntAsymmetric:
                IntAsymmetricRow<T>(row, cols, schemes[i], out);
                break;
            case SchemeFamily::Fp8:
                Fp8Row<T>(row, cols, rtn::rawToFloat(T, m), out);
                break;
            case SchemeFamily::Nvfp4:
                Nvfp4Row<T>(row, cols, schemes[i].globalScale, effective, out);
                break;
            case SchemeFamily::Keep:
                break; // BF16: no error
            }
            errors[r * count + i] = out.result();
        }
    }
    return kernels::kNoIndex;
}

template <DType T> std::uint32_t AbsmaxRawT(const WeightRows& rows, std::size_t* bad)
{
    std::uint32_t best = 0;
    const std::size_t count = rows.rowCount * rows.cols;
    // Rows are contiguous: one scan over the whole block, then the first NaN/Inf located only if there is
    // one.
    best = GroupAbsmaxRaw<T>(rows.data, 0, count);
    *bad = best >= rtn::nonFiniteRaw(T) ? FirstNonFinite(T, rows.data, 0, count) : kernels::kNoIndex;
    return best;
}

} // namespace

float AbsmaxRows(const WeightRows& rows, std::size_t* bad)
{
    return WithDType(rows.dtype, [&](auto t) {
        constexpr DType T = decltype(t)::value;
        return rtn::rawToFloat(T, AbsmaxRawT<T>(rows, bad));
    });
}

std::size_t SweepRows(const WeightRows& rows, const kernels::SweepScheme* schemes, std::size_t count,
                      double* sumW2, kernels::SweepRowError* errors)
{
    return WithDType(rows.dtype,
                     [&](auto t) { return SweepT<decltype(t)::value>(rows, schemes, count, sumW2, errors); });
}

} // namespace spark::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace spark::kernels {

HWY_EXPORT(SweepRows);
HWY_EXPORT(AbsmaxRows);

float absmaxRows(const WeightRows& rows, std::size_t* firstNonFinite)
{
    return HWY_DYNAMIC_DISPATCH(AbsmaxRows)(rows, firstNonFinite);
}

std::size_t sweepRows(const WeightRows& rows, const SweepScheme* schemes, std::size_t count, double* sumW2,
                      SweepRowError* errors)
{
    return HWY_DYNAMIC_DISPATCH(SweepRows)(rows, schemes, count, sumW2, errors);
}

} // namespace spark::kernels
#endif
