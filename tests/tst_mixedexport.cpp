// Mixed precision end to end: a scheme per decision unit on real files, written, verified and re-read.
#include "core/demo/demodraft.h"
#include "core/export/exporter.h"
#include "core/export/verifier.h"
#include "core/io/checkpoint.h"
#include "core/plan/configreader.h"
#include "core/plan/quantplan.h"
#include "core/quant/schemecodec.h"
#include "testsupport.h"

#include <QTemporaryDir>
#include <QTest>
#include <cstring>
#include <set>

using namespace spark;
using namespace spark::test;
namespace fs = std::filesystem;

namespace {

QuantPlan planOf(const Checkpoint& checkpoint, const std::string& preset, std::vector<std::string> rules,
                 std::optional<int> targetLayers = std::nullopt)
{
    PlanOptions options;
    options.preset = preset;
    options.schemes = std::move(rules);
    options.targetLayers = targetLayers;
    return makePlan(checkpoint.config(), infosOf(checkpoint), options);
}

/// The rules every architecture's mixed plan uses: five schemes, and lm_head where vLLM can load it.
const std::vector<std::string> kMixedRules = {
    "re:.*o_proj$=W8A16",     "re:.*down_proj$=FP8_DYNAMIC", "re:.*\\.(gate_up|gate|up)_proj$=NVFP4A16",
    "re:.*\\.fc$=W4A16_ASYM", "lm_head=W8A16:channel",
};

} // namespace

class TestMixedExport : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void goldenMixedExample();
    void demosExportVerifyAndReread_data();
    void demosExportVerifyAndReread();
    void lagunaThreeGroupsTwoFormats();
    void rawQkvRuleIsRefused();
    void singleSchemeConfigUnchanged();
    void fusedSetSharesOneScheme();
    void badRules();
};

void TestMixedExport::goldenMixedExample()
{
    // The assignment of golden-schemes/mixed-example (its README), on the same fixture: every module the
    // EAGLE-3 layout knows is byte-identical with the compressed-tensors reference checkpoint.
    const auto fixture = Checkpoint::open(dataPath("golden-schemes/fixture"));
    const auto plan =
        planOf(fixture, "none",
               {"re:.*=W4A16", "re:model\\.layers\\.32\\.self_attn\\.qkv_proj$=W8A16:channel",
                "re:model\\.layers\\.32\\.mlp\\.gate_up_proj$=NVFP4A16", "model.fc=W4A16_ASYM",
                "model.layers.32.mlp.down_proj=FP8_DYNAMIC", "model.layers.33.mlp.down_proj=NVFP4A16",
                "model.layers.33.self_attn.o_proj=FP8_DYNAMIC", "model.layers.33.mlp.outlier_proj=BF16",
                "lm_head=W8A16:channel"},
               32);
    QVERIFY2(plan.errors.empty(), plan.errors.empty() ? "" : plan.errors.front().c_str());
    QTemporaryDir dir;
    const fs::path out = fs::path(dir.path().toStdString()) / "mixed";
    exportCheckpoint(fixture, plan, {out});
    const auto written = Checkpoint::open(out);
    const auto reference = Checkpoint::open(dataPath("golden-schemes/mixed-example"));
    int compared = 0;
    for (const auto& t : written.tensors()) {
        const auto* expected = reference.find(t.info.name);
        if (!expected) {
            // f16_proj / f32_proj: names the EAGLE-3 layout does not know stay BF16 here.
            QVERIFY2(t.info.name.find("f16_proj") != std::string::npos ||
                         t.info.name.find("f32_proj") != std::string::npos,
                     t.info.name.c_str());
            continue;
        }
        QCOMPARE(t.info.dtype, expected->info.dtype);
        QCOMPARE(t.info.shape, expected->info.shape);
        const auto a = written.bytes(t);
        const auto b = reference.bytes(*expected);
        QVERIFY2(std::equal(a.begin(), a.end(), b.begin(), b.end()), t.info.name.c_str());
        ++compared;
    }
    QCOMPARE(compared, 39);
    const auto report = verifyExport(fixture, written, {0, 32});
    QVERIFY2(report.ok(), report.ok() ? "" : report.problems.front().message.c_str());
    QCOMPARE(report.bitExactModules, std::size_t{11});
    // Five schemes, three formats: mixed-precision at the top; lm_head through its exact target.
    const auto config = readQuantizationConfig(written.config());
    QVERIFY(config.problems.empty());
    QCOMPARE(config.format, std::string("mixed-precision"));
    QCOMPARE(config.groups.size(), std::size_t{5});
    QVERIFY(std::any_of(config.groups.begin(), config.groups.end(), [](const ConfigGroup& g) {
        return std::find(g.targets.begin(), g.targets.end(), "lm_head") != g.targets.end();
    }));
}

void TestMixedExport::demosExportVerifyAndReread_data()
{
    QTest::addColumn<QString>("arch");
    for (const auto& arch : demoArchitectures()) {
        QTest::addRow("%s", arch.c_str()) << QString::fromStdString(arch);
    }
}

