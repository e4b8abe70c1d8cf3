#include "core/bench/benchcsv.h"

#include "core/bench/bencherror.h"
#include "core/bench/prometheustext.h"
#include "core/bench/vllmresult.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>

namespace spark {
namespace {

std::string normalizeHeader(std::string name)
{
    const auto first = name.find_first_not_of(" \t");
    const auto last = name.find_last_not_of(" \t");
    name = first == std::string::npos ? std::string() : name.substr(first, last - first + 1);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) {
        return c == ' ' || c == '-' ? '_' : static_cast<char>(std::tolower(c));
    });
    static const std::map<std::string, std::string> aliases{{"prompt_length", "prompt_len"},
                                                            {"input_len", "prompt_len"},
                                                            {"isl", "prompt_len"},
                                                            {"rep", "repeat"},
                                                            {"run", "repeat"},
                                                            {"decode_tokens_per_s", "decode_tok_s"},
                                                            {"tok_s", "decode_tok_s"},
                                                            {"al", "acceptance_length"},
                                                            {"mean_acceptance_length", "acceptance_length"},
                                                            {"draft_tokens", "num_draft_tokens"},
                                                            {"accepted_tokens", "num_accepted_tokens"},
                                                            {"drafts", "num_drafts"}};
    if (const auto it = aliases.find(name); it != aliases.end()) {
        return it->second;
    }
    return name;
}

std::string trimmed(const std::string& s)
{
    const auto first = s.find_first_not_of(" \t");
    if (first == std::string::npos) {
        return {};
    }
    return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

} // namespace

std::vector<std::pair<int, std::vector<std::string>>> splitCsv(std::string_view text, const std::string& file)
{
    if (text.substr(0, 3) == "\xEF\xBB\xBF") {
        text.remove_prefix(3);
    }
    std::vector<std::pair<int, std::vector<std::string>>> rows;
    std::vector<std::string> fields;
    std::string field;
    int line = 1;
    int rowLine = 1;
    bool inQuotes = false;
    bool quotedField = false;
    bool rowHasContent = false;
    auto endField = [&] {
        fields.push_back(std::move(field));
        field.clear();
        quotedField = false;
    };
    auto endRow = [&] {
        endField();
        if (rowHasContent) {
            rows.emplace_back(rowLine, std::move(fields));
        }
        fields.clear();
        rowHasContent = false;
    };
    int quoteLine = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inQuotes) {
            if (c == '"') {
                if (i + 1 < text.size() && text[i + 1] == '"') {
                    field.push_back('"');
                    ++i;
                } else {
                    inQuotes = false;
                }
            } else {
                if (c == '\n') {
                    ++line;
                }
                field.push_back(c);
            }
            continue;
        }
        if (c == '"') {
            if (!trimmed(field).empty() || quotedField) {
                throw BenchError(file, line,
                                 "a quote inside an unquoted field (quote the whole field and double it)");
            }
            field.clear();
            inQuotes = true;
            quotedField = true;
            rowHasContent = true;
            quoteLine = line;
        } else if (c == ',') {
            endField();
            rowHasContent = true;
        } else if (c == '\n' || c == '\r') {
            if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
                ++i;
            }
            endRow();
            ++line;
            rowLine = line;
        } else {
            if (quotedField && c != ' ' && c != '\t') {
                throw BenchError(file, line, "text after a closing quote");
            }
            if (c != ' ' && c != '\t') {
                rowHasContent = true;
            }
            field.push_back(c);
        }
    }
    if (inQuotes) {
        throw BenchError(file, quoteLine, "unterminated quoted field");
    }
    endRow();
    return rows;
}

