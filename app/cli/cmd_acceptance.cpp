// `acceptance DRAFT --hidden-states FILE|DIR [--target-model PATH] [plan options | --quantized CKPT] [--k K]
// [--anchors N|all] [--seed S] [--replay] [--temperature T [--draft-sampling greedy|probabilistic]]
// [--numerics fp32|bf16 [--numerics-floor]] [--json] [--dump-logits
// OUT --max-anchors M]
// [--drafter-ms MS --cycle-ms MS [--saving-ms MS]] [--per-unit --sensitivity-out FILE]`.
#include "acceptancetext.h"
#include "args.h"
#include "captureargs.h"
#include "command.h"
#include "core/forward/acceptancejob.h"
#include "core/forward/acceptancerates.h"
#include "core/forward/acceptancespeed.h"
#include "core/forward/expectedacceptance.h"
#include "core/io/filewriter.h"
#include "numericsargs.h"
#include "planargs.h"
#include "progressbar.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

namespace spark::cli {
namespace {

/// The speed model's inputs from the command line; the arithmetic is core's (shared with the GUI).
std::optional<AcceptanceSpeed> speedFrom(const Args& args, const AcceptanceRun& run)
{
    if (!args.value("drafter-ms")) {
        if (args.value("cycle-ms") || args.value("saving-ms")) {
            throw UsageError("--cycle-ms and --saving-ms need --drafter-ms");
        }
        return std::nullopt;
    }
    if (!run.summary.paired) {
        throw UsageError("--drafter-ms needs a quantized draft to compare (plan options or --quantized)");
    }
    AcceptanceSpeedInputs inputs;
    inputs.drafterMs = args.number("drafter-ms", 0);
    inputs.cycleMs = args.number("cycle-ms", 0);
    if (args.value("saving-ms")) {
        inputs.savingMs = args.number("saving-ms", 0);
    } else if (run.streamedBefore == 0) {
        throw UsageError(
            "--saving-ms is required with --quantized (the plan's streamed bytes give it otherwise)");
    }
    inputs.streamedBefore = run.streamedBefore;
    inputs.streamedAfter = run.streamedAfter;
    try {
        return predictAcceptanceSpeed(run.summary, inputs);
    } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--drafter-ms/--cycle-ms/--saving-ms: ") + e.what());
    }
}

/// Every cycle of a replayed loop as [sample, anchor, accepted, [proposals]] (and [α_j] at a temperature):
/// what an independent decoding loop is compared with, cycle by cycle.
nlohmann::ordered_json replayCyclesJson(const std::vector<AnchorOutcome>& cycles)
{
    auto out = nlohmann::ordered_json::array();
    for (const auto& c : cycles) {
        out.push_back({c.anchor.sample, c.anchor.position, c.base.accepted, c.base.tokens});
        if (!c.base.acceptance.empty()) {
            out.back().push_back(c.base.acceptance);
        }
    }
    return out;
}

/// `--temperature T --draft-sampling M` into @p options.
void samplingFrom(const Args& args, AcceptanceOptions& options)
{
    options.temperature = args.number("temperature", 0);
    if (!(options.temperature >= 0) || options.temperature > 100) {
        throw UsageError("--temperature takes a number from 0 to 100");
    }
    const auto drafting = args.value("draft-sampling");
    if (drafting && options.temperature == 0) {
        throw UsageError("--draft-sampling needs --temperature T > 0 (at T = 0 the draft is greedy)");
    }
    try {
        options.drafting = parseDraftSampling(drafting.value_or("greedy"));
    } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--draft-sampling: ") + e.what());
    }
}

/// `--objective-temperature T[,T...]` into @p options.
void objectiveFrom(const Args& args, AcceptanceOptions& options)
{
    const auto list = args.value("objective-temperature");
    if (!list) {
        return;
    }
    if (options.temperature > 0) {
        throw UsageError("--objective-temperature is measured against the target's greedy tokens (T = 0)");
    }
    std::stringstream in(*list);
    std::string item;
    while (std::getline(in, item, ',')) {
        char* end = nullptr;
        const double t = std::strtod(item.c_str(), &end);
        if (item.empty() || *end != '\0' || !(t > 0) || t > 100) {
            throw UsageError("--objective-temperature: '" + item + "' is not a number in (0, 100]");
        }
        options.scoreTemperatures.push_back(t);
    }
}

