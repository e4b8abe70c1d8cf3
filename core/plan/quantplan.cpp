#include "core/plan/quantplan.h"

#include "core/plan/draftlayout.h"
#include "core/plan/ignorelist.h"
#include "core/plan/nameregex.h"
#include "core/plan/preset.h"
#include "core/plan/shallowheadlint.h"
#include "core/plan/vllmmatching.h"

#include <algorithm>
#include <map>
#include <optional>

namespace spark {
namespace {

/// Compiled entries of one kind and where each came from ("preset glm-dspark", "--ignore").
struct EntrySet
{
    std::vector<MatchEntry> entries;
    std::vector<std::string> sources;
    std::vector<bool> fromUser;

    void add(const std::vector<std::string>& texts, const std::string& source, bool user)
    {
        for (const auto& t : texts) {
            entries.emplace_back(t);
            sources.push_back(source);
            fromUser.push_back(user);
        }
    }
    std::string describe(int index) const
    {
        const auto i = static_cast<std::size_t>(index);
        return "'" + entries[i].text() + "' (" + sources[i] + ")";
    }
};

std::string leafOf(const std::string& name)
{
    const auto dot = name.rfind('.');
    return dot == std::string::npos ? name : name.substr(dot + 1);
}

TensorSplit splitOf(const std::string& vllmClass)
{
    if (vllmClass == "RowParallelLinear") {
        return TensorSplit::Input;
    }
    if (vllmClass == "ReplicatedLinear" || vllmClass == "Linear") {
        return TensorSplit::None;
    }
    return TensorSplit::Output;
}

bool isFusedLeaf(const std::string& name)
{
    return standardFusedMapping().count(leafOf(name)) != 0;
}

/// Accumulates findings; errors are also copied to QuantPlan::errors so the exporter refuses.
class LintSink
{
  public:
    explicit LintSink(QuantPlan& plan) : m_plan(plan) {}
    void add(std::string id, LintSeverity severity, std::vector<std::string> modules, std::string message,
             std::string citation)
    {
        if (severity == LintSeverity::Error) {
            m_plan.errors.push_back(message);
        }
        m_plan.lint.push_back(
            {std::move(id), severity, std::move(modules), std::move(message), std::move(citation)});
    }

  private:
    QuantPlan& m_plan;
};

std::string joinNames(const std::vector<std::string>& names, std::size_t max = 3)
{
    std::string out;
    for (std::size_t i = 0; i < names.size() && i < max; ++i) {
        out += (i ? ", " : "") + names[i];
    }
    if (names.size() > max) {
        out += " and " + std::to_string(names.size() - max) + " more";
    }
    return out;
}

/// A compiled "ENTRY=SCHEME" rule.
struct SchemeRule
{
    MatchEntry entry;
    const WeightScheme* scheme = nullptr;
    std::string source;

    std::string describe() const
    {
        return "scheme rule '" + entry.text() + "=" + std::string(scheme->name) + "' (" + source + ")";
    }
};

/// Parses and previews the preset's rules, then the user's; bad ones become errors and are dropped.
std::vector<SchemeRule> compileSchemeRules(const std::vector<std::string>& presetRules,
                                           const std::string& presetSource,
                                           const std::vector<std::string>& userRules,
                                           const std::vector<DraftModule>& described, QuantPlan& plan,
                                           LintSink& lint)
{
    std::vector<SchemeRule> rules;
    auto addAll = [&](const std::vector<std::string>& texts, const std::string& source, bool user) {
        for (const auto& text : texts) {
            const auto equals = text.rfind('=');
            const auto* scheme =
                equals == std::string::npos ? nullptr : findWeightScheme(text.substr(equals + 1));
            if (!scheme || equals == 0) {
                lint.add("invalid-scheme-rule", LintSeverity::Error, {text},
                         "scheme rule '" + text + "'" + (user ? std::string() : " (" + source + ")") +
                             " is not ENTRY=SCHEME with SCHEME one of " + weightSchemeNames(),
                         "schemes-spec §1");
                continue;
            }
            SchemeRule rule{MatchEntry(text.substr(0, equals)), scheme, source};
            auto preview = previewEntry(rule.entry, EntryKind::Scheme, source, described);
            preview.entry = text; // the whole rule, as the user wrote it
            preview.scheme = std::string(scheme->name);
            if (!preview.valid) {
                lint.add("invalid-entry", LintSeverity::Error, {text}, preview.error, "");
            } else if (user) {
                for (const auto& w : preview.warnings) {
                    lint.add(w.starts_with("matches nothing") ? "scheme-unmatched" : "entry-pattern",
                             LintSeverity::Warning, {text}, "scheme rule '" + text + "' " + w + ".",
                             "format-spec §4.1, §6");
                }
            }
            plan.entries.push_back(std::move(preview));
            if (rule.entry.isValid()) {
                rules.push_back(std::move(rule));
            }
        }
    };
    addAll(presetRules, presetSource, false);
    addAll(userRules, "--scheme", true);
    return rules;
}

/// A compiled "ENTRY=METHOD" rounding rule.
struct RoundingRule
{
    MatchEntry entry;
    const RoundingMethod* method = nullptr;
    std::string text;

