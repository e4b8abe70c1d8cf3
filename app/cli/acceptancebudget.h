#pragma once

#include "args.h"
#include "core/allocate/acceptanceobjective.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace spark::cli {

/// @brief The options of `plan --budget` that make acceptance its objective: --hidden-states CAPTURE,
/// --target-model DIR, --k N, --screen-anchors N, --confirm-anchors N, --report-anchors N|all, --seed N,
/// --speed-points N and the flag --best-speed.
OptionTable acceptanceBudgetOptionTable();

/// @brief The acceptance objective when --hidden-states is given (opened at once, so that a bad capture or
/// target fails before the sweep), else nullopt. UsageError for options without --hidden-states.
std::optional<AcceptanceObjective> acceptanceObjectiveFrom(const Args& args,
                                                           const std::filesystem::path& draft);

/// @brief What `plan --budget` prints about an acceptance-driven allocation.
struct AcceptanceBudgetReport
{
    nlohmann::ordered_json json; ///< the "acceptance" object of the allocation
    std::string text;
};

/// @brief Measures @p plan (the allocation's by @p allocator over the survivors of @p effects, measured on
/// @p sweep), the recipe @p recipe and, when given, @p sameLoss (the
/// cheapest plan whose summed unit KL reaches the recipe's) on the objective's anchors, and reports them
/// with the units' effects. Progress on stderr.
AcceptanceBudgetReport reportAcceptanceBudget(const AcceptanceObjective& objective, const SweepResult& sweep,
                                              const UnitEffects& effects, const BudgetAllocator& allocator,
                                              const Allocation& allocation, const QuantPlan& plan,
                                              const QuantPlan& recipe, const QuantPlan* sameLoss);

} // namespace spark::cli