/// `--anchor-table FILE`: every anchor's accepted lengths (and objective) as CSV, for pairing runs.
void writeAnchorTable(const std::string& path, const AcceptanceRun& run, const AcceptanceOptions& options)
{
    std::ostringstream out;
    out << "sample,position,accepted_base,accepted_quantized";
    for (const double t : options.scoreTemperatures) {
        out << ",objective_base@" << t << ",objective_quantized@" << t;
    }
    out << "\n";
    out.precision(17);
    for (const auto& o : run.outcomes) {
        out << o.anchor.sample << "," << o.anchor.position << "," << o.base.accepted << ","
            << (o.quantized ? std::to_string(o.quantized->accepted) : "");
        for (std::size_t t = 0; t < options.scoreTemperatures.size(); ++t) {
            out << "," << expectedAccepted(o.base.targetProbability[t]) << ","
                << (o.quantized ? expectedAccepted(o.quantized->targetProbability[t]) : NAN);
        }
        out << "\n";
    }
    replaceTextFile(path, out.str());
}

/// The objective at each draft temperature, as JSON.
nlohmann::ordered_json objectiveJson(const AcceptanceSummary& s)
{
    auto out = nlohmann::ordered_json::array();
    for (const auto& o : s.objective) {
        nlohmann::ordered_json e{{"draft_temperature", o.temperature}, {"base", o.base}};
        if (s.paired) {
            e["quantized"] = o.quant;
            e["delta"] = o.delta;
            e["delta_ci"] = {o.deltaLow, o.deltaHigh};
        }
        out.push_back(e);
    }
    return out;
}

/// ", at T = 0.70 (greedy drafting)", or empty at T = 0.
std::string samplingLabel(const AcceptanceOptions& options)
{
    if (options.temperature == 0) {
        return {};
    }
    char text[96];
    std::snprintf(text, sizeof text, ", at T = %.2f (%s drafting)", options.temperature,
                  draftSamplingName(options.drafting));
    return text;
}

void printReplay(std::ostream& out, const AcceptanceRun& run)
{
    const auto line = [&](const std::string& name, const AcceptanceSummary& s) {
        out << name << ": " << s.anchors << " cycles, a_i =";
        double counted = 1;
        for (const auto& p : s.positions) {
            out << " " << (s.sampled ? p.countedBase : p.acceptBase);
            counted += s.sampled ? p.countedBase : p.acceptBase;
        }
        out << ", tau = " << counted;
        if (s.sampled) {
            out << "; expected form (alpha_j along the same cycles): a_i =";
            for (const auto& p : s.positions) {
                out << " " << p.acceptBase;
            }
            out << ", tau = " << s.tauBase;
        }
        out << "\n";
    };
    out << "replayed online loop (anchor_{n+1} = anchor_n + L_n + 1, L counted against the "
        << (run.summary.sampled ? "captured tokens" : "target's tokens") << "), k = " << run.summary.k
        << "\n";
    line(run.baseName, *run.replayBase);
    if (run.replayQuantized) {
        line(run.quantizedName, *run.replayQuantized);
    }
}

/// `--export-rates FILE [--rates-of bf16|quantized]`: the per-position acceptance for vLLM's synthetic
/// rejection sampler (the quantized draft's when one ran, unless told otherwise).
void exportRates(const std::string& path, const Args& args, const AcceptanceJob& job,
                 const AcceptanceRun& run)
{
    std::optional<RatesOf> of;
    if (const auto text = args.value("rates-of")) {
        if (*text != "bf16" && *text != "quantized") {
            throw UsageError("--rates-of takes bf16 or quantized, not '" + *text + "'");
        }
        of = *text == "bf16" ? RatesOf::Bf16 : RatesOf::Quantized;
    }
    nlohmann::ordered_json json;
    try {
        json = acceptanceRatesJson(job, run, of);
    } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--rates-of quantized: ") + e.what());
    }
    replaceTextFile(path, json.dump(2) + "\n");
    std::cerr << "wrote " << path << " (" << json["source"]["rates_of"].get<std::string>()
              << " rates, k = " << json["source"]["k"] << ")\n";
}

/// Until the next release `--target DIR` still names the target model, as it did before --target became
/// the plan's target entry here too: a --target naming an existing folder.
bool isOldTargetModel(const std::string& target)
{
    return std::filesystem::is_directory(target);
}

} // namespace

