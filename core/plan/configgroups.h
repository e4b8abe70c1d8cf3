#pragma once

#include "core/plan/plannedmodule.h"
#include "core/plan/vllmmatching.h"

#include <string>
#include <vector>

namespace spark {

/// @brief One `config_groups` entry: a scheme, the rounding method its `weights.observer` records, and the
/// targets that select its modules in vLLM.
struct ConfigGroup
{
    const WeightScheme* scheme = nullptr;
    std::vector<std::string> targets;
    /// The rounding of its modules; a config read from disk leaves nullptr where the observer names no
    /// method Sparkulator recomputes (configreader.h).
    const RoundingMethod* rounding = &rtnRounding();
    /// Its codes were solved by GPTQ from a capture (rounding.md §2): the scales still come from the
    /// rounding method on the original weights, the codes cannot be recomputed without the capture.
    bool gptq = false;
};

/// @brief The config groups of a plan and how they checked out.
struct ConfigGroupList
{
    std::vector<ConfigGroup> groups;
    /// Empty when vLLM's group selection (find_matched_target, with and without packed_modules_mapping,
    /// older aliases) gives every quantized Linear its planned scheme; otherwise what went wrong.
    std::string error;
};

/// @brief Builds the groups for @p modules (schemes-spec §4.1, §5.2), one per (scheme, rounding method):
/// the pair with the most quantized decision units takes "Linear"; each other pair gets, per unit, the
/// broadest suffix-anchored regex that selects only units of that pair ("re:.*\.(gate_up|gate|up)_proj$"),
/// else one per unit with its layer index; a quantized lm_head is the exact target "lm_head".
ConfigGroupList buildConfigGroups(const std::vector<PlannedModule>& modules);

/// @brief vLLM's `get_scheme_dict` for one Linear layer not ignored: the index of the group whose
/// targets select @p layer (name/regex targets first in dict order, a later group owning a repeated
/// target string; then the class name; then, with a non-empty @p mapping, agreeing shard matches), or -1.
int selectConfigGroup(const std::vector<ConfigGroup>& groups, std::string_view layer,
                      std::string_view className, const FusedMapping& mapping);

} // namespace spark