void TestMixedExport::demosExportVerifyAndReread()
{
    QFETCH(QString, arch);
    QTemporaryDir dir;
    const fs::path src = fs::path(dir.path().toStdString()) / "src";
    writeDemoDraft(describeDemoDraft(arch.toStdString(), DemoScale::Tiny), src, {});
    const auto source = Checkpoint::open(src);
    const auto plan = planOf(source, "auto", kMixedRules);
    QVERIFY2(plan.errors.empty(), plan.errors.empty() ? "" : plan.errors.front().c_str());
    QVERIFY2(plan.groups.size() >= 3, qPrintable(QString::number(plan.groups.size())));

    const fs::path out = fs::path(dir.path().toStdString()) / "out";
    const auto result = exportCheckpoint(source, plan, {out});
    QCOMPARE(result.quantizedModules, plan.quantizedModules().size());
    const auto written = Checkpoint::open(out);
    const auto report = verifyExport(source, written);
    QVERIFY2(report.ok(),
             report.ok()
                 ? ""
                 : (report.problems.front().subject + ": " + report.problems.front().message).c_str());
    QCOMPARE(report.bitExactModules, plan.quantizedModules().size());

    // Re-read: vLLM's group selection on the written config gives each module its planned scheme, and the
    // module holds exactly that scheme's tensors.
    const auto config = readQuantizationConfig(written.config());
    QVERIFY(config.problems.empty());
    for (const auto* m : plan.quantizedModules()) {
        const int g = selectConfigGroup(config.groups, m->vllmName, m->vllmClass, standardFusedMapping());
        QVERIFY2(g >= 0, m->name.c_str());
        QCOMPARE(config.groups[static_cast<std::size_t>(g)].scheme, m->scheme);
        for (const auto& t : m->scheme->codec()->tensors(m->outFeatures, m->inFeatures, m->dtype)) {
            const auto* tensor = written.find(m->name + "." + t.suffix);
            QVERIFY2(tensor && tensor->info.dtype == t.dtype && tensor->info.shape == t.shape,
                     (m->name + "." + t.suffix).c_str());
        }
    }
    // The sizes the plan predicted are the bytes written.
    QCOMPARE(written.totalBytes(), plan.sizes.bytesAfter);
}

void TestMixedExport::lagunaThreeGroupsTwoFormats()
{
    // The example through the real CLI: W8A16 fc, NVFP4A16 MLP, the preset's W4A16 elsewhere.
    QTemporaryDir dir;
    const fs::path src = fs::path(dir.path().toStdString()) / "laguna";
    writeDemoDraft(describeDemoDraft("laguna-dflash", DemoScale::Tiny), src, {});
    const auto out = fs::path(dir.path().toStdString()) / "laguna-mixed";
    const auto run = runCli({"quantize", src.string(), "--out", out.string(), "--backend", "cpu", "--scheme",
                             "re:.*\\.fc$=W8A16", "--scheme", "re:.*mlp\\..*=NVFP4A16"});
    QVERIFY2(run.exitCode == 0, run.err.c_str());
    QVERIFY(run.out.find("0 problems") != std::string::npos);
    const auto config = readQuantizationConfig(Checkpoint::open(out).config());
    QVERIFY(config.problems.empty());
    QCOMPARE(config.groups.size(), std::size_t{3});
    QCOMPARE(config.format, std::string("mixed-precision"));
    std::set<std::string> formats;
    for (const auto& g : config.groups) {
        formats.insert(std::string(g.scheme->format));
    }
    QCOMPARE(formats, (std::set<std::string>{"pack-quantized", "nvfp4-pack-quantized"}));
    const auto verify = runCli({"verify", src.string(), out.string()});
    QCOMPARE(verify.exitCode, 0);
    // The model card: one tag per scheme, the mix in its first sentence, a scheme column per module.
    const auto card = readFile(out / "README.md");
    QVERIFY(card.find("- \"nvfp4a16\"\n") != std::string::npos ||
            card.find("- nvfp4a16\n") != std::string::npos);
    QVERIFY(card.find("- w8a16\n") != std::string::npos || card.find("- \"w8a16\"\n") != std::string::npos);
    QVERIFY(card.find("mixed precision: NVFP4A16 for") != std::string::npos);
    QVERIFY(card.find("| module | scheme | reason |") != std::string::npos);
    QVERIFY(card.find("| `fc` | W8A16 |") != std::string::npos);
}

void TestMixedExport::rawQkvRuleIsRefused()
{
    // DFlash reads qkv_proj.weight raw (vllm#51581): a rule that quantizes it is an error, and export
    // refuses.
    QTemporaryDir dir;
    const fs::path src = fs::path(dir.path().toStdString()) / "laguna";
    writeDemoDraft(describeDemoDraft("laguna-dflash", DemoScale::Tiny), src, {});
    const auto source = Checkpoint::open(src);
    const auto plan = planOf(source, "auto", {"re:.*qkv_proj$=W8A16"});
    QVERIFY(!plan.errors.empty());
    QVERIFY(plan.hasLint("raw-weight-read"));
    QVERIFY_THROWS_EXCEPTION(ExportError,
                             exportCheckpoint(source, plan, {fs::path(dir.path().toStdString()) / "x"}));
    QVERIFY(!fs::exists(fs::path(dir.path().toStdString()) / "x"));
    // BF16 for the same modules is fine.
    QVERIFY(planOf(source, "auto", {"re:.*qkv_proj$=BF16"}).errors.empty());
}

