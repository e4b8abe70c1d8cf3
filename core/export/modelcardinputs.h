#pragma once

#include "core/bench/benchreport.h"
#include "core/bench/modelcard.h"
#include "core/io/checkpoint.h"
#include "core/plan/quantplan.h"

#include <filesystem>
#include <optional>
#include <string>

namespace spark {

/// @brief What the user adds to the card; empty fields are derived from the checkpoint.
struct CardOptions
{
    std::string modelName;   ///< default: the output folder name
    std::string baseModel;   ///< default: config `_name_or_path`, else the source folder name
    std::string license;     ///< default: `license:` of the source README front matter, else "other"
    std::string targetModel; ///< default: the verifier named in the config
    std::string targetPrecision = "BF16"; ///< the target precision the draft is paired with
    std::optional<BenchReport> benchmarks;
};

/// @brief Fills ModelCardInputs from a plan: the modules quantized and the Linears, heads and embeddings
/// kept BF16 with the plan's reasons, the size table, the target pairing and the vLLM example.
ModelCardInputs modelCardInputs(const Checkpoint& source, const QuantPlan& plan,
                                const std::filesystem::path& output, const CardOptions& options);

} // namespace spark
