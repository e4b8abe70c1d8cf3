#pragma once

#include "core/quant/rtnkernels.h"
#include "core/quant/weightscheme.h"

#include <cstddef>
#include <cstdint>

/// @brief The SIMD kernel behind SchemeSweep (internal to core/quant): one block of rows measured under
/// several schemes while each row sits in the L1 cache.
namespace spark::kernels {

/// @brief One scheme as the sweep kernel measures it.
struct SweepScheme
{
    SchemeFamily family = SchemeFamily::IntSymmetric;
    int bits = 4;
    int groupSize = 128;      ///< -1: one group per row
    float globalScale = 1.0f; ///< NVFP4's global scale (SchemeCodec::contextForAbsmax)
};

/// @brief The error of one row under one scheme, in float64.
struct SweepRowError
{
    double sumErr2 = 0;          ///< Σ (w - D)² over the elements whose D is finite
    std::uint32_t nonFinite = 0; ///< elements whose D is ±Inf
};

/// @brief For every row r of @p rows: Σ w² into @p sumW2[r], and for every scheme i its error into
/// @p errors[r * count + i], with D bit-identical to CT's dequantized weight (schemes-spec §8), i.e. to
/// SchemeCodec::decode(encode()). Single-threaded; the columns must divide by every group size. Returns
/// the flat index in the block of the first NaN/Inf weight (nothing is measured from that row on), or
/// kNoIndex.
std::size_t sweepRows(const WeightRows& rows, const SweepScheme* schemes, std::size_t count, double* sumW2,
                      SweepRowError* errors);

/// @brief max |w| of @p rows (SIMD, exact); @p firstNonFinite gets the flat index of the first NaN/Inf in
/// the block, or kNoIndex.
float absmaxRows(const WeightRows& rows, std::size_t* firstNonFinite);

} // namespace spark::kernels