void TestMixedExport::singleSchemeConfigUnchanged()
{
    QTemporaryDir dir;
    const fs::path src = fs::path(dir.path().toStdString()) / "glm";
    writeDemoDraft(describeDemoDraft("glm-dspark", DemoScale::Tiny), src, {});
    const auto source = Checkpoint::open(src);
    const auto plan = planOf(source, "auto", {});
    QCOMPARE(plan.groups.size(), std::size_t{1});
    QCOMPARE(plan.groups.front().targets, std::vector<std::string>{"Linear"});
    const fs::path out = fs::path(dir.path().toStdString()) / "out";
    exportCheckpoint(source, plan, {out});
    const auto qc = Checkpoint::open(out).config()["quantization_config"];
    QCOMPARE(qc["format"].get<std::string>(), std::string("pack-quantized"));
    QCOMPARE(qc["config_groups"].size(), std::size_t{1});
    QVERIFY(qc["config_groups"]["group_0"]["input_activations"].is_null());
    QCOMPARE(qc["ignore"].front().get<std::string>(), std::string("lm_head"));
}

void TestMixedExport::fusedSetSharesOneScheme()
{
    // vLLM decides a fused set as one layer: a rule naming every shard gives the set one scheme; a rule
    // naming only gate_proj does not select gate_up_proj (it would fall through to "Linear" in vLLM), so it
    // is not applied and the lint says why.
    QTemporaryDir dir;
    const fs::path src = fs::path(dir.path().toStdString()) / "eagle";
    writeDemoDraft(describeDemoDraft("llama-eagle3", DemoScale::Tiny), src, {});
    const auto source = Checkpoint::open(src);
    const auto whole = planOf(source, "auto", {"re:.*\\.(gate|up)_proj$=W8A16"});
    QVERIFY(whole.errors.empty());
    const auto* gate = whole.findModule("midlayer.mlp.gate_proj");
    const auto* up = whole.findModule("midlayer.mlp.up_proj");
    QVERIFY(gate && up);
    QCOMPARE(gate->scheme, findWeightScheme("W8A16"));
    QCOMPARE(up->scheme, gate->scheme);

    const auto half = planOf(source, "auto", {"re:.*\\.gate_proj$=W8A16"});
    QVERIFY(half.hasLint("fused-entry-mismatch"));
    QCOMPARE(half.findModule("midlayer.mlp.gate_proj")->scheme, half.defaultScheme);
    QCOMPARE(half.findModule("midlayer.mlp.up_proj")->scheme, half.defaultScheme);
}

void TestMixedExport::badRules()
{
    QTemporaryDir dir;
    const fs::path src = fs::path(dir.path().toStdString()) / "glm";
    writeDemoDraft(describeDemoDraft("glm-dspark", DemoScale::Tiny), src, {});
    const auto source = Checkpoint::open(src);
    QVERIFY(planOf(source, "auto", {"re:.*=W3A16"}).hasLint("invalid-scheme-rule"));
    QVERIFY(planOf(source, "auto", {"no-equals-sign"}).hasLint("invalid-scheme-rule"));
    QVERIFY(planOf(source, "auto", {"re:(broken=W8A16"}).hasLint("invalid-entry"));
    QVERIFY(planOf(source, "auto", {"layers.0.mlp.down_proj=W8A16"}).hasLint("scheme-unmatched"));
    // An explicit keep that a scheme rule overrides is named, not silent; without the rule, or with a BF16
    // rule, it is not.
    const auto planWithIgnore = [&](std::vector<std::string> rules) {
        PlanOptions options;
        options.schemes = std::move(rules);
        options.ignore = {"re:.*down_proj$"};
        return makePlan(source.config(), infosOf(source), options);
    };
    const auto overridden = planWithIgnore({"re:.*_proj$=W8A16"});
    QVERIFY(overridden.hasLint("keep-overridden"));
    QCOMPARE(overridden.findModule("layers.0.mlp.down_proj")->decision, PlanDecision::Quantize);
    QVERIFY(!planWithIgnore({}).hasLint("keep-overridden"));
    QVERIFY(!planWithIgnore({"re:.*down_proj$=BF16"}).hasLint("keep-overridden"));
    // DSpark builds lm_head without quant_config: an lm_head rule is refused with a warning, never applied.
    const auto head = planOf(source, "auto", {"lm_head=W8A16"});
    QVERIFY(head.hasLint("lm-head"));
    for (const auto& m : head.modules) {
        QVERIFY(m.vllmName != "lm_head" || m.decision == PlanDecision::Keep);
    }
}

QTEST_GUILESS_MAIN(TestMixedExport)
#include "tst_mixedexport.moc"
