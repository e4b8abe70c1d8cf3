#include "core/bench/vllmresult.h"

#include "core/bench/bencherror.h"
#include "core/bench/nonfinitejson.h"
#include "core/io/strictjson.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>

namespace spark {
namespace {

/// Metadata values are strings ("prompt_len": "2048"); older scripts or hand edits may use numbers.
std::optional<double> numberOf(const nlohmann::json& value)
{
    if (value.is_number()) {
        return value.get<double>();
    }
    if (value.is_string()) {
        const auto text = value.get<std::string>();
        try {
            std::size_t used = 0;
            const double v = std::stod(text, &used);
            if (used == text.size()) {
                return v;
            }
        } catch (const std::exception&) {
        }
    }
    return std::nullopt;
}

std::optional<long long> integerOf(const nlohmann::json& value)
{
    const auto v = numberOf(value);
    if (!v || !std::isfinite(*v) || *v != std::floor(*v)) {
        return std::nullopt;
    }
    return static_cast<long long>(*v);
}

std::optional<std::string> stringOf(const nlohmann::json& obj, const char* key)
{
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) {
        return std::nullopt;
    }
    if (it->is_string()) {
        return it->get<std::string>();
    }
    return it->dump();
}

struct ObjectContext
{
    const std::string& file;
    int line;      // the object's first line
    int lineIndex; // 1-based index among JSON Lines records; 0 for a single object
    const RecordTags& tags;
};

BenchRecord recordFromObject(const nlohmann::json& obj, const ObjectContext& ctx,
                             std::vector<BenchWarning>& warnings)
{
    if (!obj.is_object()) {
        throw BenchError(ctx.file, ctx.line,
                         "expected a JSON object (a vllm bench serve result), got " +
                             std::string(obj.type_name()));
    }
    // A JSON object that is not a result (a model's config.json dropped among the results) would otherwise
    // become a record of no arm and no numbers, and add an empty arm to every table and plot.
    static const char* const kResultKeys[] = {"mean_tpot_ms",
                                              "output_throughput",
                                              "completed",
                                              "duration",
                                              "request_throughput",
                                              "total_input_tokens",
                                              "spec_decode_num_drafts",
                                              "spec_decode_acceptance_rate"};
    if (std::none_of(std::begin(kResultKeys), std::end(kResultKeys),
                     [&](const char* key) { return obj.contains(key); })) {
        throw BenchError(
            ctx.file, ctx.line,
            std::string(obj.contains("architectures") || obj.contains("model_type") ? "a model's config.json"
                                                                                    : "a JSON object") +
                ", not a vllm bench serve result (none of mean_tpot_ms, output_throughput, completed, "
                "duration, request_throughput, total_input_tokens, spec_decode_num_drafts, "
                "spec_decode_acceptance_rate)");
    }
    BenchRecord record;
    record.sourceFile = ctx.file;
    record.sourceLine = ctx.line;

    for (const auto& [rawKey, value] : obj.items()) {
        std::string key = rawKey;
        if (key == "request_goodput:") {
            // benchmark_serving.py (≤ mid-2025) wrote the key with a colon (vllm PR #16018).
            key = "request_goodput";
            warnings.push_back({BenchWarningKind::LegacyKey, ctx.file, ctx.line,
                                "legacy key 'request_goodput:' read as 'request_goodput'"});
        }
        if (value.is_number()) {
            record.metrics[key] = value.get<double>();
        } else if (value.is_string()) {
            record.extras[key] = value.get<std::string>();
        } else if (value.is_boolean()) {
            record.extras[key] = value.get<bool>() ? "true" : "false";
        }
    }

    // One decode rate per repeat (bench-formats.md §1.3, §4.4).
    if (const auto tpot = record.metric("mean_tpot_ms"); tpot && *tpot > 0) {
        record.metrics[benchmetric::kDecodeTokS] = 1000.0 / *tpot;
    }
    if (const auto out = record.metric("output_throughput")) {
        record.metrics[benchmetric::kOutputTokS] = *out;
    }
    const auto outputLens = obj.find("output_lens");
    const auto latencies = obj.find("latencies");
    const auto ttfts = obj.find("ttfts");
    if (outputLens != obj.end() && latencies != obj.end() && ttfts != obj.end() && outputLens->is_array() &&
        latencies->is_array() && ttfts->is_array() && outputLens->size() == latencies->size() &&
        latencies->size() == ttfts->size()) {
        // The pooled rate weights requests by their decode tokens, which is better when lengths differ.
        double tokens = 0;
        double seconds = 0;
        for (std::size_t i = 0; i < outputLens->size(); ++i) {
            const auto out = numberOf((*outputLens)[i]);
            const auto lat = numberOf((*latencies)[i]);
            const auto ttft = numberOf((*ttfts)[i]);
            if (out && lat && ttft && *out > 1) {
                tokens += *out - 1;
                seconds += *lat - *ttft;
            }
        }
        if (seconds > 0) {
            record.metrics[benchmetric::kDecodeTokSPooled] = tokens / seconds;
        }
    }

    // Spec-decode fields (vLLM PR #31739): the rate is in percent, per-position rates are fractions.
    if (const auto rate = record.metric("spec_decode_acceptance_rate")) {
        record.metrics[benchmetric::kAcceptanceRate] = *rate / 100.0;
    }
    if (const auto al = record.metric("spec_decode_acceptance_length")) {
        record.metrics[benchmetric::kAcceptanceLength] = *al;
    }
    if (const auto rates = obj.find("spec_decode_per_position_acceptance_rates");
        rates != obj.end() && rates->is_array()) {
        for (const auto& r : *rates) {
            const auto v = numberOf(r);
            if (!v) {
                throw BenchError(ctx.file, ctx.line,
                                 "spec_decode_per_position_acceptance_rates holds a non-number");
            }
            record.perPositionAcceptance.push_back(*v);
        }
    }
    const auto drafts = record.metric("spec_decode_num_drafts");
    const auto draftTokens = record.metric("spec_decode_draft_tokens");
    const auto accepted = record.metric("spec_decode_accepted_tokens");
    if (draftTokens && accepted) {
        auto counters = SpecDecodeCounters::fromTotals(drafts, *draftTokens, *accepted);
        for (const double rate : record.perPositionAcceptance) {
            // The file keeps rates only; the counts are integers, so rounding recovers them exactly.
            counters.acceptedPerPosition.push_back(std::round(rate * counters.numDrafts));
        }
        for (const auto& problem : counters.invariantViolations()) {
            warnings.push_back({BenchWarningKind::InvariantViolated, ctx.file, ctx.line, problem});
        }
        record.counters = counters;
    }

    // Tags. Metadata values are strings; numbers are accepted too.
    const auto& tags = ctx.tags;
    const auto metaArm = stringOf(obj, "arm");
    if (tags.override && tags.arm) {
        record.arm = *tags.arm;
    } else if (metaArm) {
        record.arm = *metaArm;
    } else if (tags.arm) {
        record.arm = *tags.arm;
    } else if (const auto label = stringOf(obj, "label"); label && !label->empty()) {
        record.arm = *label;
        warnings.push_back({BenchWarningKind::InferredTag, ctx.file, ctx.line,
                            "no 'arm' metadata; using the label '" + *label + "' as the arm"});
    } else if (auto fromName = armFromVllmFileName(std::filesystem::path(ctx.file).filename().string());
               !fromName.empty()) {
        record.arm = fromName;
        warnings.push_back({BenchWarningKind::InferredTag, ctx.file, ctx.line,
                            "no 'arm' metadata; using '" + fromName + "' from the file name as the arm"});
    } else {
        warnings.push_back(
            {BenchWarningKind::MissingTag, ctx.file, ctx.line,
             "no arm: pass --metadata arm=NAME to vllm bench serve or give one when importing"});
    }

    std::optional<long long> metaPrompt;
    for (const char* key : {"prompt_len", "input_len", "random_input_len"}) {
        if (const auto it = obj.find(key); it != obj.end() && !metaPrompt) {
            metaPrompt = integerOf(*it);
            if (!metaPrompt) {
                throw BenchError(ctx.file, ctx.line,
                                 std::string("'") + key + "' is not an integer: " + it->dump());
            }
        }
    }
    if (tags.override && tags.promptLen) {
        record.promptLen = *tags.promptLen;
    } else if (metaPrompt) {
        record.promptLen = *metaPrompt;
    } else if (tags.promptLen) {
        record.promptLen = *tags.promptLen;
    } else {
        const auto inputs = record.metric("total_input_tokens");
        const auto completed = record.metric("completed");
        if (inputs && completed && *completed > 0 && std::fmod(*inputs, *completed) == 0) {
            // Exact for fixed-length random datasets; a mean for others, hence the warning.
            record.promptLen = static_cast<long long>(*inputs / *completed);
            warnings.push_back({BenchWarningKind::InferredTag, ctx.file, ctx.line,
                                "no 'prompt_len' metadata; using total_input_tokens / completed = " +
                                    std::to_string(record.promptLen)});
        } else {
            warnings.push_back({BenchWarningKind::MissingTag, ctx.file, ctx.line,
                                "no prompt length: pass --metadata prompt_len=N to vllm bench serve"});
        }
    }

    std::optional<long long> metaRepeat;
    if (const auto it = obj.find("repeat"); it != obj.end()) {
        metaRepeat = integerOf(*it);
        if (!metaRepeat) {
            throw BenchError(ctx.file, ctx.line, "'repeat' is not an integer: " + it->dump());
        }
    }
    if (tags.override && tags.repeat) {
        record.repeat = *tags.repeat;
    } else if (metaRepeat) {
        record.repeat = static_cast<int>(*metaRepeat);
    } else if (tags.repeat) {
        record.repeat = *tags.repeat;
    } else if (ctx.lineIndex > 0) {
        record.repeat = ctx.lineIndex;
    }
    return record;
}

nlohmann::json parseObjectText(std::string_view text, const std::string& file, int firstLine)
{
    try {
        return parseStrictJson(text);
    } catch (const nlohmann::json::parse_error& e) {
        const auto byte = e.byte > 0 ? e.byte - 1 : 0;
        throw BenchError(file, firstLine + lineOfOffset(text, byte) - 1,
                         std::string("malformed JSON: ") + e.what());
    } catch (const DuplicateJsonKey& e) {
        throw BenchError(file, firstLine, std::string("malformed JSON: ") + e.what());
    }
}

} // namespace

