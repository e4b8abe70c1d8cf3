#include "core/bench/specdecodediff.h"

#include "core/bench/bencherror.h"

#include <cmath>
#include <map>
#include <set>

namespace spark {
namespace {

constexpr const char* kDrafts = "vllm:spec_decode_num_drafts_total";
constexpr const char* kDraftTokens = "vllm:spec_decode_num_draft_tokens_total";
constexpr const char* kAccepted = "vllm:spec_decode_num_accepted_tokens_total";
constexpr const char* kPerPos = "vllm:spec_decode_num_accepted_tokens_per_pos_total";

bool selected(const PromSample& s, const std::optional<std::string>& modelName)
{
    if (!modelName) {
        return true;
    }
    const auto it = s.labels.find("model_name");
    return it != s.labels.end() && it->second == *modelName;
}

int positionOf(const PromSample& s, const std::string& file)
{
    const auto it = s.labels.find("position");
    if (it == s.labels.end()) {
        throw BenchError(file, s.line, std::string(kPerPos) + " without a 'position' label");
    }
    try {
        std::size_t used = 0;
        const int position = std::stoi(it->second, &used);
        if (used == it->second.size() && position >= 0 && position < 1024) {
            return position;
        }
    } catch (const std::exception&) {
    }
    throw BenchError(file, s.line, "position label '" + it->second + "' is not a small non-negative integer");
}

bool hasSpecCounters(const PromSnapshot& snapshot)
{
    return !snapshot.series(kDraftTokens).empty() || !snapshot.series(kAccepted).empty();
}

} // namespace

SpecDecodeCounters specDecodeTotals(const PromSnapshot& snapshot, const std::optional<std::string>& modelName)
{
    if (!hasSpecCounters(snapshot)) {
        throw BenchError(
            snapshot.file(), 0,
            "no vllm:spec_decode_* counters (is speculative decoding on, and log stats enabled?)");
    }
    SpecDecodeCounters totals;
    totals.hasNumDrafts = !snapshot.series(kDrafts).empty();
    for (const auto& s : snapshot.samples()) {
        if (!selected(s, modelName)) {
            continue;
        }
        if (s.name == kDrafts) {
            totals.numDrafts += s.value;
        } else if (s.name == kDraftTokens) {
            totals.draftTokens += s.value;
        } else if (s.name == kAccepted) {
            totals.acceptedTokens += s.value;
        } else if (s.name == kPerPos) {
            const auto position = static_cast<std::size_t>(positionOf(s, snapshot.file()));
            if (totals.acceptedPerPosition.size() <= position) {
                totals.acceptedPerPosition.resize(position + 1, 0.0);
            }
            totals.acceptedPerPosition[position] += s.value;
        }
    }
    return totals;
}

SpecDecodeDelta diffSpecDecode(const PromSnapshot& before, const PromSnapshot& after,
                               const std::optional<std::string>& modelName)
{
    if (!hasSpecCounters(after)) {
        throw BenchError(
            after.file(), 0,
            "no vllm:spec_decode_* counters (is speculative decoding on, and log stats enabled?)");
    }
    if (!hasSpecCounters(before)) {
        throw BenchError(before.file(), 0, "no vllm:spec_decode_* counters in the 'before' scrape");
    }
    SpecDecodeDelta delta;
    delta.counters.hasNumDrafts = !after.series(kDrafts).empty();
    std::set<std::string> models;
    for (const auto& s : after.samples()) {
        if (s.name != kDrafts && s.name != kDraftTokens && s.name != kAccepted && s.name != kPerPos) {
            continue;
        }
        if (!selected(s, modelName)) {
            continue;
        }
        if (const auto m = s.labels.find("model_name"); m != s.labels.end()) {
            models.insert(m->second);
        }
        const PromSample* old = before.find(s.name, s.labels);
        const double previous = old ? old->value : 0.0;
        if (!std::isfinite(s.value) || !std::isfinite(previous)) {
            throw BenchError(after.file(), s.line, s.name + " is not finite");
        }
        if (s.value < previous) {
            throw BenchError(after.file(), s.line,
                             s.name + " went down from " + std::to_string(previous) + " (" + before.file() +
                                 ":" + std::to_string(old ? old->line : 0) + ") to " +
                                 std::to_string(s.value) +
                                 ": the server restarted between the scrapes, so they cannot be differenced");
        }
        const double d = s.value - previous;
        if (s.name == kDrafts) {
            delta.counters.numDrafts += d;
        } else if (s.name == kDraftTokens) {
            delta.counters.draftTokens += d;
        } else if (s.name == kAccepted) {
            delta.counters.acceptedTokens += d;
        } else {
            const auto position = static_cast<std::size_t>(positionOf(s, after.file()));
            if (delta.counters.acceptedPerPosition.size() <= position) {
                delta.counters.acceptedPerPosition.resize(position + 1, 0.0);
            }
            delta.counters.acceptedPerPosition[position] += d;
        }
    }
    // A series that vanished means the 'after' scrape comes from a different server or a restart.
    for (const auto& s : before.samples()) {
        if ((s.name == kDrafts || s.name == kDraftTokens || s.name == kAccepted || s.name == kPerPos) &&
            selected(s, modelName) && !after.find(s.name, s.labels)) {
            throw BenchError(before.file(), s.line,
                             s.name + " is missing from " + after.file() +
                                 ": the scrapes are not from the same server run (or the order is wrong)");
        }
    }
    delta.modelNames.assign(models.begin(), models.end());
    if (modelName && models.empty()) {
        throw BenchError(after.file(), 0, "no spec-decode counters with model_name=\"" + *modelName + "\"");
    }
    if (!modelName && models.size() > 1) {
        std::string list;
        for (const auto& m : models) {
            list += (list.empty() ? "" : ", ") + m;
        }
        delta.warnings.push_back({BenchWarningKind::MultipleModels, after.file(), 0,
                                  "spec-decode counters of several models were summed: " + list});
    }
    if (delta.counters.draftTokens == 0) {
        delta.warnings.push_back({BenchWarningKind::InvariantViolated, after.file(), 0,
                                  "no draft tokens between the scrapes: acceptance is undefined"});
    }
    for (const auto& problem : delta.counters.invariantViolations()) {
        delta.warnings.push_back({BenchWarningKind::InvariantViolated, after.file(), 0, problem});
    }
    return delta;
}

BenchRecord recordFromSpecDecodeDelta(const SpecDecodeDelta& delta, const std::string& afterFile,
                                      const RecordTags& tags)
{
    BenchRecord record;
    record.sourceFile = afterFile;
    record.arm = tags.arm.value_or(std::string());
    record.promptLen = tags.promptLen.value_or(0);
    record.repeat = tags.repeat.value_or(0);
    record.counters = delta.counters;
    const auto& c = delta.counters;
    if (c.draftTokens > 0) {
        record.metrics[benchmetric::kAcceptanceRate] = c.acceptanceRate();
    }
    if (c.hasNumDrafts && c.numDrafts > 0) {
        record.metrics[benchmetric::kAcceptanceLength] = c.meanAcceptanceLength();
        record.perPositionAcceptance = c.perPositionRates();
    }
    record.metrics["spec_decode_num_drafts"] = c.numDrafts;
    record.metrics["spec_decode_draft_tokens"] = c.draftTokens;
    record.metrics["spec_decode_accepted_tokens"] = c.acceptedTokens;
    return record;
}

} // namespace spark
