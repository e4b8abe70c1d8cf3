#pragma once

#include "core/quant/schemecodec.h"
#include "core/quant/weightrows.h"
#include "core/quant/weightscheme.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace spark {

/// @brief The error of one weight under one scheme as a sweep measures it: only the float64 sums, so that
/// errors of fused sets and whole plans add up (rel_err = sqrt(Σ sqErr / Σ sqNorm)).
struct SweepError
{
    const WeightScheme* scheme = nullptr;
    std::optional<double> sqErr; ///< Σ (w - D)²; absent when D has non-finite elements
    std::uint64_t dequantNonFinite = 0;
};

/// @brief Measures one `[rows, cols]` weight under several schemes at once, fed in consecutive row blocks:
/// each row is read once and every scheme runs on it while it is in cache (the SIMD sweep kernel, no
/// histograms). D is bit-identical to ErrorStatsAccumulator's, so sqErr equals its TensorErrorStats::sqErr
/// up to the order of the float64 additions. Per-row sums are reduced in row order: the result does not
/// depend on the thread count or the block sizes.
class SchemeSweepAccumulator
{
  public:
    /// @p contexts: one per scheme (NVFP4's global scale), or empty for defaults. Throws QuantError when a
    /// scheme keeps the weight (BF16) or its group does not divide @p cols.
    SchemeSweepAccumulator(std::vector<const WeightScheme*> schemes, std::vector<SchemeContext> contexts,
                           std::uint64_t rows, std::uint64_t cols);

    /// @brief Adds the next rows (rows.firstRow continues where the last block ended). Throws QuantError
    /// (UnsupportedDType, BadShape, NonFinite with the tensor name and first bad flat index).
    void addRows(const WeightRows& rows, unsigned threads = 1);

    std::uint64_t rowsDone() const { return m_rowsDone; }
    /// @brief Σ w² of the rows added so far.
    double sqNorm() const { return m_sqNorm; }
    /// @brief The errors, in the order of the schemes given; all rows must have been added.
    std::vector<SweepError> result() const;

  private:
    std::vector<const WeightScheme*> m_schemes;
    std::vector<SchemeContext> m_contexts;
    std::uint64_t m_rows;
    std::uint64_t m_cols;
    std::uint64_t m_rowsDone = 0;
    double m_sqNorm = 0;
    std::vector<double> m_sqErr;
    std::vector<std::uint64_t> m_nonFinite;
};

} // namespace spark
