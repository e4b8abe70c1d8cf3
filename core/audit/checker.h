#pragma once

#include "core/audit/quantizedmodule.h"
#include "core/io/checkpoint.h"
#include "core/plan/lintfinding.h"
#include "core/plan/lintrules.h"

#include <optional>
#include <string>
#include <vector>

namespace spark {

/// @brief The vLLM release a checkpoint must load on. "newest" assumes every change the specs cite is in;
/// an explicit release assumes none that is not known to be in it (the PR → release table is kept in
/// checker.cpp, so a finding names the PR it depends on).
struct VllmVersion
{
    bool newest = true;
    int major = 0, minor = 0, patch = 0;
    std::string text = "newest";

    /// "newest", "0.11", "0.11.2", "v0.29.1rc1"; nullopt when malformed.
    static std::optional<VllmVersion> parse(const std::string& text);
};

/// @brief Options of checkCheckpoint().
struct CheckOptions
{
    std::optional<int> targetLayers; ///< overrides the config's target layer count (vLLM's layer offset)
    VllmVersion vllm;
};

/// @brief What `check` found: every module as recognised, and the findings of every rule.
struct CheckReport
{
    QuantizedCheckpoint view;
    std::vector<LintFinding> findings; ///< errors first, then warnings, then notes; each names its rule

    /// True when vLLM would load the checkpoint as its config intends (no error finding).
    bool ok() const;
    std::size_t count(LintSeverity severity) const;
    bool has(std::string_view ruleId) const;
    /// "check: 35 modules, 28 quantized (W4A16 ×24, NVFP4A16 ×4); 0 errors, 1 warning"
    std::string summary() const;
};

/// @brief Every rule checkCheckpoint() applies, with its id and why it matters.
const std::vector<LintRule>& checkRules();

/// @brief Applies every rule an exporter must respect (format-spec §2–§5, schemes-spec §1, §4, §5) to a
/// quantized checkpoint, without its source: tensors against the config per module, what vLLM loads
/// quantized or BF16, fused sets, ignore/target entries, raw `.weight` reads, lm_head, formats, kernels.
/// Reads headers, config.json and weight_shape / weight_global_scale only. Never throws for hostile input
/// that opened as safetensors.
CheckReport checkCheckpoint(const Checkpoint& checkpoint, const CheckOptions& options = {});

} // namespace spark