    std::string describe() const { return "rounding rule '" + text + "' (--rounding)"; }
};

/// Parses the user's rounding rules; bad ones become errors and are dropped. They are not entries of the
/// plan's preview (that lists what selects modules), but an unmatched one is linted like a scheme rule.
std::vector<RoundingRule> compileRoundingRules(const std::vector<std::string>& texts,
                                               const std::vector<DraftModule>& described, LintSink& lint)
{
    std::vector<RoundingRule> rules;
    for (const auto& text : texts) {
        const auto equals = text.rfind('=');
        const auto* method = equals == std::string::npos
                                 ? nullptr
                                 : findRoundingMethod(std::string_view(text).substr(equals + 1));
        if (!method || equals == 0) {
            lint.add("invalid-rounding-rule", LintSeverity::Error, {text},
                     "rounding rule '" + text + "' is not ENTRY=METHOD with METHOD one of " +
                         roundingMethodNames(),
                     "");
            continue;
        }
        RoundingRule rule{MatchEntry(text.substr(0, equals)), method, text};
        const auto preview = previewEntry(rule.entry, EntryKind::Scheme, "--rounding", described);
        if (!preview.valid) {
            lint.add("invalid-entry", LintSeverity::Error, {text}, preview.error, "");
            continue;
        }
        for (const auto& w : preview.warnings) {
            lint.add(w.starts_with("matches nothing") ? "rounding-unmatched" : "entry-pattern",
                     LintSeverity::Warning, {text}, rule.describe() + " " + w + ".", "format-spec §4.1, §6");
        }
        rules.push_back(std::move(rule));
    }
    return rules;
}

/// The last rule (scheme or rounding) selecting the vLLM layer @p layer of @p lead (name, class, shards,
/// older aliases).
template <class Rule>
const Rule* lastMatchingRule(const std::vector<Rule>& rules, const std::string& layer,
                             const DraftModule& lead)
{
    for (auto it = rules.rbegin(); it != rules.rend(); ++it) {
        const std::vector<MatchEntry> one{it->entry};
        bool hit = matchesTarget(layer, lead.vllmClass, one, standardFusedMapping());
        for (const auto& alias : lead.vllmAliases) {
            hit = hit || it->entry.matches(alias);
        }
        if (hit) {
            return &*it;
        }
    }
    return nullptr;
}

/// lm_head takes a scheme only through a rule naming it exactly (vLLM quantizes a ParallelLMHead only
/// through the exact target "lm_head", schemes-spec §5.2 rule 4) and only on EAGLE-3, whose vLLM model
/// passes quant_config to it (vllm#37280) and compressed-tensors handles a ParallelLMHead (vllm#37291);
/// DFlash and DSpark build it without one. Citations: docs/citations.md.
void applyHeadRule(QuantPlan& plan, PlannedModule& head, const std::vector<SchemeRule>& rules, LintSink& lint)
{
    const auto it = std::find_if(rules.rbegin(), rules.rend(), [](const SchemeRule& r) {
        return !r.entry.isRegex() && r.entry.text() == "lm_head";
    });
    if (it == rules.rend() || !it->scheme->quantizes()) {
        return;
    }
    const auto& scheme = *it->scheme;
    if (!plan.architecture.traits().quantizableHead) {
        lint.add("lm-head", LintSeverity::Warning, {head.name},
                 it->describe() +
                     " is ignored: vLLM builds this architecture's lm_head without quant_config, so "
                     "it cannot load a quantized one; lm_head stays BF16.",
                 "schemes-spec §5.2 rule 4");
        return;
    }
    const auto shape =
        scheme.shapeProblem(head.outFeatures, head.inFeatures, TensorSplit::Output, plan.tpDegree);
    if (!isQuantizableFloat(head.dtype) || !shape.empty()) {
        lint.add("kernel-shape", LintSeverity::Warning, {head.name},
                 "lm_head stays BF16: " +
                     (shape.empty() ? std::string("its dtype cannot be quantized") : shape) + ".",
                 "schemes-spec §6.1");
        return;
    }
    head.decision = PlanDecision::Quantize;
    head.scheme = &scheme;
    head.reason = std::string(scheme.name) + ": " + it->describe();
    // Packed schemes store weight_packed and no .weight; FP8_DYNAMIC keeps .weight (vllm#53104 only bites
    // the former).
    const bool packed = scheme.family != SchemeFamily::Fp8;
    lint.add("lm-head-quantized",
             scheme.family == SchemeFamily::Nvfp4 ? LintSeverity::Warning : LintSeverity::Info, {head.name},
             "lm_head is quantized (" + std::string(scheme.name) +
                 "): it needs a vLLM with vllm#37280 and vllm#37291" +
                 (packed ? std::string(" and the V1 model runner (the V2 runner reads the draft lm_head's "
                                       ".weight, which a packed head does not have; open fix vllm#53104)")
                         : std::string()) +
                 "; the head's error lands directly on the draft logits" +
                 (scheme.family == SchemeFamily::Nvfp4
                      ? "; no report of an NVFP4 draft lm_head served by vLLM was found: test it first"
                      : "") +
                 ".",
             "vllm#37280");
}

/// The per-scheme rules of schemes-spec §5-§6 the plan's schemes touch.
void lintSchemes(const QuantPlan& plan, LintSink& lint)
{
    std::map<const WeightScheme*, std::vector<std::string>> byScheme;
    for (const auto& m : plan.modules) {
        if (m.decision == PlanDecision::Quantize) {
            byScheme[m.scheme].push_back(m.name);
        }
    }
    for (const auto& [scheme, modules] : byScheme) {
        if (scheme->groupSize == 32) {
            lint.add("kernel-group-size", LintSeverity::Info, modules,
                     std::string(scheme->name) + ": group size 32 runs on Marlin only: Machete (chosen first "
                                                 "on H100/H200) supports -1, 64 "
                                                 "and 128.",
                     "format-spec §4.6");
        }
        if (scheme->family == SchemeFamily::Fp8) {
            lint.add(
                "fp8-activations", LintSeverity::Info, modules,
                "FP8_DYNAMIC quantizes activations per token at run time (W8A8, CUTLASS FP8, compute "
                "capability >= 8.9): weight-only FP8 is avoided because its only kernel is Marlin FP8, which "
                "vLLM's Marlin code refuses on sm_89+ unless forced.",
                "schemes-spec §5.2 rule 6");
        }
        if (scheme->family == SchemeFamily::Nvfp4) {
            lint.add("nvfp4-global-scale", LintSeverity::Info, modules,
                     "NVFP4A16: fused q/k/v and gate/up share one global scale (vLLM uses the max per fused "
                     "layer); "
                     "served by Marlin FP4 on sm_90 (no FP4 MMA on Hopper) and sm_121.",
                     "schemes-spec §3.4.1");
        }
    }
    if (byScheme.empty()) {
        return;
    }
    std::string kernels;
    for (const auto& [scheme, modules] : byScheme) {
        kernels += (kernels.empty() ? "" : "; ") + std::string(scheme->name) +
                   " — sm_90: " + std::string(scheme->kernels.sm90) +
                   ", sm_121: " + std::string(scheme->kernels.sm121);
    }
    lint.add("kernels", LintSeverity::Info, {}, "vLLM kernels (read, not run): " + kernels + ".",
             "schemes-spec §6.2");
    if (byScheme.size() > 1) {
        lint.add("sglang-multi-group", LintSeverity::Info, {},
                 "several config groups: vLLM selects a scheme per module, but SGLang may load a multi-group "
                 "compressed-tensors checkpoint unquantized (sglang#32736).",
                 "sglang#32736");
    }
}

} // namespace

const PlannedModule* QuantPlan::findModule(std::string_view name) const
{
    const auto it =
        std::find_if(modules.begin(), modules.end(), [&](const PlannedModule& m) { return m.name == name; });
    return it == modules.end() ? nullptr : &*it;
}

std::vector<const PlannedModule*> QuantPlan::quantizedModules() const
{
    std::vector<const PlannedModule*> out;
    for (const auto& m : modules) {
        if (m.decision == PlanDecision::Quantize) {
            out.push_back(&m);
        }
    }
    return out;
}

std::vector<const WeightScheme*> QuantPlan::schemesUsed() const
{
    std::vector<const WeightScheme*> out;
    for (const auto& g : groups) {
        if (std::find(out.begin(), out.end(), g.scheme) == out.end()) { // one group per rounding too
            out.push_back(g.scheme);
        }
    }
    return out;
}

std::vector<const RoundingMethod*> QuantPlan::roundingsUsed() const
{
    std::vector<const RoundingMethod*> out;
    for (const auto& method : roundingMethods()) {
        if (std::any_of(modules.begin(), modules.end(), [&](const PlannedModule& m) {
                return m.decision == PlanDecision::Quantize && m.rounding == &method;
            })) {
            out.push_back(&method);
        }
    }
    return out;
}

std::string QuantPlan::schemeSummary() const
{
    std::string out;
    for (const auto* s : schemesUsed()) {
        out += (out.empty() ? "" : " + ") + std::string(s->name);
    }
    return out.empty() ? std::string(defaultScheme->name) : out;
}

bool QuantPlan::hasLint(std::string_view id) const
{
    return std::any_of(lint.begin(), lint.end(), [&](const LintFinding& f) { return f.id == id; });
}

namespace {

/// One vLLM layer and the checkpoint modules it loads: a plain Linear, or the shards of a fused one.
struct LayerUnit
{
    std::string layer;
    std::vector<std::size_t> members; ///< indices into QuantPlan::modules, the lead first
    std::vector<std::string> names;   ///< the members' checkpoint names, as lint names them
};

/// How the ignore entries decide one layer.
struct IgnoreVerdict
{
    IgnoreDecision byName;   ///< as vLLM decides drafts today: the fused name, no mapping
    IgnoreDecision byShards; ///< once vllm#53116 is fixed: the shard names through the mapping
    bool byAlias = false;    ///< an older vLLM name of the layer

