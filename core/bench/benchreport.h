#pragma once

#include "core/bench/benchrecord.h"
#include "core/bench/benchwarning.h"
#include "core/bench/cellacceptance.h"
#include "core/bench/speedmodelresult.h"
#include "core/util/statistics.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace spark {

/// @brief All repeats of one arm at one prompt length, summarised.
struct BenchCell
{
    std::string arm;
    long long promptLen = 0;
    std::size_t records = 0;
    /// Summary of every metric that at least one record has (n counts the records that have it).
    std::map<std::string, SampleSummary> metrics;
    /// Mean over records of the per-position acceptance rates (fractions), position 0 first.
    std::vector<double> perPositionMean;
    /// Sum of the records' counters when every record had them (pooled acceptance over all repeats).
    std::optional<SpecDecodeCounters> pooledCounters;
    /// Per-position acceptance pooled over the repeats as the speed model takes it, and whether the
    /// repeats speculated at all (speed-model.md §1).
    CellAcceptance acceptance;
    std::vector<std::string> sources; ///< distinct source files

    /// @brief The summary of @p metric, or nullptr.
    const SampleSummary* metric(const std::string& name) const;
};

/// @brief candidate − baseline for one metric at one prompt length.
struct BenchComparison
{
    std::string metric;
    long long promptLen = 0;
    std::string baselineArm;
    std::string candidateArm;
    SampleSummary baseline;
    SampleSummary candidate;
    WelchResult welch;
};

/// @brief What to compare and how.
struct BenchReportOptions
{
    /// The reference arm (A). Default: an arm whose name contains "bf16", else the first arm seen.
    std::optional<std::string> baselineArm;
    /// Metrics compared between arms (each must be present in both cells to be compared).
    std::vector<std::string> compareMetrics{benchmetric::kDecodeTokS, benchmetric::kAcceptanceLength,
                                            benchmetric::kAcceptanceRate};
    double confidence = 0.95;
    /// An arm whose mean acceptance rate is below this fraction of the baseline's has "collapsed".
    double collapseRatio = 0.5;
};

/// @brief Cells, comparisons against the baseline, and every warning (import and analysis).
struct BenchReport
{
    std::string baselineArm;
    std::vector<std::string> arms;            ///< baseline first, then in order of appearance
    std::vector<long long> promptLens;        ///< ascending
    std::vector<BenchCell> cells;             ///< ordered by arm (as in arms), then prompt length
    std::vector<BenchComparison> comparisons; ///< by metric (as in the options), prompt length, arm
    std::vector<BenchWarning> warnings;
    double confidence = 0.95;
    /// The speed model (speed-model.md), when a front end computed one with computeSpeedModel(); the
    /// formats and the model card show it with the cells.
    std::optional<SpeedModel> speedModel;

    /// @brief The cell of @p arm at @p promptLen, or nullptr.
    const BenchCell* cell(const std::string& arm, long long promptLen) const;
    /// @brief The comparison of @p candidateArm against the baseline, or nullptr.
    const BenchComparison* comparison(const std::string& metric, long long promptLen,
                                      const std::string& candidateArm) const;
};

/// @brief Groups records by (arm, prompt length), summarises every metric, compares every arm with the
/// baseline by Welch's t test, and warns when an arm's acceptance collapses against the baseline (a
/// draft paired with the wrong target precision accepts ~0% and raises no error). @p importWarnings are
/// carried into the report first. Records are numbered per cell when their repeat is unknown.
BenchReport buildBenchReport(std::vector<BenchRecord> records, const BenchReportOptions& options = {},
                             std::vector<BenchWarning> importWarnings = {});

} // namespace spark
