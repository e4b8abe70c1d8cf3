#pragma once

#include "core/bench/benchrecord.h"

#include <filesystem>
#include <string>
#include <string_view>

namespace spark {

/// @brief Imports `vllm bench serve --save-result` output (bench-formats.md §1): one JSON object, or
/// JSON Lines from `--append-result` (one record per line). Accepts bare NaN/Infinity tokens (replaced
/// by null, with a warning), the legacy key "request_goodput:", the spec_decode_* fields (acceptance in
/// percent there, stored as a fraction in acceptance_rate), and percentile keys of any spelling.
/// Arm, prompt length and repeat come from --metadata keys (arm, prompt_len, repeat), then the caller's
/// @p tags, then the label / file name (arm), total_input_tokens / completed (prompt length) and the
/// line index (repeat in JSON Lines); @c tags.override puts the caller first.
/// @param file the name used in messages and for tag inference.
/// @throws BenchError (file and line) for malformed JSON, duplicate keys or a non-object record.
BenchImport parseVllmResult(std::string_view text, const std::string& file, const RecordTags& tags = {});

/// @brief Reads @p path and calls parseVllmResult. @throws BenchError when unreadable.
BenchImport importVllmResultFile(const std::filesystem::path& path, const RecordTags& tags = {});

/// @brief The label part of vLLM's default result file name
/// `{label}-{rate}qps[-concurrency{N}]-{model}-{date}.json` (or `{label}-ramp-up-…`); empty if no match.
std::string armFromVllmFileName(const std::string& fileName);

/// @brief Reads a whole file as bytes. @throws BenchError naming the file when it cannot be read.
std::string readBenchFile(const std::filesystem::path& path);

} // namespace spark
