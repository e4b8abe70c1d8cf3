#include "core/bench/benchreport.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

namespace spark {
namespace {

std::string percentText(double fraction)
{
    const double v = std::round(fraction * 1000.0) / 10.0;
    auto text = std::to_string(v);
    return text.substr(0, text.find('.') + 2) + "%";
}

/// "file.json:12" (the file's name, and its line where the record has one) for messages.
std::string sourceName(const BenchRecord& record)
{
    const auto name = std::filesystem::path(record.sourceFile).filename().string();
    return record.sourceLine > 0 ? name + ":" + std::to_string(record.sourceLine) : name;
}

} // namespace

const SampleSummary* BenchCell::metric(const std::string& name) const
{
    const auto it = metrics.find(name);
    return it == metrics.end() ? nullptr : &it->second;
}

const BenchCell* BenchReport::cell(const std::string& arm, long long promptLen) const
{
    for (const auto& c : cells) {
        if (c.arm == arm && c.promptLen == promptLen) {
            return &c;
        }
    }
    return nullptr;
}

const BenchSetup* BenchReport::setupOf(const std::string& arm) const
{
    for (const auto& setup : setups) {
        if (std::find(setup.arms.begin(), setup.arms.end(), arm) != setup.arms.end()) {
            return &setup;
        }
    }
    return nullptr;
}

bool BenchReport::isBaseline(const std::string& arm) const
{
    const auto* setup = setupOf(arm);
    return setup && setup->baselineArm == arm;
}

std::string BenchSetup::label() const
{
    if (targetModel.empty() && k.empty()) {
        return "(setup not stated)";
    }
    return targetModel + (!targetModel.empty() && !k.empty() ? ", " : "") + k;
}

const BenchComparison* BenchReport::comparison(const std::string& metric, long long promptLen,
                                               const std::string& candidateArm) const
{
    for (const auto& c : comparisons) {
        if (c.metric == metric && c.promptLen == promptLen && c.candidateArm == candidateArm) {
            return &c;
        }
    }
    return nullptr;
}

namespace {

/// What a run measured besides its arm: the target model and k, empty when the run does not say.
std::string modelOf(const BenchRecord& r)
{
    const auto it = r.extras.find("model_id");
    return it == r.extras.end() ? std::string() : it->second;
}

std::string kOf(const BenchRecord& r)
{
    const auto k = declaredSpeculativeTokens(r);
    return k ? "k=" + std::to_string(*k) : std::string();
}

/// Each arm's model and k: the first its runs state.
std::map<std::string, std::pair<std::string, std::string>>
statedSetups(const std::vector<BenchRecord>& records)
{
    std::map<std::string, std::pair<std::string, std::string>> setups;
    for (const auto& r : records) {
        auto& [model, k] = setups[r.arm];
        model = model.empty() ? modelOf(r) : model;
        k = k.empty() ? kOf(r) : k;
    }
    return setups;
}

/// An arm whose runs name different target models or k is kept apart per setup, so that the report never
/// pools them into one cell (whose repeats the speed model would then refuse): the arm's first setup keeps
/// its name, every other one gets a tagged arm ("bf16_draft [k=3]"). Runs that do not say are not evidence
/// of a difference and stay with the first setup.
void splitMixedArms(std::vector<BenchRecord>& records, std::vector<BenchWarning>& warnings)
{
    auto first = statedSetups(records);
    std::map<std::string, std::set<std::string>> split; // arm -> its new names
    for (auto& r : records) {
        const auto& [model, k] = first[r.arm];
        const auto ownModel = modelOf(r), ownK = kOf(r);
        const bool otherModel = !ownModel.empty() && ownModel != model;
        const bool otherK = !ownK.empty() && ownK != k;
        if (!otherModel && !otherK) {
            continue;
        }
        const auto arm = r.arm;
        r.arm += " [" + (otherModel ? ownModel : std::string()) + (otherModel && otherK ? ", " : "") +
                 (otherK ? ownK : std::string()) + "]";
        split[arm].insert(r.arm);
    }
    for (const auto& [arm, names] : split) {
        std::string list;
        for (const auto& n : names) {
            list += (list.empty() ? "'" : ", '") + n + "'";
        }
        warnings.push_back({BenchWarningKind::InferredTag,
                            {},
                            0,
                            "arm '" + arm +
                                "' holds runs of different target models or k; they are kept apart as " +
                                list + " instead of pooled as repeats"});
    }
}

/// Arms by the setup their runs state (after splitMixedArms an arm has one), the setups in order of first
/// appearance with the chosen baseline's first. What runs do not state is no evidence of a difference: such
/// an arm joins the first setup that agrees with what they do state. A setup's baseline: the chosen arm when
/// it is there, else an arm whose name contains "bf16", else its first arm.
std::vector<BenchSetup> groupIntoSetups(const std::vector<BenchRecord>& records,
                                        const std::vector<std::string>& armsSeen,
                                        const std::optional<std::string>& chosenBaseline)
{
    auto setupOfArm = statedSetups(records);
    std::vector<BenchSetup> setups;
    for (const auto& arm : armsSeen) {
        const auto& [model, k] = setupOfArm[arm];
        const auto agrees = [](const std::string& a, const std::string& b) {
            return a.empty() || b.empty() || a == b;
        };
        auto it = std::find_if(setups.begin(), setups.end(), [&](const BenchSetup& s) {
            return agrees(s.targetModel, model) && agrees(s.k, k);
        });
        if (it == setups.end()) {
            it = setups.insert(setups.end(), BenchSetup{});
        }
        it->targetModel = it->targetModel.empty() ? model : it->targetModel;
        it->k = it->k.empty() ? k : it->k;
        it->arms.push_back(arm);
    }
    for (auto& setup : setups) {
        const auto has = [&](const std::string& a) {
            return std::find(setup.arms.begin(), setup.arms.end(), a) != setup.arms.end();
        };
        const auto bf16 = std::find_if(setup.arms.begin(), setup.arms.end(), [](const std::string& a) {
            return a.find("bf16") != std::string::npos;
        });
        setup.baselineArm = chosenBaseline && has(*chosenBaseline) ? *chosenBaseline
                            : bf16 != setup.arms.end()             ? *bf16
                                                                   : setup.arms.front();
        std::stable_partition(setup.arms.begin(), setup.arms.end(),
                              [&](const std::string& a) { return a == setup.baselineArm; });
    }
    std::stable_partition(setups.begin(), setups.end(), [&](const BenchSetup& s) {
        return chosenBaseline && s.baselineArm == *chosenBaseline;
    });
    return setups;
}

} // namespace

BenchReport buildBenchReport(std::vector<BenchRecord> records, const BenchReportOptions& options,
                             std::vector<BenchWarning> importWarnings)
{
    BenchReport report;
    report.confidence = options.confidence;
    report.warnings = std::move(importWarnings);

    for (auto& r : records) {
        if (r.arm.empty()) {
            r.arm = "(no arm)";
        }
    }
    splitMixedArms(records, report.warnings);
    std::vector<std::string> armsSeen;
    std::set<long long> lens;
    for (auto& r : records) {
        // Counters alone (a /metrics pair, a log) still give the acceptance metrics.
        if (r.counters && !r.metrics.count(benchmetric::kAcceptanceRate) && r.counters->draftTokens > 0) {
            r.metrics[benchmetric::kAcceptanceRate] = r.counters->acceptanceRate();
        }
        if (r.counters && !r.metrics.count(benchmetric::kAcceptanceLength) && r.counters->hasNumDrafts &&
            r.counters->numDrafts > 0) {
            r.metrics[benchmetric::kAcceptanceLength] = r.counters->meanAcceptanceLength();
        }
        if (std::find(armsSeen.begin(), armsSeen.end(), r.arm) == armsSeen.end()) {
            armsSeen.push_back(r.arm);
        }
        lens.insert(r.promptLen);
    }

    if (options.baselineArm && !armsSeen.empty() &&
        std::find(armsSeen.begin(), armsSeen.end(), *options.baselineArm) == armsSeen.end()) {
        std::string list;
        for (const auto& a : armsSeen) {
            list += (list.empty() ? "" : ", ") + a;
        }
        report.warnings.push_back(
            {BenchWarningKind::MissingTag,
             {},
             0,
             "baseline arm '" + *options.baselineArm + "' is not in the data (arms: " + list + ")"});
    }
    report.setups = groupIntoSetups(records, armsSeen, options.baselineArm);
    report.baselineArm = report.setups.empty() ? options.baselineArm.value_or(std::string())
                                               : report.setups.front().baselineArm;
    for (const auto& setup : report.setups) {
        report.arms.insert(report.arms.end(), setup.arms.begin(), setup.arms.end());
    }
    report.promptLens.assign(lens.begin(), lens.end());

    for (const auto& arm : report.arms) {
        for (const auto len : report.promptLens) {
            std::vector<BenchRecord*> members;
            for (auto& r : records) {
                if (r.arm == arm && r.promptLen == len) {
                    members.push_back(&r);
                }
            }
            if (members.empty()) {
                continue;
            }
            BenchCell cell;
            cell.arm = arm;
            cell.promptLen = len;
            cell.records = members.size();
            std::map<std::string, std::vector<double>> values;
            std::map<int, const BenchRecord*> repeats; // repeat number → the record that had it first
            int nextRepeat = 1;
            bool allCounters = true;
            SpecDecodeCounters pooled;
            std::vector<double> positionSums;
            std::vector<std::size_t> positionCounts;
            for (auto* r : members) {
                if (r->repeat == 0) {
                    while (repeats.count(nextRepeat)) {
                        ++nextRepeat;
                    }
                    r->repeat = nextRepeat;
                }
                if (const auto [first, fresh] = repeats.emplace(r->repeat, r); !fresh) {
                    report.warnings.push_back({BenchWarningKind::InferredTag, r->sourceFile, r->sourceLine,
                                               "repeat " + std::to_string(r->repeat) + " of arm '" + arm +
                                                   "' at prompt length " + std::to_string(len) +
                                                   " appears more than once (first in " +
                                                   sourceName(*first->second) + "); both are used"});
                }
                for (const auto& [name, v] : r->metrics) {
                    if (std::isfinite(v)) {
                        values[name].push_back(v);
                    }
                }
                if (r->counters) {
                    pooled += *r->counters;
                } else {
                    allCounters = false;
                }
                if (positionSums.size() < r->perPositionAcceptance.size()) {
                    positionSums.resize(r->perPositionAcceptance.size(), 0.0);
                    positionCounts.resize(r->perPositionAcceptance.size(), 0);
                }
                for (std::size_t i = 0; i < r->perPositionAcceptance.size(); ++i) {
                    positionSums[i] += r->perPositionAcceptance[i];
                    ++positionCounts[i];
                }
                if (std::find(cell.sources.begin(), cell.sources.end(), r->sourceFile) ==
                    cell.sources.end()) {
                    cell.sources.push_back(r->sourceFile);
                }
            }
            cell.acceptance =
                poolCellAcceptance(std::vector<const BenchRecord*>(members.begin(), members.end()));
            for (const auto& [name, v] : values) {
                cell.metrics[name] = summarize(v);
            }
            for (std::size_t i = 0; i < positionSums.size(); ++i) {
                cell.perPositionMean.push_back(positionSums[i] / static_cast<double>(positionCounts[i]));
            }
            if (allCounters) {
                cell.pooledCounters = pooled;
            }
            report.cells.push_back(std::move(cell));
        }
    }

    for (const auto& metric : options.compareMetrics) {
        for (const auto len : report.promptLens) {
            for (const auto& arm : report.arms) {
                const auto& baselineArm = report.setupOf(arm)->baselineArm;
                const auto* base = report.cell(baselineArm, len);
                const SampleSummary* baseStats = base ? base->metric(metric) : nullptr;
                if (!baseStats || arm == baselineArm) {
                    continue;
                }
                const auto* cand = report.cell(arm, len);
                const SampleSummary* candStats = cand ? cand->metric(metric) : nullptr;
                if (!candStats) {
                    continue;
                }
                BenchComparison c;
                c.metric = metric;
                c.promptLen = len;
                c.baselineArm = baselineArm;
                c.candidateArm = arm;
                c.baseline = *baseStats;
                c.candidate = *candStats;
                c.welch = welchTest(c.baseline, c.candidate, options.confidence);
                if (!c.welch.valid) {
                    report.warnings.push_back(
                        {BenchWarningKind::TooFewRepeats,
                         {},
                         0,
                         metric + " at prompt length " + std::to_string(len) + ": '" + arm + "' vs '" +
                             baselineArm + "' needs at least 2 repeats per arm for a CI (have " +
                             std::to_string(c.baseline.n) + " and " + std::to_string(c.candidate.n) + ")"});
                }
                report.comparisons.push_back(std::move(c));
            }
        }
    }

    // The failure that raises no error: a quantized draft served against a target of another precision
    // (or any wrong pairing) still runs, just with acceptance near zero and a slowdown instead of a speedup.
    for (const auto len : report.promptLens) {
        for (const auto& arm : report.arms) {
            const auto& baselineArm = report.setupOf(arm)->baselineArm;
            const auto* base = report.cell(baselineArm, len);
            const auto* baseRate = base ? base->metric(benchmetric::kAcceptanceRate) : nullptr;
            if (!baseRate || !(baseRate->mean > 0)) {
                continue;
            }
            const auto* cand = arm == baselineArm ? nullptr : report.cell(arm, len);
            const auto* rate = cand ? cand->metric(benchmetric::kAcceptanceRate) : nullptr;
            if (rate && rate->mean < options.collapseRatio * baseRate->mean) {
                report.warnings.push_back(
                    {BenchWarningKind::AcceptanceCollapse,
                     cand->sources.empty() ? std::string() : cand->sources.front(), 0,
                     "arm '" + arm + "' accepts " + percentText(rate->mean) +
                         " of draft tokens at prompt length " + std::to_string(len) + " against " +
                         percentText(baseRate->mean) + " for '" + baselineArm +
                         "': acceptance collapsed. A draft paired with the wrong target (precision or model) "
                         "gives near-zero acceptance and no error; check the target and the draft's "
                         "quantization"});
            }
        }
    }
    return report;
}

} // namespace spark
