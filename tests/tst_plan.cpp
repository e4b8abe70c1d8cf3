// The planner on the demo drafts: architectures and vLLM names, presets, fused groups, the generated
// ignore list under vLLM's rules, lint, sizes and the drafter-time prediction; plus the `plan`/`match` CLI.
#include "core/demo/demodraft.h"
#include "core/plan/draftlayout.h"
#include "core/plan/lintrules.h"
#include "core/plan/plancommand.h"
#include "core/plan/preset.h"
#include "core/plan/quantplan.h"
#include "core/plan/timingprediction.h"
#include "core/plan/vllmmatching.h"
#include "testsupport.h"

#include <QTemporaryDir>
#include <QTest>
#include <map>
#include <set>

using namespace spark;

Q_DECLARE_METATYPE(std::string)

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct Layout
{
    nlohmann::json config;
    std::vector<TensorInfo> tensors;
};

/// Header-only layout of a demo draft: names, dtypes, shapes and sizes, no data.
Layout demoLayout(const std::string& arch, DemoScale scale)
{
    const auto draft = describeDemoDraft(arch, scale);
    Layout layout;
    layout.config = nlohmann::json::parse(draft.config.dump());
    std::uint64_t offset = 0;
    for (const auto& spec : draft.tensors) {
        layout.tensors.push_back({spec.name, spec.dtype, spec.shape, offset, offset + spec.byteSize()});
        offset += spec.byteSize();
    }
    return layout;
}

QuantPlan planFor(const std::string& arch, DemoScale scale, PlanOptions options = {})
{
    const auto layout = demoLayout(arch, scale);
    return makePlan(layout.config, layout.tensors, options);
}

const LintFinding* findLint(const QuantPlan& plan, const std::string& id)
{
    for (const auto& f : plan.lint) {
        if (f.id == id) {
            return &f;
        }
    }
    return nullptr;
}

bool contains(const std::vector<std::string>& list, const std::string& item)
{
    return std::find(list.begin(), list.end(), item) != list.end();
}

bool anyContains(const std::vector<std::string>& list, const std::string& fragment)
{
    return std::any_of(list.begin(), list.end(),
                       [&](const std::string& s) { return s.find(fragment) != std::string::npos; });
}

/// The plan's ignore list, evaluated by vLLM's rules on every Linear name (fused, older aliases), with and
/// without packed_modules_mapping, must ignore exactly the Linears the plan keeps.
void verifyIgnoreSelectsKept(const QuantPlan& plan)
{
    std::map<std::string, bool> expected; // vLLM name → kept
    for (const auto& m : plan.modules) {
        if (!m.isLinear()) {
            continue;
        }
        const bool kept = m.decision == PlanDecision::Keep;
        expected[m.vllmName] = kept;
        for (const auto& alias : m.vllmAliases) {
            expected[alias] = kept;
        }
    }
    std::vector<std::string> layers;
    for (const auto& [name, kept] : expected) {
        layers.push_back(name);
    }
    for (const FusedMapping& mapping : {FusedMapping{}, standardFusedMapping()}) {
        const auto evaluation = evaluateIgnoreList(plan.ignoreEntries(), layers, mapping);
        QVERIFY(evaluation.invalidEntries.empty());
        for (const auto& verdict : evaluation.layers) {
            QVERIFY2(verdict.error.empty(), verdict.error.c_str());
            QVERIFY2(verdict.ignored == expected.at(verdict.layer), verdict.layer.c_str());
        }
    }
    QCOMPARE(plan.ignoreEntries().front(), std::string("lm_head"));
    QCOMPARE(plan.groups.size(), std::size_t{1});
    QCOMPARE(plan.groups.front().targets, std::vector<std::string>{"Linear"});
}

} // namespace

class TestPlan : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void detect_data();
    void detect();
    void vllmNames();
    void eagle3Names();
    void roles();
    void targetLayersUnknown();
    void fullSizes_data();
    void fullSizes();
    void stockDSparkKeepsQkv();
    void everyPreset_data();
    void everyPreset();
    void userIgnoreSplitsFusedGroup();
    void userEntriesLinted();
    void invalidEntryIsError();
    void unknownPresetIsError();
    void presetOfAnotherArchitectureWarns();
    void shapeGate();
    void schemeBytes();
    void genericDraft();
    void predictionGlmPatched();
    void predictionFromBandwidth();
    void cliMatch();
    void cliPlanJson();
    void cliPlanFusedError();
    void eagle3ShallowHeadWarns();
    void everyFindingHasARule();
    void commandLine();
};

void TestPlan::detect_data()
{
    QTest::addColumn<std::string>("arch");
    QTest::addColumn<std::string>("id");
    QTest::addColumn<int>("targetLayers");
    QTest::addColumn<std::string>("preset");
    QTest::addRow("laguna") << std::string("laguna-dflash") << std::string("laguna-dflash") << 48
                            << std::string("laguna-dflash");
    QTest::addRow("dspark") << std::string("glm-dspark") << std::string("dspark") << -1
                            << std::string("glm-dspark");
    QTest::addRow("qwen3") << std::string("qwen3-dflash") << std::string("qwen3-dflash") << 36
                           << std::string("qwen3-dflash");
    QTest::addRow("eagle3") << std::string("llama-eagle3") << std::string("eagle3") << 32
                            << std::string("eagle3");
}

void TestPlan::detect()
{
    QFETCH(std::string, arch);
    QFETCH(std::string, id);
    QFETCH(int, targetLayers);
    QFETCH(std::string, preset);
    const auto layout = demoLayout(arch, DemoScale::Tiny);
    const auto info = detectArchitecture(layout.config);
    QCOMPARE(info.id, id);
    QCOMPARE(info.targetLayers.value_or(-1), targetLayers);
    QCOMPARE(autoPresetName(info), preset);
    const auto plan = makePlan(layout.config, layout.tensors, {});
    QCOMPARE(plan.preset, preset);
    QCOMPARE(plan.presetRequested, std::string("auto"));
    QVERIFY2(plan.errors.empty(), plan.errors.empty() ? "" : plan.errors.front().c_str());
    QVERIFY(plan.sizes.quantizedModules > 0);
}

