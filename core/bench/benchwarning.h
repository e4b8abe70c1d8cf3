#pragma once

#include <string>

namespace spark {

/// @brief What a benchmark warning is about; front ends may filter or colour by kind.
enum class BenchWarningKind {
    NonFiniteValue,     ///< a bare NaN/Infinity token was replaced by null, or a value is not finite
    LegacyKey,          ///< an old spelling such as "request_goodput:" was accepted
    InferredTag,        ///< arm / prompt length / repeat was taken from a fallback source
    MissingTag,         ///< arm / prompt length could not be determined
    InvariantViolated,  ///< spec-decode counters contradict each other (per-position sum != accepted, ...)
    AcceptanceCollapse, ///< an arm accepts far fewer draft tokens than its baseline
    MultipleModels,     ///< a /metrics snapshot holds several model_name values that were summed
    Approximation,      ///< a value was derived from rounded or partial data
    UnitConverted,      ///< a value was given in an unexpected unit and converted
    SkippedInput,       ///< a file or line was deliberately not imported
    TooFewRepeats,      ///< a statistic needs more repeats than the data has
};

/// @brief A short stable name of the kind, e.g. "AcceptanceCollapse" (used in JSON output).
const char* benchWarningKindName(BenchWarningKind kind);

/// @brief A non-fatal finding while importing or analysing benchmark data, with its location.
struct BenchWarning
{
    BenchWarningKind kind = BenchWarningKind::Approximation;
    std::string file; ///< empty when the warning concerns the combined data
    int line = 0;     ///< 1-based; 0 when no line applies
    std::string message;

    /// "<file>:<line>: warning: <message>" with the location parts omitted when unknown.
    std::string text() const;
};

} // namespace spark
