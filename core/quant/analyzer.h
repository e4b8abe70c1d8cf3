#pragma once

#include "core/io/checkpoint.h"
#include "core/progress.h"
#include "core/quant/errorstats.h"

#include <optional>
#include <string>
#include <vector>

namespace spark {

/// @brief Options of analyzeCheckpoint().
struct AnalyzeOptions
{
    QuantScheme scheme;
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
    std::optional<TensorErrorStats> stats;
    std::string error; ///< one line; empty when stats is set
};

/// @brief True for the weights analyze measures until the plan layer decides what gets quantized:
/// 2-D `*.weight` in BF16/F16/F32 whose columns divide by the group.
bool isAnalyzable(const TensorInfo& tensor, const QuantScheme& scheme);

/// @brief Error statistics of one tensor, read with pread in row blocks into @p buffer (reused across
/// calls, grown when needed), so memory stays bounded whatever the tensor size. @p progress gets
/// bytes of this tensor. Throws QuantError (NaN/Inf), IoError (read failure, or Cancelled).
TensorErrorStats analyzeTensor(const SafetensorsFile& file, const TensorInfo& tensor,
                               const AnalyzeOptions& options, std::vector<std::byte>& buffer,
                               const ProgressFn& progress = {});

/// @brief analyzeTensor() for every isAnalyzable() tensor, in name order. A NaN/Inf weight becomes an
/// entry with @ref TensorAnalysis::error and the others go on; read errors and cancel (progress
/// returned false: IoError Cancelled) throw. @p progress counts bytes of analyzable tensors.
std::vector<TensorAnalysis> analyzeCheckpoint(const Checkpoint& checkpoint, const AnalyzeOptions& options,
                                              const ProgressFn& progress = {});

} // namespace spark