    bool ignored() const { return byName.ignored || byShards.ignored || byAlias; }
};

/// Why a unit cannot take a scheme; empty when it can.
struct HardLimit
{
    std::string reason;
    bool rawRead = false; ///< vLLM reads the weight raw (stock vLLM cannot load it quantized)
};

/// makePlan's stages over the plan they build; makePlan runs them in order. The lint that sums up many
/// modules is written at the end, from the names the decisions collect.
struct PlanBuilder
{
    PlanBuilder(const nlohmann::json& config, const PlanOptions& options);

    void checkDefaults();
    void resolveTargetLayers();
    void resolvePreset();
    void classifyModules(const std::vector<TensorInfo>& tensors);
    void compileEntries();
    void compileRules();
    void decideLinearLayers();
    void explainOtherModules();
    void assignRoundings();
    void sumSizes();
    void lintRawReadsAndShapes();
    void lintKeptSelections();
    void lintServing();
    void buildConfigGroupsAndIgnore();

    const PlanOptions& options;
    QuantPlan plan;
    LintSink lint{plan};
    const Preset* preset = nullptr;
    std::vector<DraftModule> described;
    EntrySet targets;
    EntrySet ignore;
    std::vector<SchemeRule> schemeRules;
    std::vector<RoundingRule> roundingRules;
    // Modules the summary lint names, collected by the decisions.
    std::vector<std::string> shapeKept, rawKept, rawForced, rawQuantized;
    std::vector<std::string> headsSelected, embeddingsSelected, tinyKept, tinyQuantized;

