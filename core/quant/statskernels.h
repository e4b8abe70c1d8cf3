#pragma once

#include "core/quant/rtnkernels.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

/// @brief The SIMD error-statistics kernel behind ErrorStatsAccumulator (internal to core/quant).
namespace spark::kernels {

/// Bins of the fixed histograms; the extra last bin of each collects what must not be counted
/// (elements whose dequantized value is not finite), so the hot loop needs no branch.
inline constexpr int kWeightBins = 64;      ///< w/s over [-2^(bits-1), 2^(bits-1)]
inline constexpr int kErrorBins = 64;       ///< (w-d)/s over [kErrorLo, -kErrorLo]
inline constexpr float kErrorLo = -0.64f;   ///< a little beyond the ±0.5 of exact rounding
inline constexpr int kAbsErrShift = 18;     ///< |w-d| float bits >> 18: exponent + 5 mantissa bits
inline constexpr int kAbsErrBins = 1 << 13; ///< log-spaced, relative width 2^-5

/// Histograms of large tensors are counted on a fixed sample, which keeps analyze close to the speed
/// of quantizing: row r of the tensor, columns [64c, 64c + 64) are counted when (c + r) mod stride
/// is 0 (a diagonal pattern, so every column and every row is represented). Chunks of 64 hold whole
/// vectors of every SIMD width up to 2048 bits, so each target samples the same elements.
inline constexpr int kSampleChunkShift = 6;
/// The largest stride (a power of two, at most 16) that leaves at least 2^20 elements in the sample:
/// tensors of fewer than 2^21 elements are counted in full.
inline unsigned histogramStride(std::uint64_t elements)
{
    unsigned stride = 1;
    while (stride < 16 && (elements >> 20) >= 2 * stride) {
        stride *= 2;
    }
    return stride;
}
/// Whether element (@p row of the tensor, @p col) is counted in the histograms at @p stride.
inline bool histogramSampled(std::uint64_t row, std::uint64_t col, unsigned stride)
{
    return (((col >> kSampleChunkShift) + row) & (stride - 1)) == 0;
}

/// @brief Sums of one row, in float64. Rows are reduced in row order by the caller so that totals do
/// not depend on how rows were split over threads.
struct RowErrorPartials
{
    double sumW2 = 0;        ///< Σ w²
    double sumAbsW = 0;      ///< Σ |w|
    double sumErr2 = 0;      ///< Σ (w - D)² over finite D
    double sumAbsErr = 0;    ///< Σ |w - D| over finite D
    double sumErr2Exact = 0; ///< Σ (w - q·s)², q·s in float64
    float maxAbsErr = 0;     ///< max |w - D| over finite D
    std::uint32_t dequantNonFinite = 0;
    std::uint32_t epsScales = 0; ///< groups whose scale became eps (all-zero groups)
};

/// @brief Totals of a tensor's RowErrorPartials, added one row at a time in row order, so the float64
/// sums do not depend on how the rows were split into blocks or over threads.
struct ErrorTotals
{
    double sumW2 = 0, sumAbsW = 0, sumErr2 = 0, sumAbsErr = 0, sumErr2Exact = 0;
    double maxAbsErr = 0;
    std::uint64_t dequantNonFinite = 0;
    std::uint64_t epsScales = 0;

