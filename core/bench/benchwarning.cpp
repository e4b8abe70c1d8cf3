#include "core/bench/benchwarning.h"

namespace spark {

const char* benchWarningKindName(BenchWarningKind kind)
{
    switch (kind) {
    case BenchWarningKind::NonFiniteValue:
        return "NonFiniteValue";
    case BenchWarningKind::LegacyKey:
        return "LegacyKey";
    case BenchWarningKind::InferredTag:
        return "InferredTag";
    case BenchWarningKind::MissingTag:
        return "MissingTag";
    case BenchWarningKind::InvariantViolated:
        return "InvariantViolated";
    case BenchWarningKind::AcceptanceCollapse:
        return "AcceptanceCollapse";
    case BenchWarningKind::MultipleModels:
        return "MultipleModels";
    case BenchWarningKind::Approximation:
        return "Approximation";
    case BenchWarningKind::UnitConverted:
        return "UnitConverted";
    case BenchWarningKind::SkippedInput:
        return "SkippedInput";
    case BenchWarningKind::TooFewRepeats:
        return "TooFewRepeats";
    }
    return "Unknown";
}

std::string BenchWarning::text() const
{
    std::string where;
    if (!file.empty()) {
        where = file;
        if (line > 0) {
            where += ":" + std::to_string(line);
        }
        where += ": ";
    }
    return where + "warning: " + message;
}

} // namespace spark
