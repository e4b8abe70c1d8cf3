// SIMD error-statistics kernel: RTN without packing, then error sums and histogram bins per row.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/quant/statskernels.cpp"
#include <hwy/foreach_target.h> // must precede highway.h
#include <hwy/highway.h>
#include "core/quant/rtn-inl.h"
// clang-format on

#include "core/quant/statskernels.h"

#include <algorithm>
#include <bit>
#include <cmath>

HWY_BEFORE_NAMESPACE();
namespace spark::HWY_NAMESPACE {

namespace {

/// Keys of the counting pass: joint index (q, weight slot, error bin) in the low bits, the |err| bin
/// above it.
constexpr int kKeyShift = 17;
constexpr std::uint32_t kKeyMask = (1u << kKeyShift) - 1u;
/// Keys are counted in blocks of at most this many elements (a multiple of every vector length).
constexpr std::size_t kKeyBlock = 512;

/// Histogram bin parameters shared by the SIMD body and the scalar tail.
struct Bins
{
    float qMin, qMax, wLo, wInv, eInv;
};

std::int32_t clampBin(float t, int bins)
{
    return static_cast<std::int32_t>(std::min(std::max(t, 0.0f), static_cast<float>(bins - 1)));
}

/// Counts one element from its four bins (scalar tails and lanes whose weight slot is out of range).
void countElement(kernels::StatsCounters& c, std::int32_t qBin, std::int32_t wBin, std::int32_t eBin,
                  std::int32_t aBin)
{
    std::int32_t slot = wBin - c.weightBase(qBin) + c.slotOffset;
    if (slot < 0 || slot >= c.slots() - 1) {
        ++c.weight[static_cast<std::size_t>(wBin)];
        slot = c.slots() - 1;
    }
    ++c.joint[static_cast<std::size_t>(((qBin << c.slotShift) + slot) * (kernels::kErrorBins + 1) + eBin)];
    ++c.absErr[static_cast<std::size_t>(aBin) * kernels::StatsCounters::kAbsErrCopies];
}

/// Neighbouring elements often share an |err| bin (bf16 errors take few distinct values), so the
/// |err| counters come in kAbsErrCopies interleaved copies (one cache line holds all copies of a
/// bin): consecutive increments do not wait for each other's store.
void countKeys(kernels::StatsCounters& c, const std::uint32_t* keys, std::size_t count)
{
    static_assert(kernels::StatsCounters::kAbsErrCopies == 4);
    std::uint32_t* joint = c.joint.data();
    std::uint32_t* absErr = c.absErr.data();
    std::size_t i = 0;
    for (; i + 4 <= count; i += 4) {
        const std::uint32_t k0 = keys[i], k1 = keys[i + 1], k2 = keys[i + 2], k3 = keys[i + 3];
        ++joint[k0 & kKeyMask];
        ++absErr[(k0 >> kKeyShift) * 4];
        ++joint[k1 & kKeyMask];
        ++absErr[(k1 >> kKeyShift) * 4 + 1];
        ++joint[k2 & kKeyMask];
        ++absErr[(k2 >> kKeyShift) * 4 + 2];
        ++joint[k3 & kKeyMask];
        ++absErr[(k3 >> kKeyShift) * 4 + 3];
    }
    for (; i < count; ++i) {
        ++joint[keys[i] & kKeyMask];
        ++absErr[(keys[i] >> kKeyShift) * 4];
    }
}

/// Tail values for the float64 sums (elements after the last full float vector of a group).
struct TailScratch
{
    explicit TailScratch(std::size_t size) : w(size), e(size), q(size) {}
    std::vector<float> w, e, q;
};

/// One element, scalar: the same steps as the SIMD body (tails of per-channel rows).
void scalarElement(DType dtype, float w, float s, float invS, const Bins& b, TailScratch& x, std::size_t i,
                   kernels::RowErrorPartials& p, kernels::StatsCounters& c)
{
    const float quotient = w / s;
    const float q = static_cast<float>(
        rtn::quantizeValue(dtype, w, s, static_cast<int>(b.qMin), static_cast<int>(b.qMax)));
    const float d = rtn::roundToDType(dtype, q * s);
    const bool finite = std::fabs(d) < HUGE_VALF;
    const float e = finite ? w - d : 0.0f;
    p.maxAbsErr = std::max(p.maxAbsErr, std::fabs(e));
    x.w[i] = w;
    x.e[i] = e;
    x.q[i] = q;
    const auto qBin = static_cast<std::int32_t>(q - b.qMin);
    const auto wBin = clampBin((quotient - b.wLo) * b.wInv, kernels::kWeightBins);
    const auto eBin =
        finite ? clampBin((e * invS - kernels::kErrorLo) * b.eInv, kernels::kErrorBins) : kernels::kErrorBins;
    const auto aBin =
        finite
            ? static_cast<std::int32_t>(std::bit_cast<std::uint32_t>(std::fabs(e)) >> kernels::kAbsErrShift)
            : kernels::kAbsErrBins;
    countElement(c, qBin, wBin, eBin, aBin);
}

/// Calls @p add with the float64 promotions of the lower then the upper half of a, b, c (the order of
/// a plain loop in steps of Lanes(dd)).
template <class Add> HWY_INLINE void AccumulateHalves(VF a, VF b, VF c, const Add& add)
{
    using DD = hn::Repartition<double, DF>;
    const DD dd;
#if HWY_TARGET == HWY_SCALAR
    add(hn::PromoteTo(dd, a), hn::PromoteTo(dd, b), hn::PromoteTo(dd, c));
#else
    const hn::Rebind<float, DD> dh;
    add(hn::PromoteTo(dd, hn::LowerHalf(dh, a)), hn::PromoteTo(dd, hn::LowerHalf(dh, b)),
        hn::PromoteTo(dd, hn::LowerHalf(dh, c)));
    add(hn::PromoteTo(dd, hn::UpperHalf(dh, a)), hn::PromoteTo(dd, hn::UpperHalf(dh, b)),
        hn::PromoteTo(dd, hn::UpperHalf(dh, c)));
#endif
}

template <DType T>
std::size_t StatsT(const WeightRows& rows, const QuantScheme& scheme, kernels::RowErrorPartials* perRow,
                   kernels::StatsCounters& counters)
{
    const DF df;
    const DU du;
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
    const auto wLo = hn::Set(df, b.wLo);
    const auto wInv = hn::Set(df, b.wInv);
    const auto wTop = hn::Set(df, kernels::kWeightBins - 1);
    const auto eLo = hn::Set(df, kernels::kErrorLo);
    const auto eInv = hn::Set(df, b.eInv);
    const auto eTop = hn::Set(df, kernels::kErrorBins - 1);
    const auto eNonFinite = hn::Set(df, static_cast<float>(kernels::kErrorBins));
    static_assert(kKeyShift == kernels::kAbsErrShift - 1);
    const auto aMask = hn::Set(du, ~kKeyMask & 0x3FFFFFFFu);
    const auto aNonFinite = hn::Set(du, static_cast<std::uint32_t>(kernels::kAbsErrBins) << kKeyShift);
    const auto slotOffset = hn::Set(df, static_cast<float>(counters.slotOffset));
    const auto slotInvalid = hn::Set(df, static_cast<float>(counters.slots() - 1));
    const auto slotsF = hn::Set(df, static_cast<float>(counters.slots()));
    const auto baseScale =
        hn::Set(df, static_cast<float>(kernels::kWeightBins) / static_cast<float>(counters.qBins));
    const auto eStride = hn::Set(df, static_cast<float>(kernels::kErrorBins + 1));
    const auto magic = hn::Set(df, 0x1p23f);
    const auto magicBits = hn::Set(du, 0x4B000000u);
    const std::uint32_t* const nonFiniteCounts =
        counters.absErr.data() + kernels::kAbsErrBins * kernels::StatsCounters::kAbsErrCopies;
    const auto countNonFinite = [&] {
        std::uint32_t sum = 0;
        for (int copy = 0; copy < kernels::StatsCounters::kAbsErrCopies; ++copy) {
            sum += nonFiniteCounts[copy];
        }
        return sum;
    };
    TailScratch x(2 * n + 1);
    HWY_ALIGN std::uint32_t keys[kKeyBlock];
    HWY_ALIGN float laneWBin[hn::MaxLanes(df)];
    HWY_ALIGN float laneInWindow[hn::MaxLanes(df)];

    for (std::size_t r = 0; r < rows.rowCount; ++r) {
        const std::byte* row = rows.row(r);
        kernels::RowErrorPartials p;
        auto vMaxErr = zero;
        // Non-finite D lands in the last |err| bin: the row's count is that bin's growth.
        const std::uint32_t nonFiniteBefore = countNonFinite();
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
            const auto vInvS = hn::Set(df, invS);
            const auto vsd = hn::Set(dd, static_cast<double>(s));
            // float64 sums of nd elements, in the order of a plain loop over the group in steps of nd:
            // w and e = w - D are exact floats (e by Sterbenz: D is within a factor 2 of w or zero),
            // so their squares are exact in float64 and only the additions round.
            const auto accumulate = [&](hn::Vec<DD> w, hn::Vec<DD> e, hn::Vec<DD> q) {
                const auto ex = hn::Sub(w, hn::Mul(q, vsd));
                accW2 = hn::Add(accW2, hn::Mul(w, w));
                accAbsW = hn::Add(accAbsW, hn::Abs(w));
                accErr2 = hn::Add(accErr2, hn::Mul(e, e));
                accAbsErr = hn::Add(accAbsErr, hn::Abs(e));
                accExact = hn::Add(accExact, hn::Mul(ex, ex));
            };
            // The same sums from |w|, |e| and w - q*s (exact in float for 16-bit weights). Squares of
            // floats are exact in float64, so a fused multiply-add rounds exactly like Mul then Add.
            const auto accumulateAbs = [&](hn::Vec<DD> aw, hn::Vec<DD> ae, hn::Vec<DD> ex) {
                accW2 = hn::MulAdd(aw, aw, accW2);
                accAbsW = hn::Add(accAbsW, aw);
                accErr2 = hn::MulAdd(ae, ae, accErr2);
                accAbsErr = hn::Add(accAbsErr, ae);
                accExact = hn::MulAdd(ex, ex, accExact);
            };
            std::size_t k = begin;
            while (k + n <= end) {
                const std::size_t blockBegin = k;
                const std::size_t blockEnd = std::min(end, k + kKeyBlock);
                for (; k + n <= blockEnd; k += n) {
                    const auto w = LoadWeights<T>(row + k * kElementBytes<T>);
                    const auto quotient = hn::Div(w, vs);
                    const auto q = hn::Round(hn::Min(hn::Max(RoundToDType<T>(quotient), qMin), qMax));
                    const auto d = RoundToDType<T>(hn::Mul(q, vs));
                    const auto finite = hn::Lt(hn::Abs(d), inf);
                    const auto e = hn::IfThenElseZero(finite, hn::Sub(w, d));
                    const auto ae = hn::Abs(e);
                    vMaxErr = hn::Max(vMaxErr, ae);
                    if (T != DType::F32 && HWY_LIKELY(hn::AllTrue(df, finite))) {
                        // w*w = |w|*|w| and e*e = |e|*|e| exactly. For 16-bit weights w - q*s is
                        // exact in float (both are multiples of 2^-3 ulp(s) and below 2^9 s when
                        // q != 0; w itself when q = 0), so it equals the float64 w - q*s. A finite D
                        // also keeps q*s finite in float.
                        AccumulateHalves(hn::Abs(w), ae, hn::Sub(w, hn::Mul(q, vs)), accumulateAbs);
                    } else {
                        AccumulateHalves(w, e, q, accumulate);
                    }
                    // Bins as exact small integers in float (the same float steps as
                    // scalarElement(); for values in [0, bins) Floor equals the int truncation).
                    const auto qBin = hn::Sub(q, qMin);
                    const auto wBin =
                        hn::Floor(hn::Min(hn::Max(hn::Mul(hn::Sub(quotient, wLo), wInv), zero), wTop));
                    const auto et = hn::Mul(hn::Sub(hn::Mul(e, vInvS), eLo), eInv);
                    const auto eBin =
                        hn::IfThenElse(finite, hn::Floor(hn::Min(hn::Max(et, zero), eTop)), eNonFinite);
                    auto slot = hn::Add(hn::Sub(wBin, hn::Floor(hn::Mul(qBin, baseScale))), slotOffset);
                    const auto inWindow = hn::And(hn::Ge(slot, zero), hn::Lt(slot, slotInvalid));
                    if (HWY_UNLIKELY(!hn::AllTrue(df, inWindow))) {
                        hn::Store(wBin, df, laneWBin);
                        hn::Store(hn::IfThenElseZero(inWindow, hn::Set(df, 1.0f)), df, laneInWindow);
                        for (std::size_t i = 0; i < n; ++i) {
                            if (laneInWindow[i] == 0.0f) {
                                ++counters.weight[static_cast<std::size_t>(laneWBin[i])];
                            }
                        }
                        slot = hn::IfThenElse(inWindow, slot, slotInvalid);
                    }
                    // key = (qBin * slots + slot) * (kErrorBins + 1) + eBin < 2^17, exact in float;
                    // adding 2^23 puts it in the low mantissa bits.
                    const auto keyF =
                        hn::Add(hn::Mul(hn::Add(hn::Mul(qBin, slotsF), slot), eStride), hn::Add(eBin, magic));
                    // |err| bin (bits >> 18) placed at bit kKeyShift.
                    const auto aPart =
                        hn::IfThenElse(hn::RebindMask(du, finite),
                                       hn::And(hn::ShiftRight<1>(hn::BitCast(du, ae)), aMask), aNonFinite);
                    const auto key = hn::Or(hn::Xor(hn::BitCast(du, keyF), magicBits), aPart);
                    hn::Store(key, du, keys + (k - blockBegin));
                }
                countKeys(counters, keys, k - blockBegin);
            }
            // Scalar tail of the group, then the float64 sums of the tail in the same order as before:
            // full nd-chunks first, then single elements.
            const std::size_t tailBegin = k;
            for (; k < end; ++k) {
                scalarElement(T, rtn::loadWeight(T, row, k), s, invS, b, x, k - tailBegin, p, counters);
            }
            k = tailBegin;
            for (; k + nd <= end; k += nd) {
                const std::size_t i = k - tailBegin;
                accumulate(hn::PromoteTo(dd, hn::LoadU(dfh, x.w.data() + i)),
                           hn::PromoteTo(dd, hn::LoadU(dfh, x.e.data() + i)),
                           hn::PromoteTo(dd, hn::LoadU(dfh, x.q.data() + i)));
            }
            for (; k < end; ++k) {
                const std::size_t i = k - tailBegin;
                const double w = x.w[i];
                const double e = x.e[i];
                const double ex = w - static_cast<double>(x.q[i]) * static_cast<double>(s);
                tailW2 += w * w;
                tailAbsW += std::fabs(w);
                tailErr2 += e * e;
                tailAbsErr += std::fabs(e);
                tailExact += ex * ex;
            }
        }
        p.maxAbsErr = std::max(p.maxAbsErr, hn::GetLane(hn::MaxOfLanes(df, vMaxErr)));
        p.dequantNonFinite = countNonFinite() - nonFiniteBefore;
        p.sumW2 = hn::GetLane(hn::SumOfLanes(dd, accW2)) + tailW2;
        p.sumAbsW = hn::GetLane(hn::SumOfLanes(dd, accAbsW)) + tailAbsW;
        p.sumErr2 = hn::GetLane(hn::SumOfLanes(dd, accErr2)) + tailErr2;
        p.sumAbsErr = hn::GetLane(hn::SumOfLanes(dd, accAbsErr)) + tailAbsErr;
        p.sumErr2Exact = hn::GetLane(hn::SumOfLanes(dd, accExact)) + tailExact;
        perRow[r] = p;
    }
    counters.elements += rows.rowCount * cols;
    return kernels::kNoIndex;
}

} // namespace

