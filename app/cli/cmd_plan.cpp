// `plan PATH [plan options] [--drafter-ms MS] [--bandwidth-gbps X | --device gb10|h200] [--cycle-ms MS]
// [--json]`: what would be quantized, why, what lint says, and what it saves. Headers only.
#include "args.h"
#include "budgetplan.h"
#include "command.h"
#include "core/io/checkpoint.h"
#include "core/plan/lintrules.h"
#include "core/plan/planfile.h"
#include "core/plan/preset.h"
#include "core/plan/quantplan.h"
#include "core/plan/timingprediction.h"
#include "format.h"
#include "planargs.h"

#include <algorithm>
#include <iostream>

namespace spark::cli {
namespace {

TimingInputs timingInputsFrom(const Args& args)
{
    TimingInputs inputs;
    auto positive = [&](const std::string& name) -> std::optional<double> {
        if (!args.value(name)) {
            return std::nullopt;
        }
        const double v = args.number(name, 0);
        if (v <= 0) {
            throw UsageError("--" + name + " must be positive");
        }
        return v;
    };
    inputs.drafterMs = positive("drafter-ms");
    inputs.cycleMs = positive("cycle-ms");
    inputs.bandwidthGBps = positive("bandwidth-gbps");
    if (const auto device = args.value("device")) {
        if (inputs.bandwidthGBps) {
            throw UsageError("--bandwidth-gbps and --device exclude each other");
        }
        const auto* preset = findDevicePreset(*device);
        if (!preset) {
            throw UsageError("--device must be gb10 or h200");
        }
        inputs.bandwidthGBps = preset->bandwidthGBps;
    }
    return inputs;
}

std::string shapeOf(const PlannedModule& m)
{
    return m.outFeatures ? "[" + std::to_string(m.outFeatures) + ", " + std::to_string(m.inFeatures) + "]"
                         : "";
}

nlohmann::ordered_json toJson(const QuantPlan& plan, const TimingPrediction& prediction,
                              const std::string& path)
{
    nlohmann::ordered_json out;
    out["path"] = path;
    out["architecture"] = plan.architecture.id;
    out["architecture_name"] = plan.architecture.displayName;
    out["preset"] = plan.preset;
    out["preset_requested"] = plan.presetRequested;
    out["scheme"] = {{"default", plan.defaultScheme->name},
                     {"bits", plan.defaultScheme->bits},
                     {"group_size", plan.defaultScheme->groupSize},
                     {"tp", plan.tpDegree}};
    out["rounding"] = plan.defaultRounding->name;
    out["target_layers"] = plan.targetLayers;
    out["target_layers_known"] = plan.targetLayersKnown;
    out["bytes_before"] = plan.sizes.bytesBefore;
    out["bytes_after"] = plan.sizes.bytesAfter;
    out["resident_saved"] = plan.sizes.residentSaved();
    out["streamed_before"] = plan.sizes.streamedBefore;
    out["streamed_after"] = plan.sizes.streamedAfter;
    out["quantized_modules"] = plan.sizes.quantizedModules;
    out["modules"] = nlohmann::ordered_json::array();
    for (const auto& m : plan.modules) {
        out["modules"].push_back({{"name", m.name},
                                  {"weight", m.weightTensor},
                                  {"vllm_name", m.vllmName},
                                  {"vllm_class", m.vllmClass},
                                  {"fused_group", m.fusedGroup},
                                  {"role", roleName(m.role)},
                                  {"decision", decisionName(m.decision)},
                                  {"scheme", m.scheme->name},
                                  {"rounding", m.rounding->name},
                                  {"reason", m.reason},
                                  {"out_features", m.outFeatures},
                                  {"in_features", m.inFeatures},
                                  {"bytes_before", m.bytes},
                                  {"bytes_after", m.bytesAfter}});
    }
    out["schemes"] = nlohmann::ordered_json::object();
    for (const auto& [name, totals] : plan.sizes.byScheme) {
        out["schemes"][name] = {{"bytes_before", totals.bytesBefore},
                                {"bytes_after", totals.bytesAfter},
                                {"modules", totals.modules}};
    }
    out["config_groups"] = nlohmann::ordered_json::array();
    for (const auto& g : plan.groups) {
        out["config_groups"].push_back({{"scheme", g.scheme->name},
                                        {"rounding", g.rounding->name},
                                        {"observer", g.rounding->observer},
                                        {"format", g.scheme->format},
                                        {"targets", g.targets}});
    }
    out["lint"] = nlohmann::ordered_json::array();
    for (const auto& f : plan.lint) {
        out["lint"].push_back({{"id", f.id},
                               {"severity", severityName(f.severity)},
                               {"modules", f.modules},
                               {"message", f.message},
                               {"citation", f.citation},
                               {"rule", lintRuleDescription(f.id)}});
    }
    out["entries"] = nlohmann::ordered_json::array();
    for (const auto& e : plan.entries) {
        nlohmann::ordered_json matches = nlohmann::ordered_json::array();
        for (const auto& m : e.matches) {
            matches.push_back({{"vllm_name", m.vllmName}, {"module", m.module}});
        }
        out["entries"].push_back({{"entry", e.entry},
                                  {"kind", entryKindName(e.kind)},
                                  {"source", e.source},
                                  {"scheme", e.scheme},
                                  {"valid", e.valid},
                                  {"error", e.error},
                                  {"matches", matches},
                                  {"warnings", e.warnings}});
    }
    if (prediction.available) {
        out["prediction"] = {{"basis", prediction.basis},
                             {"drafter_ms_before", prediction.drafterMsBefore},
                             {"drafter_ms_after", prediction.drafterMsAfter},
                             {"saving_ms", prediction.savingMs},
                             {"speedup", prediction.speedup ? nlohmann::ordered_json(*prediction.speedup)
                                                            : nlohmann::ordered_json(nullptr)},
                             {"assumption", prediction.assumption}};
    } else {
        out["prediction"] = nullptr;
    }
    out["ignore"] = plan.ignoreEntries();
    out["targets"] = plan.groups.empty() ? std::vector<std::string>{"Linear"} : plan.groups.front().targets;
    out["errors"] = plan.errors;
    return out;
}

void printText(const QuantPlan& plan, const TimingPrediction& prediction, const std::string& path)
{
    const auto* preset = findPreset(plan.preset);
    std::cout << "checkpoint:    " << path << "\n"
              << "architecture:  " << plan.architecture.displayName
              << (plan.architecture.configArchitecture.empty()
                      ? ""
                      : " (" + plan.architecture.configArchitecture + ")")
              << "\n"
              << "preset:        "
              << (plan.presetRequested == plan.preset ? "" : plan.presetRequested + " -> ") << plan.preset
              << "\n";
    if (preset) {
        std::cout << "               " << preset->description << "\n";
    }
    std::cout << "scheme:        " << plan.schemeSummary()
              << (plan.tpDegree > 1 ? ", tp " + std::to_string(plan.tpDegree) : "") << "\n";
    if (const auto used = plan.roundingsUsed();
        !used.empty() && (used.size() > 1 || used.front() != &rtnRounding())) {
        std::cout << "rounding:      ";
        for (std::size_t i = 0; i < used.size(); ++i) {
            std::cout << (i ? " + " : "") << used[i]->name;
        }
        std::cout << "\n";
    }
    std::cout << "target layers: " << plan.targetLayers
              << (plan.targetLayersKnown ? "" : " (unknown: pass --target-layers N)") << "\n\n";

    Table modules({"module", "role", "shape", "vllm name", "scheme", "reason"});
    for (const auto& m : plan.modules) {
        modules.add({m.name, std::string(roleName(m.role)), shapeOf(m), m.vllmName,
                     m.isLinear() || m.decision == PlanDecision::Quantize
                         ? std::string(m.scheme->name) +
                               (m.rounding == &rtnRounding() ? "" : " " + std::string(m.rounding->name))
                         : "-",
                     m.reason});
    }
    modules.print(std::cout);

    std::cout << "\nentries:\n";
    Table entries({"kind", "entry", "source", "matches", "notes"});
    for (const auto& e : plan.entries) {
        std::string notes = e.valid ? "" : e.error;
        for (const auto& w : e.warnings) {
            notes += (notes.empty() ? "" : "; ") + w;
        }
        entries.add(
            {std::string(entryKindName(e.kind)), e.entry, e.source, std::to_string(e.matches.size()), notes});
    }
    entries.print(std::cout);

    std::cout << "\nlint:\n";
    std::vector<std::string> rulesSeen;
    for (const auto& f : plan.lint) {
        if (std::find(rulesSeen.begin(), rulesSeen.end(), f.id) == rulesSeen.end()) {
            rulesSeen.push_back(f.id);
        }
        std::cout << "  " << severityName(f.severity) << " [" << f.id << "] " << f.message;
        if (!f.citation.empty()) {
            std::cout << " (" << f.citation << ")";
        }
        if (!f.modules.empty()) {
            std::cout << "\n      modules: ";
            for (std::size_t i = 0; i < f.modules.size(); ++i) {
                std::cout << (i ? ", " : "") << f.modules[i];
            }
        }
        std::cout << "\n";
    }
    if (!rulesSeen.empty()) {
        std::cout << "\nrules:\n";
        for (const auto& id : rulesSeen) {
            std::cout << "  [" << id << "] " << lintRuleDescription(id) << "\n";
        }
    }

    const auto& s = plan.sizes;
    std::cout << "\nsizes:\n"
              << "  checkpoint:     " << formatBytes(s.bytesBefore) << " -> " << formatBytes(s.bytesAfter)
              << " (" << s.quantizedModules << " modules quantized)\n"
              << "  memory handed back: " << formatBytes(s.residentSaved()) << "\n"
              << "  streamed per draft step: " << formatBytes(s.streamedBefore) << " -> "
              << formatBytes(s.streamedAfter) << " (gathers excluded)\n";
    for (const auto& [name, totals] : s.byScheme) {
        std::cout << "  " << name << ": " << totals.modules << " Linear modules, "
                  << formatBytes(totals.bytesBefore) << " -> " << formatBytes(totals.bytesAfter) << "\n";
    }
    std::cout << "\nprediction:\n";
    if (prediction.available) {
        std::cout << "  drafter: " << formatFixed(prediction.drafterMsBefore, 2) << " ms -> "
                  << formatFixed(prediction.drafterMsAfter, 2) << " ms (saves "
                  << formatFixed(prediction.savingMs, 2) << " ms; " << prediction.basis << ")\n";
        if (prediction.speedup) {
            std::cout << "  decode speedup: x" << formatFixed(*prediction.speedup, 3) << " (+"
                      << formatFixed((*prediction.speedup - 1) * 100, 1) << "%)\n";
        }
    } else {
        std::cout << "  give --drafter-ms (measured) or --bandwidth-gbps / --device for a drafter time\n";
    }
    std::cout << "  assumption: " << prediction.assumption << "\n";

    std::cout << "\nquantization_config:\n";
    for (std::size_t i = 0; i < plan.groups.size(); ++i) {
        const auto* rounding = plan.groups[i].rounding;
        std::cout << "  group_" << i << " (" << plan.groups[i].scheme->name << ", "
                  << plan.groups[i].scheme->format
                  << (rounding == &rtnRounding() ? "" : ", " + std::string(rounding->name) + " rounding")
                  << "): targets " << nlohmann::json(plan.groups[i].targets).dump() << "\n";
    }
    std::cout << "  ignore:\n";
    for (const auto& e : plan.ignoreEntries()) {
        std::cout << "    " << nlohmann::json(e).dump() << "\n";
    }
}

} // namespace

OptionTable planOptions()
{
    return joinTables(
        {planOptionTable(),
         {
             {"save-plan", "FILE", "",
              "write the plan's options (with a budget: the allocation's rules) to FILE"},
             {"drafter-ms", "MS", "",
              "the measured drafter time per step (BF16): predicts the drafter time after quantization"},
             {"bandwidth-gbps", "X", "",
              "without a measured drafter time, predict it from the streamed bytes at X GB/s (excludes "
              "--device)"},
             {"device", "gb10|h200", "",
              "the bandwidth of this device (excludes --bandwidth-gbps); with a budget, only schemes with a "
              "kernel there"},
             {"cycle-ms", "MS", "",
              "the measured verify cycle time (BF16 draft): predicts the decode speedup"},
             kJsonOption,
         },
         budgetOptionTable()});
}

int runPlan(const std::vector<std::string>& argv)
{
    const Args args(argv, planOptions());
    args.expectPositional(1);
    const auto options = planOptionsFrom(args);
    const auto timing = timingInputsFrom(args);
    const auto checkpoint = Checkpoint::open(args.positional()[0]);
    const auto infos = checkpoint.tensorInfos();
    auto plan = makePlan(checkpoint.config(), infos, options);
    // With a budget the allocator picks a scheme per unit and its plan replaces the seed recipe's.
    std::optional<BudgetOutcome> budget;
    if (budgetRequested(args) && plan.errors.empty()) {
        budget = planWithBudget(checkpoint, infos, options, plan, timing, args);
        plan = budget->plan;
    }
    // With a budget the file holds the allocation's rules (and the budget as a record), so that
    // `--plan-file` gives this plan without sweeping again.
    savePlanIfAsked(args, budget ? budget->options : options);
    const auto prediction = predictTiming(plan.sizes, timing);
    const auto path = checkpoint.folder().string();
    if (args.flag("json")) {
        auto out = toJson(plan, prediction, path);
        if (budget) {
            out["allocation"] = budget->json;
        } else if (options.budget) {
            out["budget_record"] = planFileJson(options)["budget"];
        }
        std::cout << out.dump(2) << "\n";
    } else {
        printText(plan, prediction, path);
        if (budget) {
            std::cout << budget->text;
        } else if (options.budget) {
            std::cout << "\nbudget (recorded in the plan file; its scheme rules are the allocation): "
                      << options.budget->objective << " "
                      << (options.budget->budgetMs ? formatFixed(*options.budget->budgetMs, 3) + " ms"
                                                   : formatBytes(options.budget->budgetBytes))
                      << ", E = " << options.budget->weightedError << "\n";
        }
    }
    for (const auto& e : plan.errors) {
        std::cerr << "sparkulator-cli plan: error: " << e << "\n";
    }
    return plan.errors.empty() ? kExitOk : kExitError;
}

} // namespace spark::cli
