#include "core/plan/shallowheadlint.h"

#include "core/plan/quantplan.h"

#include <set>
#include <string>

namespace spark {
namespace {

/// The decoder layer a checkpoint module belongs to: "layers.3" for "layers.3.mlp.down_proj", "midlayer"
/// for the speculators EAGLE-3 layout; empty for fc, lm_head, embeddings and norms.
std::string decoderLayerOf(const std::string& module)
{
    if (module.rfind("midlayer.", 0) == 0) {
        return "midlayer";
    }
    if (module.rfind("layers.", 0) != 0) {
        return {};
    }
    const auto end = module.find('.', 7);
    return end == std::string::npos ? std::string() : module.substr(0, end);
}

bool fourBit(const WeightScheme* scheme)
{
    return scheme && scheme->quantizes() && scheme->bits <= 4;
}

} // namespace

std::optional<LintFinding> shallowHeadFinding(const QuantPlan& plan)
{
    if (!plan.architecture.traits().singleLayerHead) {
        return std::nullopt;
    }
    std::set<std::string> layers;
    std::vector<std::string> fourBitModules;
    std::set<std::string> schemes;
    for (const auto& m : plan.modules) {
        if (const auto layer = decoderLayerOf(m.name); !layer.empty()) {
            layers.insert(layer);
        }
        if (m.decision == PlanDecision::Quantize && fourBit(m.scheme)) {
            fourBitModules.push_back(m.name);
            schemes.insert(std::string(m.scheme->name));
        }
    }
    if (layers.size() > 1 || fourBitModules.empty()) {
        return std::nullopt;
    }
    std::string schemeList;
    for (const auto& s : schemes) {
        schemeList += (schemeList.empty() ? "" : ", ") + s;
    }
    LintFinding finding;
    finding.id = kShallowHeadLintId;
    finding.severity = LintSeverity::Warning;
    finding.modules = fourBitModules;
    finding.message =
        "this EAGLE-3 head has one decoder layer and " + std::to_string(fourBitModules.size()) +
        " modules at 4 bits (" + schemeList +
        "): data-free rounding error has no later layers to average it out and lands on the draft logits, "
        "which costs acceptance. Use the eagle3-int8 preset (W8A16), or measure the acceptance offline with "
        "`sparkulator-cli acceptance` before serving it.";
    finding.citation = "preset eagle3-int8";
    return finding;
}

} // namespace spark
