#pragma once

#include "args.h"
#include "core/io/checkpoint.h"
#include "core/plan/quantplan.h"
#include "core/plan/timingprediction.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace spark::cli {

/// @brief The options `plan` takes for a budget: --budget SIZE|preset, --budget-file SIZE|preset,
/// --budget-ms MS, --candidates S,S,..., --rounding-candidates M,M,... (rounding methods the allocator may
/// choose per unit besides rtn), --alpha ENTRY=X (repeatable), --alpha-from FILE (α from `acceptance
/// --per-unit --sensitivity-out FILE`, before the --alpha rules), --threads N, the flag --compare-preset, and
/// the acceptance objective's options (acceptancebudget.h).
OptionTable budgetOptionTable();
/// @brief True when one of --budget, --budget-file, --budget-ms is given (UsageError for more than one).
bool budgetRequested(const Args& args);

/// @brief A plan chosen by the allocator, with what to print about it.
struct BudgetOutcome
{
    QuantPlan plan;              ///< the allocation as an ordinary plan (lint, groups, sizes)
    PlanOptions options;         ///< the options that make it (the allocation's scheme rules, the budget)
    nlohmann::ordered_json json; ///< the "allocation" object of `plan --json`
    std::string text;            ///< the allocation section of the text output
};

/// @brief Sweeps the checkpoint (progress on stderr), allocates within the budget the options ask for and
/// turns the result into a plan. @p base is the plan without a budget (the seed recipe). Throws
/// UsageError for bad options and when the budget is below the cheapest legal plan.
BudgetOutcome planWithBudget(const Checkpoint& checkpoint, const std::vector<TensorInfo>& infos,
                             const PlanOptions& options, const QuantPlan& base, const TimingInputs& timing,
                             const Args& args);

} // namespace spark::cli