void TestPlan::vllmNames()
{
    const auto plan = planFor("laguna-dflash", DemoScale::Full);
    QCOMPARE(plan.targetLayers, 48);
    const auto* down = plan.findModule("layers.0.mlp.down_proj");
    QVERIFY(down);
    QCOMPARE(down->vllmName, std::string("model.layers.48.mlp.down_proj"));
    QCOMPARE(down->weightTensor, std::string("layers.0.mlp.down_proj.weight"));
    QCOMPARE(down->vllmClass, std::string("RowParallelLinear"));
    QCOMPARE(down->outFeatures, std::uint64_t{3072});
    QCOMPARE(down->inFeatures, std::uint64_t{12288});
    QCOMPARE(down->decision, PlanDecision::Quantize);
    // Laguna: qkv fused on disk, gate/up separate ColumnParallelLinear (format-spec §5.3).
    const auto* qkv = plan.findModule("layers.5.self_attn.qkv_proj");
    QVERIFY(qkv);
    QCOMPARE(qkv->vllmName, std::string("model.layers.53.self_attn.qkv_proj"));
    QCOMPARE(qkv->fusedGroup, std::string("qkv_proj"));
    QVERIFY(qkv->readsRawWeight);
    QCOMPARE(qkv->decision, PlanDecision::Keep);
    const auto* gate = plan.findModule("layers.1.mlp.gate_proj");
    QVERIFY(gate);
    QCOMPARE(gate->vllmName, std::string("model.layers.49.mlp.gate_proj"));
    QVERIFY(gate->fusedGroup.empty());
    QCOMPARE(gate->vllmClass, std::string("ColumnParallelLinear"));
    const auto* g = plan.findModule("layers.0.self_attn.g_proj");
    QVERIFY(g);
    QCOMPARE(g->decision, PlanDecision::Keep);
    QCOMPARE(plan.findModule("fc")->vllmName, std::string("model.fc"));

    // Qwen3-style drafts stack q/k/v and gate/up into one vLLM module each.
    const auto dspark = planFor("glm-dspark", DemoScale::Tiny, {.targetLayers = 78});
    const auto* k = dspark.findModule("layers.4.self_attn.k_proj");
    QVERIFY(k);
    QCOMPARE(k->vllmName, std::string("model.layers.82.self_attn.qkv_proj"));
    QCOMPARE(k->vllmShardName, std::string("model.layers.82.self_attn.k_proj"));
    QCOMPARE(dspark.findModule("layers.4.mlp.up_proj")->vllmName,
             std::string("model.layers.82.mlp.gate_up_proj"));
    QCOMPARE(dspark.findModule("lm_head")->vllmName, std::string("lm_head"));
    QVERIFY(!dspark.hasLint("target-layers-unknown"));
}

void TestPlan::eagle3Names()
{
    const auto plan = planFor("llama-eagle3", DemoScale::Full);
    const auto* q = plan.findModule("midlayer.self_attn.q_proj");
    QVERIFY(q);
    QCOMPARE(q->vllmName, std::string("model.layers.32.self_attn.qkv_proj"));
    // Before vllm#48068 the prefix lacked ".self_attn": the ignore list must work with both.
    QCOMPARE(q->vllmAliases, std::vector<std::string>{"model.layers.32.qkv_proj"});
    QVERIFY(!q->readsRawWeight);
    QCOMPARE(q->decision, PlanDecision::Quantize);
    QCOMPARE(plan.findModule("midlayer.mlp.gate_proj")->vllmName,
             std::string("model.layers.32.mlp.gate_up_proj"));
    QCOMPARE(plan.findModule("fc")->decision, PlanDecision::Quantize);
    QVERIFY(plan.hasLint("eagle3-fc"));
    QCOMPARE(plan.findModule("lm_head")->decision, PlanDecision::Keep);
    verifyIgnoreSelectsKept(plan);
    // Ignoring layer 0's attention must also hold under the older name.
    PlanOptions keepAttention;
    keepAttention.ignore = {"re:.*\\.(qkv|q|k|v)_proj$"};
    const auto kept = planFor("llama-eagle3", DemoScale::Full, keepAttention);
    QCOMPARE(kept.findModule("midlayer.self_attn.v_proj")->decision, PlanDecision::Keep);
    verifyIgnoreSelectsKept(kept);
}

void TestPlan::roles()
{
    const auto plan = planFor("glm-dspark", DemoScale::Tiny);
    QCOMPARE(plan.findModule("markov_head.markov_w2")->role, ModuleRole::Head);
    QVERIFY(plan.findModule("markov_head.markov_w2")->readsRawWeight);
    QCOMPARE(plan.findModule("markov_head.markov_w1")->role, ModuleRole::Embedding);
    QCOMPARE(plan.findModule("embed_tokens")->role, ModuleRole::Embedding);
    QCOMPARE(plan.findModule("lm_head")->role, ModuleRole::Head);
    QCOMPARE(plan.findModule("norm")->role, ModuleRole::Norm);
    QCOMPARE(plan.findModule("confidence_head.proj")->role, ModuleRole::Linear);
    QCOMPARE(plan.findModule("confidence_head.proj")->decision, PlanDecision::Keep);
    QCOMPARE(plan.findModule("confidence_head.proj")->tensors.size(), std::size_t{2}); // weight + bias
    const auto eagle = planFor("llama-eagle3", DemoScale::Tiny);
    QCOMPARE(eagle.findModule("d2t")->role, ModuleRole::Buffer);
    QCOMPARE(eagle.findModule("t2d")->role, ModuleRole::Buffer);
    QCOMPARE(eagle.findModule("midlayer.hidden_norm")->role, ModuleRole::Norm);
    QCOMPARE(moduleOfTensor("layers.0.mlp.down_proj.weight_packed"), std::string("layers.0.mlp.down_proj"));
    QCOMPARE(moduleOfTensor("d2t"), std::string("d2t"));
}

