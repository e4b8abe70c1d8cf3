// `plan --budget ... --hidden-states CAPTURE`: the allocator minimises what each unit's choice costs the
// draft's expected acceptance against the target's tokens (or, asked, its KL to the BF16 draft), measured on
// one half of the capture's samples; the chosen plan, the recipe and the
// plan of the recipe's loss at the fewest bytes are then measured whole on the other half, beside the floor
// that kernel numerics alone put under those numbers.
#include "acceptancebudget.h"

#include "captureargs.h"
#include "core/forward/expectedacceptance.h"
#include "format.h"
#include "progressbar.h"

#include <iostream>
#include <sstream>

namespace spark::cli {
namespace {

std::string signedFixed(double value, int digits)
{
    return (value >= 0 ? "+" : "") + formatFixed(value, digits);
}

std::string interval(double mean, double low, double high)
{
    return signedFixed(mean, 4) + " [" + signedFixed(low, 4) + ", " + signedFixed(high, 4) + "]";
}

nlohmann::ordered_json effectJson(const AcceptanceEffect& e)
{
    return {{"kl", e.kl},
            {"objective", e.objective},
            {"objective_ci", {e.objectiveLow, e.objectiveHigh}},
            {"tau_delta", e.tauDelta},
            {"tau_delta_ci", {e.tauDeltaLow, e.tauDeltaHigh}},
            {"flip_rate_first", e.flipFirst},
            {"anchors", e.anchors}};
}

std::string lossDescription(AcceptanceLoss loss)
{
    return loss == AcceptanceLoss::Kl
               ? "sum over positions of the mean KL(BF16 || plan) per proposal"
               : "loss of the accepted length expected of the draft sampled at t = " +
                     formatFixed(kObjectiveTemperature, 2) +
                     " against the target's tokens, at the upper end of its 95 % interval";
}

nlohmann::ordered_json planJson(const PlanAcceptance& p)
{
    return {{"streamed_bytes", p.streamedBytes},   {"bytes", p.bytes},
            {"confirm", effectJson(p.confirm)},    {"report", effectJson(p.report)},
            {"tau_base", p.reportSummary.tauBase}, {"tau", p.reportSummary.tauQuant}};
}

nlohmann::ordered_json differenceJson(const PairedDifference& d)
{
    return {{"mean", d.mean}, {"ci", {d.low, d.high}}, {"anchors", d.anchors}};
}

} // namespace

OptionTable acceptanceBudgetOptionTable()
{
    return joinTables(
        {{
             {"hidden-states", "CAPTURE", "",
              "with a budget: choose by the acceptance measured on this capture of target hidden states "
              "instead "
              "of weight error"},
             {"target-model", "PATH", "",
              "the target model's checkpoint, for drafts that read its embeddings or head (with "
              "--hidden-states)"},
             {"k", "K", "3",
              "proposals per verify cycle the acceptance is measured at (with --hidden-states)"},
             {"screen-anchors", "N", "64",
              "anchors every candidate of every unit is screened on (with --hidden-states)"},
             {"confirm-anchors", "N", "256",
              "anchors the screen's survivors and the plan are measured on (with --hidden-states)"},
             {"report-anchors", "N|all", "all",
              "held-out anchors the chosen plan and the recipe are reported on (with --hidden-states)"},
             {"seed", "S", "0", "seed of the anchor draw (with --hidden-states)"},
             {"loss", "expected-acceptance|kl", "expected-acceptance",
              "what the allocator minimises: the loss of expected acceptance against the target's tokens, or "
              "the KL of the BF16 draft to the plan's, which is blind to the target (with --hidden-states)"},
             {"best-speed", "", "",
              "of the frontier's plans within the budget, take the best predicted speed (needs "
              "--hidden-states, "
              "--drafter-ms and --cycle-ms)"},
             {"speed-points", "N", "12", "frontier plans measured for --best-speed (with --best-speed)"},
         },
         captureReadOptionTable()});
}

std::optional<AcceptanceObjective> acceptanceObjectiveFrom(const Args& args,
                                                           const std::filesystem::path& draft)
{
    const auto capture = args.value("hidden-states");
    if (!capture) {
        for (const auto& option : acceptanceBudgetOptionTable()) {
            if (args.value(std::string(option.name))) {
                throw UsageError("--" + std::string(option.name) +
                                 " needs --hidden-states CAPTURE (acceptance as the objective)");
            }
        }
        return std::nullopt;
    }
    AcceptanceObjectiveInputs in;
    in.draft = draft;
    in.capture = *capture;
    in.captureOptions = captureReadOptionsFrom(args);
    in.target = args.value("target-model", "");
    in.k = static_cast<int>(args.integer("k", 3, 1, 64));
    in.anchors.screen = args.integer("screen-anchors", 64, 1, 1'000'000'000);
    in.anchors.confirm = args.integer("confirm-anchors", 256, 1, 1'000'000'000);
    const auto report = args.value("report-anchors", "all");
    in.anchors.report = report == "all" ? 0 : args.integer("report-anchors", 0, 1, 1'000'000'000);
    in.anchors.seed = static_cast<std::uint64_t>(args.integer("seed", 0, 0, (1ll << 62)));
    try {
        in.loss = parseAcceptanceLoss(args.value("loss", "expected-acceptance"));
    } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--loss: ") + e.what());
    }
    in.threads = static_cast<unsigned>(args.integer("threads", 0, 0, 4096));
    try {
        AcceptanceObjective objective(std::move(in));
        for (const auto& w : objective.captureWarnings()) {
            std::cerr << findingLine(w) << "\n";
        }
        return objective;
    } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--hidden-states: ") + e.what());
    }
}

AcceptanceBudgetReport reportAcceptanceBudget(const AcceptanceObjective& objective, const SweepResult& sweep,
                                              const UnitEffects& effects, const BudgetAllocator& allocator,
                                              const Allocation& allocation, const QuantPlan& plan,
                                              const QuantPlan& recipe, const QuantPlan* sameLoss)
{
    const auto measured = objective.measurePlan(plan, stderrProgress("plan acceptance"));
    const auto recipeMeasured = objective.measurePlan(recipe, stderrProgress("recipe acceptance"));
    const auto versusRecipe = pairedDifference(measured, recipeMeasured);
    const auto floor = objective.measureNumericsFloor(stderrProgress("numerics floor"));
    const auto& split = objective.anchors();

    AcceptanceBudgetReport out;
    auto& j = out.json;
    j["capture"] = objective.inputs().capture.string();
    j["k"] = objective.inputs().k;
    j["loss"] = acceptanceLossName(effects.loss);
    j["loss_description"] = lossDescription(effects.loss);
    j["objective_temperature"] = kObjectiveTemperature;
    j["anchors"] = {{"screen", split.screen.size()},
                    {"confirm", split.confirm.size()},
                    {"report", split.report.size()},
                    {"selection_pool", split.selectionPool}};
    j["candidates_screened"] = effects.measuredOnScreen;
    j["candidates_confirmed"] = effects.measuredOnConfirm;
    j["scoring_seconds"] = effects.seconds;
    j["units"] = nlohmann::ordered_json::array();
    Table units({"unit", "scheme", "rounding", "KL alone", "objective alone", "dtau alone", "rel_err"});
    for (const auto& choice : allocation.units) {
        const auto& unit = allocator.sweep().units[choice.unit];
        // The chosen candidate's effect, found again among the unpruned candidates the effects follow.
        const auto& candidates = sweep.units[choice.unit].candidates;
        const auto* c = sweep.units[choice.unit].candidate(choice.scheme, choice.rounding);
        const auto& effect = effects.perUnit[choice.unit][static_cast<std::size_t>(c - candidates.data())];
        j["units"].push_back({{"name", unit.name},
                              {"scheme", choice.scheme->name},
                              {"rounding", choice.rounding->name},
                              {"alone", effectJson(effect)}});
        units.add({unit.name, std::string(choice.scheme->name),
                   choice.scheme->quantizes() ? std::string(choice.rounding->name) : "-",
                   formatFixed(effect.kl, 5), signedFixed(effect.objective, 4),
                   effect.anchors ? signedFixed(effect.tauDelta, 4) : "0", formatFixed(choice.relErr, 5)});
    }
    j["plan"] = planJson(measured);
    j["plan"]["loss_sum_of_units"] = allocation.point.loss;
    j["recipe"] = planJson(recipeMeasured);
    j["plan_minus_recipe"] = differenceJson(versusRecipe);
    j["numerics_floor"] = effectJson(floor);

    std::ostringstream text;
    text << "\nacceptance objective (k = " << objective.inputs().k << ", capture "
         << objective.inputs().capture.string() << "):\n"
         << "  loss: " << lossDescription(effects.loss) << "\n"
         << "  chosen on even samples: " << effects.measuredOnScreen << " candidate runs on "
         << split.screen.size() << " anchors, " << effects.measuredOnConfirm << " survivors on "
         << split.confirm.size() << " anchors (" << formatFixed(effects.seconds, 1) << " s)\n"
         << "  reported on odd samples: " << split.report.size() << " anchors\n";
    units.print(text);
    const double whole = effects.lossOf(measured.confirm);
    text << "  loss of the plan: " << formatFixed(allocation.point.loss, 5) << " summed over its units, "
         << formatFixed(whole, 5) << " measured whole (same anchors)\n";
    text << "  held out: dtau plan "
         << interval(measured.report.tauDelta, measured.report.tauDeltaLow, measured.report.tauDeltaHigh)
         << ", recipe "
         << interval(recipeMeasured.report.tauDelta, recipeMeasured.report.tauDeltaLow,
                     recipeMeasured.report.tauDeltaHigh)
         << "\n  plan - recipe: " << interval(versusRecipe.mean, versusRecipe.low, versusRecipe.high) << " ("
         << formatBytes(measured.streamedBytes) << " against " << formatBytes(recipeMeasured.streamedBytes)
         << " streamed)\n"
         << "  numerics floor (the BF16 draft with BF16 activations against FP32): dtau "
         << interval(floor.tauDelta, floor.tauDeltaLow, floor.tauDeltaHigh) << ", first proposals changed "
         << formatFixed(100 * floor.flipFirst, 2) << " %\n";
    if (sameLoss) {
        const auto m = objective.measurePlan(*sameLoss, stderrProgress("same-loss acceptance"));
        const auto d = pairedDifference(m, recipeMeasured);
        j["same_loss"] = planJson(m);
        j["same_loss_minus_recipe"] = differenceJson(d);
        text << "  the recipe's loss at the fewest bytes: " << formatBytes(m.streamedBytes) << " streamed ("
             << formatFixed(100.0 * (1.0 - static_cast<double>(m.streamedBytes) /
                                               static_cast<double>(recipeMeasured.streamedBytes)),
                            1)
             << " % fewer), held out dtau "
             << interval(m.report.tauDelta, m.report.tauDeltaLow, m.report.tauDeltaHigh) << ", minus recipe "
             << interval(d.mean, d.low, d.high) << "\n";
    }
    out.text = text.str();
    return out;
}

} // namespace spark::cli
