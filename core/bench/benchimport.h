#pragma once

#include "core/bench/benchrecord.h"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace spark {

/// @brief The format of a benchmark input file.
enum class BenchFileKind {
    VllmResult,     ///< vllm bench serve --save-result (JSON or JSON Lines)
    LlamaBench,     ///< llama-bench -o json / jsonl
    PrometheusText, ///< a /metrics scrape (text 0.0.4 or OpenMetrics)
    Csv,            ///< Sparkulator's long-form CSV
    SpecDecodeLog,  ///< a vLLM server log with "SpecDecoding metrics:" lines
    PytorchSidecar, ///< *.pytorch.json written next to a result; skipped
    Unknown,
};

/// @brief A short name, e.g. "vllm-result".
const char* benchFileKindName(BenchFileKind kind);

/// @brief Detects the format from the content first (JSON shape, "SpecDecoding metrics:", a CSV header
/// with an arm column, exposition lines), using the extension only to break ties.
BenchFileKind detectBenchFileKind(const std::filesystem::path& path, std::string_view text);

/// @brief Imports every file in order. Prometheus scrapes pair up in the order given (first = before,
/// second = after) into one record of acceptance counters; other files import on their own. @p tags
/// apply to every file (see RecordTags).
/// @throws BenchError for unreadable or malformed files, an unpaired scrape, or an unknown format.
BenchImport importBenchFiles(const std::vector<std::filesystem::path>& paths, const RecordTags& tags = {});

} // namespace spark