void TestPlan::targetLayersUnknown()
{
    // The DSpark config does not state the target's layer count: 0 is assumed, and lint says so.
    const auto plan = planFor("glm-dspark", DemoScale::Tiny);
    QVERIFY(!plan.targetLayersKnown);
    QCOMPARE(plan.targetLayers, 0);
    const auto* finding = findLint(plan, "target-layers-unknown");
    QVERIFY(finding);
    QCOMPARE(finding->severity, LintSeverity::Warning);
    QCOMPARE(plan.findModule("layers.0.mlp.down_proj")->vllmName,
             std::string("model.layers.0.mlp.down_proj"));
}

void TestPlan::fullSizes_data()
{
    QTest::addColumn<std::string>("arch");
    QTest::addColumn<std::string>("preset");
    QTest::addColumn<double>("beforeGiB");
    QTest::addColumn<double>("afterGiB");
    QTest::addRow("laguna") << std::string("laguna-dflash") << std::string("laguna-dflash") << 2.08 << 0.82;
    QTest::addRow("glm patched") << std::string("glm-dspark") << std::string("glm-dspark-patched") << 7.09
                                 << 4.57;
}

void TestPlan::fullSizes()
{
    QFETCH(std::string, arch);
    QFETCH(std::string, preset);
    QFETCH(double, beforeGiB);
    QFETCH(double, afterGiB);
    PlanOptions options;
    options.preset = preset;
    const auto plan = planFor(arch, DemoScale::Full, options);
    QVERIFY2(plan.errors.empty(), plan.errors.empty() ? "" : plan.errors.front().c_str());
    const double before = static_cast<double>(plan.sizes.bytesBefore) / kGiB;
    const double after = static_cast<double>(plan.sizes.bytesAfter) / kGiB;
    qInfo("%s + %s: %.3f GiB -> %.3f GiB, streamed %.3f -> %.3f GiB", arch.c_str(), preset.c_str(), before,
          after, static_cast<double>(plan.sizes.streamedBefore) / kGiB,
          static_cast<double>(plan.sizes.streamedAfter) / kGiB);
    QVERIFY2(std::abs(before - beforeGiB) < 0.005, std::to_string(before).c_str());
    QVERIFY2(std::abs(after - afterGiB) < 0.005, std::to_string(after).c_str());
    QCOMPARE(plan.sizes.residentSaved(), plan.sizes.bytesBefore - plan.sizes.bytesAfter);
    verifyIgnoreSelectsKept(plan);
    if (preset == "glm-dspark-patched") {
        // q/k/v quantized: the vllm#51581 lint warns (patched preset: warn, not block).
        const auto* finding = findLint(plan, "raw-weight-read");
        QVERIFY(finding);
        QCOMPARE(finding->severity, LintSeverity::Warning);
        QCOMPARE(finding->citation, std::string("vllm#51581"));
        QVERIFY(contains(finding->modules, "layers.0.self_attn.q_proj"));
        QCOMPARE(plan.findModule("layers.0.self_attn.q_proj")->decision, PlanDecision::Quantize);
        QCOMPARE(plan.findModule("embed_tokens")->decision, PlanDecision::Keep);
        QCOMPARE(plan.findModule("markov_head.markov_w2")->decision, PlanDecision::Keep);
    }
    if (preset == "laguna-dflash") {
        for (const auto* name : {"layers.2.mlp.gate_proj", "layers.2.mlp.up_proj", "layers.2.mlp.down_proj",
                                 "layers.2.self_attn.o_proj", "fc"}) {
            QVERIFY2(plan.findModule(name)->decision == PlanDecision::Quantize, name);
        }
        QCOMPARE(plan.findModule("layers.2.self_attn.qkv_proj")->decision, PlanDecision::Keep);
        QCOMPARE(plan.findModule("layers.2.self_attn.g_proj")->decision, PlanDecision::Keep);
        QVERIFY(contains(plan.ignoreEntries(), "re:.*\\.(qkv|q|k|v)_proj$"));
        QVERIFY(contains(plan.ignoreEntries(), "re:.*\\.g_proj$"));
    }
}

void TestPlan::stockDSparkKeepsQkv()
{
    const auto plan = planFor("glm-dspark", DemoScale::Full);
    QCOMPARE(plan.preset, std::string("glm-dspark"));
    for (const auto* name :
         {"layers.3.self_attn.q_proj", "layers.3.self_attn.k_proj", "layers.3.self_attn.v_proj"}) {
        QVERIFY2(plan.findModule(name)->decision == PlanDecision::Keep, name);
    }
    QCOMPARE(plan.findModule("layers.3.self_attn.o_proj")->decision, PlanDecision::Quantize);
    QCOMPARE(plan.findModule("layers.3.mlp.gate_proj")->decision, PlanDecision::Quantize);
    const auto* finding = findLint(plan, "raw-weight-read");
    QVERIFY(finding);
    QCOMPARE(finding->severity, LintSeverity::Info);
    verifyIgnoreSelectsKept(plan);

    // Asking for q/k/v on stock vLLM: kept BF16 anyway, with a warning.
    PlanOptions all;
    all.preset = "none";
    all.targets = {"Linear"};
    const auto forced = planFor("glm-dspark", DemoScale::Full, all);
    QCOMPARE(forced.findModule("layers.0.self_attn.q_proj")->decision, PlanDecision::Keep);
    QVERIFY(forced.findModule("layers.0.self_attn.q_proj")->reason.find("vllm#51581") != std::string::npos);
    QCOMPARE(findLint(forced, "raw-weight-read")->severity, LintSeverity::Warning);
    QCOMPARE(forced.findModule("confidence_head.proj")->decision, PlanDecision::Keep);
    verifyIgnoreSelectsKept(forced);
}

