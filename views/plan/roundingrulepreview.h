#pragma once

#include "core/plan/entrypreview.h"
#include "core/plan/quantplan.h"

#include <QStringList>
#include <vector>

namespace spark {

/// @brief The preview of each rounding rule "ENTRY=METHOD" in @p rules against the modules of @p plan, in
/// order, as the Plan tab shows scheme rules: the modules ENTRY matches, its regex error, why it looks
/// wrong, or why the rule is not ENTRY=METHOD. Core lints rounding rules but lists no preview of them in
/// QuantPlan::entries, so the editor asks core's previewEntry() itself, reading a rule as makePlan() does.
std::vector<EntryPreview> previewRoundingRules(const QuantPlan& plan, const QStringList& rules);

} // namespace spark