OptionTable acceptanceOptions()
{
    return joinTables(
        {{
             {"hidden-states", "FILE|DIR", "",
              "the capture of target hidden states: a capture file, its folder, or a folder of speculators' "
              "hs_*.safetensors or vLLM's connector files (required)"},
             {"target-model", "PATH", "",
              "the target model's checkpoint, for drafts that read its embeddings or head and for captures "
              "that are not greedy (a --target naming a folder is still read as this, deprecated)"},
             {"quantized", "CKPT", "",
              "compare with this compressed-tensors export of the draft instead of a plan applied in memory "
              "(excludes the plan options)"},
             {"bf16-only", "", "",
              "the draft alone, without the plan options (it may itself be a compressed-tensors export)"},
             {"k", "K", "2", "proposals per verify cycle"},
             {"anchors", "N|all", "512", "anchors sampled from the eligible ones, or all of them"},
             {"seed", "S", "0", "seed of the anchor draw"},
             {"batch", "N", "64", "anchors per forward pass (memory: activations and logits)"},
             kThreadsOption,
             {"replay", "", "",
              "replay the online loop (each cycle starts after the last accepted token) instead of paired "
              "anchors"},
             {"temperature", "T", "0",
              "the temperature the target samples at: 0 counts greedy acceptance; above 0 each proposal "
              "counts with its probability of acceptance under the target's distribution at T (needs the "
              "target model and the capture's last layer)"},
             {"draft-sampling", "greedy|probabilistic", "greedy",
              "how the draft picks its tokens at T > 0, as vLLM's draft_sample_method: its argmax, or a "
              "sample at T accepted by rejection sampling"},
             {"objective-temperature", "T[,T...]", "",
              "also measure the target-aware objective a plan is chosen by: the accepted length expected of "
              "the draft sampled at each draft temperature T, the drafts fed the target's tokens (T = 0 "
              "runs, not --replay)"},
             {"anchor-table", "FILE.csv", "",
              "write every anchor's accepted lengths (and objective) as CSV (paired runs)"},
             kNumericsOption,
             {"numerics-floor", "", "",
              "also run the BF16 draft under the other numerics on the same anchors and report how often "
              "that alone changes a proposal: the noise floor under every change (paired runs)"},
             kJsonOption,
             {"dump-logits", "OUT.safetensors", "",
              "write the logits of the first anchors (with --max-anchors)"},
             {"max-anchors", "M", "",
              "anchors whose logits are written, [M, k, V] floats (with --dump-logits)"},
             {"drafter-ms", "MS", "",
              "the profiled BF16 drafter time per cycle: predicts the tok/s change of the quantized draft "
              "(with --cycle-ms)"},
             {"cycle-ms", "MS", "", "the measured verify cycle time (BF16 draft), with --drafter-ms"},
             {"saving-ms", "MS", "from the plan's streamed bytes",
              "the drafter time per cycle the quantized draft saves (with --drafter-ms; required with "
              "--quantized)"},
             {"per-unit", "", "",
              "the tau change of each decision unit quantized alone, the rest BF16 (a sensitivity run)"},
             {"sensitivity-out", "FILE", "",
              "write the results to FILE, which plan --alpha-from reads (with --per-unit)"},
             {"export-rates", "FILE", "",
              "write the per-position acceptance as vLLM's synthetic rejection sampler takes it"},
             {"rates-of", "bf16|quantized", "quantized when one ran, else bf16",
              "whose rates to export (with --export-rates)"},
         },
         captureReadOptionTable(),
         planOptionTable()});
}

