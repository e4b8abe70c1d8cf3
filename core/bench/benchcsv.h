#pragma once

#include "core/bench/benchrecord.h"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace spark {

/// @brief Sparkulator's long-form CSV (bench-formats.md §5): one row per repeat, columns mapped by
/// header name in any order. Recognised: arm, prompt_len, repeat, decode_tok_s, output_tok_s,
/// mean_tpot_ms, mean_ttft_ms, acceptance_rate (a fraction; percents > 1 are converted with a warning),
/// acceptance_length, acc_pos0..acc_posN, num_drafts, num_draft_tokens, num_accepted_tokens (a few
/// aliases too). Every other column is kept in extras and, when numeric, in metrics. RFC 4180 quoting
/// (commas, "" and newlines inside quotes), CRLF, and a UTF-8 BOM are accepted.
/// @throws BenchError with file and line for a missing arm column, a wrong field count, an unterminated
/// quote, or a non-numeric value in a numeric column.
BenchImport parseBenchCsv(std::string_view text, const std::string& file, const RecordTags& tags = {});

/// @brief Reads @p path and calls parseBenchCsv.
BenchImport importBenchCsvFile(const std::filesystem::path& path, const RecordTags& tags = {});

/// @brief Splits CSV text into records of fields; each record carries its first line number.
/// @throws BenchError for an unterminated quote or text after a closing quote.
std::vector<std::pair<int, std::vector<std::string>>> splitCsv(std::string_view text,
                                                               const std::string& file);

} // namespace spark
