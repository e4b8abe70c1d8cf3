// `plan --budget ...`: the sensitivity sweep, the exact allocator and its plan, with the seed recipe (the
// plan without a budget) side by side under --compare-preset.
#include "budgetplan.h"

#include "acceptancebudget.h"
#include "core/allocate/speedchoice.h"
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

/// @p lossKey: "weighted_error" or "acceptance_loss", what the allocator's loss is.
nlohmann::ordered_json pointJson(const FrontierPoint& p, const std::string& lossKey)
{
    return {{"streamed_bytes", p.streamedBytes}, {"bytes", p.bytes}, {lossKey, p.loss}};
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

OptionTable budgetOptionTable()
{
    return joinTables(
        {{
             {"budget", "SIZE|preset", "",
              "choose a scheme per unit for the least weighted error within SIZE streamed per draft step "
              "(preset: what the plan without a budget streams); excludes --budget-file and --budget-ms"},
             {"budget-file", "SIZE|preset", "",
              "the same within SIZE of checkpoint on disk; excludes --budget and --budget-ms"},
             {"budget-ms", "MS", "",
              "the same within a predicted drafter time (needs --drafter-ms or --bandwidth-gbps / --device); "
              "excludes --budget and --budget-file"},
             {"candidates", "S,S,...", "every product scheme",
              "the schemes the allocator may choose, BF16 always (with a budget)"},
             {"rounding-candidates", "M,M,...", "rtn (with --hidden-states: rtn,mse,range)",
              "the rounding methods the allocator may choose per unit besides rtn (rtn, mse, range, codes; "
              "with a "
              "budget)"},
             {"alpha", "ENTRY=X", "1",
              "weight X of the units ENTRY matches in the weighted error (repeatable, the last match wins; "
              "with a budget, not with --hidden-states)"},
             {"alpha-from", "FILE", "",
              "weights measured by acceptance --per-unit --sensitivity-out FILE, before the --alpha rules "
              "(with a budget, not with --hidden-states)"},
             kThreadsOption,
             {"compare-preset", "", "",
              "compare the allocation with the plan without a budget, at its bytes and at its error (with a "
              "budget)"},
         },
         acceptanceBudgetOptionTable()});
}

bool budgetRequested(const Args& args)
{
    const int given = (args.value("budget") ? 1 : 0) + (args.value("budget-file") ? 1 : 0) +
                      (args.value("budget-ms") ? 1 : 0);
    if (given > 1) {
        throw UsageError("--budget, --budget-file and --budget-ms exclude each other");
    }
    if (given == 0) {
        for (const auto& name :
             {"candidates", "rounding-candidates", "alpha", "alpha-from", "hidden-states"}) {
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
    // Read before the sweep: a bad sensitivity file or capture fails at once.
    const auto rules = alphaRules(args);
    if (args.value("speed-points") && !args.flag("best-speed")) {
        throw UsageError("--speed-points needs --best-speed");
    }
    if (args.flag("best-speed") && (!args.value("hidden-states") || !timing.drafterMs || !timing.cycleMs)) {
        throw UsageError("--best-speed needs --hidden-states (each plan's tau is measured), --drafter-ms and "
                         "--cycle-ms (the speed model's BF16 times)");
    }
    if (args.value("hidden-states") && !rules.empty()) {
        throw UsageError("--alpha and --alpha-from weight the weight error; with --hidden-states the "
                         "objective is the measured acceptance");
    }
    const auto acceptanceObjective = acceptanceObjectiveFrom(args, checkpoint.folder());
    const bool byAcceptance = acceptanceObjective.has_value();
    if (acceptanceObjective && !args.value("rounding-candidates")) {
        // Measured on acceptance, a searching rounding can only be chosen where it helps.
        sweepOptions.roundings = parseRoundingCandidates("rtn,mse,range");
    }
    // The head's effect on the logits is measured there, so it may be chosen too.
    sweepOptions.includeLmHead = byAcceptance;
    auto sweep = sweepCheckpoint(checkpoint, sweepOptions, stderrProgress("sweep"));
    std::optional<UnitEffects> effects;
    std::optional<BudgetAllocator> allocatorStorage;
    if (acceptanceObjective) {
        effects = acceptanceObjective->measureUnits(sweep, stderrProgress("unit acceptance"));
        auto in = acceptanceAllocatorInput(sweep, *effects);
        allocatorStorage.emplace(std::move(in.sweep), std::move(in.losses), kind);
    } else {
        std::vector<double> alphas;
        try {
            alphas = resolveAlphas(sweep, rules);
        } catch (const std::invalid_argument& e) {
            throw UsageError(e.what());
        }
        allocatorStorage.emplace(std::move(sweep), std::move(alphas), kind);
    }
    const BudgetAllocator& allocator = *allocatorStorage;

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
    auto allocation = allocator.allocate(budget);
    if (!allocation) {
        const auto& cheapest = allocator.frontier().front();
        throw UsageError("the budget " + formatBytes(budget) + " is below the cheapest legal plan (" +
                         formatBytes(kind == BudgetKind::Streamed ? cheapest.streamedBytes : cheapest.bytes) +
                         ")");
    }
    std::vector<SpeedPoint> speedPoints;
    if (args.flag("best-speed")) {
        AcceptanceSpeedInputs speedTiming;
        speedTiming.drafterMs = *timing.drafterMs;
        speedTiming.cycleMs = *timing.cycleMs;
        speedPoints = speedAlongFrontier(
            *acceptanceObjective, allocator, checkpoint.config(), infos, budget, speedTiming,
            static_cast<int>(args.integer("speed-points", 12, 1, 1000)), stderrProgress("speed"));
        allocation = allocator.atFrontier(speedPoints.front().index, budget);
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
    record.weightedError = allocation->point.loss;
    if (acceptanceObjective) {
        record.acceptanceLoss = allocation->point.loss;
        record.acceptanceLossKind = acceptanceLossName(effects->loss);
        record.capture = acceptanceObjective->inputs().capture.string();
        record.weightedError = 0;
        for (const auto& choice : allocation->units) {
            record.weightedError += choice.relErr * choice.relErr;
        }
    }
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

    const std::string lossKey = byAcceptance ? "acceptance_loss" : "weighted_error";
    const std::string lossLabel = byAcceptance ? "loss" : "E";
    auto& j = out.json;
    j["objective"] = objective;
    j["budget_kind"] = budgetKindName(kind);
    j["budget_bytes"] = budget;
    if (args.value("budget-ms")) {
        j["budget_ms"] = args.number("budget-ms", 0);
    }
    j["streamed_bytes"] = allocation->point.streamedBytes;
    j["bytes"] = allocation->point.bytes;
    j[lossKey] = allocation->point.loss;
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
        j["frontier"].push_back(pointJson(p, lossKey));
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
         << formatBytes(allocation->point.bytes) << "\n";
    if (byAcceptance) {
        text << "  loss = sum over units of what each choice alone costs ("
             << acceptanceLossName(effects->loss) << ") = " << scientific(allocation->point.loss) << "\n";
    } else {
        text << "  E = sum(alpha * rel_err^2) = " << scientific(allocation->point.loss) << "\n"
             << "  (weight error does not predict acceptance: --hidden-states CAPTURE chooses by the "
                "measured acceptance)\n";
    }
    if (const auto ms = predictedMs(allocation->point.streamedBytes)) {
        text << "  predicted drafter time: " << formatFixed(*ms, 3) << " ms\n";
    }
    if (!byAcceptance) { // the acceptance report lists the units with what each costs
        Table units({"unit", "scheme", "rounding", "alpha", "rel_err", "note"});
        for (const auto& choice : allocation->units) {
            const auto& unit = s.units[choice.unit];
            const auto note = unit.fixed() ? unit.fixedReason : unit.roundingPinnedBy;
            units.add({unit.name, std::string(choice.scheme->name),
                       choice.scheme->quantizes() ? std::string(choice.rounding->name) : "-",
                       formatFixed(choice.alpha, 2), formatFixed(choice.relErr, 5), note});
        }
        units.print(text);
    }

    std::optional<QuantPlan> sameLossPlan;
    if (args.flag("compare-preset")) {
        std::string why;
        const auto preset = allocator.evaluate(base, &why);
        if (!preset) {
            throw UsageError("--compare-preset: the plan without a budget cannot be compared: " + why);
        }
        const auto presetCost = kind == BudgetKind::Streamed ? preset->streamedBytes : preset->bytes;
        const auto sameBudget = allocator.bestWithin(presetCost);
        const auto sameError = allocator.cheapestWithin(preset->loss);
        nlohmann::ordered_json c;
        c["preset"] = base.preset;
        c["preset_point"] = pointJson(*preset, lossKey);
        c["allocator_same_budget"] =
            sameBudget ? pointJson(allocator.frontier()[*sameBudget], lossKey) : nlohmann::ordered_json();
        c["allocator_same_error"] =
            sameError ? pointJson(allocator.frontier()[*sameError], lossKey) : nlohmann::ordered_json();
        if (sameError) {
            // The rules that make that plan, so that it can be exported without sweeping again.
            const auto a = allocator.atFrontier(*sameError);
            c["allocator_same_error"]["rules"] = a.rules;
            c["allocator_same_error"]["rounding_rules"] = a.roundingRules;
            if (acceptanceObjective) {
                sameLossPlan = makeAllocationPlan(checkpoint.config(), infos, allocator, a);
            }
        }
        const bool errorOk = sameBudget && allocator.frontier()[*sameBudget].loss <= preset->loss;
        const auto costOf = [&](const FrontierPoint& p) {
            return kind == BudgetKind::Streamed ? p.streamedBytes : p.bytes;
        };
        const bool bytesOk = sameError && costOf(allocator.frontier()[*sameError]) <= presetCost;
        if (sameBudget && preset->loss > 0) {
            c["error_ratio_same_budget"] = allocator.frontier()[*sameBudget].loss / preset->loss;
        }
        c["error_no_larger"] = errorOk;
        c["bytes_no_more"] = bytesOk;
        j["preset_comparison"] = c;

        text << "\ncompared with the plan without a budget (preset " << base.preset << "):\n";
        Table t({"", "streamed", "checkpoint", lossLabel});
        auto row = [&](const std::string& label, const FrontierPoint& p) {
            t.add({label, formatBytes(p.streamedBytes), formatBytes(p.bytes), scientific(p.loss)});
        };
        row("preset " + base.preset, *preset);
        if (sameBudget) {
            row("allocator, same budget", allocator.frontier()[*sameBudget]);
        }
        if (sameError) {
            row("allocator, same " + lossLabel, allocator.frontier()[*sameError]);
        }
        t.print(text);
        if (sameBudget && preset->loss > 0) {
            text << "  " << lossLabel << " at the preset's budget: "
                 << formatFixed(allocator.frontier()[*sameBudget].loss / preset->loss, 3)
                 << "x the preset's\n";
        }
        text << "  " << lossLabel << " no larger at the preset's budget: " << (errorOk ? "yes" : "NO")
             << "; no more bytes for the preset's " << lossLabel << ": " << (bytesOk ? "yes" : "NO") << "\n";
    }
    if (!speedPoints.empty()) {
        auto& points = j["speed_choice"] = nlohmann::ordered_json::array();
        text
            << "\nbest predicted speed within the budget (tau on the selection anchors, the speed model with "
               "--drafter-ms "
            << formatFixed(*timing.drafterMs, 3) << " and --cycle-ms " << formatFixed(*timing.cycleMs, 3)
            << "):\n";
        Table t({"streamed", "tau BF16", "tau plan", "predicted change"});
        for (const auto& p : speedPoints) {
            points.push_back({{"frontier_index", p.index},
                              {"streamed_bytes", p.streamedBytes},
                              {"tau_base", p.tauBase},
                              {"tau", p.tau},
                              {"predicted_change", p.change}});
            t.add({formatBytes(p.streamedBytes), formatFixed(p.tauBase, 4), formatFixed(p.tau, 4),
                   (p.change >= 0 ? "+" : "") + formatFixed(100 * p.change, 2) + " %"});
        }
        t.print(text);
    }
    if (acceptanceObjective) {
        const auto report =
            reportAcceptanceBudget(*acceptanceObjective, sweep, *effects, allocator, *allocation, out.plan,
                                   base, sameLossPlan ? &*sameLossPlan : nullptr);
        j["acceptance"] = report.json;
        text << report.text;
    }
    out.text = text.str();
    return out;
}

} // namespace spark::cli
