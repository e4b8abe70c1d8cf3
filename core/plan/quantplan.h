#pragma once

#include "core/io/tensorinfo.h"
#include "core/plan/architecture.h"
#include "core/plan/configgroups.h"
#include "core/plan/entrypreview.h"
#include "core/plan/lintfinding.h"
#include "core/plan/plannedmodule.h"
#include "core/plan/planoptions.h"
#include "core/plan/sizeestimate.h"
#include "core/quant/quantscheme.h"

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace spark {

/// @brief Everything decided about quantizing one draft: per module decision and reason, the entries'
/// preview, lint, sizes, and the `targets`/`ignore` to write into quantization_config.
///
/// Contract with the exporter: refuse to run unless errors is empty; quantize exactly the modules with
/// decision == Quantize, each with its own `scheme` (fused shards share one); write configGroups() and
/// `ignoreEntries()` as `ignore`. Under vLLM's rules (with and without packed_modules_mapping, and with
/// EAGLE3's pre-vllm#48068 names) that ignore list selects exactly the Linears the plan keeps BF16 — makePlan
/// checks this itself and reports an error otherwise.
struct QuantPlan
{
    ArchitectureInfo architecture;
    std::string presetRequested; ///< as asked ("auto")
    std::string preset;          ///< as resolved ("glm-dspark")
    /// The scheme of modules the targets select when no scheme rule assigns another (--bits/--group).
    const WeightScheme* defaultScheme = &keepScheme();
    /// The rounding method of quantized modules no --rounding rule names (rtn unless asked otherwise).
    const RoundingMethod* defaultRounding = &rtnRounding();
    int tpDegree = 1;
    int targetLayers = 0;               ///< the offset used in vLLM names
    bool targetLayersKnown = false;     ///< false: 0 was assumed (lint "target-layers-unknown")
    std::vector<PlannedModule> modules; ///< every checkpoint module, sorted by name
    std::vector<EntryPreview> entries; ///< every target then ignore entry: preset ones first, then the user's
    std::vector<LintFinding> lint;
    SizeEstimate sizes;
    std::vector<std::string> errors; ///< invalid regex, fused-group disagreement, bad scheme, unknown preset
    std::vector<std::string> ignore; ///< generated ignore list (see ignoreEntries)

    /// @brief One compressed-tensors config group per distinct (scheme, rounding method) (schemes-spec §4;
    /// a group's `weights.observer` records the rounding): the most common pair takes the "Linear"
    /// catch-all, the others compact suffix-anchored regexes (or "lm_head") disjoint across groups. A plan
    /// with one scheme and one rounding has one group targeting "Linear".
    std::vector<ConfigGroup> groups;
    /// @brief The distinct rounding methods of the quantized modules, in roundingMethods() order.
    std::vector<const RoundingMethod*> roundingsUsed() const;
    /// @brief The distinct schemes of the quantized modules, in groups order.
    std::vector<const WeightScheme*> schemesUsed() const;
    /// @brief "W4A16" for one scheme, "W4A16 + W8A16 + NVFP4A16" for several (groups order); the default
    /// scheme's name when nothing is quantized.
    std::string schemeSummary() const;
    /// @brief The `ignore` list for quantization_config: "lm_head", then suffix-anchored, dot-escaped
    /// regexes matching fused and unfused names of every Linear kept BF16 (format-spec §5.6).
    const std::vector<std::string>& ignoreEntries() const { return ignore; }
    /// @brief The module with checkpoint name @p name, nullptr when none.
    const PlannedModule* findModule(std::string_view name) const;
    /// @brief The modules to quantize, in name order.
    std::vector<const PlannedModule*> quantizedModules() const;
    /// @brief True when a lint finding with @p id is present.
    bool hasLint(std::string_view id) const;
};

/// @brief Plans the quantization of a draft from its config.json and tensor headers (no tensor data is read).
/// Never throws for bad entries or options: they land in QuantPlan::errors.
QuantPlan makePlan(const nlohmann::json& config, const std::vector<TensorInfo>& tensors,
                   const PlanOptions& options);

} // namespace spark
