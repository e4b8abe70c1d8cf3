#include "core/plan/lintfinding.h"

namespace spark {

std::string_view severityName(LintSeverity severity)
{
    switch (severity) {
    case LintSeverity::Info:
        return "info";
    case LintSeverity::Warning:
        return "warning";
    case LintSeverity::Error:
        return "error";
    }
    return "info";
}

} // namespace spark
