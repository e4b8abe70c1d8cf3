#pragma once

#include "core/plan/draftmodule.h"
#include "core/quant/roundingmethod.h"
#include "core/quant/weightscheme.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace spark {

/// @brief What the plan does with a module.
enum class PlanDecision { Quantize, Keep };

/// @brief "quantize", "keep".
std::string_view decisionName(PlanDecision decision);

/// @brief A module with the plan's decision. The exporter quantizes exactly the modules whose decision is
/// Quantize (their weightTensor becomes weight_packed/weight_scale/weight_shape) and copies the rest.
struct PlannedModule : DraftModule
{
    PlanDecision decision = PlanDecision::Keep;
    /// The module's scheme: keepScheme() (BF16) unless decision == Quantize. Fused shards share it.
    const WeightScheme* scheme = &keepScheme();
    /// How its groups are rounded (roundingmethod.h): rtnRounding() unless decision == Quantize and a
    /// --rounding default or rule chose another. Fused shards share it, like the scheme.
    const RoundingMethod* rounding = &rtnRounding();
    std::string reason;           ///< one line: which entry decided, or which limit kept it BF16
    std::uint64_t bytesAfter = 0; ///< the module's bytes after the plan
};

} // namespace spark