int runAcceptance(const std::vector<std::string>& argv)
{
    const Args args(argv, acceptanceOptions());
    args.expectPositional(1);
    AcceptanceJob job;
    job.draft = args.positional()[0];
    const auto capture = args.value("hidden-states");
    if (!capture) {
        throw UsageError("--hidden-states FILE|DIR is required");
    }
    job.capture = *capture;
    job.captureOptions = captureReadOptionsFrom(args);
    job.target = args.value("target-model", "");
    const auto targets = args.values("target");
    for (const auto& target : targets) {
        if (isOldTargetModel(target)) {
            if (args.value("target-model")) {
                throw UsageError("--target " + target + " and --target-model both name the target model");
            }
            deprecationNotice("--target " + target, "target-model");
            job.target = target;
        }
    }
    job.quantized = args.value("quantized", "");
    bool planGiven =
        std::any_of(targets.begin(), targets.end(), [](const auto& t) { return !isOldTargetModel(t); });
    for (const auto& option : planOptionTable()) {
        planGiven = planGiven || (option.name != "target" && args.value(std::string(option.name)));
    }
    if (!job.quantized.empty() && planGiven) {
        throw UsageError("--quantized and plan options exclude each other");
    }
    if (job.quantized.empty() && !args.flag("bf16-only")) {
        job.plan = planOptionsFrom(args);
        // planOptionsFrom appended the command line's --target values after the plan file's: drop those
        // that named the target model.
        auto& entries = job.plan->targets;
        const auto commandLine = entries.end() - static_cast<std::ptrdiff_t>(targets.size());
        entries.erase(std::remove_if(commandLine, entries.end(), isOldTargetModel), entries.end());
    }
    job.options.k = static_cast<int>(args.integer("k", 2, 1, 64));
    const auto anchors = args.value("anchors", "512");
    job.options.anchorCount = anchors == "all" ? 0 : args.integer("anchors", 512, 1, 1'000'000'000);
    job.options.seed = static_cast<std::uint64_t>(args.integer("seed", 0, 0, (1ll << 62)));
    job.options.batchAnchors = args.integer("batch", 64, 1, 100000);
    job.options.threads = static_cast<unsigned>(args.integer("threads", 0, 0, 1024));
    job.replay = args.flag("replay");
    samplingFrom(args, job.options);
    objectiveFrom(args, job.options);
    if ((!job.options.scoreTemperatures.empty() || args.value("anchor-table")) &&
        (job.replay || args.flag("per-unit"))) {
        throw UsageError("--objective-temperature and --anchor-table are for paired runs (not --replay or "
                         "--per-unit)");
    }
    job.numerics = numericsFrom(args);
    job.numericsFloor = args.flag("numerics-floor");
    if (job.numericsFloor && (job.replay || args.flag("per-unit"))) {
        throw UsageError("--numerics-floor is for paired runs (not --replay or --per-unit)");
    }
    job.options.progress = stderrProgress(args.flag("per-unit") ? "sensitivity" : "acceptance");
    if (args.value("dump-logits") && !args.value("max-anchors")) {
        throw UsageError("--dump-logits needs --max-anchors M (logits are [M, k, V] floats)");
    }

    if (args.value("rates-of") && !args.value("export-rates")) {
        throw UsageError("--rates-of needs --export-rates FILE");
    }
    if (args.value("rates-of", "") == "quantized" && !job.plan && job.quantized.empty()) {
        throw UsageError("--rates-of quantized needs a quantized draft (plan options or --quantized)");
    }
    if (args.flag("per-unit")) {
        const auto units = runSensitivity(job);
        const auto json = sensitivityJson(job, units);
        if (const auto out = args.value("sensitivity-out")) {
            std::ofstream file(*out);
            file << json.dump(2) << "\n";
            if (!file) {
                throw std::runtime_error(*out + ": cannot write the sensitivity file");
            }
        }
        if (args.flag("json")) {
            std::cout << json.dump(2) << "\n";
        } else {
            std::cout << "unit (alone quantized)                          scheme          tau change [95% "
                         "CI]            "
                         "a_0 change   flips@0\n";
            for (const auto& u : units) {
                std::printf("%-48s %-15s %+.4f [%+.4f, %+.4f]   %+.4f    %.2f%%\n", u.unit.c_str(),
                            u.scheme.c_str(), u.tauDelta, u.tauDeltaLow, u.tauDeltaHigh, u.deltaFirst,
                            100 * u.flipFirst);
            }
        }
        return kExitOk;
    }

    const auto run = spark::runAcceptance(job);
    // On stderr: the numbers on stdout stay what a script parses, the reasons to doubt them reach the user.
    for (const auto& w : run.captureWarnings) {
        std::cerr << findingLine(w) << "\n";
    }
    if (!run.lowAcceptance.empty()) {
        std::cerr << "note: " << run.lowAcceptance << "\n";
    }
    if (!run.samplingNote.empty()) {
        std::cerr << "note: " << run.samplingNote << "\n";
    }
    if (run.layerIdProbe && !run.layerIdProbe->advice.empty()) {
        std::cerr << "note: " << run.layerIdProbe->advice << "; pass --layer-ids "
                  << layerIdArgument(run.layerIdProbe->suggestedLayerIds) << "\n";
    }
    if (run.promptUnknown) {
        std::cerr << "note: " << promptUnknownNote() << "; give the prompt length with --prompt-tokens N\n";
    }
    if (const auto out = args.value("export-rates")) {
        exportRates(*out, args, job, run);
    }
    if (const auto table = args.value("anchor-table")) {
        writeAnchorTable(*table, run, job.options);
    }
    if (const auto dump = args.value("dump-logits")) {
        const auto capture = openJobCapture(job);
        auto drafts = openAcceptanceDrafts(job, capture);
        std::vector<Anchor> first = run.anchors;
        first.resize(std::min<std::size_t>(
            first.size(), static_cast<std::size_t>(args.integer("max-anchors", 1, 1, 1'000'000))));
        dumpLogits(*dump, *drafts.base, drafts.quantized ? &*drafts.quantized : nullptr, capture, first,
                   job.options.k);
    }
    if (job.replay) {
        if (args.flag("json")) {
            nlohmann::ordered_json j;
            j["replay"] = true;
            j["base"] = acceptanceJson(*run.replayBase, run.baseName, "", std::nullopt);
            j["base"]["cycles"] = replayCyclesJson(run.replayBaseCycles);
            if (run.replayQuantized) {
                j["quantized"] = acceptanceJson(*run.replayQuantized, run.quantizedName, "", std::nullopt);
                j["quantized"]["cycles"] = replayCyclesJson(run.replayQuantizedCycles);
            }
            std::cout << j.dump(2) << "\n";
        } else {
            printReplay(std::cout, run);
        }
        return kExitOk;
    }
    const auto speed = speedFrom(args, run);
    if (args.flag("json")) {
        auto j = acceptanceJson(run.summary, run.baseName, run.quantizedName, speed);
        j["architecture"] = run.spec.archId;
        j["eligible_anchors"] = run.eligibleAnchors;
        if (run.layerIdProbe) {
            auto& probe = j["layer_id_probe"];
            probe["anchors"] = run.layerIdProbe->anchors;
            for (const auto& r : run.layerIdProbe->readings) {
                probe["readings"].push_back(
                    {{"shift", r.shift}, {"layer_ids", r.ids}, {"accept_0", r.accept0}});
            }
            probe["advice"] = run.layerIdProbe->advice;
            probe["suggested_layer_ids"] = run.layerIdProbe->suggestedLayerIds;
        }
        j["prompt_unknown"] = run.promptUnknown;
        j["numerics"] = forwardNumericsName(job.numerics);
        j["temperature"] = job.options.temperature;
        j["draft_sampling"] = draftSamplingName(job.options.drafting);
        if (!run.summary.objective.empty()) {
            j["objective"] = objectiveJson(run.summary);
        }
        if (const auto& f = run.numericsFloor) {
            j["numerics_floor"] = {{"other", forwardNumericsName(f->other)},
                                   {"first_differs", f->firstDiffers},
                                   {"any_differs", f->anyDiffers},
                                   {"tau_delta", f->summary.tauDelta},
                                   {"tau_delta_ci", {f->summary.tauDeltaLow, f->summary.tauDeltaHigh}}};
        }
        std::cout << j.dump(2) << "\n";
    } else {
        std::cout << run.spec.archId << ": " << run.eligibleAnchors << " eligible anchors"
                  << (job.numerics == ForwardNumerics::Fp32 ? "" : ", BF16 activations")
                  << samplingLabel(job.options) << "\n";
        printAcceptance(std::cout, run.summary, run.baseName, run.quantizedName, speed);
        for (const auto& o : run.summary.objective) {
            std::printf("objective at draft temperature %g (expected accepted length): %s %.4f",
                        o.temperature, run.baseName.c_str(), o.base);
            if (run.summary.paired) {
                std::printf(", %s %.4f, change %+.4f [%+.4f, %+.4f]", run.quantizedName.c_str(), o.quant,
                            o.delta, o.deltaLow, o.deltaHigh);
            }
            std::printf("\n");
        }
        if (const auto& f = run.numericsFloor) {
            std::printf("numerics floor: the BF16 draft with %s activations changes the first proposal at "
                        "%.2f%% of the anchors, any of the %d at %.2f%%; tau change %+.4f [%+.4f, %+.4f]\n",
                        forwardNumericsName(f->other), 100 * f->firstDiffers, job.options.k,
                        100 * f->anyDiffers, f->summary.tauDelta, f->summary.tauDeltaLow,
                        f->summary.tauDeltaHigh);
        }
    }
    return kExitOk;
}

} // namespace spark::cli