void TestPlan::everyPreset_data()
{
    QTest::addColumn<std::string>("arch");
    QTest::addColumn<std::string>("preset");
    QTest::addColumn<std::vector<std::string>>("ignore");
    QTest::addColumn<std::string>("keptByUser"); // a module the user's ignore entry must keep
    for (const auto& arch : demoArchitectures()) {
        for (const auto* preset : {"auto", "laguna-dflash", "qwen3-dflash", "glm-dspark",
                                   "glm-dspark-patched", "eagle3", "generic"}) {
            QTest::addRow("%s %s", arch.c_str(), preset)
                << arch << std::string(preset) << std::vector<std::string>{} << std::string();
        }
        const bool eagle = arch == "llama-eagle3";
        // Layer-specific entries (target layers 36): the generated list must then name layers too.
        QTest::addRow("%s keep one layer", arch.c_str())
            << arch << std::string("auto")
            << std::vector<std::string>{eagle ? "re:.*\\.layers\\.36\\.mlp\\." : "re:.*\\.layers\\.37\\."}
            << std::string(eagle ? "midlayer.mlp.down_proj" : "layers.1.mlp.down_proj");
        QTest::addRow("%s keep down_proj", arch.c_str())
            << arch << std::string("auto") << std::vector<std::string>{"re:.*\\.down_proj$"}
            << std::string(eagle ? "midlayer.mlp.down_proj" : "layers.1.mlp.down_proj");
    }
}

void TestPlan::everyPreset()
{
    QFETCH(std::string, arch);
    QFETCH(std::string, preset);
    QFETCH(std::vector<std::string>, ignore);
    QFETCH(std::string, keptByUser);
    PlanOptions options;
    options.preset = preset;
    options.ignore = ignore;
    options.targetLayers = 36;
    const auto plan = planFor(arch, DemoScale::Tiny, options);
    QVERIFY2(plan.errors.empty(), plan.errors.empty() ? "" : plan.errors.front().c_str());
    // Fused groups are never split: every shard of one vLLM module has the same decision.
    std::map<std::string, std::set<PlanDecision>> decisions;
    for (const auto& m : plan.modules) {
        if (m.isLinear()) {
            decisions[m.vllmName].insert(m.decision);
        }
        // Nothing but a Linear is ever quantized.
        QVERIFY(m.decision == PlanDecision::Keep || m.isLinear());
    }
    for (const auto& [name, set] : decisions) {
        QVERIFY2(set.size() == 1, name.c_str());
    }
    verifyIgnoreSelectsKept(plan);
    std::uint64_t after = 0;
    for (const auto& m : plan.modules) {
        after += m.bytesAfter;
    }
    QCOMPARE(after, plan.sizes.bytesAfter);
    if (!keptByUser.empty()) {
        // The user's entry keeps what it matches.
        const auto* down = plan.findModule(keptByUser);
        QVERIFY(down);
        QCOMPARE(down->decision, PlanDecision::Keep);
        QVERIFY(down->reason.find("--ignore") != std::string::npos);
    }
}

void TestPlan::userIgnoreSplitsFusedGroup()
{
    // EAGLE3 quantizes its fused q/k/v: ignoring q alone splits the group, which vLLM rejects.
    PlanOptions options;
    options.ignore = {"re:.*\\.q_proj$"};
    const auto plan = planFor("llama-eagle3", DemoScale::Tiny, options);
    QVERIFY(!plan.errors.empty());
    QVERIFY(anyContains(plan.errors,
                        "Found a different quantization schemes for ['q_proj', 'k_proj', 'v_proj'] in "
                        "model.layers.32.self_attn.qkv_proj. vLLM requires all to use the same scheme."));
    QCOMPARE(findLint(plan, "fused-group")->severity, LintSeverity::Error);
    QCOMPARE(plan.findModule("midlayer.self_attn.q_proj")->decision, PlanDecision::Keep);
    QCOMPARE(plan.findModule("midlayer.self_attn.k_proj")->decision, PlanDecision::Keep);

    PlanOptions gate;
    gate.ignore = {"re:.*\\.up_proj$"};
    const auto gatePlan = planFor("qwen3-dflash", DemoScale::Tiny, gate);
    QVERIFY(anyContains(gatePlan.errors, "['gate_proj', 'up_proj'] in model.layers.36.mlp.gate_up_proj"));
    // Still never split: the unit keeps one decision.
    QCOMPARE(gatePlan.findModule("layers.2.mlp.gate_proj")->decision,
             gatePlan.findModule("layers.2.mlp.up_proj")->decision);

    // The fused name only: consistent under vLLM's rules for drafts today, linted for after vllm#53116.
    PlanOptions fused;
    fused.ignore = {"re:.*\\.gate_up_proj$"};
    const auto fusedPlan = planFor("llama-eagle3", DemoScale::Tiny, fused);
    QVERIFY(fusedPlan.errors.empty());
    QVERIFY(fusedPlan.hasLint("fused-entry-mismatch"));
    QCOMPARE(fusedPlan.findModule("midlayer.mlp.up_proj")->decision, PlanDecision::Keep);
    verifyIgnoreSelectsKept(fusedPlan);
}