std::string armFromVllmFileName(const std::string& fileName)
{
    static const std::regex pattern(R"(^(.+?)-(?:ramp-up-|(?:inf|[0-9.]+)qps))");
    std::smatch match;
    if (std::regex_search(fileName, match, pattern)) {
        return match[1].str();
    }
    return {};
}

std::string readBenchFile(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw BenchError(path.string(), 0, "cannot open file");
    }
    std::ostringstream buffer;
    buffer << in.rdbuf();
    if (in.bad()) {
        throw BenchError(path.string(), 0, "read error");
    }
    return buffer.str();
}

BenchImport parseVllmResult(std::string_view text, const std::string& file, const RecordTags& tags)
{
    BenchImport result;
    const auto sanitized = sanitizeNonFiniteJson(text);
    for (const auto& r : sanitized.replacements) {
        result.warnings.push_back({BenchWarningKind::NonFiniteValue, file, r.line,
                                   "bare " + r.token + (r.key.empty() ? "" : " in '" + r.key + "'") +
                                       " is not JSON; read as null"});
    }
    const std::string_view body = sanitized.text;

    // --append-result writes one object per line; a single json.dump is one line without indent.
    std::vector<std::pair<int, std::string_view>> lines;
    std::size_t start = 0;
    int lineNo = 1;
    int objectLines = 0;
    while (start <= body.size()) {
        auto end = body.find('\n', start);
        if (end == std::string_view::npos) {
            end = body.size();
        }
        const auto line = body.substr(start, end - start);
        if (!line.empty() && line.front() == '{') {
            ++objectLines;
        }
        lines.emplace_back(lineNo++, line);
        start = end + 1;
    }

    if (objectLines > 1) {
        int index = 0;
        for (const auto& [number, line] : lines) {
            if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
                continue;
            }
            const auto obj = parseObjectText(line, file, number);
            ++index;
            result.records.push_back(recordFromObject(obj, {file, number, index, tags}, result.warnings));
        }
    } else {
        const auto first = body.find_first_not_of(" \t\r\n");
        if (first == std::string_view::npos) {
            throw BenchError(file, 0, "empty file: expected a vllm bench serve result");
        }
        const auto obj = parseObjectText(body, file, 1);
        result.records.push_back(
            recordFromObject(obj, {file, lineOfOffset(body, first), 0, tags}, result.warnings));
    }
    return result;
}

BenchImport importVllmResultFile(const std::filesystem::path& path, const RecordTags& tags)
{
    return parseVllmResult(readBenchFile(path), path.string(), tags);
}

} // namespace spark
