#pragma once

#include "core/bench/benchwarning.h"
#include "core/bench/specdecodecounters.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace spark {

/// @brief Metric names shared by the importers, the statistics and the front ends.
namespace benchmetric {
inline constexpr const char* kDecodeTokS = "decode_tok_s"; ///< 1000 / mean_tpot_ms, one number per repeat
inline constexpr const char* kDecodeTokSPooled = "decode_tok_s_pooled"; ///< Σ(out−1)/Σ(lat−ttft)
inline constexpr const char* kOutputTokS = "output_tok_s";
inline constexpr const char* kPrefillTokS = "prefill_tok_s";
inline constexpr const char* kMeanTpotMs = "mean_tpot_ms";
inline constexpr const char* kMeanTtftMs = "mean_ttft_ms";
inline constexpr const char* kAcceptanceRate = "acceptance_rate";     ///< a fraction, unlike vLLM's percent
inline constexpr const char* kAcceptanceLength = "acceptance_length"; ///< bonus token included
} // namespace benchmetric

/// @brief One repeat of one benchmark: the unit the statistics work on (bench-formats.md §4.4).
struct BenchRecord
{
    std::string arm;         ///< e.g. "bf16_draft"; empty when unknown
    long long promptLen = 0; ///< input tokens per request; 0 when unknown
    int repeat = 0;          ///< 1-based; 0 when unknown (the report numbers them in input order)
    std::string sourceFile;
    int sourceLine = 0;
    /// Numeric results by name (see benchmetric; importers also keep every other numeric field).
    std::map<std::string, double> metrics;
    /// Unconditional per-position acceptance rates (fractions), position 0 first.
    std::vector<double> perPositionAcceptance;
    /// Raw spec-decode counters when the source had them.
    std::optional<SpecDecodeCounters> counters;
    /// Text fields kept verbatim (metadata, extra CSV columns), so nothing the user wrote is lost.
    std::map<std::string, std::string> extras;

    /// @brief The metric, or nullopt when absent.
    std::optional<double> metric(const std::string& name) const;
};

/// @brief Tags given by the caller (CLI options, GUI fields). By default they only fill what the
/// file does not say; with @c override they win, for files whose own tags are wrong.
struct RecordTags
{
    std::optional<std::string> arm;
    std::optional<long long> promptLen;
    std::optional<int> repeat;
    bool override = false;
};

/// @brief Records and warnings from one or more inputs.
struct BenchImport
{
    std::vector<BenchRecord> records;
    std::vector<BenchWarning> warnings;

    void append(BenchImport other);
};

} // namespace spark
