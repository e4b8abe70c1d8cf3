#pragma once

// GPTQ as llm-compressor runs it (rounding.md §2.3, "static groups", actorder null): the codes of a weight
// chosen column by column so that the output error on calibration inputs X, tr((W−Q) H (W−Q)ᵀ) with
// H = XᵀX, is small, each column's rounding error pushed onto the columns not yet rounded. The scales and
// zero points are fixed beforehand from the ranges of the original weight, so the checkpoint holds the same
// tensors as an RTN export with different codes.

#include "core/io/dtype.h"
#include "core/quant/groupranges.h"
#include "core/quant/weightscheme.h"

#include <cstdint>
#include <string>
#include <vector>

namespace spark {

/// @brief llm-compressor's GPTQModifier defaults.
struct GptqOptions
{
    std::int64_t blockSize = 128; ///< columns rounded before the lazy update of the rest
    double dampening = 0.01;      ///< fraction of the mean diagonal added to H
};

/// @brief One weight solved by gptqRound().
struct GptqResult
{
    /// [rows · cols] row-major: the solved weight as the checkpoint holds it, dtype((q − zp)·s) on the grid
    /// of the ranges, so compressed-tensors' re-quantization of it under them gives back its codes q. That
    /// is LC's Q except where an 8-bit bf16(q·s) re-quantizes to the neighbouring code (see gptq.cpp).
    std::vector<float> weight;
    double outputError = 0;    ///< tr((W−Q) H (W−Q)ᵀ) / tr(W H Wᵀ) under the H passed in (FP64)
    double rtnOutputError = 0; ///< the same for compressed-tensors' RTN codes under the same ranges
    /// The damped H (or its inverse) was not positive definite: LC's fallback Hinv = I, which is the
    /// fp32-quotient RTN under the same ranges (no error propagates; dead columns still become 0).
    bool fellBack = false;
    std::string fallbackReason; ///< why, when fellBack (one sentence for the report)
};

/// @brief True for the schemes GPTQ rounds here: the integer families (W4A16 at any group, W4A16_ASYM,
/// W8A16). FP8 and NVFP4 keep their rounding method.
bool gptqSupports(const WeightScheme& scheme);

/// @brief The ranges RTN uses, made explicit: each group's own min and max, clamped to include 0 (CT's
/// calculate_qparams), for a [@p rows, @p cols] weight of values already in its dtype; @p cols is a
/// multiple of the scheme's group (a channel scheme has one group per row).
GroupRanges minMaxRanges(const WeightScheme& scheme, const float* weight, std::int64_t rows,
                         std::int64_t cols);

/// @brief Solves the codes of the [@p rows, @p cols] weight @p weight (values of @p dtype) under the
/// Hessian @p hessian ([cols, cols] row-major, symmetric, any positive scale) with the scales and zero
/// points that @p ranges (of the original weight) give under @p scheme. Columns whose diagonal is zero are
/// dead (their weights become 0, as in LC). Rows are independent given H: they are solved in parallel on
/// @p threads (0: all cores); the result does not depend on the thread count. Throws QuantError naming
/// @p tensorName for a scheme without GPTQ, mismatched sizes, or a non-finite weight or Hessian entry.
GptqResult gptqRound(const std::string& tensorName, const float* weight, std::int64_t rows, std::int64_t cols,
                     DType dtype, const std::vector<double>& hessian, const WeightScheme& scheme,
                     const GroupRanges& ranges, const GptqOptions& options = {}, unsigned threads = 0);

/// @brief tr((W−Q) H (W−Q)ᵀ) / tr(W H Wᵀ) of compressed-tensors' RTN codes Q under @p ranges: the output
/// error on the capture of a module rounded without GPTQ (sizes as gptqRound's, unchecked).
double rtnOutputError(const float* weight, std::int64_t rows, std::int64_t cols, DType dtype,
                      const std::vector<double>& hessian, const WeightScheme& scheme,
                      const GroupRanges& ranges);

} // namespace spark
