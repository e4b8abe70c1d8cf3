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

/// @brief Arms measured under one setup (target model and k, as the runs say them; an arm whose runs do not
/// say joins the first setup that agrees with what they do): only they are compared with each other,
/// against the setup's own baseline. A speed difference
/// between two target models is not an effect of the draft.
struct BenchSetup
{
    std::string targetModel; ///< empty when the runs do not name it
    std::string k;           ///< "k=3"; empty when the runs do not say
    std::string baselineArm;
    std::vector<std::string> arms; ///< baseline first, then in order of appearance

    /// @brief "Qwen/Qwen3-32B, k=3", or "(setup not stated)".
    std::string label() const;
};

/// @brief What to compare and how.
struct BenchReportOptions
{
    /// The reference arm (A) of its setup; every other setup takes its own default: an arm whose name
    /// contains "bf16", else its first arm seen.
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
    /// The chosen baseline, or the first setup's: the speed model's unquantized arm.
    std::string baselineArm;
    std::vector<BenchSetup> setups;           ///< the chosen baseline's setup first
    std::vector<std::string> arms;            ///< setup by setup, each baseline first
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
    /// @brief The setup @p arm was measured in, or nullptr for an arm not in the report.
    const BenchSetup* setupOf(const std::string& arm) const;
    /// @brief Whether @p arm is the baseline of its setup.
    bool isBaseline(const std::string& arm) const;
    /// @brief The comparison of @p candidateArm against its setup's baseline, or nullptr.
    const BenchComparison* comparison(const std::string& metric, long long promptLen,
                                      const std::string& candidateArm) const;
};

/// @brief Groups records by (arm, prompt length) and arms by setup, summarises every metric, compares
/// every arm with its setup's baseline by Welch's t test, and warns when an arm's acceptance collapses
/// against that baseline (a draft paired with the wrong target precision accepts ~0% and raises no
/// error). @p importWarnings are carried into the report first. Records are numbered per cell when their
/// repeat is unknown.
BenchReport buildBenchReport(std::vector<BenchRecord> records, const BenchReportOptions& options = {},
                             std::vector<BenchWarning> importWarnings = {});

} // namespace spark
