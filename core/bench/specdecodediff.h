#pragma once

#include "core/bench/benchrecord.h"
#include "core/bench/prometheustext.h"
#include "core/bench/specdecodecounters.h"

#include <optional>
#include <string>
#include <vector>

namespace spark {

/// @brief Spec-decode counters between two /metrics scrapes, with the invariant findings.
struct SpecDecodeDelta
{
    SpecDecodeCounters counters;
    std::vector<std::string> modelNames; ///< model_name values that were summed
    std::vector<BenchWarning> warnings;
};

/// @brief Totals of the vllm:spec_decode_* counters in one scrape, summed over engines (and over
/// model_name unless @p modelName selects one). _created samples are ignored.
/// @throws BenchError when the scrape has no spec-decode counters.
SpecDecodeCounters specDecodeTotals(const PromSnapshot& snapshot,
                                    const std::optional<std::string>& modelName = {});

/// @brief after − before for every vllm:spec_decode_* counter series, summed over engines
/// (bench-formats.md §2.3): series only in @p after count as before = 0; positions key numerically
/// and missing positions are 0. Invariant violations (§2.2) become warnings.
/// @throws BenchError (file and line of the sample) when a counter decreased, i.e. the server restarted
/// between the scrapes, or when @p after has no spec-decode counters.
SpecDecodeDelta diffSpecDecode(const PromSnapshot& before, const PromSnapshot& after,
                               const std::optional<std::string>& modelName = {});

/// @brief A BenchRecord holding the delta's acceptance metrics, tagged by @p tags (arm, prompt length).
BenchRecord recordFromSpecDecodeDelta(const SpecDecodeDelta& delta, const std::string& afterFile,
                                      const RecordTags& tags);

} // namespace spark
