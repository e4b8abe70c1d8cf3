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
#include <hwy/cache_control.h>

#ifndef SPARK_LAMBDA_INLINE
// The hot loop's lambdas are always inlined: one left out of line would make the accumulators it can
// reach live in memory.
#define SPARK_LAMBDA_INLINE HWY_ATTR __attribute__((always_inline))
#endif

HWY_BEFORE_NAMESPACE();
namespace spark::HWY_NAMESPACE {

namespace {

using DD = hn::Repartition<double, DF>;
using VD = hn::Vec<DD>;

/// Keys of the counting pass: joint index (q, weight slot, error bin) in the low bits, the |err| bin
/// above it.
constexpr int kKeyShift = 17;
constexpr std::uint32_t kKeyMask = (1u << kKeyShift) - 1u;
/// Keys are counted one sample chunk at a time (a multiple of every vector length).
constexpr std::size_t kKeyBlock = std::size_t{1} << kernels::kSampleChunkShift;

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

/// One element, scalar: the same steps as the SIMD body (group tails); its bins are counted when
/// @p counted (the histogram sample).
void scalarElement(DType dtype, float w, float s, float invS, const Bins& b, bool counted, TailScratch& x,
                   std::size_t i, kernels::RowErrorPartials& p, kernels::StatsCounters& c)
{
    const float quotient = w / s;
    const float q = static_cast<float>(
        rtn::quantizeValue(dtype, w, s, static_cast<int>(b.qMin), static_cast<int>(b.qMax)));
    const float d = rtn::roundToDType(dtype, q * s);
    const bool finite = std::fabs(d) < HUGE_VALF;
    const float e = finite ? w - d : 0.0f;
    p.maxAbsErr = std::max(p.maxAbsErr, std::fabs(e));
    p.dequantNonFinite += finite ? 0 : 1;
    x.w[i] = w;
    x.e[i] = e;
    x.q[i] = q;
    if (!counted) {
        return;
    }
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

/// Calls @p add with the float64 promotions of the lower then the upper half of a, b, c and the offset
/// of that half within the float vector (0, then Lanes(dd)).
template <class Add> HWY_INLINE void AccumulateHalves(VF a, VF b, VF c, const Add& add)
{
    const DD dd;
#if HWY_TARGET == HWY_SCALAR
    add(hn::PromoteTo(dd, a), hn::PromoteTo(dd, b), hn::PromoteTo(dd, c), 0);
#else
    const hn::Rebind<float, DD> dh;
    add(hn::PromoteTo(dd, hn::LowerHalf(dh, a)), hn::PromoteTo(dd, hn::LowerHalf(dh, b)),
        hn::PromoteTo(dd, hn::LowerHalf(dh, c)), 0);
    add(hn::PromoteTo(dd, hn::UpperHalf(dh, a)), hn::PromoteTo(dd, hn::UpperHalf(dh, b)),
        hn::PromoteTo(dd, hn::UpperHalf(dh, c)), hn::Lanes(dd));
#endif
}

/// The five float64 sums of a row in an order that does not depend on the vector width, so that every
/// target (AVX-512, AVX2, SSE4, NEON, SVE of any length, scalar) and every machine gives the same bits:
/// element j of the row is added to virtual lane j mod kSumLanes of each sum, in increasing j, and the
/// lanes are added up in lane order at the end of the row. With a vector of Lanes(dd) <= kSumLanes doubles
/// starting at a row position that is a multiple of its length, that is one vector Add into the lanes
/// [j mod kSumLanes, ...) (IEEE additions lane by lane, the same as one at a time). Eight lanes fit one
/// AVX-512 or two AVX2 registers (LaneRegisters). Squares of floats are exact in float64, so only the
/// additions round: w², |w|, e², |e| and (w - q·s)² of 16-bit weights often sum exactly anyway, F32
/// weights do not.
constexpr std::size_t kSumLanes = 8;
struct RowSums
{
    HWY_ALIGN double w2[kSumLanes];
    HWY_ALIGN double absW[kSumLanes];
    HWY_ALIGN double err2[kSumLanes];
    HWY_ALIGN double absErr[kSumLanes];
    HWY_ALIGN double exact[kSumLanes];

    void clear()
    {
        for (std::size_t l = 0; l < kSumLanes; ++l) {
            w2[l] = absW[l] = err2[l] = absErr[l] = exact[l] = 0.0;
        }
    }

    /// One element at row position @p j (scalar tails).
    void add(std::size_t j, double w, double e, double ex)
    {
        const std::size_t l = j % kSumLanes;
        w2[l] += w * w;
        absW[l] += std::fabs(w);
        err2[l] += e * e;
        absErr[l] += std::fabs(e);
        exact[l] += ex * ex;
    }

    static double total(const double* lanes)
    {
        double sum = 0.0;
        for (std::size_t l = 0; l < kSumLanes; ++l) {
            sum += lanes[l];
        }
        return sum;
    }
};

/// Adds @p v (the elements at row positions j, j+1, ...) to the virtual lanes of @p lanes.
HWY_INLINE void AddToLanes(double* lanes, std::size_t j, VD v)
{
    const DD dd;
    const std::size_t nd = hn::Lanes(dd);
    const std::size_t l = j % kSumLanes;
    if (HWY_LIKELY(l % nd == 0 && l + nd <= kSumLanes)) {
        hn::StoreU(hn::Add(hn::LoadU(dd, lanes + l), v), dd, lanes + l);
    } else {
        HWY_ALIGN double values[hn::MaxLanes(dd)];
        hn::Store(v, dd, values);
        for (std::size_t i = 0; i < nd; ++i) {
            lanes[(j + i) % kSumLanes] += values[i];
        }
    }
}

/// The row's lanes in memory. add() (here and in LaneRegisters) takes the terms of one half (at @p offset)
/// of the float vector at row position k: w² as w·w, |w|, e² as e·e, |e| and (w - q·s)² as exA·exB. Every
/// product is exact in float64, so a fused multiply-add rounds like the addition alone, on every target.
struct MemoryLanes
{
    RowSums& sums;

    HWY_INLINE void add(std::size_t k, std::size_t offset, VD w, VD absW, VD e, VD absE, VD exA, VD exB)
    {
        AddToLanes(sums.w2, k + offset, hn::Mul(w, w));
        AddToLanes(sums.absW, k + offset, absW);
        AddToLanes(sums.err2, k + offset, hn::Mul(e, e));
        AddToLanes(sums.absErr, k + offset, absE);
        AddToLanes(sums.exact, k + offset, hn::Mul(exA, exB));
    }
};

#if !HWY_HAVE_SCALABLE
/// Registers that hold the kSumLanes lanes of every sum while a group's vectors run, where a double
/// vector covers the lanes once (8 doubles) or twice (4); 0 where it does not (then the lanes stay in
/// memory: 2-double vectors and sizeless SVE vectors, which cannot be array elements).
constexpr std::size_t kLaneVectors =
    kSumLanes % hn::MaxLanes(DD()) == 0 && kSumLanes / hn::MaxLanes(DD()) <= 2
        ? kSumLanes / hn::MaxLanes(DD())
        : 0;

/// The row's lanes in registers (kLaneVectors > 0) for vectors that start at multiples of kSumLanes:
/// the lower half of a float vector then always covers lanes [0, nd) and the upper half [nd, 2nd) mod
/// kSumLanes, so which register a half adds to is known when compiling. Exactly MemoryLanes' additions.
/// An aggregate: an implicit constructor would lack the target attribute.
struct LaneRegisters
{
    static constexpr std::size_t kCount = kLaneVectors > 0 ? kLaneVectors : 1;
    VD w2[kCount], absW[kCount], err2[kCount], absErr[kCount], exact[kCount];

    HWY_INLINE void load(const RowSums& s)
    {
        const DD dd;
        for (std::size_t i = 0; i < kCount; ++i) {
            const std::size_t l = i * hn::Lanes(dd);
            w2[i] = hn::Load(dd, s.w2 + l);
            absW[i] = hn::Load(dd, s.absW + l);
            err2[i] = hn::Load(dd, s.err2 + l);
            absErr[i] = hn::Load(dd, s.absErr + l);
            exact[i] = hn::Load(dd, s.exact + l);
        }
    }

    HWY_INLINE void store(RowSums& s) const
    {
        const DD dd;
        for (std::size_t i = 0; i < kCount; ++i) {
            const std::size_t l = i * hn::Lanes(dd);
            hn::Store(w2[i], dd, s.w2 + l);
            hn::Store(absW[i], dd, s.absW + l);
            hn::Store(err2[i], dd, s.err2 + l);
            hn::Store(absErr[i], dd, s.absErr + l);
            hn::Store(exact[i], dd, s.exact + l);
        }
    }

    HWY_INLINE void add(std::size_t, std::size_t offset, VD w, VD absWTerm, VD e, VD absE, VD exA, VD exB)
    {
        const std::size_t i = (offset / hn::Lanes(DD())) % kCount;
        w2[i] = hn::MulAdd(w, w, w2[i]);
        absW[i] = hn::Add(absW[i], absWTerm);
        err2[i] = hn::MulAdd(e, e, err2[i]);
        absErr[i] = hn::Add(absErr[i], absE);
        exact[i] = hn::MulAdd(exA, exB, exact[i]);
    }
};
#endif

template <DType T>
std::size_t StatsT(const WeightRows& rows, const QuantScheme& scheme, unsigned stride,
                   kernels::RowErrorPartials* perRow, kernels::StatsCounters& counters)
{
    const DF df;
    const DU du;
    const DD dd;
    const std::size_t n = hn::Lanes(df);
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
    TailScratch x(width + n);
    std::vector<std::uint32_t> groupAbsmax(groups);
    RowSums sums;
    HWY_ALIGN std::uint32_t keys[kKeyBlock];
    HWY_ALIGN float laneWBin[hn::MaxLanes(df)];
    HWY_ALIGN float laneInWindow[hn::MaxLanes(df)];

    for (std::size_t r = 0; r < rows.rowCount; ++r) {
        const std::byte* row = rows.row(r);
        const std::uint64_t tensorRow = rows.firstRow + r;
        kernels::RowErrorPartials p;
        auto vMaxErr = zero;
        sums.clear();
        // Every group's absmax first, in one streaming pass over the row (a row of groups read one at a time
        // between long measuring loops leaves the memory system idle); the row is then in L1 for the rest.
        for (std::size_t g = 0; g < groups; ++g) {
            const std::size_t begin = g * width;
            const std::size_t end = std::min(cols, begin + width);
            groupAbsmax[g] = GroupAbsmaxRaw<T>(row, begin, end);
            if (groupAbsmax[g] >= limit) {
                return r * cols + FirstNonFinite(T, row, begin, end);
            }
        }
        for (std::size_t g = 0; g < groups; ++g) {
            const std::size_t begin = g * width;
            const std::size_t end = std::min(cols, begin + width);
            // The next row, a group at a time while this one is measured: the absmax pass of the next row
            // then finds it in cache (hardware prefetchers stop at page boundaries and retrain too late).
            for (std::size_t line = begin * kElementBytes<T>;
                 line < end * kElementBytes<T> && r + 1 < rows.rowCount; line += 64) {
                hwy::Prefetch(rows.row(r + 1) + line);
            }
            const float absmax = rtn::rawToFloat(T, groupAbsmax[g]);
            p.epsScales += rtn::roundToDType(T, absmax / divisor) == 0.0f ? 1 : 0;
            const float s = rtn::scaleFromAbsmax(T, absmax, divisor);
            const float invS = 1.0f / s;
            const auto vs = hn::Set(df, s);
            const auto vInvS = hn::Set(df, invS);
            const auto vsd = hn::Set(dd, static_cast<double>(s));
            std::size_t k = begin;

            // One float vector at row position k: quantize, max |e|, non-finite count and the float64 sums
            // (w and e = w - D are exact floats, e by Sterbenz: D is within a factor 2 of w or zero, so
            // their squares are exact in float64 and only the additions round), then @p bins with what the
            // histograms need.
            const auto measure = [&](auto& lanes, const auto& bins) SPARK_LAMBDA_INLINE {
                const auto w = LoadWeights<T>(row + k * kElementBytes<T>);
                const auto quotient = hn::Div(w, vs);
                const auto q = hn::Round(hn::Min(hn::Max(RoundToDType<T>(quotient), qMin), qMax));
                const auto d = RoundToDType<T>(hn::Mul(q, vs));
                const auto finite = hn::Lt(hn::Abs(d), inf);
                const auto e = hn::IfThenElseZero(finite, hn::Sub(w, d));
                const auto ae = hn::Abs(e);
                vMaxErr = hn::Max(vMaxErr, ae);
                if (T != DType::F32 && HWY_LIKELY(hn::AllTrue(df, finite))) {
                    // w*w = |w|*|w| and e*e = |e|*|e| exactly. For 16-bit weights w - q*s is exact in
                    // float (both are multiples of 2^-3 ulp(s) and below 2^9 s when q != 0; w itself
                    // when q = 0), so it equals the float64 w - q*s. A finite D also keeps q*s finite.
                    AccumulateHalves(hn::Abs(w), ae, hn::Sub(w, hn::Mul(q, vs)),
                                     [&](VD aw, VD aerr, VD ex, std::size_t offset) SPARK_LAMBDA_INLINE {
                                         lanes.add(k, offset, aw, aw, aerr, aerr, ex, ex);
                                     });
                } else {
                    p.dequantNonFinite += static_cast<std::uint32_t>(hn::CountTrue(df, hn::Not(finite)));
                    AccumulateHalves(w, e, q,
                                     [&](VD wd, VD ed, VD qd, std::size_t offset) SPARK_LAMBDA_INLINE {
                                         // w - q·s rounds in float64 here, so its square is rounded before it
                                         // is added.
                                         const auto ex = hn::Sub(wd, hn::Mul(qd, vsd));
                                         lanes.add(k, offset, wd, hn::Abs(wd), ed, hn::Abs(ed),
                                                   hn::Mul(ex, ex), hn::Set(dd, 1.0));
                                     });
                }
                bins(quotient, q, e, ae, finite);
            };
            // The histogram key of the vector at k (the same float steps as scalarElement(); for values
            // in [0, bins) Floor equals the int truncation), stored at @p key.
            const auto binKeys = [&](std::uint32_t* key) SPARK_LAMBDA_INLINE {
                return [&, key](VF quotient, VF q, VF e, VF ae, hn::Mask<DF> finite) SPARK_LAMBDA_INLINE {
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
                    hn::Store(hn::Or(hn::Xor(hn::BitCast(du, keyF), magicBits), aPart), du, key);
                };
            };
            // The group's whole vectors, one sample chunk at a time: bins only in counted chunks. A vector
            // that would cross a chunk boundary (only with group widths that are not multiples of the
            // vector length) leaves the rest of the group to the scalar tail.
            const auto vectors = [&](auto& lanes) SPARK_LAMBDA_INLINE {
                while (k + n <= end) {
                    const std::size_t chunkEnd =
                        std::min(end, ((k >> kernels::kSampleChunkShift) + 1) << kernels::kSampleChunkShift);
                    if (k + n > chunkEnd) {
                        break;
                    }
                    if (kernels::histogramSampled(tensorRow, k, stride)) {
                        const std::size_t chunkBegin = k;
                        for (; k + n <= chunkEnd; k += n) {
                            measure(lanes, binKeys(keys + (k - chunkBegin)));
                        }
                        countKeys(counters, keys, k - chunkBegin);
                    } else {
                        for (; k + n <= chunkEnd; k += n) {
                            measure(lanes, [](VF, VF, VF, VF, hn::Mask<DF>) {});
                        }
                    }
                }
            };
#if !HWY_HAVE_SCALABLE
            if constexpr (kLaneVectors > 0) {
                if (begin % kSumLanes == 0) {
                    LaneRegisters registers;
                    registers.load(sums);
                    vectors(registers);
                    registers.store(sums);
                }
            }
#endif
            MemoryLanes memory{sums};
            vectors(memory); // every vector when the lanes are not in registers, else none left
            // Scalar tail of the group, then its float64 sums element by element.
            const std::size_t tailBegin = k;
            for (; k < end; ++k) {
                scalarElement(T, rtn::loadWeight(T, row, k), s, invS, b,
                              kernels::histogramSampled(tensorRow, k, stride), x, k - tailBegin, p, counters);
            }
            for (k = tailBegin; k < end; ++k) {
                const std::size_t i = k - tailBegin;
                const double w = x.w[i];
                const double ex = w - static_cast<double>(x.q[i]) * static_cast<double>(s);
                sums.add(k, w, x.e[i], ex);
            }
        }
        p.maxAbsErr = std::max(p.maxAbsErr, hn::GetLane(hn::MaxOfLanes(df, vMaxErr)));
        p.sumW2 = RowSums::total(sums.w2);
        p.sumAbsW = RowSums::total(sums.absW);
        p.sumErr2 = RowSums::total(sums.err2);
        p.sumAbsErr = RowSums::total(sums.absErr);
        p.sumErr2Exact = RowSums::total(sums.exact);
        perRow[r] = p;
    }
    counters.elements += rows.rowCount * cols;
    return kernels::kNoIndex;
}

} // namespace

std::size_t ErrorStatsCount(const WeightRows& rows, const QuantScheme& scheme, unsigned stride,
                            kernels::RowErrorPartials* perRow, kernels::StatsCounters& counters)
{
    return WithDType(rows.dtype, [&](auto t) {
        return StatsT<decltype(t)::value>(rows, scheme, stride, perRow, counters);
    });
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

std::size_t errorStatsCount(const WeightRows& rows, const QuantScheme& scheme, unsigned stride,
                            RowErrorPartials* perRow, StatsCounters& counters)
{
    return HWY_DYNAMIC_DISPATCH(ErrorStatsCount)(rows, scheme, stride, perRow, counters);
}

} // namespace spark::kernels
#endif