    void add(const RowErrorPartials& row)
    {
        sumW2 += row.sumW2;
        sumAbsW += row.sumAbsW;
        sumErr2 += row.sumErr2;
        sumAbsErr += row.sumAbsErr;
        sumErr2Exact += row.sumErr2Exact;
        maxAbsErr = std::max(maxAbsErr, static_cast<double>(row.maxAbsErr));
        dequantNonFinite += row.dequantNonFinite;
        epsScales += row.epsScales;
    }
};

/// @brief Histogram counts of one task (merged by the caller; integer sums commute).
struct StatsHistograms
{
    std::vector<std::uint32_t> q = std::vector<std::uint32_t>(257);
    std::vector<std::uint32_t> weight = std::vector<std::uint32_t>(kWeightBins + 1);
    std::vector<std::uint32_t> error = std::vector<std::uint32_t>(kErrorBins + 1);
    std::vector<std::uint32_t> absErr = std::vector<std::uint32_t>(kAbsErrBins + 1);
};

/// @brief Raw counters of the statistics kernel for one thread, turned into StatsHistograms-style
/// counts by addTo(). The q, weight and error histograms are counted jointly: one counter per
/// (qBin, weight slot, eBin), where the weight slot is wBin relative to the weight bin of q (the
/// quotient w/s lies within about 0.53 of q, so wBin - wBase(q) takes only a few values). One
/// increment per element then covers three histograms; a weight bin outside the window (possible
/// only with badly rounded scales, e.g. F16 subnormal scales) is counted in @ref weight instead and
/// uses the last slot. Counts are exact, whatever the data.
struct StatsCounters
{
    explicit StatsCounters(int bits);

    int bits;
    int qBins;      ///< 2^bits
    int slotShift;  ///< log2 of the weight slots per q
    int slotOffset; ///< slot = wBin - wBase(qBin) + slotOffset; valid slots are [0, slots - 1)
    std::vector<std::uint32_t> joint;  ///< [qBin][slot][eBin], eBin in [0, kErrorBins] (last: not finite)
    std::vector<std::uint32_t> weight; ///< weight bins counted outside the joint table
    static constexpr int kAbsErrCopies = 4;
    std::vector<std::uint32_t> absErr; ///< [kAbsErrBins + 1][kAbsErrCopies] (last bin: not finite)
    std::uint64_t elements = 0;        ///< elements counted since the last clear()

    int slots() const { return 1 << slotShift; }
    /// Weight bin of the first valid slot of @p qBin plus @p slotOffset (so slot + wBase - offset = wBin).
    int weightBase(int qBin) const { return (qBin << 6) >> bits; }

    /// @brief Adds the counts to histograms laid out as in StatsHistograms (q: 2^bits bins, weight:
    /// kWeightBins, error: kErrorBins + 1, absErr: kAbsErrBins + 1).
    template <typename Count> void addTo(Count* q, Count* weightOut, Count* error, Count* absErrOut) const
    {
        const int eBins = kErrorBins + 1;
        const int valid = slots() - 1;
        for (int qb = 0; qb < qBins; ++qb) {
            for (int slot = 0; slot < slots(); ++slot) {
                const std::uint32_t* row = joint.data() + ((qb << slotShift) + slot) * eBins;
                std::uint64_t sum = 0;
                for (int e = 0; e < eBins; ++e) {
                    sum += row[e];
                    error[e] += static_cast<Count>(row[e]);
                }
                q[qb] += static_cast<Count>(sum);
                if (slot < valid && sum != 0) {
                    weightOut[weightBase(qb) + slot - slotOffset] += static_cast<Count>(sum);
                }
            }
        }
        for (int b = 0; b < kWeightBins; ++b) {
            weightOut[b] += static_cast<Count>(weight[static_cast<std::size_t>(b)]);
        }
        for (int b = 0; b <= kAbsErrBins; ++b) {
            std::uint64_t sum = 0;
            for (int copy = 0; copy < kAbsErrCopies; ++copy) {
                sum += absErr[static_cast<std::size_t>(b * kAbsErrCopies + copy)];
            }
            absErrOut[b] += static_cast<Count>(sum);
        }
    }

    void clear();
};

/// @brief Quantizes (without packing) and measures each row; returns the first non-finite weight's
/// flat index in the block, or kNoIndex. Histogram counts of the elements sampled at @p stride
/// (histogramSampled(), rows counted from rows.firstRow) are added to @p counters (one per thread).
std::size_t errorStatsCount(const WeightRows& rows, const QuantScheme& scheme, unsigned stride,
                            RowErrorPartials* perRow, StatsCounters& counters);

} // namespace spark::kernels
