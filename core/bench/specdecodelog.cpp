#include "core/bench/specdecodelog.h"

#include "core/bench/bencherror.h"
#include "core/bench/prometheustext.h"
#include "core/bench/textlines.h"
#include "core/bench/vllmresult.h"

#include <cmath>
#include <regex>

namespace spark {
namespace {

constexpr std::string_view kMarker = "SpecDecoding metrics:";

std::optional<double> field(const std::string& body, const char* pattern)
{
    const std::regex re(pattern);
    std::smatch match;
    if (!std::regex_search(body, match, re)) {
        return std::nullopt;
    }
    return parsePromNumber(match[1].str());
}

} // namespace

SpecDecodeLog parseSpecDecodeLog(std::string_view text, const std::string& file, const RecordTags& tags)
{
    static const std::string kNumber = R"(([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?|nan|inf))";
    static const std::regex perPosition(
        R"(Per-position acceptance rate:\s*((?:[0-9.]+|nan)(?:\s*,\s*(?:[0-9.]+|nan))*))");
    SpecDecodeLog log;
    int lineNo = 0;
    for (const auto line : splitLines(text)) {
        ++lineNo;
        const auto at = line.find(kMarker);
        if (at == std::string_view::npos) {
            continue;
        }
        const std::string body(line.substr(at + kMarker.size()));
        SpecDecodeLogEntry entry;
        entry.line = lineNo;
        const auto al = field(body, ("Mean acceptance length:\\s*" + kNumber).c_str());
        const auto accepted = field(body, ("Accepted:\\s*" + kNumber + "\\s*tokens").c_str());
        const auto drafted = field(body, ("Drafted:\\s*" + kNumber + "\\s*tokens").c_str());
        if (!al || !accepted || !drafted) {
            throw BenchError(file, lineNo,
                             std::string("SpecDecoding metrics line without ") +
                                 (!al         ? "'Mean acceptance length'"
                                  : !accepted ? "'Accepted: N tokens'"
                                              : "'Drafted: N tokens'"));
        }
        entry.meanAcceptanceLength = *al;
        entry.acceptedTokens = *accepted;
        entry.draftedTokens = *drafted;
        entry.acceptedThroughput = field(body, ("Accepted throughput:\\s*" + kNumber).c_str());
        entry.draftedThroughput = field(body, ("Drafted throughput:\\s*" + kNumber).c_str());
        entry.acceptanceRatePercent = field(body, ("Draft acceptance rate:\\s*" + kNumber + "%").c_str());
        std::smatch match;
        if (std::regex_search(body, match, perPosition)) {
            const std::string list = match[1].str();
            std::size_t p = 0;
            while (p <= list.size()) {
                auto comma = list.find(',', p);
                if (comma == std::string::npos) {
                    comma = list.size();
                }
                std::string item = list.substr(p, comma - p);
                item.erase(0, item.find_first_not_of(" \t"));
                item.erase(item.find_last_not_of(" \t") + 1);
                const auto v = parsePromNumber(item);
                if (!v) {
                    throw BenchError(file, lineNo, "per-position rate '" + item + "' is not a number");
                }
                entry.perPositionRates.push_back(*v);
                p = comma + 1;
            }
        }
        log.entries.push_back(std::move(entry));
    }
    if (log.entries.empty()) {
        throw BenchError(file, 0,
                         "no 'SpecDecoding metrics:' lines (vLLM logs them unless --disable-log-stats)");
    }

    SpecDecodeCounters counters;
    bool approximated = false;
    for (const auto& e : log.entries) {
        double drafts = 0;
        if (!e.perPositionRates.empty()) {
            // Draft tokens are k per draft unless the scheduler invalidated some (bench-formats §2.1
            // Denominators).
            drafts = e.draftedTokens / static_cast<double>(e.perPositionRates.size());
        } else if (e.meanAcceptanceLength > 1.0) {
            drafts = std::round(e.acceptedTokens / (e.meanAcceptanceLength - 1.0));
            approximated = true;
        } else if (e.acceptedTokens > 0) {
            counters.hasNumDrafts = false;
        }
        counters.numDrafts += drafts;
        counters.draftTokens += e.draftedTokens;
        counters.acceptedTokens += e.acceptedTokens;
        if (counters.acceptedPerPosition.size() < e.perPositionRates.size()) {
            counters.acceptedPerPosition.resize(e.perPositionRates.size(), 0.0);
        }
        for (std::size_t i = 0; i < e.perPositionRates.size(); ++i) {
            counters.acceptedPerPosition[i] += std::round(e.perPositionRates[i] * drafts);
        }
    }

    BenchRecord record;
    record.sourceFile = file;
    record.sourceLine = log.entries.front().line;
    record.arm = tags.arm.value_or(std::string());
    record.promptLen = tags.promptLen.value_or(0);
    record.repeat = tags.repeat.value_or(0);
    if (counters.draftTokens > 0) {
        record.metrics[benchmetric::kAcceptanceRate] = counters.acceptanceRate();
    }
    if (counters.hasNumDrafts && counters.numDrafts > 0) {
        record.metrics[benchmetric::kAcceptanceLength] = counters.meanAcceptanceLength();
        record.perPositionAcceptance = counters.perPositionRates();
    }
    record.counters = counters;
    if (approximated) {
        log.import.warnings.push_back(
            {BenchWarningKind::Approximation, file, log.entries.front().line,
             "drafts derived from the rounded mean acceptance length; acceptance length "
             "is approximate"});
    }
    if (record.arm.empty()) {
        log.import.warnings.push_back({BenchWarningKind::MissingTag, file, 0, "no arm given for a vLLM log"});
    }
    log.import.records.push_back(std::move(record));
    return log;
}

SpecDecodeLog importSpecDecodeLogFile(const std::filesystem::path& path, const RecordTags& tags)
{
    return parseSpecDecodeLog(readBenchFile(path), path.string(), tags);
}

} // namespace spark
