#pragma once

#include "core/bench/benchrecord.h"

#include <filesystem>
#include <string>
#include <string_view>

namespace spark {

/// @brief Imports `llama-bench -o json` (an array) or `-o jsonl` (one object per line), bench-formats.md
/// §3.2. Each entry of samples_ts becomes one repeat (avg_ts alone when there are no samples). The metric is
/// decode_tok_s for tg tests (n_prompt = 0), prefill_tok_s for pp tests (n_gen = 0) and pg_tok_s for
/// mixed ones; the prompt length is n_prompt for pp/pg and n_depth for tg. The arm is the caller's, else
/// the model file's stem. Fields are keyed by name; unknown ones are kept in extras.
/// @throws BenchError with file and line for malformed JSON or an entry without avg_ts.
BenchImport parseLlamaBench(std::string_view text, const std::string& file, const RecordTags& tags = {});

/// @brief Reads @p path and calls parseLlamaBench.
BenchImport importLlamaBenchFile(const std::filesystem::path& path, const RecordTags& tags = {});

} // namespace spark
