#pragma once

#include "core/quant/schemecodec.h"
#include "core/quant/statskernels.h"
#include "core/quant/weightrows.h"
#include "core/quant/weightscheme.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace spark {

class QuantBackend;

/// @brief Counts over equal-width bins of [lo, hi); values outside land in the first/last bin.
struct FixedHistogram
{
    double lo = 0;
    double hi = 0;
    std::vector<std::uint64_t> counts;

    double binWidth() const { return counts.empty() ? 0.0 : (hi - lo) / static_cast<double>(counts.size()); }
};

/// @brief What quantizing one weight with a scheme would cost in accuracy (nothing is written).
/// W is the source weight, D = CT's dequantized weight round_to_dtype(q*s) in the weight dtype
/// (what vLLM's kernels effectively use; expected.json `rel_err_definition`).
/// Fields that are undefined are absent: when D has non-finite values (a -bf16max outlier gives
/// q = -8 and -8*s overflows), everything measured against D is absent and dequantNonFinite says
/// how many; relErrExactQs (q*s in float64) stays defined.
struct TensorErrorStats
{
    std::uint64_t rows = 0;
    std::uint64_t cols = 0;
    std::uint64_t groups = 0;           ///< scales of the tensor
    std::uint64_t epsScaleGroups = 0;   ///< groups whose scale rounded to 0 and became eps(dtype)
    std::uint64_t dequantNonFinite = 0; ///< elements of D that are ±Inf

    std::optional<double> relErr; ///< ||W-D||_F / ||W||_F (float64); absent if ||W|| = 0 or D not finite
    std::optional<double> relErrExactQs; ///< ||W - q*s||_F / ||W||_F with q*s in float64; absent if ||W|| = 0
    std::optional<double> maxAbsErr;     ///< max |W-D|
    /// 95th percentile of |W-D| over the histogram sample: upper edge of the log-spaced bin (relative
    /// width 2^-5) holding its 95th-percentile element, capped at maxAbsErr. An upper bound within 3.2%
    /// of the sample's exact value (of the tensor's, when histogramStride is 1).
    std::optional<double> p95AbsErr;
    std::optional<double> meanAbsErr;      ///< mean |W-D|
    std::optional<double> errOverMeanAbsW; ///< mean |W-D| / mean |W|
    std::optional<double> snrDb;           ///< 10 log10(Σw² / Σ(w-D)²); absent if the error is 0
    double meanAbsW = 0;
    double sqNorm = 0;           ///< Σ w² (float64): errors of fused sets and whole plans add up from these
    std::optional<double> sqErr; ///< Σ (w - D)² (float64); absent when D is not finite

    /// The histograms and p95AbsErr count the elements of a fixed sample (kernels::histogramSampled():
    /// 1 in histogramStride 64-column chunks, diagonally), the same on every backend and SIMD target;
    /// tensors of fewer than 2^21 elements are counted in full (stride 1), larger ones keep at least
    /// 2^20 elements, stride at most 16. Everything else covers every element.
    unsigned histogramStride = 1;
    /// Count of each stored code: q - qMin for integer schemes (16 bins 4-bit, 256 bins 8-bit), the FP8
    /// code byte (256 bins), the FP4 nibble (16 bins).
    std::vector<std::uint64_t> qHist;
    FixedHistogram weightHist; ///< w/s (scaled weight), 64 bins over the scheme's grid range
    FixedHistogram errorHist;  ///< (W-D)/s (error in units of the group scale), 64 bins over ±0.64
};

/// @brief Accumulates TensorErrorStats of one `[rows, cols]` weight fed in consecutive row blocks,
/// so a caller can stream a tensor through a small reused buffer. Per-row sums are reduced in row
/// order, so the result does not depend on the thread count or the block sizes.
class ErrorStatsAccumulator
{
  public:
    /// Throws QuantError when the scheme is invalid.
    ErrorStatsAccumulator(const QuantScheme& scheme, std::uint64_t rows, std::uint64_t cols);
    /// @brief Statistics under any quantizing scheme; @p context carries NVFP4's global scale (see
    /// SchemeCodec::contextForAbsmax) and, for a searching rounding method, the searched ranges. Integer
    /// symmetric schemes without ranges run on the backend given to addRows(), the rest on the CPU. Throws
    /// QuantError for BF16 (nothing to measure).
    ErrorStatsAccumulator(const WeightScheme& scheme, std::uint64_t rows, std::uint64_t cols,
                          const SchemeContext& context = {});

    /// @brief Adds the next rows (rows.firstRow must continue where the last block ended), measured by
    /// @p backend (nullptr: the CPU). Throws QuantError (NonFinite) with the tensor name and first bad
    /// flat index; a CUDA failure is a std::runtime_error naming the tensor.
    void addRows(const WeightRows& rows, unsigned threads = 1, const QuantBackend* backend = nullptr);

    std::uint64_t rowsDone() const { return m_rowsDone; }
    /// @brief The statistics; all rows must have been added.
    TensorErrorStats result() const;

  private:
    const WeightScheme* m_scheme;
    SchemeContext m_context;
    std::uint64_t m_rows;
    std::uint64_t m_cols;
    unsigned m_histogramStride;
    std::uint64_t m_rowsDone = 0;
    kernels::ErrorTotals m_totals;
    /// Error and |err| histograms keep their last "D not finite" bin, which result() leaves out.
    std::vector<std::uint64_t> m_qHist, m_weightHist, m_errorHist, m_absErrHist;
};

/// @brief Statistics of a whole weight held in memory (convenience over ErrorStatsAccumulator).
TensorErrorStats computeErrorStats(const WeightRows& rows, const QuantScheme& scheme, unsigned threads = 1,
                                   const QuantBackend* backend = nullptr);
/// @brief computeErrorStats() under any quantizing scheme.
TensorErrorStats computeErrorStats(const WeightRows& rows, const WeightScheme& scheme,
                                   const SchemeContext& context = {}, unsigned threads = 1,
                                   const QuantBackend* backend = nullptr);

} // namespace spark
