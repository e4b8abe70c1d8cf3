// `analyze PATH [--scheme SCHEME | --bits 4|8 --group 32|64|128|-1] [--scheme ENTRY=SCHEME]...
// [--rounding METHOD] [--rounding ENTRY=METHOD]... [plan options]
// [--threads N] [--backend auto|cpu|cuda] [--json]`: what a data-free scheme would cost in accuracy for every
// eligible weight, without writing anything. Rules ENTRY=SCHEME measure each module under the scheme the plan
// gives it; NVFP4 fused sets share their global scale as in an export.
#include "args.h"
#include "backendargs.h"
#include "command.h"
#include "core/io/checkpoint.h"
#include "core/plan/quantplan.h"
#include "core/quant/analyzer.h"
#include "format.h"
#include "planargs.h"
#include "progressbar.h"

#include <iostream>

namespace spark::cli {

namespace {

nlohmann::json optionalNumber(const std::optional<double>& value)
{
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

std::string optionalText(const std::optional<double>& value, int digits, bool scientific = false)
{
    if (!value) {
        return "-";
    }
    if (!scientific) {
        return formatFixed(*value, digits);
    }
    char text[32];
    std::snprintf(text, sizeof text, "%.*e", digits, *value);
    return text;
}

nlohmann::ordered_json histogramJson(const FixedHistogram& h)
{
    return {{"lo", h.lo}, {"hi", h.hi}, {"counts", h.counts}};
}

/// "W4A16", or "W4A16 mse" under a rounding other than rtn.
std::string schemeText(const TensorAnalysis& a)
{
    return std::string(a.scheme->name) +
           (a.rounding && a.rounding != &rtnRounding() ? " " + std::string(a.rounding->name) : "");
}

nlohmann::ordered_json statsJson(const TensorAnalysis& a)
{
    const auto& s = *a.stats;
    nlohmann::ordered_json t;
    t["name"] = a.name;
    t["dtype"] = dtypeName(a.dtype);
    t["scheme"] = a.scheme ? a.scheme->name : "";
    t["rounding"] = a.rounding ? a.rounding->name : "";
    t["shape"] = a.shape;
    t["rel_err"] = optionalNumber(s.relErr);
    t["max_abs_err"] = optionalNumber(s.maxAbsErr);
    t["p95_abs_err"] = optionalNumber(s.p95AbsErr);
    t["snr_db"] = optionalNumber(s.snrDb);
    t["rel_err_exact_qs"] = optionalNumber(s.relErrExactQs);
    t["sq_norm"] = s.sqNorm;
    t["sq_err"] = optionalNumber(s.sqErr);
    t["dequant_nonfinite"] = s.dequantNonFinite;
    t["mean_abs_err"] = optionalNumber(s.meanAbsErr);
    t["mean_abs_w"] = s.meanAbsW;
    t["err_over_mean_abs_w"] = optionalNumber(s.errOverMeanAbsW);
    t["groups"] = s.groups;
    t["eps_scale_groups"] = s.epsScaleGroups;
    t["histogram_stride"] = s.histogramStride; // q_hist, the histograms and p95 count 1 in this many
    t["q_hist"] = s.qHist;
    t["weight_hist"] = histogramJson(s.weightHist);
    t["error_hist"] = histogramJson(s.errorHist);
    t["file"] = a.file;
    return t;
}

} // namespace

OptionTable analyzeOptions()
{
    return joinTables(
        {withOption(planOptionTable(),
                    {"scheme", "S|ENTRY=S", "the --bits/--group scheme",
                     "S: measure every weight under S (not BF16); ENTRY=S: a rule, each module is "
                     "measured under the scheme the plan gives it (repeatable)"}),
         {kThreadsOption},
         backendOptionTable(),
         {kJsonOption}});
}

int runAnalyze(const std::vector<std::string>& argv)
{
    const Args args(argv, analyzeOptions());
    args.expectPositional(1);
    // --scheme NAME measures everything under NAME; --scheme ENTRY=SCHEME rules go to the plan.
    auto planOptions = planOptionsFrom(args);
    AnalyzeOptions options;
    options.scheme = intSymmetricScheme(planOptions.bits, planOptions.groupSize);
    std::vector<std::string> rules;
    for (const auto& value : planOptions.schemes) {
        if (value.find('=') != std::string::npos) {
            rules.push_back(value);
        } else if (const auto* scheme = findWeightScheme(value); scheme && scheme->quantizes()) {
            options.scheme = scheme;
        } else {
            throw UsageError("--scheme '" + value + "': not a scheme to measure (one of " +
                             weightSchemeNames() + " except BF16) nor ENTRY=SCHEME");
        }
    }
    planOptions.schemes = rules;
    // --rounding METHOD measures everything under METHOD (errors under the searched scales); --rounding
    // ENTRY=METHOD rules apply to the modules the plan quantizes, as in an export.
    options.rounding = findRoundingMethod(planOptions.rounding);
    if (options.rounding && !options.rounding->appliesTo(*options.scheme)) {
        throw UsageError("--rounding " + std::string(options.rounding->name) + " does not apply to " +
                         std::string(options.scheme->name) + ": " + std::string(options.rounding->summary));
    }
    const bool roundingRules = !planOptions.roundings.empty();
    options.threads = static_cast<unsigned>(args.integer("threads", 0, 0, 4096));
    const auto checkpoint = Checkpoint::open(args.positional()[0]);
    const auto infos = checkpoint.tensorInfos();
    const auto plan = makePlan(checkpoint.config(), infos, planOptions);
    if ((!rules.empty() || roundingRules) && !plan.errors.empty()) {
        throw UsageError("plan error: " + plan.errors.front());
    }
    std::vector<const WeightScheme*> schemes{options.scheme};
    for (const auto& m : plan.modules) {
        if (m.weightTensor.empty()) {
            continue;
        }
        options.fusedSetOf[m.weightTensor] = m.vllmName;
        if (!rules.empty() && m.decision == PlanDecision::Quantize) {
            options.tensorSchemes[m.weightTensor] = m.scheme;
            schemes.push_back(m.scheme);
        }
        if (roundingRules && m.decision == PlanDecision::Quantize) {
            options.tensorRoundings[m.weightTensor] = m.rounding;
        }
    }
    const auto backend = backendFrom(args);
    checkBackendServes(args, *backend, schemes);
    options.backend = backend.get();
    const auto results = analyzeCheckpoint(checkpoint, options, stderrProgress("analyze"));

    std::vector<std::string> errors;
    for (const auto& a : results) {
        if (!a.error.empty()) {
            errors.push_back(a.error);
        }
    }
    if (args.flag("json")) {
        nlohmann::ordered_json out;
        out["path"] = checkpoint.folder().string();
        out["backend"] = backendName(backend->kind());
        out["scheme"] = {{"name", options.scheme->name},
                         {"bits", options.scheme->bits},
                         {"group_size", options.scheme->groupSize},
                         {"symmetric", options.scheme->family != SchemeFamily::IntAsymmetric},
                         {"format", options.scheme->format},
                         {"mode", "ct-compat"}};
        out["rounding"] = options.rounding->name;
        out["tensors"] = nlohmann::json::array();
        for (const auto& a : results) {
            if (a.stats) {
                out["tensors"].push_back(statsJson(a));
            }
        }
        out["errors"] = nlohmann::json::array();
        for (const auto& a : results) {
            if (!a.error.empty()) {
                out["errors"].push_back({{"name", a.name}, {"file", a.file}, {"message", a.error}});
            }
        }
        std::cout << out.dump(2) << "\n";
    } else {
        std::cout << "scheme: " << options.scheme->name << ": " << options.scheme->summary
                  << (rules.empty() ? "" : "; modules the rules assign are measured under their scheme")
                  << "\nrounding: " << options.rounding->name << ": " << options.rounding->summary
                  << (roundingRules ? "; modules the rounding rules assign are measured under their method"
                                    : "")
                  << "\n\n";
        Table table({"name", "shape", "scheme", "rel_err", "max_abs_err", "p95_abs_err", "snr_db"});
        for (const auto& a : results) {
            if (!a.stats) {
                table.add({a.name, TensorInfo{a.name, a.dtype, a.shape, 0, 0}.shapeText(), schemeText(a),
                           "error", "", "", ""});
                continue;
            }
            const auto& s = *a.stats;
            std::string rel = optionalText(s.relErr, 5);
            if (!s.relErr && s.dequantNonFinite > 0) {
                rel = "inf (" + std::to_string(s.dequantNonFinite) + " non-finite)";
            }
            table.add({a.name, TensorInfo{a.name, a.dtype, a.shape, 0, 0}.shapeText(), schemeText(a), rel,
                       optionalText(s.maxAbsErr, 3, true), optionalText(s.p95AbsErr, 3, true),
                       optionalText(s.snrDb, 2)});
        }
        table.print(std::cout);
    }
    for (const auto& e : errors) {
        std::cerr << "sparkulator-cli analyze: " << e << "\n";
    }
    return errors.empty() ? kExitOk : kExitError;
}

} // namespace spark::cli
