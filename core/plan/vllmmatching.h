#pragma once

#include "core/plan/matchentry.h"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace spark {

/// @brief vLLM's packed_modules_mapping: fused leaf → shard leaves ("qkv_proj" → q/k/v_proj).
using FusedMapping = std::map<std::string, std::vector<std::string>, std::less<>>;

/// @brief The mapping vLLM's Qwen3/Llama models declare: {qkv_proj: [q,k,v]_proj, gate_up_proj:
/// [gate,up]_proj}. Drafts get an EMPTY mapping today (vllm#53116): evaluate with both to be correct before
/// and after the fix.
const FusedMapping& standardFusedMapping();

/// @brief Compiles every entry once (invalid ones stay in the list with isValid() false and never match).
std::vector<MatchEntry> compileEntries(const std::vector<std::string>& entries);

/// @brief vLLM `check_equal_or_regex_match(name, entries)`: index of the first entry that matches, or -1.
int firstMatch(const std::vector<MatchEntry>& entries, std::string_view name);

/// @brief Result of vLLM's `should_ignore_layer` for one layer.
struct IgnoreDecision
{
    bool ignored = false;
    /// Non-empty when the shards of a fused layer disagree: vLLM's ValueError text, verbatim (format-spec
    /// §4.3).
    std::string error;
    /// The entry that ignored the layer (or the first shard's), -1 when none.
    int entryIndex = -1;
};

/// @brief vLLM `should_ignore_layer(layer, ignore, fused_mapping)` (format-spec §4.3): a fused layer whose
/// name is not literally in @p ignore is decided by its shard names (`layer.replace(fused, shard)`), which
/// must agree; any other layer by its own name.
IgnoreDecision shouldIgnoreLayer(std::string_view layer, const std::vector<MatchEntry>& ignore,
                                 const FusedMapping& mapping);

/// @brief vLLM `find_matched_target` is not None: the layer name matches a target, or its class name does
/// (case-insensitive substring for literals: "Linear"), or every shard of a fused layer matches by name.
bool matchesTarget(std::string_view layer, std::string_view className, const std::vector<MatchEntry>& targets,
                   const FusedMapping& mapping);

/// @brief One layer's verdict in evaluateIgnoreList().
struct LayerVerdict
{
    std::string layer;
    bool ignored = false;
    std::string error; ///< fused shards disagree (vLLM raises)
};

/// @brief An ignore list evaluated against vLLM layer names.
struct IgnoreEvaluation
{
    std::vector<std::string> invalidEntries; ///< error messages of entries that do not compile
    std::vector<LayerVerdict> layers;        ///< in the order given
};

/// @brief Evaluates a quantization_config `ignore` list against vLLM layer prefixes exactly as vLLM does
/// (re.match / equality, fused expansion through @p mapping). The exporter's verifier reuses this on the
/// config it wrote.
IgnoreEvaluation evaluateIgnoreList(const std::vector<std::string>& ignore,
                                    const std::vector<std::string>& layers, const FusedMapping& mapping = {});

} // namespace spark
