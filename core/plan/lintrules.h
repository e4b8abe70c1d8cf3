#pragma once

#include <string_view>
#include <vector>

namespace spark {

/// @brief One lint rule of the plan layer: its stable id (LintFinding::id) and what it checks and why,
/// in a sentence or two (GUI tooltips, `plan` output).
struct LintRule
{
    std::string_view id;
    std::string_view description;
};

/// @brief Every rule makePlan() can report, in a fixed order.
const std::vector<LintRule>& lintRules();
/// @brief The description of rule @p id; empty for an unknown id.
std::string_view lintRuleDescription(std::string_view id);

} // namespace spark
