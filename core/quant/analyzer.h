#pragma once

#include "core/io/checkpoint.h"
#include "core/progress.h"
#include "core/quant/errorstats.h"
#include "core/quant/roundingmethod.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace spark {

/// @brief Options of analyzeCheckpoint().
struct AnalyzeOptions
{
    /// The scheme every tensor is measured under, unless @ref tensorSchemes names another for it.
    const WeightScheme* scheme = intSymmetricScheme(4, 128);
    /// Per-tensor schemes (a plan's scheme per module); BF16 entries are skipped.
    std::map<std::string, const WeightScheme*> tensorSchemes;
    /// The rounding method every tensor is measured under (searching ones search first, roundingsearch.h),
    /// unless @ref tensorRoundings names another for it.
    const RoundingMethod* rounding = &rtnRounding();
    std::map<std::string, const RoundingMethod*> tensorRoundings;
    /// NVFP4's global scale comes from the absmax over a fused set: tensors with the same key here share
    /// one (a plan's vLLM unit name); a tensor without a key is its own set.
    std::map<std::string, std::string> fusedSetOf;
    unsigned threads = 0;                           ///< 0 = every core
    std::size_t chunkBytes = std::size_t{32} << 20; ///< rows are read in blocks of about this size
    const QuantBackend* backend = nullptr;          ///< where the statistics are computed; nullptr: the CPU
};

/// @brief The statistics of one weight, or why it has none (NaN/Inf: @ref error names the index).
struct TensorAnalysis
{
    std::string name;
    std::string file; ///< shard file name
    DType dtype = DType::BF16;
    std::vector<std::uint64_t> shape;
    const WeightScheme* scheme = nullptr;     ///< the scheme it was measured under
    const RoundingMethod* rounding = nullptr; ///< and the rounding method
    std::optional<TensorErrorStats> stats;
    std::string error; ///< one line; empty when stats is set
};

/// @brief True for the weights analyze measures until the plan layer decides what gets quantized:
/// 2-D `*.weight` in BF16/F16/F32 whose columns divide by the scheme's group (never for BF16).
bool isAnalyzable(const TensorInfo& tensor, const WeightScheme& scheme);
/// @brief The scheme @p options measure @p tensor under.
const WeightScheme& analyzedScheme(const AnalyzeOptions& options, const std::string& tensor);

/// @brief The rounding method @p options measure @p tensor under.
const RoundingMethod& analyzedRounding(const AnalyzeOptions& options, const std::string& tensor);

/// @brief Error statistics of one tensor, read with pread in row blocks into @p buffer (reused across
/// calls, grown when needed), so memory stays bounded whatever the tensor size. @p progress gets
/// bytes of this tensor. @p context is NVFP4's global scale and the searched ranges (default: searched
/// here when the rounding searches, the global scale from this tensor's own statistics; one more read).
/// Throws QuantError (NaN/Inf), IoError (read failure, or Cancelled).
TensorErrorStats analyzeTensor(const SafetensorsFile& file, const TensorInfo& tensor,
                               const AnalyzeOptions& options, std::vector<std::byte>& buffer,
                               const ProgressFn& progress = {},
                               const std::optional<SchemeContext>& context = std::nullopt);
/// @brief max |w| of @p tensor, read in blocks into @p buffer (NVFP4's global scale).
float tensorAbsmax(const SafetensorsFile& file, const TensorInfo& tensor, std::size_t chunkBytes,
                   std::vector<std::byte>& buffer);

/// @brief analyzeTensor() for every isAnalyzable() tensor, in name order. A NaN/Inf weight becomes an
/// entry with @ref TensorAnalysis::error and the others go on; read errors and cancel (progress
/// returned false: IoError Cancelled) throw. @p progress counts bytes of analyzable tensors.
std::vector<TensorAnalysis> analyzeCheckpoint(const Checkpoint& checkpoint, const AnalyzeOptions& options,
                                              const ProgressFn& progress = {});

} // namespace spark