void TestPlan::userEntriesLinted()
{
    PlanOptions options;
    options.ignore = {"layers.0.mlp.down_proj", "re:.*fc", "re:.*mlp.down_proj$"};
    options.targets = {"re:.*lm_head$"};
    const auto plan = planFor("llama-eagle3", DemoScale::Tiny, options);
    QVERIFY(plan.errors.empty());
    const auto* unmatched = findLint(plan, "ignore-unmatched");
    QVERIFY(unmatched);
    QVERIFY(unmatched->message.find("a literal name never matches vLLM's prefixed name") !=
            std::string::npos);
    QVERIFY(contains(unmatched->modules, "layers.0.mlp.down_proj"));
    bool anchor = false;
    bool dot = false;
    for (const auto& f : plan.lint) {
        anchor = anchor || (f.id == "entry-pattern" && f.message.find("no end anchor") != std::string::npos);
        dot = dot || (f.id == "entry-pattern" && f.message.find("unescaped '.'") != std::string::npos);
    }
    QVERIFY(anchor);
    QVERIFY(dot);
    // lm_head named by a target: kept, with the acceptance warning.
    QCOMPARE(plan.findModule("lm_head")->decision, PlanDecision::Keep);
    QVERIFY(plan.hasLint("lm-head"));
    // The entries' preview lists what each matches.
    const auto it = std::find_if(plan.entries.begin(), plan.entries.end(),
                                 [](const EntryPreview& e) { return e.entry == "re:.*mlp.down_proj$"; });
    QVERIFY(it != plan.entries.end());
    QCOMPARE(it->source, std::string("--ignore"));
    QCOMPARE(it->matches.size(), std::size_t{1});
    QCOMPARE(it->matches[0].module, std::string("midlayer.mlp.down_proj"));
    QCOMPARE(it->matches[0].vllmName, std::string("model.layers.32.mlp.down_proj"));
}

void TestPlan::invalidEntryIsError()
{
    PlanOptions options;
    options.ignore = {"re:.*\\.(q|k_proj$"};
    const auto plan = planFor("qwen3-dflash", DemoScale::Tiny, options);
    QCOMPARE(plan.errors.size(), std::size_t{1});
    QVERIFY(plan.errors.front().find("at position") != std::string::npos);
    QVERIFY(plan.hasLint("invalid-entry"));
}

void TestPlan::unknownPresetIsError()
{
    PlanOptions options;
    options.preset = "glm-dspark-typo";
    const auto plan = planFor("glm-dspark", DemoScale::Tiny, options);
    QVERIFY(anyContains(plan.errors, "unknown preset 'glm-dspark-typo'"));
    QCOMPARE(plan.sizes.quantizedModules, 0);
    PlanOptions scheme;
    scheme.groupSize = 256;
    QVERIFY(anyContains(planFor("glm-dspark", DemoScale::Tiny, scheme).errors, "group size 256"));
}

void TestPlan::presetOfAnotherArchitectureWarns()
{
    const auto warns = [](const char* arch, const char* preset) {
        PlanOptions options;
        options.preset = preset;
        options.targetLayers = 36;
        return planFor(arch, DemoScale::Tiny, options).hasLint("preset-architecture");
    };
    // The DSpark recipe names markov_head and confidence_head, which an EAGLE-3 head does not have.
    QVERIFY(warns("llama-eagle3", "glm-dspark-patched"));
    QVERIFY(warns("glm-dspark", "eagle3-int8"));
    QVERIFY(!warns("llama-eagle3", "eagle3"));
    QVERIFY(!warns("llama-eagle3", "eagle3-int8"));
    QVERIFY(!warns("glm-dspark", "glm-dspark-patched"));
    // Written for any draft.
    QVERIFY(!warns("llama-eagle3", "generic"));
    QVERIFY(!warns("llama-eagle3", "none"));
    QVERIFY(!warns("llama-eagle3", "auto"));
}

void TestPlan::shapeGate()
{
    // Laguna's per-head gate g_proj is [72, 3072]: 72 % 64 != 0 keeps it BF16 even when selected.
    PlanOptions options;
    options.preset = "none";
    options.targets = {"Linear"};
    const auto plan = planFor("laguna-dflash", DemoScale::Full, options);
    const auto* g = plan.findModule("layers.0.self_attn.g_proj");
    QCOMPARE(g->decision, PlanDecision::Keep);
    QVERIFY(g->reason.find("out 72 % 64 != 0") != std::string::npos);
    const auto* finding = findLint(plan, "kernel-shape");
    QVERIFY(finding);
    QVERIFY(contains(finding->modules, "layers.0.self_attn.g_proj"));
    verifyIgnoreSelectsKept(plan);

    // Tensor parallelism: a row-parallel layer splits its input, a column-parallel one its output.
    const QuantScheme w4;
    QVERIFY(w4.shapeProblem(3072, 12288, TensorSplit::Input, 8).empty());
    QVERIFY(!w4.shapeProblem(256, 320, TensorSplit::Input, 1).empty());
    QVERIFY(w4.shapeProblem(256, 256, TensorSplit::Input, 2).empty());   // 128 columns per rank
    QVERIFY(!w4.shapeProblem(256, 256, TensorSplit::Input, 4).empty());  // 64 columns per rank
    QVERIFY(w4.shapeProblem(256, 256, TensorSplit::Output, 4).empty());  // 64 rows per rank
    QVERIFY(!w4.shapeProblem(256, 256, TensorSplit::Output, 8).empty()); // 32 rows per rank
    QVERIFY(w4.shapeProblem(96, 256, TensorSplit::None, 8).find("out 96 % 64") != std::string::npos);

    PlanOptions tp;
    tp.tpDegree = 8;
    const auto tpPlan = planFor("glm-dspark", DemoScale::Tiny, tp);
    // Tiny DSpark: down_proj [256, 512] splits to in 64 per rank: kept.
    QCOMPARE(tpPlan.findModule("layers.0.mlp.down_proj")->decision, PlanDecision::Keep);
    verifyIgnoreSelectsKept(tpPlan);
}