std::size_t ErrorStatsCount(const WeightRows& rows, const QuantScheme& scheme,
                            kernels::RowErrorPartials* perRow, kernels::StatsCounters& counters)
{
    return WithDType(rows.dtype,
                     [&](auto t) { return StatsT<decltype(t)::value>(rows, scheme, perRow, counters); });
}

} // namespace spark::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace spark::kernels {

HWY_EXPORT(ErrorStatsCount);

StatsCounters::StatsCounters(int bitsIn)
    : bits(bitsIn), qBins(1 << bitsIn), slotShift(bitsIn == 4 ? 3 : 2), slotOffset(bitsIn == 4 ? 3 : 1),
      joint(static_cast<std::size_t>(qBins << slotShift) * (kErrorBins + 1)), weight(kWeightBins + 1),
      absErr((kAbsErrBins + 1) * kAbsErrCopies)
{
}

void StatsCounters::clear()
{
    std::fill(joint.begin(), joint.end(), 0u);
    std::fill(weight.begin(), weight.end(), 0u);
    std::fill(absErr.begin(), absErr.end(), 0u);
    elements = 0;
}

std::size_t errorStatsCount(const WeightRows& rows, const QuantScheme& scheme, RowErrorPartials* perRow,
                            StatsCounters& counters)
{
    return HWY_DYNAMIC_DISPATCH(ErrorStatsCount)(rows, scheme, perRow, counters);
}

} // namespace spark::kernels
#endif
