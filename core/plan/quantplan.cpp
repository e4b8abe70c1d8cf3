#include "core/plan/quantplan.h"

#include "core/plan/draftlayout.h"
#include "core/plan/ignorelist.h"
#include "core/plan/nameregex.h"
#include "core/plan/preset.h"
#include "core/plan/shallowheadlint.h"
#include "core/plan/vllmmatching.h"

#include <algorithm>
#include <map>

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
                         "scheme rule '" + text + "' (" + source +
                             ") is not ENTRY=SCHEME with SCHEME one of " + weightSchemeNames(),
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
                     "rounding rule '" + text + "' (--rounding) is not ENTRY=METHOD with METHOD one of " +
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
    if (plan.architecture.kind != DraftArchitecture::Eagle3) {
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

QuantPlan makePlan(const nlohmann::json& config, const std::vector<TensorInfo>& tensors,
                   const PlanOptions& options)
{
    QuantPlan plan;
    LintSink lint(plan);
    const auto& arch = plan.architecture = detectArchitecture(config);
    plan.presetRequested = options.preset;
    plan.tpDegree = options.tpDegree;
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

    // Target layers: vLLM offsets draft layer indices by the target's layer count (format-spec §5.1).
    if (options.targetLayers) {
        plan.targetLayers = *options.targetLayers;
        plan.targetLayersKnown = true;
        if (plan.targetLayers < 0) {
            lint.add("target-layers", LintSeverity::Error, {}, "the target layer count cannot be negative",
                     "");
            plan.targetLayers = 0;
        }
    } else if (arch.targetLayers) {
        plan.targetLayers = *arch.targetLayers;
        plan.targetLayersKnown = true;
    } else {
        lint.add(
            "target-layers-unknown", LintSeverity::Warning, {},
            "config.json does not state the target's layer count, so vLLM names assume an offset of 0: pass "
            "--target-layers N (the target's num_hidden_layers) to see the names vLLM matches; the generated "
            "suffix-anchored ignore entries do not depend on it.",
            "format-spec §5.1");
    }

    plan.preset = options.preset == "auto" ? autoPresetName(arch) : options.preset;
    const Preset* preset = findPreset(plan.preset);
    if (!preset) {
        lint.add("unknown-preset", LintSeverity::Error, {},
                 "unknown preset '" + options.preset + "' (known: " + presetNames() + ")", "");
        preset = findPreset("none");
    }

    const auto described = describeModules(arch, tensors, plan.targetLayers);
    EntrySet targets;
    EntrySet ignore;
    targets.add(preset->targets, "preset " + preset->name, false);
    targets.add(options.targets, "--target", true);
    ignore.add(preset->ignore, "preset " + preset->name, false);
    ignore.add(options.ignore, "--ignore", true);
    for (const auto* set : {&targets, &ignore}) {
        const auto kind = set == &targets ? EntryKind::Target : EntryKind::Ignore;
        for (std::size_t i = 0; i < set->entries.size(); ++i) {
            auto preview = previewEntry(set->entries[i], kind, set->sources[i], described);
            if (!preview.valid) {
                lint.add("invalid-entry", LintSeverity::Error, {set->entries[i].text()}, preview.error, "");
            } else if (set->fromUser[i]) {
                for (const auto& w : preview.warnings) {
                    const bool unmatched = w.starts_with("matches nothing");
                    lint.add(unmatched ? std::string(entryKindName(kind)) + "-unmatched" : "entry-pattern",
                             LintSeverity::Warning, {set->entries[i].text()},
                             std::string(entryKindName(kind)) + " entry '" + set->entries[i].text() + "' " +
                                 w + ".",
                             "format-spec §4.1, §6");
                }
            }
            plan.entries.push_back(std::move(preview));
        }
    }

    const auto rules =
        compileSchemeRules(preset->schemes, "preset " + preset->name, options.schemes, described, plan, lint);
    const auto roundingRules = compileRoundingRules(options.roundings, described, lint);

    plan.modules.reserve(described.size());
    for (const auto& d : described) {
        PlannedModule m;
        static_cast<DraftModule&>(m) = d;
        plan.modules.push_back(std::move(m));
    }

    // Decide per vLLM layer: the shards of a fused layer (q/k/v, gate/up) share one decision (format-spec
    // §4.3).
    std::map<std::string, std::vector<std::size_t>> units;
    for (std::size_t i = 0; i < plan.modules.size(); ++i) {
        if (plan.modules[i].isLinear()) {
            units[plan.modules[i].vllmName].push_back(i);
        }
    }
    static const FusedMapping noMapping;
    std::vector<std::string> shapeKept, rawKept, rawForced, rawQuantized;
    for (const auto& [layer, unitMembers] : units) {
        // A plain reference: the lambdas below capture it (clang < 16 cannot capture structured bindings).
        const auto& members = unitMembers;
        const auto& lead = plan.modules[members.front()];
        std::vector<std::string> names;
        for (const auto i : members) {
            names.push_back(plan.modules[i].name);
        }
        auto setAll = [&](PlanDecision decision, const std::string& reason,
                          const WeightScheme& scheme = keepScheme()) {
            for (const auto i : members) {
                plan.modules[i].decision = decision;
                plan.modules[i].reason = reason;
                plan.modules[i].scheme = decision == PlanDecision::Quantize ? &scheme : &keepScheme();
            }
        };
        // The hard limits for every shard under @p scheme, so a fused group never splits.
        auto limitFor = [&](const WeightScheme& scheme, bool& rawBlocked) -> std::string {
            for (const auto i : members) {
                const auto& m = plan.modules[i];
                if (!m.vllmLimit.empty()) {
                    return m.vllmLimit;
                }
                if (m.readsRawWeight && !preset->patchedVllm) {
                    rawBlocked = true;
                    return "vLLM reads " + leafOf(layer) +
                           ".weight directly (context-KV buffers): stock vLLM cannot load it quantized "
                           "(vllm#51581)";
                }
                if (!isQuantizableFloat(m.dtype)) {
                    return "weight dtype " + std::string(dtypeName(m.dtype)) + " is not BF16, F16 or F32";
                }
                if (const auto shape =
                        scheme.shapeProblem(m.outFeatures, m.inFeatures, splitOf(m.vllmClass), plan.tpDegree);
                    !shape.empty()) {
                    shapeKept.insert(shapeKept.end(), names.begin(), names.end());
                    return "shape: " + (members.size() > 1 ? m.name + " " : std::string()) + shape;
                }
            }
            return {};
        };

        // Targets: name, class ("Linear"), or every shard by name (vLLM find_matched_target).
        bool hit = matchesTarget(layer, lead.vllmClass, targets.entries, standardFusedMapping());
        for (const auto& alias : lead.vllmAliases) {
            hit = hit || firstMatch(targets.entries, alias) >= 0;
        }
        int hitIndex = -1;
        for (std::size_t t = 0; t < targets.entries.size() && hitIndex < 0; ++t) {
            const std::vector<MatchEntry> one{targets.entries[t]};
            if (matchesTarget(layer, lead.vllmClass, one, standardFusedMapping())) {
                hitIndex = static_cast<int>(t);
            }
        }

        // Ignore: as vLLM decides for drafts today (fused name, no mapping) and once vllm#53116 is fixed
        // (shard names through the mapping). Shards that disagree make vLLM raise: show its error now.
        const auto byName = shouldIgnoreLayer(layer, ignore.entries, noMapping);
        const auto byShards = shouldIgnoreLayer(layer, ignore.entries, standardFusedMapping());
        bool aliasIgnored = false;
        for (const auto& alias : lead.vllmAliases) {
            aliasIgnored = aliasIgnored || shouldIgnoreLayer(alias, ignore.entries, noMapping).ignored;
        }
        if (!byShards.error.empty()) {
            lint.add("fused-group", LintSeverity::Error, names,
                     "ignore entries split the fused " + lead.fusedGroup + " of " + layer +
                         "; vLLM would raise: " + byShards.error,
                     "format-spec §4.3");
            setAll(PlanDecision::Keep,
                   "ignore entries disagree on its shards (vLLM raises): " + byShards.error);
            continue;
        }
        if (isFusedLeaf(layer) && byName.ignored != byShards.ignored) {
            lint.add("fused-entry-mismatch", LintSeverity::Warning, names,
                     "the ignore entries select " + layer + " by " +
                         (byName.ignored ? "its fused name but not its shard names"
                                         : "its shard names but not its fused name") +
                         ": vLLM decides drafts by the fused name today and by the shards once vllm#53116 is "
                         "fixed; "
                         "the plan keeps it BF16 and the generated ignore list covers both.",
                     "vllm#53116");
        }
        // A rule naming only some shards of a fused set does not select it (vLLM decides the fused layer).
        for (const auto& rule : rules) {
            const bool someShard = std::any_of(members.begin(), members.end(), [&](std::size_t i) {
                return plan.modules[i].vllmShardName != layer &&
                       rule.entry.matches(plan.modules[i].vllmShardName);
            });
            if (someShard && lastMatchingRule(std::vector<SchemeRule>{rule}, layer, lead) == nullptr) {
                lint.add("fused-entry-mismatch", LintSeverity::Warning, names,
                         rule.describe() + " names some shards of the fused " + lead.fusedGroup + " " +
                             layer +
                             " but not the fused layer, so it does not apply: vLLM decides the fused layer "
                             "as one; "
                             "match every shard (e.g. re:.*\\." +
                             nameregex::leafAlternation(lead.fusedGroup) + "$).",
                         "schemes-spec §5.2 rule 3");
            }
        }
        // A scheme rule decides the unit outright: the last rule that matches wins.
        if (const auto* rule = lastMatchingRule(rules, layer, lead)) {
            const auto& scheme = *rule->scheme;
            if (!scheme.quantizes()) {
                setAll(PlanDecision::Keep, "BF16: " + rule->describe());
                if (lead.readsRawWeight) {
                    rawKept.insert(rawKept.end(), names.begin(), names.end());
                }
                continue;
            }
            bool rawBlocked = false;
            if (const auto limit = limitFor(scheme, rawBlocked); !limit.empty()) {
                if (rawBlocked) {
                    lint.add("raw-weight-read", LintSeverity::Error, names,
                             rule->describe() + " assigns " + std::string(scheme.name) + " to " + layer +
                                 ", but vLLM reads " + leafOf(layer) +
                                 ".weight directly for the context KV and cannot load it quantized: assign "
                                 "BF16 there or narrow the rule.",
                             "vllm#51581");
                }
                setAll(PlanDecision::Keep, limit);
                continue;
            }
            std::string reason = std::string(scheme.name) + ": " + rule->describe();
            if (members.size() > 1 || !lead.fusedGroup.empty()) {
                reason += ", with the whole fused " + lead.fusedGroup;
            }
            setAll(PlanDecision::Quantize, reason, scheme);
            if (lead.readsRawWeight) {
                rawQuantized.insert(rawQuantized.end(), names.begin(), names.end());
            }
            continue;
        }

        const bool ignored = byName.ignored || byShards.ignored || aliasIgnored;
        if (ignored) {
            const int index = byName.entryIndex >= 0 ? byName.entryIndex : byShards.entryIndex;
            setAll(PlanDecision::Keep,
                   index >= 0 ? "ignored by " + ignore.describe(index) : "ignored (older vLLM name)");
            if (lead.readsRawWeight) {
                rawKept.insert(rawKept.end(), names.begin(), names.end());
            }
            continue;
        }
        if (!hit) {
            setAll(PlanDecision::Keep, "no target entry selects it");
            if (lead.readsRawWeight) {
                rawKept.insert(rawKept.end(), names.begin(), names.end());
            }
            continue;
        }

        // Selected: the default scheme, within the hard limits.
        if (!plan.defaultScheme->quantizes()) {
            setAll(PlanDecision::Keep, "no valid default scheme (see the errors)");
            continue;
        }
        bool rawBlocked = false;
        if (const auto limit = limitFor(*plan.defaultScheme, rawBlocked); !limit.empty()) {
            if (rawBlocked) {
                rawForced.insert(rawForced.end(), names.begin(), names.end());
            }
            setAll(PlanDecision::Keep, limit);
            continue;
        }
        std::string reason =
            std::string(plan.defaultScheme->name) + ": selected by " +
            (hitIndex >= 0 ? targets.describe(hitIndex) : std::string("its shards' targets"));
        if (members.size() > 1 || !lead.fusedGroup.empty()) {
            reason += ", with the whole fused " + lead.fusedGroup;
        }
        setAll(PlanDecision::Quantize, reason, *plan.defaultScheme);
        if (lead.readsRawWeight) {
            rawQuantized.insert(rawQuantized.end(), names.begin(), names.end());
        }
    }

    // Everything that is not a Linear keeps its bytes; say why, and lint a user who tried anyway.
    std::vector<std::string> headsSelected, embeddingsSelected, tinyKept, tinyQuantized;
    for (auto& m : plan.modules) {
        if (m.isLinear()) {
            if (std::min(m.outFeatures, m.inFeatures) < 128) {
                (m.decision == PlanDecision::Quantize ? tinyQuantized : tinyKept).push_back(m.name);
            }
            continue;
        }
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
                applyHeadRule(plan, m, rules, lint);
            }
            break;
        }
        if (m.decision == PlanDecision::Quantize) {
            continue;
        }
        // A user naming a head or embedding wants to know why it stays BF16, even if a preset ignores it.
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
        if (m.role == ModuleRole::Head && m.outFeatures && std::min(m.outFeatures, m.inFeatures) <= 1024) {
            tinyKept.push_back(m.name);
        }
    }

    // Rounding, per quantized decision unit (fused shards share one): the last rounding rule that matches,
    // else the default. Orthogonal to the scheme, so it never changes a decision or a size.
    std::map<std::string, std::vector<std::size_t>> quantizedUnits;
    for (std::size_t i = 0; i < plan.modules.size(); ++i) {
        if (plan.modules[i].decision == PlanDecision::Quantize) {
            quantizedUnits[plan.modules[i].vllmName].push_back(i);
        }
    }
    for (const auto& [layer, members] : quantizedUnits) {
        const auto& lead = plan.modules[members.front()];
        const auto* rule = lastMatchingRule(roundingRules, layer, lead);
        const RoundingMethod* method = rule ? rule->method : plan.defaultRounding;
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

    // Sizes (format-spec §2.1) and the bytes one draft step streams (gathers excluded).
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

    // Lint.
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
    lintSchemes(plan, lint);
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
    const bool ownHead = std::any_of(plan.modules.begin(), plan.modules.end(),
                                     [](const PlannedModule& m) { return m.vllmName == "lm_head"; });
    lint.add("target-pairing", LintSeverity::Info, {},
             std::string("the draft predicts from the target's hidden states") +
                 (ownHead ? "" : " and shares the target's lm_head and embeddings") +
                 ", so pair it with the target precision it was calibrated for" +
                 (arch.verifier.empty() ? std::string() : " (verifier: " + arch.verifier + ")") +
                 "; the model card records this pairing.",
             "format-spec §5.1");
    if (arch.kind == DraftArchitecture::Eagle3) {
        const auto* fc = plan.findModule("fc");
        if (fc && fc->decision == PlanDecision::Quantize) {
            lint.add("eagle3-fc", LintSeverity::Info, {"fc"},
                     "fc is a quantizable ReplicatedLinear only since vllm#28435 (merged): older vLLM "
                     "cannot load "
                     "it quantized.",
                     "vllm#28435");
        }
    }
    if (auto shallow = shallowHeadFinding(plan)) {
        lint.add(std::move(shallow->id), shallow->severity, std::move(shallow->modules),
                 std::move(shallow->message), std::move(shallow->citation));
    }
    if (plan.sizes.quantizedModules > 0 && arch.kind != DraftArchitecture::Generic) {
        lint.add("compile-cache", LintSeverity::Info, {},
                 "before vllm#47911 the compile cache key left out the draft model's config, so a BF16 and a "
                 "quantized draft of one architecture could share compiled graphs: use a fresh "
                 "VLLM_CACHE_ROOT when switching drafts on older vLLM.",
                 "vllm#47911");
    }
    if (plan.sizes.quantizedModules == 0 && plan.errors.empty()) {
        lint.add("nothing-quantized", LintSeverity::Warning, {}, "the plan quantizes no module.", "");
    }

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
    return plan;
}

} // namespace spark
