#pragma once

#include "core/plan/lintfinding.h"

#include <optional>

namespace spark {

struct QuantPlan;

/// @brief Lint id of the finding below.
inline constexpr const char* kShallowHeadLintId = "eagle3-shallow-int4";

/// @brief A warning when an EAGLE-3 draft with a single decoder layer has modules quantized to 4 bits
/// (W4A16 in any form, NVFP4A16): data-free rounding error in a one-layer head has no later layers to
/// average it out and lands on the draft logits, so it costs acceptance. The remedies it names are the
/// `eagle3-int8` preset and the offline acceptance check (`sparkulator-cli acceptance`).
/// @return nullopt for any other architecture, deeper heads, or plans without 4-bit modules.
std::optional<LintFinding> shallowHeadFinding(const QuantPlan& plan);

} // namespace spark
