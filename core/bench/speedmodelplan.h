#pragma once

#include "core/bench/speedmodel.h"
#include "core/plan/architecture.h"
#include "core/plan/quantplan.h"

#include <optional>

namespace spark {

/// @brief The drafter kind of an architecture (speed-model.md §1): EAGLE-3 chain; DFlash and DSpark
/// block; nullopt for a generic draft.
std::optional<DrafterKind> drafterKindOf(DraftArchitecture architecture);

/// @brief Ties the speed model to a plan: S and S′ are the plan's streamed bytes per draft step before and
/// after, and unless @p kindGiven the drafter kind is the plan architecture's (chain, "assumed", when the
/// architecture is generic).
void applyPlan(SpeedModelOptions& options, const QuantPlan& plan, bool kindGiven);

} // namespace spark
