#include "core/audit/checker.h"

#include "core/plan/configgroups.h"
#include "core/plan/matchentry.h"
#include "core/plan/vllmmatching.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <set>

namespace spark {
namespace {

/// vLLM changes a rule depends on. The first release containing each is not recorded in the specs, so an
/// explicit --vllm-version is assumed to lack them (the finding names the PR to look for).
struct VllmChange
{
    const char* pr;
    const char* what;
};
constexpr VllmChange kLmHeadQuantized{
    "vllm#37280", "EAGLE3 passes the drafter's quant_config to ParallelLMHead, merged 2026-03-25; "
                  "compressed-tensors handles ParallelLMHead since vllm#37291, merged 2026-03-30"};
constexpr VllmChange kUnmatchedIsBf16{
    "newest vLLM", "a Linear matched by neither ignore nor a target loads unquantized; older "
                   "releases raise \"Unable to find matching target\""};

const std::vector<LintRule> kRules{
    {"config-missing",
     "Quantized tensors without a compressed-tensors quantization_config: vLLM cannot load them."},
    {"config-unreadable",
     "The quantization_config is malformed (quant_method, config_groups, targets, ignore)."},
    {"config-placement", "Speculators-format drafts are rebuilt from transformer_layer_config: the config "
                         "must be there too, the same."},
    {"group-scheme",
     "A config group describes weights vLLM has no kernel scheme for (bits, strategy, format)."},
    {"int-quantized-weight-only",
     "int-quantized without input_activations fails vLLM's config parse; int weight-only is pack-quantized."},
    {"fp8-weight-only",
     "FP8 weight-only is served only by Marlin FP8, refused on compute capability >= 8.9."},
    {"group-format-missing",
     "Every group needs its own format; with a mixed-precision top level vLLM raises NotImplementedError."},
    {"top-format",
     "The top-level format is the one group format, or mixed-precision when there are several."},
    {"weights-extra-fields",
     "scale_dtype / zp_dtype in weights are rejected by vLLM builds bundling CT <= 0.12."},
    {"target-duplicate", "A target string in two groups: vLLM silently gives it to the later group."},
    {"target-overlap",
     "A module matched by name/regex targets of two groups: vLLM and CT rank them differently."},
    {"class-target", "\"Linear\" only as the catch-all, in one group; no other class-name target."},
    {"target-unmatched", "A name/regex target that selects no module (exact names or start-anchored re:)."},
    {"ignore-literal-name", "An ignore entry written as a checkpoint name: vLLM matches offset, fused vLLM "
                            "names (model.layers.N...)."},
    {"ignore-unmatched", "A literal ignore entry that matches no vLLM module name."},
    {"ignore-parent", "An ignore entry naming a parent module: exact names ignore nothing, unanchored "
                      "regexes swallow children."},
    {"bf16-not-ignored", "Stored BF16, but vLLM selects a config group and expects quantized tensors."},
    {"quantized-not-loaded",
     "Stored quantized, but vLLM ignores it or no group selects it: it expects a .weight."},
    {"scheme-mismatch",
     "The tensors follow another group's scheme than the one vLLM selects for the module."},
    {"tensor-missing", "A tensor the module's scheme needs is missing (weight_scale, weight_shape, ...)."},
    {"tensor-dtype", "A tensor of the module has the wrong dtype for its scheme."},
    {"tensor-shape", "A tensor of the module has the wrong shape for its scheme."},
    {"tensor-unexpected", "A tensor the scheme does not write (a leftover .weight, g_idx without actorder)."},
    {"zero-point-symmetric",
     "weight_zero_point on a symmetric scheme: vLLM has no such parameter and fails."},
    {"weight-shape", "weight_shape does not describe the packed weight ([out, in], sane sizes)."},
    {"group-divides", "The group size does not divide the columns: compressed-tensors raises."},
    {"fused-set-split",
     "q/k/v and gate/up must share one ignore verdict and one group, fused name and shard names alike."},
    {"mapping-disagrees",
     "vLLM's decision changes with packed_modules_mapping (drafts get none today, vllm#53116)."},
    {"raw-weight-quantized", "vLLM reads this module's .weight directly (DFlash/DSpark qkv_proj vllm#51581, "
                             "markov_w2): keep it BF16."},
    {"lm-head-quantized", "A quantized lm_head where the draft's model file builds it without quant_config."},
    {"not-quantizable",
     "Stored quantized, but vLLM builds the module without quant_config or as a non-Linear."},
    {"nvfp4-global-scale",
     "NVFP4 members of a fused set must store one weight_global_scale (vLLM takes the max)."},
    {"kernel-shape", "Marlin/Machete need in % 128 == 0 and out % 64 == 0 (format-spec §4.6)."},
    {"linear-untargeted",
     "A Linear neither ignored nor targeted: newest vLLM loads it BF16, older ones raise."},
    {"target-layers-unknown",
     "vLLM offsets draft layer indices by the target's layer count; it was assumed 0."},
    {"kernel",
     "Which vLLM kernel serves each scheme on sm_90 (H100/H200) and sm_121 (GB10) (read, not run)."},
    {"sglang-multi-group",
     "SGLang may load a checkpoint with several config groups unquantized (sglang#32736)."},
};

class Findings
{
  public:
    explicit Findings(std::vector<LintFinding>& out) : m_out(out) {}
    void add(std::string_view rule, LintSeverity severity, std::vector<std::string> modules,
             std::string message, std::string citation = {})
    {
        m_out.push_back(
            {std::string(rule), severity, std::move(modules), std::move(message), std::move(citation)});
    }