BenchImport parseBenchCsv(std::string_view text, const std::string& file, const RecordTags& tags)
{
    BenchImport result;
    const auto rows = splitCsv(text, file);
    if (rows.empty()) {
        throw BenchError(file, 0, "empty CSV: expected a header line with at least an 'arm' column");
    }
    const auto& [headerLine, rawHeader] = rows.front();
    std::vector<std::string> header;
    std::map<std::string, int> seen;
    for (const auto& h : rawHeader) {
        header.push_back(normalizeHeader(h));
        if (header.back().empty()) {
            throw BenchError(file, headerLine,
                             "empty column name in the header (column " + std::to_string(header.size()) +
                                 ")");
        }
        if (seen.count(header.back())) {
            throw BenchError(file, headerLine, "column '" + header.back() + "' appears twice in the header");
        }
        seen[header.back()] = static_cast<int>(header.size()) - 1;
    }
    if (!seen.count("arm") && !tags.arm) {
        throw BenchError(file, headerLine, "no 'arm' column in the header (and no arm given)");
    }

    static const std::regex positionColumn(R"(^acc_pos([0-9]+)$)");
    static const std::set<std::string> numericColumns{benchmetric::kDecodeTokS,
                                                      benchmetric::kOutputTokS,
                                                      benchmetric::kMeanTpotMs,
                                                      benchmetric::kMeanTtftMs,
                                                      benchmetric::kAcceptanceRate,
                                                      benchmetric::kAcceptanceLength,
                                                      benchmetric::kPrefillTokS,
                                                      "num_drafts",
                                                      "num_draft_tokens",
                                                      "num_accepted_tokens",
                                                      "output_len",
                                                      "num_prompts"};

    for (std::size_t r = 1; r < rows.size(); ++r) {
        // Plain copies: lambdas below capture the line, and C++20 compilers before clang 16 cannot
        // capture structured bindings.
        const auto line = rows[r].first;
        const auto& fields = rows[r].second;
        if (fields.size() != header.size()) {
            throw BenchError(file, line,
                             "expected " + std::to_string(header.size()) + " fields as in the header, got " +
                                 std::to_string(fields.size()));
        }
        BenchRecord record;
        record.sourceFile = file;
        record.sourceLine = line;
        std::map<int, double> positions;
        std::optional<double> drafts, draftTokens, accepted;
        for (std::size_t c = 0; c < header.size(); ++c) {
            const auto& name = header[c];
            const auto value = trimmed(fields[c]);
            auto number = [&]() -> std::optional<double> {
                if (value.empty()) {
                    return std::nullopt;
                }
                const auto v = parsePromNumber(value);
                if (!v) {
                    throw BenchError(file, line, "column '" + name + "': '" + value + "' is not a number");
                }
                return v;
            };
            auto integer = [&]() -> std::optional<long long> {
                const auto v = number();
                if (v && (!std::isfinite(*v) || *v != std::floor(*v))) {
                    throw BenchError(file, line, "column '" + name + "': '" + value + "' is not an integer");
                }
                return v ? std::optional<long long>(static_cast<long long>(*v)) : std::nullopt;
            };
            std::smatch match;
            if (name == "arm") {
                record.arm = value;
            } else if (name == "prompt_len") {
                record.promptLen = integer().value_or(0);
            } else if (name == "repeat") {
                record.repeat = static_cast<int>(integer().value_or(0));
            } else if (std::regex_match(name, match, positionColumn)) {
                if (const auto v = number()) {
                    positions[std::stoi(match[1].str())] = *v;
                }
            } else if (numericColumns.count(name)) {
                if (auto v = number()) {
                    if (name == benchmetric::kAcceptanceRate && *v > 1.0) {
                        result.warnings.push_back(
                            {BenchWarningKind::UnitConverted, file, line,
                             "acceptance_rate " + value +
                                 " is above 1: read as a percent (the column is a fraction)"});
                        *v /= 100.0;
                    }
                    record.metrics[name] = *v;
                    if (name == "num_drafts") {
                        drafts = v;
                    } else if (name == "num_draft_tokens") {
                        draftTokens = v;
                    } else if (name == "num_accepted_tokens") {
                        accepted = v;
                    }
                }
            } else {
                // Extra columns are the user's own annotations: keep the text, and the number if it is one.
                record.extras[name] = value;
                if (const auto v = parsePromNumber(value)) {
                    record.metrics[name] = *v;
                }
            }
        }
        if (!positions.empty()) {
            record.perPositionAcceptance.assign(static_cast<std::size_t>(positions.rbegin()->first) + 1, 0.0);
            for (const auto& [i, v] : positions) {
                record.perPositionAcceptance[static_cast<std::size_t>(i)] = v;
            }
        }
        if (draftTokens && accepted) {
            auto counters = SpecDecodeCounters::fromTotals(drafts, *draftTokens, *accepted);
            // Per-position counts are not rebuilt from the 4-decimal rates: they would not sum exactly.
            record.counters = counters;
        }
        if (tags.override || record.arm.empty()) {
            if (tags.arm) {
                record.arm = *tags.arm;
            }
        }
        if (tags.promptLen && (tags.override || record.promptLen == 0)) {
            record.promptLen = *tags.promptLen;
        }
        if (tags.repeat && (tags.override || record.repeat == 0)) {
            record.repeat = *tags.repeat;
        }
        if (record.arm.empty()) {
            throw BenchError(file, line, "empty arm");
        }
        result.records.push_back(std::move(record));
    }
    return result;
}

BenchImport importBenchCsvFile(const std::filesystem::path& path, const RecordTags& tags)
{
    return parseBenchCsv(readBenchFile(path), path.string(), tags);
}

} // namespace spark