void TestPlan::schemeBytes()
{
    // weight_packed I32 [out, in/8] + BF16 scales [out, in/128] + I64[2].
    QCOMPARE(QuantScheme({4, 128}).quantizedBytes(256, 512, DType::BF16),
             std::uint64_t{256 * 64 * 4 + 256 * 4 * 2 + 16});
    QCOMPARE(QuantScheme({8, -1}).quantizedBytes(256, 256, DType::BF16),
             std::uint64_t{256 * 64 * 4 + 256 * 2 + 16});
    QCOMPARE(QuantScheme({4, 32}).quantizedBytes(64, 128, DType::F32),
             std::uint64_t{64 * 16 * 4 + 64 * 4 * 4 + 16});
    PlanOptions w8;
    w8.bits = 8;
    w8.groupSize = -1;
    const auto plan = planFor("qwen3-dflash", DemoScale::Tiny, w8);
    const auto* down = plan.findModule("layers.0.mlp.down_proj");
    QCOMPARE(down->decision, PlanDecision::Quantize);
    QCOMPARE(down->bytesAfter, QuantScheme({8, -1}).quantizedBytes(256, 512, DType::BF16));
    QVERIFY(down->reason.find("W8A16:channel") != std::string::npos);
    QCOMPARE(down->scheme, findWeightScheme("W8A16:channel"));
    QCOMPARE(down->bytesAfter, down->scheme->quantizedBytes(256, 512, DType::BF16));
}

void TestPlan::genericDraft()
{
    const std::vector<TensorInfo> tensors{
        {"model.embed_tokens.weight", DType::BF16, {1024, 256}, 0, 1024 * 256 * 2},
        {"model.layers.0.self_attn.q_proj.weight", DType::BF16, {256, 256}, 0, 256 * 256 * 2},
        {"model.layers.0.self_attn.k_proj.weight", DType::BF16, {128, 256}, 0, 128 * 256 * 2},
        {"model.layers.0.self_attn.v_proj.weight", DType::BF16, {128, 256}, 0, 128 * 256 * 2},
        {"model.layers.0.mlp.down_proj.weight", DType::BF16, {256, 512}, 0, 256 * 512 * 2},
        {"model.layers.0.mlp.odd_proj.weight", DType::BF16, {100, 256}, 0, 100 * 256 * 2},
        {"model.norm.weight", DType::BF16, {256}, 0, 512},
        {"extra_head.proj.weight", DType::BF16, {256, 256}, 0, 256 * 256 * 2},
        {"lm_head.weight", DType::BF16, {1024, 256}, 0, 1024 * 256 * 2},
    };
    PlanOptions options;
    options.targetLayers = 10;
    const auto plan = makePlan(nlohmann::json::object(), tensors, options);
    QCOMPARE(plan.architecture.id, std::string("generic"));
    QCOMPARE(plan.preset, std::string("generic"));
    QVERIFY(plan.errors.empty());
    QCOMPARE(plan.findModule("model.layers.0.mlp.down_proj")->vllmName,
             std::string("model.layers.10.mlp.down_proj"));
    QCOMPARE(plan.findModule("model.layers.0.mlp.down_proj")->decision, PlanDecision::Quantize);
    QCOMPARE(plan.findModule("model.layers.0.self_attn.k_proj")->decision, PlanDecision::Quantize);
    QCOMPARE(plan.findModule("model.layers.0.mlp.odd_proj")->decision, PlanDecision::Keep); // 100 % 64
    QCOMPARE(plan.findModule("extra_head.proj")->decision, PlanDecision::Keep);
    QCOMPARE(plan.findModule("lm_head")->decision, PlanDecision::Keep);
    QCOMPARE(plan.findModule("model.embed_tokens")->decision, PlanDecision::Keep);
    verifyIgnoreSelectsKept(plan);
}

void TestPlan::predictionGlmPatched()
{
    PlanOptions options;
    options.preset = "glm-dspark-patched";
    const auto plan = planFor("glm-dspark", DemoScale::Full, options);
    const auto p = predictTiming(plan.sizes, {15.88, std::nullopt, 89.0});
    QVERIFY(p.available);
    qInfo("glm-dspark-patched: drafter %.2f -> %.2f ms, saving %.2f ms, speedup x%.4f", p.drafterMsBefore,
          p.drafterMsAfter, p.savingMs, p.speedup.value_or(0));
    // The GLM-5.2 seed measured 8.8 ms saved (+8.7% decode); the bytes model predicts ~7.9 ms.
    QVERIFY2(std::abs(p.savingMs - 7.9) < 0.3, std::to_string(p.savingMs).c_str());
    QCOMPARE(p.drafterMsBefore, 15.88);
    QVERIFY(std::abs(p.drafterMsAfter + p.savingMs - 15.88) < 1e-9);
    QVERIFY(p.speedup.has_value());
    QVERIFY(std::abs(*p.speedup - 89.0 / (89.0 - p.savingMs)) < 1e-12);
    QVERIFY(*p.speedup > 1.08 && *p.speedup < 1.11);
    QVERIFY(p.assumption.find("scales with the bytes") != std::string::npos);
    // Gathers are not streamed: the embedding and both Markov matrices stay out of the step bytes.
    const auto gathered = plan.findModule("embed_tokens")->bytes +
                          plan.findModule("markov_head.markov_w1")->bytes +
                          plan.findModule("markov_head.markov_w2")->bytes;
    QCOMPARE(plan.sizes.streamedBefore, plan.sizes.bytesBefore - gathered);
    // Without a drafter time or a bandwidth there is nothing to predict.
    QVERIFY(!predictTiming(plan.sizes, {}).available);
}

