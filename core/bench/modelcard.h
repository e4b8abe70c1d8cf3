#pragma once

#include "core/bench/benchreport.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace spark {

/// @brief Everything the model card says; the exporter fills it from the plan and the checkpoints.
struct ModelCardInputs
{
    /// @brief A module (or pattern) and why it was treated that way (the lint's reason).
    struct ModuleReason
    {
        std::string module;
        std::string reason;
        std::string scheme; ///< the module's scheme ("W8A16"); empty where the table has no scheme column
    };
    /// @brief One row of the size table.
    struct SizeRow
    {
        std::string label; ///< e.g. "total", "layers", "embed_tokens"
        std::uint64_t bytesBefore = 0;
        std::uint64_t bytesAfter = 0;
    };

    std::string modelName;                ///< title and the path/repo id used in the vLLM example
    std::string baseModel;                ///< the source draft (YAML base_model)
    std::string license;                  ///< carried from the source card or given; "other" when empty
    std::string architecture;             ///< tag, e.g. "eagle3", "dflash"
    std::string architectureName;         ///< human name, e.g. "EAGLE-3 (Llama)"
    std::string targetModel;              ///< the verifier this draft is paired with, e.g. "Qwen/Qwen3-32B"
    std::string targetPrecision = "BF16"; ///< the target precision the draft was checked against
    std::string scheme = "W4A16";         ///< compressed-tensors scheme
    /// What the scheme stores, for the card's first sentence ("4-bit weights, group size 128, symmetric,
    /// 16-bit activations"; for a mixed checkpoint which scheme holds how many modules).
    std::string schemeDetail = "4-bit weights, group size 128, symmetric, 16-bit activations";
    std::vector<ModuleReason> quantized;
    std::vector<ModuleReason> keptBf16;
    std::vector<SizeRow> sizes;
    std::string speculativeMethod = "eagle3"; ///< the "method" of --speculative-config
    int numSpeculativeTokens = 3;
    std::vector<std::string> extraTags;
    /// Plan warnings that change what to expect of this checkpoint (e.g. a one-layer EAGLE-3 head at 4
    /// bits); each becomes a bullet under "Known caveats".
    std::vector<std::string> planWarnings;
    std::optional<BenchReport> benchmarks; ///< imported benchmark statistics, if any
    std::string toolVersion;               ///< Sparkulator version that wrote the card
};

/// @brief Renders README.md: YAML front matter (base_model, license, tags: speculative-decoding, the
/// architecture, w4a16, compressed-tensors), what was quantized and what stayed BF16 with reasons, the
/// size table, the target pairing, the benchmark tables (when given; with the speed model's predicted and
/// measured change side by side and its assumptions when the report carries one), a `vllm serve ...
/// --speculative-config` example, and the known caveats (vllm#47911 compile cache). Deterministic:
/// the same inputs give the same bytes.
std::string renderModelCard(const ModelCardInputs& inputs);

/// @brief A YAML scalar: plain when safe, else double-quoted with escapes.
std::string yamlScalar(const std::string& text);

} // namespace spark
