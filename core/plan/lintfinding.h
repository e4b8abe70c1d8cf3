#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace spark {

/// @brief How much a finding matters. Error findings are also listed in QuantPlan::errors (export refuses).
enum class LintSeverity { Info, Warning, Error };

/// @brief "info", "warning", "error".
std::string_view severityName(LintSeverity severity);

/// @brief One lint finding on a plan: a stable id scripts can match, the modules it concerns, one sentence
/// of why, and where the fact comes from.
struct LintFinding
{
    std::string id; ///< stable: "raw-weight-read", "fused-group", "kernel-shape", ...
    LintSeverity severity = LintSeverity::Info;
    std::vector<std::string> modules; ///< checkpoint module names (or entries, for entry findings)
    std::string message;              ///< one sentence
    std::string citation;             ///< "vllm#51581", "format-spec §4.6"
};

} // namespace spark