void TestPlan::predictionFromBandwidth()
{
    const auto plan = planFor("laguna-dflash", DemoScale::Full);
    const auto* gb10 = findDevicePreset("gb10");
    QVERIFY(gb10);
    QCOMPARE(gb10->bandwidthGBps, 273.0);
    QCOMPARE(findDevicePreset("h200")->bandwidthGBps, 4800.0);
    const auto p = predictTiming(plan.sizes, {std::nullopt, gb10->bandwidthGBps, std::nullopt});
    QVERIFY(p.available);
    QVERIFY(std::abs(p.drafterMsBefore - static_cast<double>(plan.sizes.streamedBefore) / 273e9 * 1e3) <
            1e-9);
    QVERIFY(std::abs(p.drafterMsAfter - static_cast<double>(plan.sizes.streamedAfter) / 273e9 * 1e3) < 1e-9);
    QVERIFY(!p.speedup);
}

void TestPlan::cliMatch()
{
    const auto ok = test::runCli({"match", "re:.*\\.fc$", "model.fc", "model.fc1", "fc"});
    QCOMPARE(ok.exitCode, 0);
    QCOMPARE(ok.out, std::string("match\tmodel.fc\nno-match\tmodel.fc1\nno-match\tfc\n"));
    const auto loose = test::runCli({"match", "re:.*fc", "model.fc1"});
    QCOMPARE(loose.out, std::string("match\tmodel.fc1\n"));
    const auto literal = test::runCli({"match", "lm_head", "lm_head", "model.lm_head"});
    QCOMPARE(literal.out, std::string("match\tlm_head\nno-match\tmodel.lm_head\n"));
    const auto bad = test::runCli({"match", "re:(abc", "x"});
    QCOMPARE(bad.exitCode, 2);
    QVERIFY(bad.out.empty());
    QVERIFY2(bad.err.find("at position") != std::string::npos, bad.err.c_str());
    QCOMPARE(test::runCli({"match", "re:x"}).exitCode, 2); // no names
}

void TestPlan::cliPlanJson()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const auto out = dir.filePath(QStringLiteral("draft")).toStdString();
    const auto demo = test::runCli({"demo", "--arch", "glm-dspark", "--scale", "tiny", "--out", out});
    QVERIFY2(demo.exitCode == 0, demo.err.c_str());

    const auto run = test::runCli({"plan", out, "--json", "--preset", "glm-dspark-patched", "--drafter-ms",
                                   "15.88", "--cycle-ms", "89", "--target-layers", "78"});
    QVERIFY2(run.exitCode == 0, run.err.c_str());
    const auto json = nlohmann::json::parse(run.out);
    QVERIFY(json["bytes_before"].get<std::uint64_t>() > json["bytes_after"].get<std::uint64_t>());
    QCOMPARE(json["targets"].get<std::vector<std::string>>(), std::vector<std::string>{"Linear"});
    QCOMPARE(json["ignore"][0].get<std::string>(), std::string("lm_head"));
    bool sawQuantize = false;
    for (const auto& m : json["modules"]) {
        QVERIFY(m.contains("name") && m.contains("vllm_name") && m.contains("reason"));
        const auto decision = m["decision"].get<std::string>();
        QVERIFY(decision == "quantize" || decision == "keep");
        if (m["name"].get<std::string>() == "layers.0.mlp.down_proj") {
            QCOMPARE(m["vllm_name"].get<std::string>(), std::string("model.layers.78.mlp.down_proj"));
            QCOMPARE(decision, std::string("quantize"));
            sawQuantize = true;
        }
    }
    QVERIFY(sawQuantize);
    bool rawLint = false;
    for (const auto& f : json["lint"]) {
        QVERIFY(f.contains("id") && f.contains("severity") && f.contains("modules") && f.contains("message"));
        rawLint = rawLint || f["id"].get<std::string>() == "raw-weight-read";
        QVERIFY(!f["rule"].get<std::string>().empty());
    }
    QVERIFY(rawLint);
    const auto& prediction = json["prediction"];
    QVERIFY(prediction.is_object());
    QVERIFY(prediction["saving_ms"].get<double>() > 0);
    QVERIFY(std::abs(prediction["drafter_ms_after"].get<double>() + prediction["saving_ms"].get<double>() -
                     15.88) < 1e-9);
    QVERIFY(prediction["speedup"].get<double>() > 1.0);

    // The human table runs too, and --device replaces --bandwidth-gbps.
    const auto text = test::runCli({"plan", out, "--device", "gb10"});
    QCOMPARE(text.exitCode, 0);
    QVERIFY(text.out.find("bandwidth 273 GB/s") != std::string::npos);
    QVERIFY(text.out.find("[raw-weight-read] vLLM reads some weights") != std::string::npos);
    QVERIFY(text.out.find("re:.*\\\\.(qkv|q|k|v)_proj$") != std::string::npos);
    QCOMPARE(test::runCli({"plan", out, "--device", "gb10", "--bandwidth-gbps", "100"}).exitCode, 2);
    QCOMPARE(test::runCli({"plan", out, "--device", "tpu"}).exitCode, 2);
    QCOMPARE(test::runCli({"plan", dir.filePath(QStringLiteral("missing")).toStdString()}).exitCode, 2);
}

void TestPlan::cliPlanFusedError()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const auto out = dir.filePath(QStringLiteral("draft")).toStdString();
    QCOMPARE(test::runCli({"demo", "--arch", "llama-eagle3", "--out", out}).exitCode, 0);
    const auto run = test::runCli({"plan", out, "--ignore", "re:.*\\.v_proj$"});
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.find("Found a different quantization schemes") != std::string::npos, run.err.c_str());
    const auto invalid = test::runCli({"plan", out, "--ignore", "re:[", "--json"});
    QCOMPARE(invalid.exitCode, 2);
    QVERIFY(invalid.err.find("at position") != std::string::npos);
}

