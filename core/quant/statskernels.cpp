// SIMD error-statistics kernel: RTN without packing, then error sums and histogram bins per row.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/quant/statskernels.cpp"
#include <hwy/foreach_target.h> // must precede highway.h
#include <hwy/highway.h>
#include "core/quant/rtn-inl.h"
// clang-format on

#include "core/quant/statskernels.h"

#include <cmath>

HWY_BEFORE_NAMESPACE();
namespace spark::HWY_NAMESPACE {

namespace {

/// Per-row scratch: values for the float64 pass and histogram bin indices for the counting pass.
struct RowScratch
{
    explicit RowScratch(std::size_t size)
        : w(size), e(size), q(size), qBin(size), wBin(size), eBin(size), aBin(size)
    {
    }
    std::vector<float> w, e, q;
    std::vector<std::int32_t> qBin, wBin, eBin, aBin;
};

/// Histogram bin parameters shared by the SIMD body and the scalar tail.
struct Bins
{
    float qMin, qMax, wLo, wInv, eInv;
};

std::int32_t clampBin(float t, int bins)
{
    return static_cast<std::int32_t>(std::min(std::max(t, 0.0f), static_cast<float>(bins - 1)));
}

/// One element, scalar: the same steps as the SIMD body (tails of per-channel rows).
void scalarElement(DType dtype, float w, float s, float invS, const Bins& b, RowScratch& x, std::size_t k,
                   kernels::RowErrorPartials& p)
{
    const float quotient = w / s;
    const float q = static_cast<float>(
        rtn::quantizeValue(dtype, w, s, static_cast<int>(b.qMin), static_cast<int>(b.qMax)));
    const float d = rtn::roundToDType(dtype, q * s);
    const bool finite = std::fabs(d) < HUGE_VALF;
    const float e = finite ? w - d : 0.0f;
    p.maxAbsErr = std::max(p.maxAbsErr, std::fabs(e));
    p.dequantNonFinite += finite ? 0 : 1;
    x.w[k] = w;
    x.e[k] = e;
    x.q[k] = q;
    x.qBin[k] = static_cast<std::int32_t>(q - b.qMin);
    x.wBin[k] = clampBin((quotient - b.wLo) * b.wInv, kernels::kWeightBins);
    x.eBin[k] =
        finite ? clampBin((e * invS - kernels::kErrorLo) * b.eInv, kernels::kErrorBins) : kernels::kErrorBins;
    x.aBin[k] =
        finite
            ? static_cast<std::int32_t>(std::bit_cast<std::uint32_t>(std::fabs(e)) >> kernels::kAbsErrShift)
            : kernels::kAbsErrBins;
}

template <DType T>
std::size_t StatsT(const WeightRows& rows, const QuantScheme& scheme, kernels::RowErrorPartials* perRow,
                   kernels::StatsHistograms& hist)
{
    const DF df;
    const DI di;
    using DD = hn::Repartition<double, DF>;
    const DD dd;
    const hn::Rebind<float, DD> dfh;
    const std::size_t n = hn::Lanes(df);
    const std::size_t nd = hn::Lanes(dd);
    const std::size_t cols = rows.cols;
    const std::size_t width = scheme.groupWidth(cols);
    const std::size_t groups = scheme.groupsPerRow(cols);
    const std::uint32_t limit = rtn::nonFiniteRaw(T);
    const float divisor = scheme.scaleDivisor();
    const float range = static_cast<float>(scheme.packOffset());
    const Bins b{static_cast<float>(scheme.qMin()), static_cast<float>(scheme.qMax()), -range,
                 static_cast<float>(kernels::kWeightBins) / (2 * range),
                 static_cast<float>(kernels::kErrorBins) / (-2 * kernels::kErrorLo)};
    const auto qMin = hn::Set(df, b.qMin);
    const auto qMax = hn::Set(df, b.qMax);
    const auto zero = hn::Zero(df);
    const auto inf = hn::Set(df, HUGE_VALF);
    RowScratch x(cols + n);
    const std::size_t qStride = hist.q.size(), wStride = hist.weight.size(), eStride = hist.error.size();
    std::vector<std::uint32_t> q4(4 * qStride), w4(4 * wStride), e4(4 * eStride);

    for (std::size_t r = 0; r < rows.rowCount; ++r) {
        const std::byte* row = rows.row(r);
        kernels::RowErrorPartials p;
        auto vMaxErr = zero;
        std::size_t nonFinite = 0;
        auto accW2 = hn::Zero(dd), accAbsW = hn::Zero(dd), accErr2 = hn::Zero(dd), accAbsErr = hn::Zero(dd),
             accExact = hn::Zero(dd);
        double tailW2 = 0, tailAbsW = 0, tailErr2 = 0, tailAbsErr = 0, tailExact = 0;
        for (std::size_t g = 0; g < groups; ++g) {
            const std::size_t begin = g * width;
            const std::size_t end = std::min(cols, begin + width);
            const std::uint32_t m = GroupAbsmaxRaw<T>(row, begin, end);
            if (m >= limit) {
                return r * cols + FirstNonFinite(T, row, begin, end);
            }
            const float absmax = rtn::rawToFloat(T, m);
            p.epsScales += rtn::roundToDType(T, absmax / divisor) == 0.0f ? 1 : 0;
            const float s = rtn::scaleFromAbsmax(T, absmax, divisor);
            const float invS = 1.0f / s;
            const auto vs = hn::Set(df, s);
            std::size_t k = begin;
            for (; k + n <= end; k += n) {
                const auto w = LoadWeights<T>(row + k * kElementBytes<T>);
                const auto quotient = hn::Div(w, vs);
                const auto q = hn::Round(hn::Min(hn::Max(RoundToDType<T>(quotient), qMin), qMax));
                const auto d = RoundToDType<T>(hn::Mul(q, vs));
                const auto finite = hn::Lt(hn::Abs(d), inf);
                const auto e = hn::IfThenElseZero(finite, hn::Sub(w, d));
                const auto ae = hn::Abs(e);
                vMaxErr = hn::Max(vMaxErr, ae);
                nonFinite += n - hn::CountTrue(df, finite);
                hn::StoreU(w, df, x.w.data() + k);
                hn::StoreU(e, df, x.e.data() + k);
                hn::StoreU(q, df, x.q.data() + k);
                const auto fin = hn::RebindMask(di, finite);
                hn::StoreU(hn::ConvertTo(di, hn::Sub(q, qMin)), di, x.qBin.data() + k);
                const auto wt = hn::Mul(hn::Sub(quotient, hn::Set(df, b.wLo)), hn::Set(df, b.wInv));
                hn::StoreU(
                    hn::ConvertTo(di, hn::Min(hn::Max(wt, zero), hn::Set(df, kernels::kWeightBins - 1))), di,
                    x.wBin.data() + k);
                const auto et =
                    hn::Mul(hn::Sub(hn::Mul(e, hn::Set(df, invS)), hn::Set(df, kernels::kErrorLo)),
                            hn::Set(df, b.eInv));
                const auto eBin =
                    hn::ConvertTo(di, hn::Min(hn::Max(et, zero), hn::Set(df, kernels::kErrorBins - 1)));
                hn::StoreU(hn::IfThenElse(fin, eBin, hn::Set(di, kernels::kErrorBins)), di,
                           x.eBin.data() + k);
                const auto aBin = hn::ShiftRight<kernels::kAbsErrShift>(hn::BitCast(di, ae));
                hn::StoreU(hn::IfThenElse(fin, aBin, hn::Set(di, kernels::kAbsErrBins)), di,
                           x.aBin.data() + k);
            }
            for (; k < end; ++k) {
                scalarElement(T, rtn::loadWeight(T, row, k), s, invS, b, x, k, p);
            }
            // float64 sums. w and e = w - D are exact floats (e by Sterbenz: D is within a factor 2
            // of w or zero), so their squares are exact in float64 and only the additions round.
            const auto vsd = hn::Set(dd, static_cast<double>(s));
            k = begin;
            for (; k + nd <= end; k += nd) {
                const auto w = hn::PromoteTo(dd, hn::LoadU(dfh, x.w.data() + k));
                const auto e = hn::PromoteTo(dd, hn::LoadU(dfh, x.e.data() + k));
                const auto q = hn::PromoteTo(dd, hn::LoadU(dfh, x.q.data() + k));
                const auto ex = hn::Sub(w, hn::Mul(q, vsd));
                accW2 = hn::Add(accW2, hn::Mul(w, w));
                accAbsW = hn::Add(accAbsW, hn::Abs(w));
                accErr2 = hn::Add(accErr2, hn::Mul(e, e));
                accAbsErr = hn::Add(accAbsErr, hn::Abs(e));
                accExact = hn::Add(accExact, hn::Mul(ex, ex));
            }
            for (; k < end; ++k) {
                const double w = x.w[k];
                const double e = x.e[k];
                const double ex = w - static_cast<double>(x.q[k]) * static_cast<double>(s);
                tailW2 += w * w;
                tailAbsW += std::fabs(w);
                tailErr2 += e * e;
                tailAbsErr += std::fabs(e);
                tailExact += ex * ex;
            }
        }
        p.maxAbsErr = std::max(p.maxAbsErr, hn::GetLane(hn::MaxOfLanes(df, vMaxErr)));
        p.dequantNonFinite += static_cast<std::uint32_t>(nonFinite);
        p.sumW2 = hn::GetLane(hn::SumOfLanes(dd, accW2)) + tailW2;
        p.sumAbsW = hn::GetLane(hn::SumOfLanes(dd, accAbsW)) + tailAbsW;
        p.sumErr2 = hn::GetLane(hn::SumOfLanes(dd, accErr2)) + tailErr2;
        p.sumAbsErr = hn::GetLane(hn::SumOfLanes(dd, accAbsErr)) + tailAbsErr;
        p.sumErr2Exact = hn::GetLane(hn::SumOfLanes(dd, accExact)) + tailExact;
        perRow[r] = p;
        // Neighbouring elements mostly hit the same few bins; four interleaved copies of the small
        // histograms break the store-to-load dependency chain of repeated increments.
        for (std::size_t k = 0; k < cols; ++k) {
            const std::size_t copy = k & 3;
            ++q4[copy * qStride + static_cast<std::size_t>(x.qBin[k])];
            ++w4[copy * wStride + static_cast<std::size_t>(x.wBin[k])];
            ++e4[copy * eStride + static_cast<std::size_t>(x.eBin[k])];
            ++hist.absErr[static_cast<std::size_t>(x.aBin[k])];
        }
    }
    for (std::size_t copy = 0; copy < 4; ++copy) {
        for (std::size_t i = 0; i < qStride; ++i) {
            hist.q[i] += q4[copy * qStride + i];
        }
        for (std::size_t i = 0; i < wStride; ++i) {
            hist.weight[i] += w4[copy * wStride + i];
        }
        for (std::size_t i = 0; i < eStride; ++i) {
            hist.error[i] += e4[copy * eStride + i];
        }
    }
    return kernels::kNoIndex;
}

} // namespace

std::size_t ErrorStatsRows(const WeightRows& rows, const QuantScheme& scheme,
                           kernels::RowErrorPartials* perRow, kernels::StatsHistograms& histograms)
{
    switch (rows.dtype) {
    case DType::F32:
        return StatsT<DType::F32>(rows, scheme, perRow, histograms);
    case DType::F16:
        return StatsT<DType::F16>(rows, scheme, perRow, histograms);
    default:
        return StatsT<DType::BF16>(rows, scheme, perRow, histograms);
    }
}

} // namespace spark::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace spark::kernels {

HWY_EXPORT(ErrorStatsRows);

std::size_t errorStatsRows(const WeightRows& rows, const QuantScheme& scheme, RowErrorPartials* perRow,
                           StatsHistograms& histograms)
{
    return HWY_DYNAMIC_DISPATCH(ErrorStatsRows)(rows, scheme, perRow, histograms);
}

} // namespace spark::kernels
#endif