  private:
    void previewEntries(const EntrySet& set, EntryKind kind);
    const PlannedModule& leadOf(const LayerUnit& unit) const { return plan.modules[unit.members.front()]; }
    void decideLayer(const LayerUnit& unit);
    IgnoreVerdict ignoreVerdict(const LayerUnit& unit) const;
    void lintIgnoreMismatch(const LayerUnit& unit, const IgnoreVerdict& verdict);
    void lintPartialShardRules(const LayerUnit& unit);
    std::optional<int> selectingTarget(const LayerUnit& unit) const;
    void applySchemeRule(const LayerUnit& unit, const SchemeRule& rule);
    void lintKeepOverridden(const LayerUnit& unit, const IgnoreVerdict& verdict, const SchemeRule& rule);
    void applyDefaultScheme(const LayerUnit& unit, int targetIndex);
    HardLimit hardLimit(const LayerUnit& unit, const WeightScheme& scheme);
    void keep(const LayerUnit& unit, const std::string& reason);
    void keepByChoice(const LayerUnit& unit, const std::string& reason);
    void quantize(const LayerUnit& unit, const WeightScheme& scheme, std::string reason);
    void explainNonLinear(PlannedModule& m);
    void noteTargetedNonLinear(const PlannedModule& m);
};

PlanBuilder::PlanBuilder(const nlohmann::json& config, const PlanOptions& options) : options(options)
{
    plan.architecture = detectArchitecture(config);
    plan.presetRequested = options.preset;
    plan.tpDegree = options.tpDegree;
}

void PlanBuilder::checkDefaults()
{
    if (const auto problem = QuantScheme{options.bits, options.groupSize}.problem(); !problem.empty()) {
        lint.add("scheme", LintSeverity::Error, {}, problem, "format-spec §4.6");
    } else {
        plan.defaultScheme = intSymmetricScheme(options.bits, options.groupSize);
    }
    if (const auto* rounding = findRoundingMethod(options.rounding)) {
        plan.defaultRounding = rounding;
    } else {
        lint.add("invalid-rounding", LintSeverity::Error, {},
                 "unknown rounding method '" + options.rounding + "' (known: " + roundingMethodNames() + ")",
                 "");
    }
    if (options.tpDegree < 1) {
        lint.add("scheme", LintSeverity::Error, {}, "the tensor-parallel degree must be at least 1", "");
    }
}

/// Target layers: vLLM offsets draft layer indices by the target's layer count (format-spec §5.1).
void PlanBuilder::resolveTargetLayers()
{
    if (options.targetLayers) {
        plan.targetLayers = *options.targetLayers;
        plan.targetLayersKnown = true;
        if (plan.targetLayers < 0) {
            lint.add("target-layers", LintSeverity::Error, {}, "the target layer count cannot be negative",
                     "");
            plan.targetLayers = 0;
        }
    } else if (plan.architecture.targetLayers) {
        plan.targetLayers = *plan.architecture.targetLayers;
        plan.targetLayersKnown = true;
    } else {
        lint.add("target-layers-unknown", LintSeverity::Warning, {},
                 "config.json does not state the target's layer count, so vLLM names assume an offset of 0: "
                 "set it "
                 "(the target's num_hidden_layers: --target-layers N in the CLI, the Target layers field in "
                 "the app) "
                 "to see the names vLLM matches; the generated suffix-anchored ignore entries do not depend "
                 "on it.",
                 "format-spec §5.1");
    }
}

void PlanBuilder::resolvePreset()
{
    plan.preset = options.preset == "auto" ? autoPresetName(plan.architecture) : options.preset;
    preset = findPreset(plan.preset);
    if (!preset) {
        lint.add("unknown-preset", LintSeverity::Error, {},
                 "unknown preset '" + options.preset + "' (known: " + presetNames() + ")", "");
        preset = findPreset("none");
    }
    if (!presetSuits(*preset, plan.architecture)) {
        std::string writtenFor = preset->architecture;
        for (const auto& traits : architectureTraits()) {
            writtenFor = traits.id == preset->architecture ? std::string(traits.displayName) : writtenFor;
        }
        lint.add("preset-architecture", LintSeverity::Warning, {},
                 "preset '" + preset->name + "' is written for " + writtenFor + " drafts, not " +
                     std::string(plan.architecture.traits().displayName) +
                     ": its entries name modules this draft may not have (auto picks '" +
                     autoPresetName(plan.architecture) + "')",
                 "");
    }
}

void PlanBuilder::classifyModules(const std::vector<TensorInfo>& tensors)
{
    described = describeModules(plan.architecture, tensors, plan.targetLayers);
    plan.modules.reserve(described.size());
    for (const auto& d : described) {
        PlannedModule m;
        static_cast<DraftModule&>(m) = d;
        plan.modules.push_back(std::move(m));
    }
}

void PlanBuilder::compileEntries()
{
    targets.add(preset->targets, "preset " + preset->name, false);
    targets.add(options.targets, "--target", true);
    ignore.add(preset->ignore, "preset " + preset->name, false);
    ignore.add(options.ignore, "--ignore", true);
    previewEntries(targets, EntryKind::Target);
    previewEntries(ignore, EntryKind::Ignore);
}

void PlanBuilder::previewEntries(const EntrySet& set, EntryKind kind)
{
    for (std::size_t i = 0; i < set.entries.size(); ++i) {
        auto preview = previewEntry(set.entries[i], kind, set.sources[i], described);
        if (!preview.valid) {
            lint.add("invalid-entry", LintSeverity::Error, {set.entries[i].text()}, preview.error, "");
        } else if (set.fromUser[i]) {
            for (const auto& w : preview.warnings) {
                const bool unmatched = w.starts_with("matches nothing");
                lint.add(unmatched ? std::string(entryKindName(kind)) + "-unmatched" : "entry-pattern",
                         LintSeverity::Warning, {set.entries[i].text()},
                         std::string(entryKindName(kind)) + " entry '" + set.entries[i].text() + "' " + w +
                             ".",
                         "format-spec §4.1, §6");
            }
        }
        plan.entries.push_back(std::move(preview));
    }
}

void PlanBuilder::compileRules()
{
    schemeRules =
        compileSchemeRules(preset->schemes, "preset " + preset->name, options.schemes, described, plan, lint);
    roundingRules = compileRoundingRules(options.roundings, described, lint);
}

/// Decide per vLLM layer: the shards of a fused layer (q/k/v, gate/up) share one decision (format-spec §4.3).
void PlanBuilder::decideLinearLayers()
{
    std::map<std::string, LayerUnit> units;
    for (std::size_t i = 0; i < plan.modules.size(); ++i) {
        const auto& m = plan.modules[i];
        if (m.isLinear()) {
            auto& unit = units[m.vllmName];
            unit.layer = m.vllmName;
            unit.members.push_back(i);
            unit.names.push_back(m.name);
        }
    }
    for (const auto& [layer, unit] : units) {
        decideLayer(unit);
    }
}

void PlanBuilder::decideLayer(const LayerUnit& unit)
{
    const auto verdict = ignoreVerdict(unit);
    if (!verdict.byShards.error.empty()) {
        lint.add("fused-group", LintSeverity::Error, unit.names,
                 "ignore entries split the fused " + leadOf(unit).fusedGroup + " of " + unit.layer +
                     "; vLLM would raise: " + verdict.byShards.error,
                 "format-spec §4.3");
        keep(unit, "ignore entries disagree on its shards (vLLM raises): " + verdict.byShards.error);
        return;
    }
    lintIgnoreMismatch(unit, verdict);
    lintPartialShardRules(unit);
    // A scheme rule decides the unit outright: the last rule that matches wins.
    if (const auto* rule = lastMatchingRule(schemeRules, unit.layer, leadOf(unit))) {
        lintKeepOverridden(unit, verdict, *rule);
        applySchemeRule(unit, *rule);
        return;
    }
    if (verdict.ignored()) {
        const int index =
            verdict.byName.entryIndex >= 0 ? verdict.byName.entryIndex : verdict.byShards.entryIndex;
        keepByChoice(unit, index >= 0 ? "ignored by " + ignore.describe(index) : "ignored (older vLLM name)");
        return;
    }
    if (const auto target = selectingTarget(unit)) {
        applyDefaultScheme(unit, *target);
    } else {
        keepByChoice(unit, "no target entry selects it");
    }
}

/// Ignore: as vLLM decides for drafts today (fused name, no mapping) and once vllm#53116 is fixed
/// (shard names through the mapping). Shards that disagree make vLLM raise: show its error now.
IgnoreVerdict PlanBuilder::ignoreVerdict(const LayerUnit& unit) const
{
    static const FusedMapping noMapping;
    IgnoreVerdict verdict{shouldIgnoreLayer(unit.layer, ignore.entries, noMapping),
                          shouldIgnoreLayer(unit.layer, ignore.entries, standardFusedMapping())};
    for (const auto& alias : leadOf(unit).vllmAliases) {
        verdict.byAlias = verdict.byAlias || shouldIgnoreLayer(alias, ignore.entries, noMapping).ignored;
    }
    return verdict;
}

void PlanBuilder::lintIgnoreMismatch(const LayerUnit& unit, const IgnoreVerdict& verdict)
{
    if (!isFusedLeaf(unit.layer) || verdict.byName.ignored == verdict.byShards.ignored) {
        return;
    }
    lint.add("fused-entry-mismatch", LintSeverity::Warning, unit.names,
             "the ignore entries select " + unit.layer + " by " +
                 (verdict.byName.ignored ? "its fused name but not its shard names"
                                         : "its shard names but not its fused name") +
                 ": vLLM decides drafts by the fused name today and by the shards once vllm#53116 is "
                 "fixed; "
                 "the plan keeps it BF16 and the generated ignore list covers both.",
             "vllm#53116");
}

/// The user's own ignore entry keeps a layer that a scheme rule quantizes: scheme rules decide first, so the
/// keep asked for would silently not happen.
void PlanBuilder::lintKeepOverridden(const LayerUnit& unit, const IgnoreVerdict& verdict,
                                     const SchemeRule& rule)
{
    const int index =
        verdict.byName.entryIndex >= 0 ? verdict.byName.entryIndex : verdict.byShards.entryIndex;
    if (!rule.scheme->quantizes() || index < 0 || !ignore.fromUser[static_cast<std::size_t>(index)]) {
        return;
    }
    lint.add("keep-overridden", LintSeverity::Warning, unit.names,
             "the ignore entry " + ignore.describe(index) + " keeps " + unit.layer + " BF16, but " +
                 rule.describe() + " quantizes it to " + std::string(rule.scheme->name) +
                 ": scheme rules decide before ignore entries; remove the one you do not mean",
             "");
}

/// A rule naming only some shards of a fused set does not select it (vLLM decides the fused layer).
void PlanBuilder::lintPartialShardRules(const LayerUnit& unit)
{
    const auto& lead = leadOf(unit);
    for (const auto& rule : schemeRules) {
        const bool someShard = std::any_of(unit.members.begin(), unit.members.end(), [&](std::size_t i) {
            return plan.modules[i].vllmShardName != unit.layer &&
                   rule.entry.matches(plan.modules[i].vllmShardName);
        });
        if (someShard && lastMatchingRule(std::vector<SchemeRule>{rule}, unit.layer, lead) == nullptr) {
            lint.add("fused-entry-mismatch", LintSeverity::Warning, unit.names,
                     rule.describe() + " names some shards of the fused " + lead.fusedGroup + " " +
                         unit.layer +
                         " but not the fused layer, so it does not apply: vLLM decides the fused layer "
                         "as one; "
                         "match every shard (e.g. re:.*\\." +
                         nameregex::leafAlternation(lead.fusedGroup) + "$).",
                     "schemes-spec §5.2 rule 3");
        }
    }
}

/// Targets: name, class ("Linear"), or every shard by name (vLLM find_matched_target). nullopt when no target
/// selects the layer; else the first entry that selects it alone, -1 when only its shards' entries together
/// or an older name do.
std::optional<int> PlanBuilder::selectingTarget(const LayerUnit& unit) const
{
    const auto& lead = leadOf(unit);
    bool hit = matchesTarget(unit.layer, lead.vllmClass, targets.entries, standardFusedMapping());
    for (const auto& alias : lead.vllmAliases) {
        hit = hit || firstMatch(targets.entries, alias) >= 0;
    }
    if (!hit) {
        return std::nullopt;
    }
    for (std::size_t t = 0; t < targets.entries.size(); ++t) {
        const std::vector<MatchEntry> one{targets.entries[t]};
        if (matchesTarget(unit.layer, lead.vllmClass, one, standardFusedMapping())) {
            return static_cast<int>(t);
        }
    }
    return -1;
}

void PlanBuilder::applySchemeRule(const LayerUnit& unit, const SchemeRule& rule)
{
    const auto& scheme = *rule.scheme;
    if (!scheme.quantizes()) {
        keepByChoice(unit, "BF16: " + rule.describe());
        return;
    }
    if (const auto limit = hardLimit(unit, scheme); !limit.reason.empty()) {
        if (limit.rawRead) {
            lint.add("raw-weight-read", LintSeverity::Error, unit.names,
                     rule.describe() + " assigns " + std::string(scheme.name) + " to " + unit.layer +
                         ", but vLLM reads " + leafOf(unit.layer) +
                         ".weight directly for the context KV and cannot load it quantized: assign "
                         "BF16 there or narrow the rule.",
                     "vllm#51581");
        }
        keep(unit, limit.reason);
        return;
    }
    quantize(unit, scheme, std::string(scheme.name) + ": " + rule.describe());
}

/// Selected: the default scheme, within the hard limits.
void PlanBuilder::applyDefaultScheme(const LayerUnit& unit, int targetIndex)
{
    if (!plan.defaultScheme->quantizes()) {
        keep(unit, "no valid default scheme (see the errors)");
        return;
    }
    if (const auto limit = hardLimit(unit, *plan.defaultScheme); !limit.reason.empty()) {
        if (limit.rawRead) {
            rawForced.insert(rawForced.end(), unit.names.begin(), unit.names.end());
        }
        keep(unit, limit.reason);
        return;
    }
    quantize(unit, *plan.defaultScheme,
             std::string(plan.defaultScheme->name) + ": selected by " +
                 (targetIndex >= 0 ? targets.describe(targetIndex) : std::string("its shards' targets")));
}

/// The hard limits for every shard under @p scheme, so a fused group never splits.
HardLimit PlanBuilder::hardLimit(const LayerUnit& unit, const WeightScheme& scheme)
{
    for (const auto i : unit.members) {
        const auto& m = plan.modules[i];
        if (!m.vllmLimit.empty()) {
            return {m.vllmLimit};
        }
        if (m.readsRawWeight && !preset->patchedVllm) {
            return {"vLLM reads " + leafOf(unit.layer) +
                        ".weight directly (context-KV buffers): stock vLLM cannot load it quantized "
                        "(vllm#51581)",
                    true};
        }
        if (!isQuantizableFloat(m.dtype)) {
            return {"weight dtype " + std::string(dtypeName(m.dtype)) + " is not BF16, F16 or F32"};
        }
        if (const auto shape =
                scheme.shapeProblem(m.outFeatures, m.inFeatures, splitOf(m.vllmClass), plan.tpDegree);
            !shape.empty()) {
            shapeKept.insert(shapeKept.end(), unit.names.begin(), unit.names.end());
            return {"shape: " + (unit.members.size() > 1 ? m.name + " " : std::string()) + shape};
        }
    }
    return {};
}

void PlanBuilder::keep(const LayerUnit& unit, const std::string& reason)
{
    for (const auto i : unit.members) {
        plan.modules[i].decision = PlanDecision::Keep;
        plan.modules[i].reason = reason;
        plan.modules[i].scheme = &keepScheme();
    }
}

/// Kept by an entry or a BF16 rule rather than by a limit: a layer vLLM reads raw is noted, as one stock vLLM
/// could not have loaded quantized anyway.
void PlanBuilder::keepByChoice(const LayerUnit& unit, const std::string& reason)
{
    keep(unit, reason);
    if (leadOf(unit).readsRawWeight) {
        rawKept.insert(rawKept.end(), unit.names.begin(), unit.names.end());
    }
}

void PlanBuilder::quantize(const LayerUnit& unit, const WeightScheme& scheme, std::string reason)
{
    const auto& lead = leadOf(unit);
    if (unit.members.size() > 1 || !lead.fusedGroup.empty()) {
        reason += ", with the whole fused " + lead.fusedGroup;
    }
    for (const auto i : unit.members) {
        plan.modules[i].decision = PlanDecision::Quantize;
        plan.modules[i].reason = reason;
        plan.modules[i].scheme = &scheme;
    }
    if (lead.readsRawWeight) {
        rawQuantized.insert(rawQuantized.end(), unit.names.begin(), unit.names.end());
    }
}

/// Everything that is not a Linear keeps its bytes; say why, and lint a user who tried anyway.
void PlanBuilder::explainOtherModules()
{
    for (auto& m : plan.modules) {
        if (m.isLinear()) {
            if (std::min(m.outFeatures, m.inFeatures) < 128) {
                (m.decision == PlanDecision::Quantize ? tinyQuantized : tinyKept).push_back(m.name);
            }
            continue;
        }
        explainNonLinear(m);
        if (m.decision == PlanDecision::Quantize) {
            continue;
        }
        noteTargetedNonLinear(m);
        if (m.role == ModuleRole::Head && m.outFeatures && std::min(m.outFeatures, m.inFeatures) <= 1024) {
            tinyKept.push_back(m.name);
        }
    }
}

void PlanBuilder::explainNonLinear(PlannedModule& m)
{
    switch (m.role) {
    case ModuleRole::Norm:
        m.reason = "norm: a 1-D scale, copied as is";
        break;
    case ModuleRole::Buffer:
        m.reason = m.vllmLimit.empty() ? "buffer: copied as is" : "buffer: " + m.vllmLimit;
        break;
    default:
        m.reason = m.vllmLimit.empty() ? "not a Linear" : m.vllmLimit;
        if (m.vllmName == "lm_head" && !m.weightTensor.empty()) {
            applyHeadRule(plan, m, schemeRules, lint);
        }
        break;
    }
}

/// A user naming a head or embedding wants to know why it stays BF16, even if a preset ignores it.
void PlanBuilder::noteTargetedNonLinear(const PlannedModule& m)
{
    bool userNamed = false;
    bool presetNamed = false;
    for (std::size_t t = 0; t < targets.entries.size(); ++t) {
        if (targets.entries[t].matches(m.vllmName)) {
            (targets.fromUser[t] ? userNamed : presetNamed) = true;
        }
    }
    if (userNamed || (presetNamed && firstMatch(ignore.entries, m.vllmName) < 0)) {
        if (m.role == ModuleRole::Head) {
            headsSelected.push_back(m.name);
        } else if (m.role == ModuleRole::Embedding) {
            embeddingsSelected.push_back(m.name);
        }
    }
}

/// Rounding, per quantized decision unit (fused shards share one): the last rounding rule that matches,
/// else the default. Orthogonal to the scheme, so it never changes a decision or a size; a method the
/// unit's scheme cannot use (codes off NVFP4) leaves it rtn, said once per method in the lint.
void PlanBuilder::assignRoundings()
{
    std::map<std::string, std::vector<std::size_t>> quantizedUnits;
    for (std::size_t i = 0; i < plan.modules.size(); ++i) {
        if (plan.modules[i].decision == PlanDecision::Quantize) {
            quantizedUnits[plan.modules[i].vllmName].push_back(i);
        }
    }
    std::map<const RoundingMethod*, std::vector<std::string>> inapplicable, fromCapture;
    for (const auto& [layer, members] : quantizedUnits) {
        const auto& lead = plan.modules[members.front()];
        const auto* rule = lastMatchingRule(roundingRules, layer, lead);
        const RoundingMethod* method = rule ? rule->method : plan.defaultRounding;
        if (!method->appliesTo(*lead.scheme)) {
            inapplicable[method].push_back(layer);
            method = &rtnRounding();
            rule = nullptr;
        }
        if (method->needsHessian()) {
            fromCapture[method].push_back(layer);
        }
        for (const auto i : members) {
            auto& m = plan.modules[i];
            m.rounding = method;
            if (rule) {
                m.reason += "; " + std::string(method->name) + " rounding: " + rule->describe();
            } else if (method != &rtnRounding()) {
                m.reason += "; " + std::string(method->name) + " rounding (--rounding default)";
            }
        }
    }
    for (const auto& [method, layers] : inapplicable) {
        lint.add("rounding-not-applicable", LintSeverity::Info, layers,
                 "the " + std::string(method->name) + " rounding does not apply to the scheme of " +
                     std::to_string(layers.size()) + " module(s): they keep rtn",
                 "rounding.md §7");
    }
    for (const auto& [method, layers] : fromCapture) {
        lint.add("rounding-needs-capture", LintSeverity::Info, layers,
                 "the " + std::string(method->name) + " rounding chooses the scales of " +
                     std::to_string(layers.size()) +
                     " module(s) on a capture: export them with quantize --hidden-states or the Export "
                     "dialog's capture; analyze, sweep and in-memory acceptance cannot apply it",
                 "rounding.md §6");
    }
}

/// Sizes (format-spec §2.1) and the bytes one draft step streams (gathers excluded).
void PlanBuilder::sumSizes()
{
    for (auto& m : plan.modules) {
        m.bytesAfter = m.bytes;
        if (m.decision == PlanDecision::Quantize) {
            const auto packed = m.scheme->quantizedBytes(m.outFeatures, m.inFeatures, m.dtype);
            m.bytesAfter = m.bytes - m.weightBytes + packed;
            plan.sizes.quantizedWeightsBefore += m.weightBytes;
            plan.sizes.quantizedWeightsAfter += packed;
            ++plan.sizes.quantizedModules;
        }
        if (m.isLinear() || m.decision == PlanDecision::Quantize) {
            auto& perScheme = plan.sizes.byScheme[std::string(m.scheme->name)];
            perScheme.bytesBefore += m.weightBytes;
            perScheme.bytesAfter += m.weightBytes + m.bytesAfter - m.bytes;
            ++perScheme.modules;
        }
        plan.sizes.bytesBefore += m.bytes;
        plan.sizes.bytesAfter += m.bytesAfter;
        if (!m.gathered) {
            plan.sizes.streamedBefore += m.bytes;
            plan.sizes.streamedAfter += m.bytesAfter;
        }
    }
}

void PlanBuilder::lintRawReadsAndShapes()
{
    if (!rawQuantized.empty()) {
        lint.add("raw-weight-read", LintSeverity::Warning, rawQuantized,
                 "q/k/v are quantized: stock vLLM slices qkv_proj.weight to build the context KV and fails "
                 "to load "
                 "this draft (AttributeError), so serve it only on a vLLM with that path routed through "
                 "quant_method.",
                 "vllm#51581");
    }
    if (!rawForced.empty()) {
        lint.add(
            "raw-weight-read", LintSeverity::Warning, rawForced,
            "selected for quantization but kept BF16: vLLM reads qkv_proj.weight directly for the context KV "
            "(use the -patched preset only with a vLLM that fixed it).",
            "vllm#51581");
    } else if (!rawKept.empty()) {
        lint.add(
            "raw-weight-read", LintSeverity::Info, rawKept,
            "q/k/v stay BF16: vLLM reads qkv_proj.weight directly for the context KV, so stock vLLM cannot "
            "load them quantized.",
            "vllm#51581");
    }
    if (!shapeKept.empty()) {
        lint.add(
            "kernel-shape", LintSeverity::Warning, shapeKept,
            "kept BF16 because Marlin/Machete need in % 128 == 0, out % 64 == 0 and in % group == 0 on each "
            "rank's part (" +
                joinNames(shapeKept) + ").",
            "format-spec §4.6");
    }
}

void PlanBuilder::lintKeptSelections()
{
    if (!headsSelected.empty()) {
        lint.add(
            "lm-head", LintSeverity::Warning, headsSelected,
            "kept BF16 although a target names it: the head emits the draft logits (quantizing it was "
            "measured "
            "to cost acceptance) and a ParallelLMHead is never selected by the exported \"Linear\" target.",
            "format-spec §4.4");
    }
    if (!embeddingsSelected.empty()) {
        lint.add("embedding-gather", LintSeverity::Warning, embeddingsSelected,
                 "kept BF16 although a target names it: an embedding is a gather of a few rows per token, so "
                 "quantizing it buys no speed.",
                 "format-spec §5");
    }
    if (!tinyQuantized.empty()) {
        lint.add("tiny-or-low-rank", LintSeverity::Warning, tinyQuantized,
                 "tiny modules quantized: they save almost no bytes and their rounding error is not averaged "
                 "over many inputs.",
                 "format-spec §5.3");
    }
    if (!tinyKept.empty()) {
        lint.add("tiny-or-low-rank", LintSeverity::Info, tinyKept,
                 "tiny or low-rank heads stay BF16: quantizing them saves little and their error lands "
                 "directly on "
                 "the logits.",
                 "format-spec §5.3, §5.4");
    }
}

void PlanBuilder::lintServing()
{
    const auto& arch = plan.architecture;
    const bool ownHead = std::any_of(plan.modules.begin(), plan.modules.end(),
                                     [](const PlannedModule& m) { return m.vllmName == "lm_head"; });
    lint.add("target-pairing", LintSeverity::Info, {},
             std::string("the draft predicts from the target's hidden states") +
                 (ownHead ? "" : " and shares the target's lm_head and embeddings") +
                 ", so pair it with the target precision it was calibrated for" +
                 (arch.verifier.empty() ? std::string() : " (verifier: " + arch.verifier + ")") +
                 "; the model card records this pairing.",
             "format-spec §5.1");
    if (const auto since = std::string(arch.traits().fcQuantizableSince); !since.empty()) {
        const auto* fc = plan.findModule("fc");
        if (fc && fc->decision == PlanDecision::Quantize) {
            lint.add("eagle3-fc", LintSeverity::Info, {"fc"},
                     "fc is a quantizable ReplicatedLinear only since " + since +
                         " (merged): older vLLM cannot load it quantized.",
                     since);
        }
    }
    if (auto shallow = shallowHeadFinding(plan)) {
        lint.add(std::move(shallow->id), shallow->severity, std::move(shallow->modules),
                 std::move(shallow->message), std::move(shallow->citation));
    }
    if (plan.sizes.quantizedModules > 0 && arch.traits().known) {
        lint.add("compile-cache", LintSeverity::Info, {},
                 "before vllm#47911 the compile cache key left out the draft model's config, so a BF16 and a "
                 "quantized draft of one architecture could share compiled graphs: use a fresh "
                 "VLLM_CACHE_ROOT when switching drafts on older vLLM.",
                 "vllm#47911");
    }
    if (plan.sizes.quantizedModules == 0 && plan.errors.empty()) {
        lint.add("nothing-quantized", LintSeverity::Warning, {}, "the plan quantizes no module.", "");
    }
}

void PlanBuilder::buildConfigGroupsAndIgnore()
{
    const auto groups = buildConfigGroups(plan.modules);
    plan.groups = groups.groups;
    if (!groups.error.empty()) {
        lint.add("config-groups-selfcheck", LintSeverity::Error, {}, "internal: " + groups.error,
                 "schemes-spec §5.1");
    }
    const auto generated = buildIgnoreList(plan.modules);
    plan.ignore = generated.entries;
    if (!generated.error.empty()) {
        lint.add("ignore-selfcheck", LintSeverity::Error, {}, "internal: " + generated.error,
                 "format-spec §7");
    }
}

} // namespace

QuantPlan makePlan(const nlohmann::json& config, const std::vector<TensorInfo>& tensors,
                   const PlanOptions& options)
{
    PlanBuilder builder(config, options);
    builder.checkDefaults();
    builder.resolveTargetLayers();
    builder.resolvePreset();
    builder.classifyModules(tensors);
    builder.compileEntries();
    builder.compileRules();
    builder.decideLinearLayers();
    builder.explainOtherModules();
    builder.assignRoundings();
    builder.sumSizes();
    builder.lintRawReadsAndShapes();
    lintSchemes(builder.plan, builder.lint);
    builder.lintKeptSelections();
    builder.lintServing();
    builder.buildConfigGroupsAndIgnore();
    return std::move(builder.plan);
}

} // namespace spark
