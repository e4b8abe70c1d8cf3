#pragma once

#include <QString>

namespace spark {

struct BenchReport;
struct QuantPlan;

/// @brief What the Plan tab says about decode speed with the plan's quantized draft, predicted by core's
/// speed model from the benchmarks of the unquantized draft (the report's baseline arm).
struct PlanSpeedPrediction
{
    QString text; ///< per prompt length: measured → predicted tok/s, change, k* → k′*; empty: none
    QString assumption; ///< what it assumed, in words
    bool error = false; ///< text is core's error (it names the cell)
};

/// @brief Predicts tok/s and the best k for @p plan from @p report (speed-model.md §4): the drafter time
/// per cycle is @p drafterStepMs per draft step × the steps a cycle takes at the baseline's k (k for a
/// chain drafter, 1 for a block drafter; the kind is the plan architecture's), the saving is
/// t_D·(1 − S′/S) from the plan's streamed bytes. Empty when the baseline has no cell with speculation.
PlanSpeedPrediction predictPlanSpeed(const QuantPlan& plan, const BenchReport& report, double drafterStepMs);

} // namespace spark