// A one-layer EAGLE-3 head at int4 (the auto preset) must say so, with the remedies; at 8 bits it is quiet.
void TestPlan::eagle3ShallowHeadWarns()
{
    const auto plan = planFor("llama-eagle3", DemoScale::Tiny);
    QCOMPARE(plan.preset, std::string("eagle3"));
    const auto it = std::find_if(plan.lint.begin(), plan.lint.end(),
                                 [](const LintFinding& f) { return f.id == "eagle3-shallow-int4"; });
    QVERIFY(it != plan.lint.end());
    QCOMPARE(it->severity, LintSeverity::Warning);
    QVERIFY2(it->message.find("eagle3-int8") != std::string::npos, it->message.c_str());
    QVERIFY2(it->message.find("sparkulator-cli acceptance") != std::string::npos, it->message.c_str());
    QVERIFY(contains(it->modules, "midlayer.mlp.down_proj"));
    QVERIFY(plan.errors.empty()); // a warning, not a refusal

    QVERIFY(
        !planFor("llama-eagle3", DemoScale::Tiny, {.preset = "eagle3-int8"}).hasLint("eagle3-shallow-int4"));
    QVERIFY(!planFor("qwen3-dflash", DemoScale::Tiny).hasLint("eagle3-shallow-int4"));

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const auto out = dir.filePath(QStringLiteral("draft")).toStdString();
    QCOMPARE(test::runCli({"demo", "--arch", "llama-eagle3", "--out", out}).exitCode, 0);
    const auto run = test::runCli({"plan", out});
    QCOMPARE(run.exitCode, 0);
    QVERIFY2(run.out.find("eagle3-shallow-int4") != std::string::npos, run.out.c_str());
    const auto card = test::runCli({"card", out});
    QCOMPARE(card.exitCode, 0);
    QVERIFY2(card.out.find("sparkulator-cli acceptance") != std::string::npos, card.out.c_str());
    QVERIFY2(card.out.find("eagle3-int8") != std::string::npos, card.out.c_str());
}

// The GUI's tooltips and the CLI explain findings by rule id: every finding of every architecture,
// preset and kind of bad input must have one, and ids must be unique.
void TestPlan::everyFindingHasARule()
{
    std::set<std::string_view> ids;
    for (const auto& rule : lintRules()) {
        QVERIFY2(ids.insert(rule.id).second, std::string(rule.id).c_str());
        QVERIFY(!rule.description.empty());
    }
    std::vector<PlanOptions> variants(1);
    for (const auto& preset : presets()) {
        variants.push_back({});
        variants.back().preset = preset.name;
    }
    PlanOptions bad;
    bad.preset = "no-such-preset";
    variants.push_back(bad);
    PlanOptions entries;
    entries.ignore = {"layers.0.mlp.down_proj", "re:.*fc", "re:(", "re:.*self_attn.q_proj$"};
    entries.targets = {"re:.*lm_head$", "NoSuchClass"};
    variants.push_back(entries);
    PlanOptions scheme;
    scheme.bits = 8;
    scheme.groupSize = 32;
    scheme.tpDegree = 0;
    scheme.targetLayers = -3;
    variants.push_back(scheme);
    PlanOptions everything;
    everything.ignore = {"re:.*"};
    variants.push_back(everything);
    PlanOptions hessian; // needs a capture, and cannot round FP8
    hessian.rounding = "hessian";
    hessian.schemes = {"re:.*down_proj$=FP8_DYNAMIC"};
    variants.push_back(hessian);
    std::set<std::string> seen;
    for (const auto& arch : demoArchitectures()) {
        for (const auto& options : variants) {
            for (const auto& f : planFor(arch, DemoScale::Tiny, options).lint) {
                QVERIFY2(!lintRuleDescription(f.id).empty(), ("no rule for finding id " + f.id).c_str());
                seen.insert(f.id);
            }
        }
    }
    QVERIFY2(seen.size() >= 12, std::to_string(seen.size()).c_str()); // the variants reach most rules
    QVERIFY(seen.count("rounding-needs-capture") && seen.count("rounding-not-applicable"));
}

// The GUI's "Copy as Command": defaults left out, entries in order, words quoted for a POSIX shell.
void TestPlan::commandLine()
{
    QVERIFY(planArguments(PlanOptions{}).empty());
    PlanOptions options;
    options.preset = "glm-dspark";
    options.targets = {"Linear"};
    options.ignore = {"re:.*\\.fc$", "lm_head"};
    options.targetLayers = 78;
    options.bits = 8;
    options.groupSize = -1;
    const std::vector<std::string> expected{
        "--preset", "glm-dspark",      "--target", "Linear", "--ignore", "re:.*\\.fc$", "--ignore",
        "lm_head",  "--target-layers", "78",       "--bits", "8",        "--group",     "-1"};
    QCOMPARE(planArguments(options), expected);
    // Rounding travels too: a copied command must not quietly fall back to rtn.
    PlanOptions rounded;
    rounded.rounding = "mse";
    rounded.roundings = {"re:.*down_proj=range"};
    const std::vector<std::string> roundedExpected{"--rounding", "mse", "--rounding", "re:.*down_proj=range"};
    QCOMPARE(planArguments(rounded), roundedExpected);
    QCOMPARE(shellQuote("model.layers.3.mlp"), std::string("model.layers.3.mlp"));
    QCOMPARE(shellQuote("re:.*\\.fc$"), std::string("'re:.*\\.fc$'"));
    QCOMPARE(shellQuote("it's"), std::string("'it'\\''s'"));
    QCOMPARE(shellQuote(""), std::string("''"));
    QCOMPARE(shellQuote("a b"), std::string("'a b'"));
    QCOMPARE(quantizeCommand("/data/my draft", "/data/out", PlanOptions{}),
             std::string("sparkulator-cli quantize '/data/my draft' --out /data/out"));
}

QTEST_GUILESS_MAIN(TestPlan)
#include "tst_plan.moc"
