#include "core/export/modelcardinputs.h"

#include "core/plan/shallowheadlint.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace spark {
namespace fs = std::filesystem;

namespace {

/// `license:` from the YAML front matter of the source README, if any.
std::string licenseOfSourceCard(const fs::path& folder)
{
    std::ifstream in(folder / "README.md");
    std::string line;
    if (!std::getline(in, line) || line != "---") {
        return {};
    }
    while (std::getline(in, line) && line != "---") {
        if (line.rfind("license:", 0) == 0) {
            auto value = line.substr(8);
            value.erase(0, value.find_first_not_of(" \t\"'"));
            value.erase(value.find_last_not_of(" \t\"'") + 1);
            return value;
        }
    }
    return {};
}

std::string speculativeMethod(DraftArchitecture kind)
{
    return std::string(traitsOf(kind).vllmMethod);
}

int speculativeTokens(const nlohmann::json& config)
{
    const auto methods = config.value("speculators_config", nlohmann::json::object())
                             .value("proposal_methods", nlohmann::json::array());
    if (!methods.empty() && methods.front().contains("speculative_tokens")) {
        return methods.front().value("speculative_tokens", 3);
    }
    const int block = config.value(
        "block_size", config.value("dflash_config", nlohmann::json::object()).value("block_size", 0));
    return block > 1 ? block - 1 : 3;
}

/// "4-bit weights, group size 128, symmetric, 16-bit activations" for one integer scheme; the scheme's
/// summary for the others; which scheme holds how many modules for a mixed plan.
std::string schemeDetail(const QuantPlan& plan)
{
    const auto schemes = plan.schemesUsed();
    if (schemes.size() > 1) {
        std::string detail = "mixed precision:";
        for (const auto* s : schemes) {
            const auto it = plan.sizes.byScheme.find(std::string(s->name));
            const int modules = it == plan.sizes.byScheme.end() ? 0 : it->second.modules;
            detail += (detail.back() == ':' ? " " : ", ") + std::string(s->name) + " for " +
                      std::to_string(modules) + (modules == 1 ? " module" : " modules");
        }
        return detail;
    }
    const auto& s = schemes.empty() ? *plan.defaultScheme : *schemes.front();
    if (s.family == SchemeFamily::IntSymmetric || s.family == SchemeFamily::IntAsymmetric) {
        return std::to_string(s.bits) + "-bit weights, " +
               (s.groupSize > 0 ? "group size " + std::to_string(s.groupSize) : std::string("per-channel")) +
               ", " + (s.family == SchemeFamily::IntSymmetric ? "symmetric" : "asymmetric") +
               ", 16-bit activations";
    }
    return std::string(s.summary);
}

/// How the scales were chosen, when not all by round-to-nearest: which method rounds how many modules,
/// what it is, and what the config records for it; then how the codes were found ("" for a plain RTN plan).
std::string roundingDetail(const QuantPlan& plan)
{
    const auto used = plan.roundingsUsed();
    const bool gptq =
        std::any_of(plan.groups.begin(), plan.groups.end(), [](const ConfigGroup& g) { return g.gptq; });
    std::string detail;
    if (!used.empty() && (used.size() > 1 || used.front() != &rtnRounding())) {
        detail = "; scales chosen by";
        for (const auto* method : used) {
            const auto modules =
                std::count_if(plan.modules.begin(), plan.modules.end(), [&](const PlannedModule& m) {
                    return m.decision == PlanDecision::Quantize && m.rounding == method;
                });
            detail += std::string(detail.back() == 'y' ? " " : ", ") + std::string(method->name) +
                      " rounding for " + std::to_string(modules) + (modules == 1 ? " module" : " modules");
            if (method->name == "mse") {
                detail += " (llm-compressor's memoryless_mse observer, bit for bit; the config group records "
                          "\"observer\": \"memoryless_mse\")";
            } else if (!method->ctExact) {
                detail +=
                    std::string(" (a Sparkulator-defined range search") +
                    (method->needsHessian() ? " scored by the input Hessians of captured target hidden states"
                                            : "") +
                    ": no llm-compressor observer computes it; the config group records \"observer\": "
                    "\"minmax\" with observer_kwargs {\"" +
                    std::string(kRoundingKwarg) + "\": \"" + std::string(method->name) +
                    "\"}, which vLLM ignores)";
            }
        }
    }
    if (gptq) {
        return detail +
               "; the codes of the integer-scheme modules were solved by GPTQ from captured target hidden "
               "states (llm-compressor's algorithm: 1% damping, blocks of 128 columns, scales from the "
               "original weights, \"actorder\": null, no g_idx; observer_kwargs {\"" +
               std::string(kCodesKwarg) + "\": \"gptq\"} marks them, vLLM ignores it)";
    }
    return detail.empty() ? detail
                          : detail + "; codes are round-to-nearest under those scales, in the same tensors "
                                     "vLLM loads";
}

} // namespace

ModelCardInputs modelCardInputs(const Checkpoint& source, const QuantPlan& plan, const fs::path& output,
                                const CardOptions& options)
{
    ModelCardInputs card;
    const auto sourceName = fs::absolute(source.folder()).lexically_normal().filename().string();
    card.modelName = !options.modelName.empty() ? options.modelName
                                                : fs::path(output).lexically_normal().filename().string();
    card.baseModel =
        !options.baseModel.empty() ? options.baseModel : source.config().value("_name_or_path", sourceName);
    card.license = !options.license.empty() ? options.license : licenseOfSourceCard(source.folder());
    card.architecture = plan.architecture.id;
    card.architectureName = plan.architecture.displayName;
    card.targetModel = !options.targetModel.empty() ? options.targetModel : plan.architecture.verifier;
    card.targetPrecision = options.targetPrecision;
    card.scheme = plan.schemeSummary();
    card.schemeDetail = schemeDetail(plan) + roundingDetail(plan);
    card.speculativeMethod = speculativeMethod(plan.architecture.kind);
    card.numSpeculativeTokens = speculativeTokens(source.config());
    for (const auto& module : plan.modules) {
        if (module.decision == PlanDecision::Quantize) {
            card.quantized.push_back({module.name, module.reason, std::string(module.scheme->name)});
        } else if (module.role == ModuleRole::Linear || module.role == ModuleRole::Head ||
                   module.role == ModuleRole::Embedding) {
            card.keptBf16.push_back({module.name, module.reason});
        }
    }
    card.sizes.push_back({"checkpoint (all tensors)", plan.sizes.bytesBefore, plan.sizes.bytesAfter});
    card.sizes.push_back(
        {"quantized weights", plan.sizes.quantizedWeightsBefore, plan.sizes.quantizedWeightsAfter});
    card.sizes.push_back({"streamed per draft step", plan.sizes.streamedBefore, plan.sizes.streamedAfter});
    for (const auto& finding : plan.lint) {
        // The shallow-head warning changes what the reader should expect of this checkpoint.
        if (finding.id == kShallowHeadLintId) {
            card.planWarnings.push_back(finding.message);
        }
    }
    card.benchmarks = options.benchmarks;
    card.toolVersion = SPARK_VERSION;
    return card;
}

} // namespace spark
