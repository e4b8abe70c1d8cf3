// `plan --budget ...`: the sensitivity sweep, the exact allocator and its plan, with the seed recipe (the
// plan without a budget) side by side under --compare-preset.
#include "budgetplan.h"

#include "core/plan/budgetallocator.h"
#include "core/plan/sensitivityalpha.h"
#include "format.h"
#include "progressbar.h"
#include "sweeptext.h"

#include <cstdio>
#include <sstream>

namespace spark::cli {
namespace {

std::string scientific(double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.4e", value);
    return text;
}

nlohmann::ordered_json pointJson(const FrontierPoint& p)
{
    return {{"streamed_bytes", p.streamedBytes}, {"bytes", p.bytes}, {"weighted_error", p.weightedError}};
}

/// The budget in bytes of the allocator's kind: a size, or "preset" for what the plan without a budget
/// spends.
std::uint64_t budgetBytes(const std::string& text, std::uint64_t presetBytes)
{
    return text == "preset" ? presetBytes : parseByteSize(text);
}

/// The α rules: those of --alpha-from's sensitivity file first, then --alpha's (later rules win, so an
/// explicit --alpha overrides a measured unit).
std::vector<std::string> alphaRules(const Args& args)
{
    std::vector<std::string> rules;
    if (const auto file = args.value("alpha-from")) {
        try {
            rules = alphaRulesFromSensitivity(readSensitivityFile(*file));
        } catch (const std::invalid_argument& e) {
            throw UsageError(std::string("--alpha-from: ") + e.what());
        }
    }
    const auto explicitRules = args.values("alpha");
    rules.insert(rules.end(), explicitRules.begin(), explicitRules.end());
    return rules;
}

} // namespace

const std::vector<std::string>& budgetOptionNames()
{
    static const std::vector<std::string> names{"budget", "budget-file", "budget-ms", "candidates",
                                                "alpha",  "alpha-from",  "threads",   "rounding-candidates"};
    return names;
}

const std::vector<std::string>& budgetFlagNames()
{
    static const std::vector<std::string> names{"compare-preset"};
    return names;
}

bool budgetRequested(const Args& args)
{
    const int given = (args.value("budget") ? 1 : 0) + (args.value("budget-file") ? 1 : 0) +
                      (args.value("budget-ms") ? 1 : 0);
    if (given > 1) {
        throw UsageError("--budget, --budget-file and --budget-ms exclude each other");
    }
    if (given == 0) {
        for (const auto& name : {"candidates", "rounding-candidates", "alpha", "alpha-from"}) {
            if (args.value(name)) {
                throw UsageError(std::string("--") + name + " needs --budget, --budget-file or --budget-ms");
            }
        }
        if (args.flag("compare-preset")) {
            throw UsageError("--compare-preset needs --budget, --budget-file or --budget-ms");
        }
    }
    return given == 1;
}

BudgetOutcome planWithBudget(const Checkpoint& checkpoint, const std::vector<TensorInfo>& infos,
                             const PlanOptions& options, const QuantPlan& base, const TimingInputs& timing,
                             const Args& args)
{
    SweepOptions sweepOptions;
    sweepOptions.plan = options;
    sweepOptions.threads = static_cast<unsigned>(args.integer("threads", 0, 0, 4096));
    sweepOptions.device = args.value("device", "");
    try {
        if (const auto list = args.value("candidates")) {
            sweepOptions.candidates = parseCandidates(*list);
        }
        if (const auto list = args.value("rounding-candidates")) {
            sweepOptions.roundings = parseRoundingCandidates(*list);
        }
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    const BudgetKind kind = args.value("budget-file") ? BudgetKind::Checkpoint : BudgetKind::Streamed;
    if (const auto ms = args.value("budget-ms")) {
        // Checked before the sweep reads anything.
        if (!timing.drafterMs && !timing.bandwidthGBps) {
            throw UsageError("--budget-ms needs --drafter-ms (measured) or --bandwidth-gbps / --device");
        }
        if (!(args.number("budget-ms", 0) > 0)) {
            throw UsageError("--budget-ms must be positive");
        }
    }
    // Read before the sweep: a bad sensitivity file fails at once.
    const auto rules = alphaRules(args);
    auto sweep = sweepCheckpoint(checkpoint, sweepOptions, stderrProgress("sweep"));
    std::vector<double> alphas;
    try {
        alphas = resolveAlphas(sweep, rules);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    const BudgetAllocator allocator(std::move(sweep), std::move(alphas), kind);

    std::uint64_t budget = 0;
    std::string objective;
    if (const auto text = args.value("budget")) {
        budget = budgetBytes(*text, base.sizes.streamedAfter);
        objective = "streamed_bytes";
    } else if (const auto file = args.value("budget-file")) {
        budget = budgetBytes(*file, base.sizes.bytesAfter);
        objective = "checkpoint_bytes";
    } else {
        budget = streamedBudgetForMs(allocator.sweep(), timing, args.number("budget-ms", 0));
        objective = "drafter_ms";
    }
    const auto allocation = allocator.allocate(budget);
    if (!allocation) {
        const auto& cheapest = allocator.frontier().front();
        throw UsageError("the budget " + formatBytes(budget) + " is below the cheapest legal plan (" +
                         formatBytes(kind == BudgetKind::Streamed ? cheapest.streamedBytes : cheapest.bytes) +
                         ")");
    }

    BudgetOutcome out;
    out.plan = makeAllocationPlan(checkpoint.config(), infos, allocator, *allocation);
    out.options = allocator.planOptions(*allocation);
    PlanBudget record;
    record.objective = objective;
    record.budgetBytes = budget;
    if (args.value("budget-ms")) {
        record.budgetMs = args.number("budget-ms", 0);
    }
    record.weightedError = allocation->point.weightedError;
    record.alpha = rules;
    if (const auto list = args.value("candidates")) {
        for (const auto* scheme : sweepOptions.candidates) {
            record.candidates.emplace_back(scheme->name);
        }
    }
    for (const auto* method : sweepOptions.roundings) {
        record.roundingCandidates.emplace_back(method->name);
    }
    out.options.budget = std::move(record);
    const auto& s = allocator.sweep();
    auto predictedMs = [&](std::uint64_t streamed) -> std::optional<double> {
        SizeEstimate sizes;
        sizes.streamedBefore = s.streamedBefore;
        sizes.streamedAfter = streamed;
        const auto p = predictTiming(sizes, timing);
        return p.available ? std::optional<double>(p.drafterMsAfter) : std::nullopt;
    };

    auto& j = out.json;
    j["objective"] = objective;
    j["budget_kind"] = budgetKindName(kind);
    j["budget_bytes"] = budget;
    if (args.value("budget-ms")) {
        j["budget_ms"] = args.number("budget-ms", 0);
    }
    j["streamed_bytes"] = allocation->point.streamedBytes;
    j["bytes"] = allocation->point.bytes;
    j["weighted_error"] = allocation->point.weightedError;
    if (const auto ms = predictedMs(allocation->point.streamedBytes)) {
        j["predicted_drafter_ms"] = *ms;
    }
    j["units"] = nlohmann::ordered_json::array();
    for (const auto& choice : allocation->units) {
        const auto& unit = s.units[choice.unit];
        j["units"].push_back({{"name", unit.name},
                              {"modules", unit.modules},
                              {"scheme", choice.scheme->name},
                              {"rounding", choice.rounding->name},
                              {"alpha", choice.alpha},
                              {"rel_err", choice.relErr},
                              {"fixed", unit.fixed()},
                              {"fixed_reason", unit.fixedReason}});
    }
    j["rules"] = allocation->rules;
    j["rounding_rules"] = allocation->roundingRules;
    j["frontier"] = nlohmann::ordered_json::array();
    for (const auto& p : allocator.frontier()) {
        j["frontier"].push_back(pointJson(p));
    }
    j["frontier_seconds"] = allocator.buildSeconds();
    j["sweep"] = sweepSummaryJson(s);

    std::ostringstream text;
    const auto budgetText =
        objective == "drafter_ms"
            ? formatFixed(args.number("budget-ms", 0), 3) + " ms (" + formatBytes(budget) + " streamed)"
            : formatBytes(budget) + (kind == BudgetKind::Streamed ? " streamed per draft step" : " on disk");
    text << "\nallocation (exact, " << allocator.frontier().size() << " frontier points in "
         << formatFixed(allocator.buildSeconds() * 1e3, 1) << " ms; sweep " << formatFixed(s.seconds, 1)
         << " s):\n"
         << "  budget:   " << budgetText << "\n"
         << "  streamed: " << formatBytes(allocation->point.streamedBytes) << " per draft step, checkpoint "
         << formatBytes(allocation->point.bytes) << "\n"
         << "  E = sum(alpha * rel_err^2) = " << scientific(allocation->point.weightedError) << "\n";
    if (const auto ms = predictedMs(allocation->point.streamedBytes)) {
        text << "  predicted drafter time: " << formatFixed(*ms, 3) << " ms\n";
    }
    Table units({"unit", "scheme", "rounding", "alpha", "rel_err", "note"});
    for (const auto& choice : allocation->units) {
        const auto& unit = s.units[choice.unit];
        const auto note = unit.fixed() ? unit.fixedReason : unit.roundingPinnedBy;
        units.add({unit.name, std::string(choice.scheme->name),
                   choice.scheme->quantizes() ? std::string(choice.rounding->name) : "-",
                   formatFixed(choice.alpha, 2), formatFixed(choice.relErr, 5), note});
    }
    units.print(text);

    if (args.flag("compare-preset")) {
        std::string why;
        const auto preset = allocator.evaluate(base, &why);
        if (!preset) {
            throw UsageError("--compare-preset: the plan without a budget cannot be compared: " + why);
        }
        const auto presetCost = kind == BudgetKind::Streamed ? preset->streamedBytes : preset->bytes;
        const auto sameBudget = allocator.bestWithin(presetCost);
        const auto sameError = allocator.cheapestWithin(preset->weightedError);
        nlohmann::ordered_json c;
        c["preset"] = base.preset;
        c["preset_point"] = pointJson(*preset);
        c["allocator_same_budget"] =
            sameBudget ? pointJson(allocator.frontier()[*sameBudget]) : nlohmann::ordered_json();
        c["allocator_same_error"] =
            sameError ? pointJson(allocator.frontier()[*sameError]) : nlohmann::ordered_json();
        const bool errorOk =
            sameBudget && allocator.frontier()[*sameBudget].weightedError <= preset->weightedError;
        const auto costOf = [&](const FrontierPoint& p) {
            return kind == BudgetKind::Streamed ? p.streamedBytes : p.bytes;
        };
        const bool bytesOk = sameError && costOf(allocator.frontier()[*sameError]) <= presetCost;
        if (sameBudget && preset->weightedError > 0) {
            c["error_ratio_same_budget"] =
                allocator.frontier()[*sameBudget].weightedError / preset->weightedError;
        }
        c["error_no_larger"] = errorOk;
        c["bytes_no_more"] = bytesOk;
        j["preset_comparison"] = c;

        text << "\ncompared with the plan without a budget (preset " << base.preset << "):\n";
        Table t({"", "streamed", "checkpoint", "E"});
        auto row = [&](const std::string& label, const FrontierPoint& p) {
            t.add({label, formatBytes(p.streamedBytes), formatBytes(p.bytes), scientific(p.weightedError)});
        };
        row("preset " + base.preset, *preset);
        if (sameBudget) {
            row("allocator, same budget", allocator.frontier()[*sameBudget]);
        }
        if (sameError) {
            row("allocator, same E", allocator.frontier()[*sameError]);
        }
        t.print(text);
        if (sameBudget && preset->weightedError > 0) {
            text << "  E at the preset's budget: "
                 << formatFixed(allocator.frontier()[*sameBudget].weightedError / preset->weightedError, 3)
                 << "x the preset's\n";
        }
        text << "  E no larger at the preset's budget: " << (errorOk ? "yes" : "NO")
             << "; no more bytes for the preset's E: " << (bytesOk ? "yes" : "NO") << "\n";
    }
    out.text = text.str();
    return out;
}

} // namespace spark::cli
