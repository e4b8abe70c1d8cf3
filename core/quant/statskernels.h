#pragma once

#include "core/quant/rtnkernels.h"

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

/// @brief Histogram counts of one task (merged by the caller; integer sums commute).
struct StatsHistograms
{
    std::vector<std::uint32_t> q = std::vector<std::uint32_t>(257);
    std::vector<std::uint32_t> weight = std::vector<std::uint32_t>(kWeightBins + 1);
    std::vector<std::uint32_t> error = std::vector<std::uint32_t>(kErrorBins + 1);
    std::vector<std::uint32_t> absErr = std::vector<std::uint32_t>(kAbsErrBins + 1);
};

/// @brief Quantizes (without packing) and measures each row; returns the first non-finite weight's
/// flat index in the block, or kNoIndex.
std::size_t errorStatsRows(const WeightRows& rows, const QuantScheme& scheme, RowErrorPartials* perRow,
                           StatsHistograms& histograms);

} // namespace spark::kernels
