#include "core/bench/llamabench.h"

#include "core/bench/bencherror.h"
#include "core/bench/nonfinitejson.h"
#include "core/bench/textlines.h"
#include "core/bench/vllmresult.h"
#include "core/io/strictjson.h"

#include <cmath>

namespace spark {
namespace {

nlohmann::json parseText(std::string_view text, const std::string& file, int firstLine)
{
    try {
        return parseStrictJson(text);
    } catch (const nlohmann::json::parse_error& e) {
        throw BenchError(file, firstLine + lineOfOffset(text, e.byte > 0 ? e.byte - 1 : 0) - 1,
                         std::string("malformed JSON: ") + e.what());
    } catch (const DuplicateJsonKey& e) {
        throw BenchError(file, firstLine, std::string("malformed JSON: ") + e.what());
    }
}

double numberField(const nlohmann::json& obj, const char* key, double fallback)
{
    const auto it = obj.find(key);
    return it != obj.end() && it->is_number() ? it->get<double>() : fallback;
}

void addEntry(const nlohmann::json& obj, const std::string& file, int line, const RecordTags& tags,
              BenchImport& out)
{
    if (!obj.is_object()) {
        throw BenchError(file, line,
                         "expected a llama-bench result object, got " + std::string(obj.type_name()));
    }
    const auto avg = obj.find("avg_ts");
    if (avg == obj.end() || !avg->is_number()) {
        throw BenchError(file, line, "llama-bench entry without a numeric 'avg_ts'");
    }
    const auto nPrompt = static_cast<long long>(numberField(obj, "n_prompt", 0));
    const auto nGen = static_cast<long long>(numberField(obj, "n_gen", 0));
    const auto nDepth = static_cast<long long>(numberField(obj, "n_depth", 0));
    const char* metric =
        nPrompt == 0 ? benchmetric::kDecodeTokS : (nGen == 0 ? benchmetric::kPrefillTokS : "pg_tok_s");
    std::string arm;
    if (tags.arm) {
        arm = *tags.arm;
    } else if (const auto it = obj.find("model_filename"); it != obj.end() && it->is_string()) {
        arm = std::filesystem::path(it->get<std::string>()).stem().string();
    } else {
        out.warnings.push_back(
            {BenchWarningKind::MissingTag, file, line, "no model_filename and no arm given"});
    }
    std::vector<double> samples;
    if (const auto it = obj.find("samples_ts"); it != obj.end() && it->is_array()) {
        for (const auto& v : *it) {
            if (!v.is_number()) {
                throw BenchError(file, line, "samples_ts holds a non-number");
            }
            samples.push_back(v.get<double>());
        }
    }
    if (samples.empty()) {
        samples.push_back(avg->get<double>());
        out.warnings.push_back({BenchWarningKind::TooFewRepeats, file, line,
                                "no samples_ts (csv/md output?): avg_ts is one repeat, so no variance"});
    }
    BenchRecord base;
    base.arm = arm;
    base.promptLen = tags.promptLen.value_or(nPrompt == 0 ? nDepth : nPrompt);
    base.sourceFile = file;
    base.sourceLine = line;
    for (const auto& [key, value] : obj.items()) {
        if (value.is_string()) {
            base.extras[key] = value.get<std::string>();
        } else if (value.is_number() || value.is_boolean()) {
            base.extras[key] = value.dump();
        }
    }
    base.extras["test"] = (nPrompt == 0 ? "tg" + std::to_string(nGen)
                           : nGen == 0  ? "pp" + std::to_string(nPrompt)
                                        : "pp" + std::to_string(nPrompt) + "+tg" + std::to_string(nGen)) +
                          (nDepth > 0 ? " @ d" + std::to_string(nDepth) : std::string());
    for (std::size_t i = 0; i < samples.size(); ++i) {
        BenchRecord record = base;
        record.repeat = static_cast<int>(i) + 1;
        record.metrics[metric] = samples[i];
        out.records.push_back(std::move(record));
    }
}

} // namespace

BenchImport parseLlamaBench(std::string_view text, const std::string& file, const RecordTags& tags)
{
    BenchImport out;
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) {
        throw BenchError(file, 0, "empty file: expected llama-bench JSON");
    }
    if (text[first] == '[') {
        const auto doc = parseText(text, file, 1);
        // Array entries carry no line of their own; report the line where the array starts.
        for (const auto& entry : doc) {
            addEntry(entry, file, lineOfOffset(text, first), tags, out);
        }
    } else {
        int lineNo = 0;
        for (const auto line : splitLines(text)) {
            ++lineNo;
            if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
                continue;
            }
            addEntry(parseText(line, file, lineNo), file, lineNo, tags, out);
        }
    }
    if (out.records.empty()) {
        throw BenchError(file, 0, "no llama-bench results");
    }
    return out;
}

BenchImport importLlamaBenchFile(const std::filesystem::path& path, const RecordTags& tags)
{
    return parseLlamaBench(readBenchFile(path), path.string(), tags);
}

} // namespace spark
