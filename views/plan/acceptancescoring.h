#pragma once

#include "core/allocate/acceptanceobjective.h"

#include <QString>
#include <memory>
#include <optional>

namespace spark {

/// @brief What scoring a draft by acceptance ends with: the sweep it scored (every scheme under rtn, mse and
/// range, the head included), the objective (capture and anchors, kept to measure plans) and every
/// candidate's measured effect; or why there is none.
struct AcceptanceScores
{
    std::shared_ptr<const SweepResult> sweep;
    std::shared_ptr<const AcceptanceObjective> objective;
    std::shared_ptr<const UnitEffects> effects;
    QString error;
};

/// @brief Sweeps @p checkpoint under @p plan and scores every candidate on @p inputs' capture (the first
/// tenth of @p progress is the sweep). Throws like the core calls it makes.
AcceptanceScores scoreByAcceptance(std::shared_ptr<const Checkpoint> checkpoint, const PlanOptions& plan,
                                   const AcceptanceObjectiveInputs& inputs, const ProgressFn& progress);

/// @brief A plan and the plan without a budget (the recipe) measured whole on the objective's anchors.
struct PlanMeasurement
{
    std::optional<PlanAcceptance> plan, recipe;
    AcceptanceEffect numericsFloor; ///< AcceptanceObjective::measureNumericsFloor() on the same anchors
    QString error;
};

} // namespace spark