  private:
    std::vector<LintFinding>& m_out;
};

std::string groupLabel(const QuantizedCheckpoint& view, int g)
{
    if (g < 0 || g >= static_cast<int>(view.config.read.groupNames.size())) {
        return "none";
    }
    const auto i = static_cast<std::size_t>(g);
    return view.config.read.groupNames[i] + " (" + view.config.args[i].describe() + ")";
}

std::string schemeOfGroupIndex(const QuantizedCheckpoint& view, int g)
{
    return g < 0 || g >= static_cast<int>(view.config.args.size())
               ? std::string("none")
               : view.config.args[static_cast<std::size_t>(g)].describe();
}

/// Names a module may be matched by in any vLLM version: fused name, shard name, older aliases.
std::vector<std::string> namesOf(const AuditedModule& m)
{
    std::vector<std::string> names{m.module.vllmName};
    if (m.module.vllmShardName != m.module.vllmName) {
        names.push_back(m.module.vllmShardName);
    }
    names.insert(names.end(), m.module.vllmAliases.begin(), m.module.vllmAliases.end());
    return names;
}

void checkConfig(const QuantizedCheckpoint& view, const CheckOptions& options, Findings& findings)
{
    const auto& config = view.config;
    for (const auto& p : config.placementProblems) {
        findings.add("config-placement",
                     p.find("differ") != std::string::npos ? LintSeverity::Error : LintSeverity::Warning, {},
                     p, "format-spec §3");
    }
    for (const auto& p : config.read.problems) {
        // Format, scheme and extra-field problems are checked below with their own rule ids.
        if (p.find("format") != std::string::npos ||
            p.find("describe no supported scheme") != std::string::npos ||
            p.find("scale_dtype") != std::string::npos || p.find("zp_dtype") != std::string::npos) {
            continue;
        }
        findings.add("config-unreadable", LintSeverity::Error, {}, p, "format-spec §3");
    }
    for (const auto& p : config.argProblems) {
        findings.add("group-scheme", LintSeverity::Error, {}, p, "format-spec §3");
    }
    std::set<std::string> formats;
    const auto groups = config.raw.is_object() && config.raw.contains("config_groups")
                            ? config.raw["config_groups"]
                            : nlohmann::json();
    for (std::size_t g = 0; g < config.args.size(); ++g) {
        const auto& args = config.args[g];
        const auto& name = config.read.groupNames[g];
        if (args.formatFromGroup) {
            formats.insert(args.format);
        } else {
            const bool fatal = config.read.format == "mixed-precision" || config.read.format.empty();
            findings.add("group-format-missing", fatal ? LintSeverity::Error : LintSeverity::Warning, {name},
                         name + " has no format of its own; vLLM falls back to the top-level '" +
                             config.read.format + "'" + (fatal ? " and cannot build a scheme from it" : ""),
                         "schemes-spec §4.2");
        }
        if (args.bits != 0 && (args.formatFromGroup || config.read.format != "mixed-precision")) {
            if (const auto problem = args.vllmProblem(); !problem.empty()) {
                const char* rule = args.format == "int-quantized" ? "int-quantized-weight-only"
                                   : args.type == "float" && args.bits == 8 && !args.inputActivations
                                       ? "fp8-weight-only"
                                       : "group-scheme";
                findings.add(rule, LintSeverity::Error, {name}, name + ": " + problem, "schemes-spec §5.2");
            }
        }
        if (groups.is_object() && groups.contains(name) && groups[name].is_object() &&
            groups[name].contains("weights") && groups[name]["weights"].is_object()) {
            for (const char* field : {"scale_dtype", "zp_dtype"}) {
                if (groups[name]["weights"].contains(field)) {
                    findings.add("weights-extra-fields", LintSeverity::Warning, {name},
                                 name + ": weights has '" + field +
                                     "', which vLLM builds bundling compressed-tensors <= 0.12 reject",
                                 "format-spec §3");
                }
            }
            // The observer only records how the scales were chosen: vLLM validates it as a free string and
            // never looks it up (rounding.md §1.1), so it is information, not a loading rule.
            const auto* rounding = g < config.read.groups.size() ? config.read.groups[g].rounding : nullptr;
            const auto observer = groups[name]["weights"].value("observer", nlohmann::json());
            if (!rounding) {
                findings.add("weights-observer", LintSeverity::Info, {name},
                             name + ": weights.observer " + observer.dump() +
                                 " (with its observer_kwargs) is no rounding Sparkulator recomputes (" +
                                 roundingMethodNames() +
                                 "); vLLM ignores it, compare only measures the error",
                             "rounding.md §1.1");
            } else if (rounding != &rtnRounding()) {
                findings.add(
                    "weights-observer", LintSeverity::Info, {name},
                    name + ": scales chosen by the " + std::string(rounding->name) + " rounding (" +
                        (rounding->ctExact ? "llm-compressor's " + std::string(rounding->observer)
                                           : std::string("Sparkulator-defined, marked in "
                                                         "observer_kwargs")) +
                        "); vLLM ignores the observer, compare recomputes it" +
                        (rounding->needsHessian()
                             ? std::string(
                                   ", matching the stored scales to its candidates (a capture chose them)")
                             : std::string()),
                    "rounding.md §1.1");
            }
            if (g < config.read.groups.size() && config.read.groups[g].gptq) {
                findings.add("weights-gptq", LintSeverity::Info, {name},
                             name + ": codes solved by GPTQ from a capture (" + std::string(kCodesKwarg) +
                                 " in observer_kwargs, which vLLM ignores); verify recomputes the scales, "
                                 "compare measures the error",
                             "rounding.md §2");
            }
        }
    }
    const std::string expectedTop = formats.size() > 1 ? "mixed-precision"
                                    : formats.empty()  ? config.read.format
                                                       : *formats.begin();
    if (!expectedTop.empty() && config.read.format != expectedTop) {
        findings.add("top-format", LintSeverity::Error, {},
                     "top-level format is '" + config.read.format + "', the groups need '" + expectedTop +
                         "'",
                     "schemes-spec §4.2");
    }
    // Targets: duplicates and class names.
    std::map<std::string, std::vector<std::string>> owners;
    int linearGroups = 0;
    for (std::size_t g = 0; g < config.read.groups.size(); ++g) {
        bool linear = false;
        for (const auto& t : config.read.groups[g].targets) {
            owners[t].push_back(config.read.groupNames[g]);
            linear = linear || t == "Linear";
        }
        linearGroups += linear ? 1 : 0;
    }
    for (const auto& [target, names] : owners) {
        if (names.size() > 1) {
            findings.add("target-duplicate", LintSeverity::Error, names,
                         "target '" + target + "' appears in " + std::to_string(names.size()) +
                             " groups: vLLM gives it to the last one, compressed-tensors to the first",
                         "schemes-spec §5.1");
        }
    }
    if (linearGroups > 1) {
        findings.add("class-target", LintSeverity::Error, {},
                     "\"Linear\" is a target of " + std::to_string(linearGroups) +
                         " groups: only one catch-all can win",
                     "schemes-spec §5.2.2");
    }
    if (config.read.groups.size() > 1) {
        findings.add(
            "sglang-multi-group", LintSeverity::Info, {},
            std::to_string(config.read.groups.size()) +
                " config groups: vLLM selects a scheme per module, but SGLang may load a multi-group "
                "compressed-tensors checkpoint unquantized",
            "sglang#32736");
    }
    (void)options;
}

void checkEntries(const QuantizedCheckpoint& view, Findings& findings)
{
    std::vector<const AuditedModule*> evaluated;
    std::set<std::string> checkpointNames;
    for (const auto& m : view.modules) {
        if (m.evaluated) {
            evaluated.push_back(&m);
        }
        checkpointNames.insert(m.module.name);
        checkpointNames.insert("model." + m.module.name);
    }
    // An entry vLLM could not compile is reported once, where it stands, and not matched.
    const auto compiles = [&findings](const std::string& text, const MatchEntry& entry) {
        if (!entry.isValid()) {
            findings.add("config-unreadable", LintSeverity::Error, {text}, entry.errorMessage(),
                         "format-spec §4.1");
        }
        return entry.isValid();
    };
    for (const auto& text : view.config.read.ignore) {
        const MatchEntry entry(text);
        if (!compiles(text, entry)) {
            continue;
        }
        bool matched = false;
        for (const auto* m : evaluated) {
            for (const auto& name : namesOf(*m)) {
                const auto end = entry.matchEnd(name);
                if (!end) {
                    continue;
                }
                matched = true;
                if (entry.isRegex() && *end < name.size() && name[*end] == '.') {
                    findings.add(
                        "ignore-parent", LintSeverity::Warning, {m->module.name},
                        "ignore entry '" + text + "' matches '" + name.substr(0, *end) + "', a parent of '" +
                            name +
                            "', so it ignores every module under it (re.match is anchored at the start "
                            "only; end the pattern with $)",
                        "format-spec §4.1");
                }
            }
        }
        if (matched || entry.isRegex()) {
            continue;
        }
        bool parent = false;
        for (const auto* m : evaluated) {
            parent = parent || m->module.vllmName.starts_with(text + ".") ||
                     m->module.vllmShardName.starts_with(text + ".");
        }
        if (checkpointNames.contains(text)) {
            findings.add(
                "ignore-literal-name", LintSeverity::Warning, {text},
                "ignore entry '" + text +
                    "' is a checkpoint name: vLLM compares it with its own names (\"model.\" prefix, draft "
                    "layers offset by the target's layer count, fused qkv_proj/gate_up_proj), so it ignores "
                    "nothing",
                "format-spec §6");
        } else if (parent) {
            findings.add(
                "ignore-parent", LintSeverity::Warning, {text},
                "ignore entry '" + text +
                    "' names a parent module: vLLM compares whole layer names, so it ignores nothing",
                "format-spec §4.1");
        } else if (text != "lm_head") {
            findings.add("ignore-unmatched", LintSeverity::Warning, {text},
                         "ignore entry '" + text + "' matches no vLLM module name", "format-spec §4.1");
        }
    }
    // Targets: unmatched, and modules claimed by name/regex targets of two groups.
    const auto& groups = view.config.read.groups;
    for (std::size_t g = 0; g < groups.size(); ++g) {
        for (const auto& text : groups[g].targets) {
            const MatchEntry entry(text);
            if (!compiles(text, entry)) {
                continue;
            }
            bool matched = false;
            bool classMatch = false;
            for (const auto* m : evaluated) {
                for (const auto& name : namesOf(*m)) {
                    matched = matched || entry.matches(name);
                }
                classMatch = classMatch || (!entry.isRegex() && entry.matchesClass(m->module.vllmClass));
            }
            if (!matched && !entry.isRegex() && classMatch && text != "Linear") {
                findings.add("class-target", LintSeverity::Warning, {text},
                             "target '" + text +
                                 "' selects modules by class name; only \"Linear\" is portable",
                             "schemes-spec §5.2.2");
            } else if (!matched && !classMatch) {
                findings.add("target-unmatched", LintSeverity::Warning, {text},
                             view.config.read.groupNames[g] + ": target '" + text + "' selects no module",
                             "format-spec §4.1");
            }
        }
    }
    for (const auto* m : evaluated) {
        std::set<std::size_t> claiming;
        for (const auto& name : {m->module.vllmName, m->module.vllmShardName}) {
            for (std::size_t g = 0; g < groups.size(); ++g) {
                for (const auto& text : groups[g].targets) {
                    if (MatchEntry(text).matches(name)) {
                        claiming.insert(g);
                    }
                }
            }
        }
        if (claiming.size() > 1) {
            std::string names;
            for (const auto g : claiming) {
                names += (names.empty() ? "" : ", ") + view.config.read.groupNames[g];
            }
            findings.add(
                "target-overlap", LintSeverity::Error, {m->module.name},
                "'" + m->module.vllmName + "' is matched by targets of " + names +
                    ": vLLM takes the first in dict order, compressed-tensors the alphabetically first regex",
                "schemes-spec §5.2.1");
        }
    }
}

std::string ignoreText(const AuditedModule& m, const QuantizedCheckpoint& view)
{
    return m.ignored ? "vLLM ignores '" + m.module.vllmName + "'"
                     : "no config group selects '" + m.module.vllmName + "'" +
                           (view.config.read.groups.empty() ? "" : " (class " + m.module.vllmClass + ")");
}

void checkModule(const Checkpoint& checkpoint, const QuantizedCheckpoint& view, const AuditedModule& m,
                 const CheckOptions& options, Findings& findings)
{
    const auto& name = m.module.name;
    const bool head = m.module.vllmName == "lm_head";
    if (m.quantizedOnDisk && !m.evaluated) {
        findings.add(
            "not-quantizable", LintSeverity::Error, {name},
            "stored quantized, but vLLM loads it as " +
                (m.module.vllmClass.empty() ? std::string(roleName(m.module.role)) : m.module.vllmClass) +
                ", which takes no quantization",
            "format-spec §5");
        return;
    }
    if (!m.evaluated) {
        return;
    }
    if (!m.ignoreError.empty()) {
        findings.add("fused-set-split", LintSeverity::Error, {name}, m.ignoreError, "format-spec §4.3");
    }
    if (m.ignored != m.ignoredWithMapping || m.group != m.groupWithMapping) {
        findings.add(
            "mapping-disagrees", LintSeverity::Error, {name},
            "'" + m.module.vllmName + "' gets " + (m.ignored ? "ignored" : groupLabel(view, m.group)) +
                " without packed_modules_mapping but " +
                (m.ignoredWithMapping ? "ignored" : groupLabel(view, m.groupWithMapping)) + " with it",
            "vllm#53116");
    }
    if (!m.module.fusedGroup.empty() && (m.shardIgnored != m.ignored || m.shardGroup != m.group)) {
        findings.add("fused-set-split", LintSeverity::Error, {name},
                     "vLLM decides the fused '" + m.module.vllmName + "' as " +
                         (m.ignored ? "ignored" : groupLabel(view, m.group)) + ", but its shard name '" +
                         m.module.vllmShardName + "' gets " +
                         (m.shardIgnored ? "ignored" : groupLabel(view, m.shardGroup)) +
                         " (how compressed-tensors and transformers decompress it)",
                     "schemes-spec §5.2.3");
    }
    if (!m.quantizedOnDisk) {
        if (m.vllmQuantizes()) {
            findings.add("bf16-not-ignored", LintSeverity::Error, {name},
                         "stored " + m.scheme + ", but vLLM selects " + groupLabel(view, m.group) + " for '" +
                             m.module.vllmName +
                             "' and expects quantized tensors (no ignore entry matches it)",
                         "format-spec §5.6");
        } else if (!m.ignored && m.group < 0 && m.module.role == ModuleRole::Linear &&
                   m.module.vllmLimit.empty()) {
            findings.add("linear-untargeted",
                         options.vllm.newest ? LintSeverity::Warning : LintSeverity::Error, {name},
                         "'" + m.module.vllmName +
                             "' is neither ignored nor targeted: " + kUnmatchedIsBf16.what +
                             (options.vllm.newest ? "" : "; not known for vLLM " + options.vllm.text),
                         "schemes-spec §5.1.4");
        }
        return;
    }
    // Stored quantized.
    if (m.module.readsRawWeight) {
        findings.add("raw-weight-quantized", LintSeverity::Error, {name},
                     "stored " + m.scheme + ", but " + view.architecture.displayName + " reads '" + name +
                         ".weight' directly (" +
                         (m.module.vllmLimit.empty()
                              ? std::string("_build_fused_kv_buffers slices qkv_proj.weight")
                              : m.module.vllmLimit) +
                         "): it must stay BF16",
                     m.module.fusedGroup == "qkv_proj" ? "vllm#51581" : "schemes-spec §5.2.4");
    } else if (head) {
        const bool never = view.architecture.traits().blockDraft;
        const bool eagle = view.architecture.traits().quantizableHead;
        const auto severity =
            never || (eagle && !options.vllm.newest) ? LintSeverity::Error : LintSeverity::Warning;
        // FP8 keeps `.weight`; packed schemes store weight_packed, which the V2 runner's check trips on.
        const bool keepsWeight = m.scheme.rfind("FP8", 0) == 0 || m.scheme.rfind("float8", 0) == 0;
        const std::string v2Runner = keepsWeight
                                         ? std::string()
                                         : std::string(" and the V1 model runner (the V2 runner reads "
                                                       "the head's .weight, absent when packed: open "
                                                       "fix vllm#53104)");
        findings.add("lm-head-quantized", severity, {name},
                     never ? "stored " + m.scheme + ", but " + view.architecture.displayName +
                                 " builds its lm_head without quant_config: vLLM can never load it quantized"
                     : eagle
                         ? "stored " + m.scheme + ": needs " + kLmHeadQuantized.pr + " (" +
                               kLmHeadQuantized.what + ")" + v2Runner +
                               (options.vllm.newest ? "" : "; not known to be in vLLM " + options.vllm.text)
                         : "stored " + m.scheme +
                               ": whether this draft's model file passes quant_config to its "
                               "lm_head was not read; keep it BF16",
                     "schemes-spec §5.2.4");
    } else if (!m.module.vllmLimit.empty()) {
        findings.add("not-quantizable", LintSeverity::Error, {name},
                     "stored " + m.scheme + ", but " + m.module.vllmLimit, "format-spec §5");
    }
    if (!m.vllmQuantizes()) {
        findings.add("quantized-not-loaded", LintSeverity::Error, {name},
                     "stored " + m.scheme + ", but " + ignoreText(m, view) + ", so vLLM expects a BF16 '" +
                         name + ".weight'",
                     "format-spec §5.6");
        return;
    }
    if (m.layoutGroup != m.group && m.layoutGroup >= 0 && m.layout.issues.empty()) {
        findings.add("scheme-mismatch", LintSeverity::Error, {name},
                     "stored as " + schemeOfGroupIndex(view, m.layoutGroup) + ", but vLLM selects " +
                         groupLabel(view, m.group) + " for '" + m.module.vllmName + "'",
                     "schemes-spec §5.1");
        return;
    }
    for (const auto& issue : m.layout.issues) {
        findings.add(issue.rule, LintSeverity::Error, {name},
                     schemeOfGroupIndex(view, m.group) + ": " + issue.message, "schemes-spec §1");
    }
    if (m.productScheme && m.productScheme->quantizes() && m.layout.out && m.layout.in) {
        const auto split = m.module.vllmClass == "RowParallelLinear"  ? TensorSplit::Input
                           : m.module.vllmClass == "ReplicatedLinear" ? TensorSplit::None
                                                                      : TensorSplit::Output;
        if (const auto p = m.productScheme->shapeProblem(m.layout.out, m.layout.in, split, 1); !p.empty()) {
            findings.add("kernel-shape", LintSeverity::Warning, {name}, p, "schemes-spec §6.1");
        }
    }
    (void)checkpoint;
}

/// Shards of one vLLM module stored the same way; NVFP4 members with one global scale.
void checkFusedSets(const Checkpoint& checkpoint, const QuantizedCheckpoint& view, Findings& findings)
{
    std::map<std::string, std::vector<const AuditedModule*>> sets;
    for (const auto& m : view.modules) {
        if (m.evaluated && !m.module.fusedGroup.empty()) {
            sets[m.module.vllmName].push_back(&m);
        }
    }
    for (const auto& [vllmName, members] : sets) {
        std::set<std::string> schemes;
        std::vector<std::string> names;
        for (const auto* m : members) {
            schemes.insert(m->quantizedOnDisk ? m->scheme : "BF16");
            names.push_back(m->module.name);
        }
        if (schemes.size() > 1) {
            std::string list;
            for (const auto* m : members) {
                list += (list.empty() ? "" : ", ") + m->module.name + " " +
                        (m->quantizedOnDisk ? m->scheme : "BF16");
            }
            findings.add("fused-set-split", LintSeverity::Error, names,
                         "vLLM loads '" + vllmName +
                             "' as one layer, but its shards are stored differently: " + list,
                         "schemes-spec §5.2.3");
            continue;
        }
        std::set<std::uint32_t> globals;
        for (const auto* m : members) {
            const auto* t = checkpoint.find(m->module.name + ".weight_global_scale");
            if (m->quantizedOnDisk && t && t->info.dtype == DType::F32 && t->info.byteSize() == 4) {
                std::uint32_t bits;
                std::memcpy(&bits, checkpoint.bytes(*t).data(), 4);
                globals.insert(bits);
            }
        }
        if (globals.size() > 1) {
            findings.add(
                "nvfp4-global-scale", LintSeverity::Error, names,
                "the NVFP4 shards of '" + vllmName +
                    "' store different weight_global_scale values; vLLM uses their max for all of them",
                "schemes-spec §3.4.1");
        }
    }
}

void checkKernels(const QuantizedCheckpoint& view, Findings& findings)
{
    std::map<std::string, std::vector<std::string>> bySchemes;
    for (const auto& m : view.modules) {
        if (m.quantizedOnDisk && m.vllmQuantizes()) {
            bySchemes[m.scheme].push_back(m.module.name);
        }
    }
    for (const auto& [scheme, modules] : bySchemes) {
        const auto* product = findWeightScheme(scheme);
        const std::string kernels = product ? "sm_90: " + std::string(product->kernels.sm90) +
                                                  "; sm_121: " + std::string(product->kernels.sm121)
                                            : std::string("not a scheme whose kernels the specs list");
        findings.add("kernel", LintSeverity::Info, {},
                     scheme + " (" + std::to_string(modules.size()) + " modules): " + kernels,
                     "schemes-spec §6.2");
    }
}

} // namespace

std::optional<VllmVersion> VllmVersion::parse(const std::string& text)
{
    if (text.empty() || text == "newest" || text == "latest") {
        return VllmVersion{};
    }
    VllmVersion v;
    v.newest = false;
    v.text = text;
    std::string_view rest = text;
    if (rest.starts_with('v')) {
        rest.remove_prefix(1);
    }
    int* parts[] = {&v.major, &v.minor, &v.patch};
    for (int i = 0; i < 3 && !rest.empty(); ++i) {
        std::size_t n = 0;
        int value = 0;
        while (n < rest.size() && std::isdigit(static_cast<unsigned char>(rest[n])) && value < 100000) {
            value = value * 10 + (rest[n] - '0');
            ++n;
        }
        if (n == 0) {
            return std::nullopt;
        }
        *parts[i] = value;
        rest.remove_prefix(n);
        if (rest.starts_with('.')) {
            rest.remove_prefix(1);
        } else {
            break; // a suffix like "rc1" or ".dev0"
        }
    }
    if (!rest.empty() && !std::isalpha(static_cast<unsigned char>(rest.front())) && !rest.starts_with('+')) {
        return std::nullopt;
    }
    return v;
}

bool CheckReport::ok() const
{
    return count(LintSeverity::Error) == 0;
}

std::size_t CheckReport::count(LintSeverity severity) const
{
    return static_cast<std::size_t>(std::count_if(
        findings.begin(), findings.end(), [&](const LintFinding& f) { return f.severity == severity; }));
}

bool CheckReport::has(std::string_view ruleId) const
{
    return std::any_of(findings.begin(), findings.end(),
                       [&](const LintFinding& f) { return f.id == ruleId; });
}

std::string CheckReport::summary() const
{
    std::map<std::string, std::size_t> schemes;
    std::size_t quantized = 0;
    for (const auto& m : view.modules) {
        if (m.quantizedOnDisk) {
            ++quantized;
            ++schemes[m.scheme];
        }
    }
    std::string list;
    for (const auto& [scheme, n] : schemes) {
        list += (list.empty() ? "" : ", ") + scheme + " x" + std::to_string(n);
    }
    const auto errors = count(LintSeverity::Error);
    const auto warnings = count(LintSeverity::Warning);
    return "check: " + std::to_string(view.modules.size()) + " modules, " + std::to_string(quantized) +
           " quantized" + (list.empty() ? "" : " (" + list + ")") + "; " + std::to_string(errors) +
           (errors == 1 ? " error, " : " errors, ") + std::to_string(warnings) +
           (warnings == 1 ? " warning" : " warnings");
}

const std::vector<LintRule>& checkRules()
{
    return kRules;
}

CheckReport checkCheckpoint(const Checkpoint& checkpoint, const CheckOptions& options)
{
    CheckReport report;
    report.view = recogniseCheckpoint(checkpoint, options.targetLayers);
    Findings findings(report.findings);
    const auto& view = report.view;
    const bool anyQuantized = std::any_of(view.modules.begin(), view.modules.end(),
                                          [](const AuditedModule& m) { return m.quantizedOnDisk; });
    if (!view.config.present) {
        if (anyQuantized) {
            findings.add(
                "config-missing", LintSeverity::Error, {},
                "quantized tensors but no quantization_config in config.json: vLLM loads them as plain "
                "parameters and fails",
                "format-spec §3");
        }
    } else {
        checkConfig(view, options, findings);
        checkEntries(view, findings);
        for (const auto& m : view.modules) {
            checkModule(checkpoint, view, m, options, findings);
        }
        checkFusedSets(checkpoint, view, findings);
        checkKernels(view, findings);
        if (!view.targetLayersKnown && view.architecture.traits().known) {
            findings.add("target-layers-unknown", LintSeverity::Info, {},
                         "config.json does not state the target's layer count: vLLM names were computed with "
                         "offset 0 (set the target's layer count: --target-layers N in the CLI, the "
                         "Target layers field in the app)",
                         "format-spec §5.1");
        }
    }
    std::stable_sort(report.findings.begin(), report.findings.end(),
                     [](const LintFinding& a, const LintFinding& b) {
                         return static_cast<int>(a.severity) > static_cast<int>(b.severity);
                     });
    return report;
}

} // namespace spark
