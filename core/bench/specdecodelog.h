#pragma once

#include "core/bench/benchrecord.h"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spark {

/// @brief One `SpecDecoding metrics:` line that vLLM logs every stat interval (bench-formats.md §2.2).
struct SpecDecodeLogEntry
{
    int line = 0;
    double meanAcceptanceLength = 0;          ///< printed with %.2f
    std::optional<double> acceptedThroughput; ///< tokens/s
    std::optional<double> draftedThroughput;  ///< tokens/s
    double acceptedTokens = 0;
    double draftedTokens = 0;
    std::vector<double> perPositionRates;        ///< fractions, printed with %.3f
    std::optional<double> acceptanceRatePercent; ///< "Avg Draft acceptance rate" or "Draft acceptance rate"
};

/// @brief Entries of a log and one record pooling them all.
struct SpecDecodeLog
{
    std::vector<SpecDecodeLogEntry> entries;
    BenchImport import; ///< one record (when there are entries), plus warnings
};

/// @brief Finds every `SpecDecoding metrics:` line in a vLLM server log (any prefix, any other lines) and
/// pools them: acceptance rate = Σaccepted / Σdrafted exactly; drafts per interval are derived from
/// drafted / k (k = number of per-position rates) or, without positions, accepted / (AL − 1), which
/// uses the rounded AL and is flagged as an approximation.
/// @throws BenchError (file and line) for a metrics line with a missing or malformed field, or when the
/// text holds no such line.
SpecDecodeLog parseSpecDecodeLog(std::string_view text, const std::string& file, const RecordTags& tags = {});

/// @brief Reads @p path and calls parseSpecDecodeLog.
SpecDecodeLog importSpecDecodeLogFile(const std::filesystem::path& path, const RecordTags& tags = {});

} // namespace spark
