#pragma once

#include "views/tensors/tensorrowresult.h"

#include <QList>
#include <memory>

namespace spark {

struct DocumentSnapshot;
struct RoundingMethod;
struct SweepResult;
struct WeightScheme;

/// @brief The analysis table as the tensors view shows it (issue #25): the weight of every module the plan
/// quantizes carries the rel. error of its planned scheme, the rule the Plan tab's module table follows.
/// - The analysis' own figures when it measured the module under its planned scheme and rounding (F5 with a
///   plan does; an analysis that records nothing counts as @p analysisScheme with rtn).
/// - Otherwise the Budget tab's @p sweep error of that scheme and rounding on the module's decision unit (the
/// whole fused
///   set for q/k/v and gate/up), in sweptScheme/sweptUnit; the max error and the Σ sums, which belong to the
///   analysis scheme, are dropped.
/// - Otherwise no error, and unmeasuredScheme names the planned scheme.
///
/// Kept modules, tensors other than a Linear's weight, an already-quantized checkpoint (which no plan
/// applies to) and an unknown @p analysisScheme (null) keep the analysis as it is.
/// @return @p analysis itself when nothing changes, otherwise a new table.
std::shared_ptr<const AnalysisTable> plannedErrors(const DocumentSnapshot* snapshot,
                                                   std::shared_ptr<const AnalysisTable> analysis,
                                                   const WeightScheme* analysisScheme,
                                                   const SweepResult* sweep);

/// @brief True when @p result holds an error measured under @p scheme and @p rounding (null: rtn); a result
/// that does not record what it was measured under counts as @p analysisScheme with rtn.
bool measuredAs(const TensorRowResult& result, const WeightScheme* analysisScheme, const WeightScheme* scheme,
                const RoundingMethod* rounding);

/// @brief The rows whose shown error differs between @p before and @p after (tables indexed alike).
QList<int> changedErrorRows(const AnalysisTable* before, const AnalysisTable* after);

} // namespace spark
