// `check` on real layouts: every export Sparkulator writes passes; broken checkpoints (generated from tiny
// demo exports) are each flagged by their own rule id; hostile configs and shapes are findings, not
// crashes; dequantization equals compressed-tensors' on the golden data, any bit width included.
#include "audittesthelpers.h"
#include "core/audit/checker.h"
#include "core/audit/quantargs.h"
#include "core/io/floatconv.h"
#include "core/quant/quantbackend.h"
#include "core/quant/schemecodec.h"
#include "testsupport.h"

#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <cstring>
#include <set>

using namespace spark;
using namespace spark::test;
namespace fs = std::filesystem;

namespace {

/// The rules the broken checkpoints below must each trigger alone (among themselves).
const std::vector<std::string> kBrokenRules = {
    "ignore-literal-name",  "raw-weight-quantized", "fused-set-split",  "group-format-missing",
    "zero-point-symmetric", "tensor-shape",         "lm-head-quantized"};

const std::vector<std::string> kMixedRules = {"re:.*o_proj$=W8A16", "re:.*down_proj$=FP8_DYNAMIC",
                                              "re:.*\\.(gate_up|gate|up)_proj$=NVFP4A16",
                                              "re:.*\\.fc$=W4A16_ASYM"};

std::string describe(const CheckReport& report)
{
    std::string text = report.summary();
    for (const auto& f : report.findings) {
        text += "\n  " + std::string(severityName(f.severity)) + "[" + f.id + "] " +
                (f.modules.empty() ? "-" : f.modules.front()) + ": " + f.message;
    }
    return text;
}

/// The W4A16 triplet of a source weight (for modules the exporter refuses to quantize).
void quantizeInto(EditableCheckpoint& out, const Checkpoint& source, const std::string& module,
                  const WeightScheme& scheme)
{
    const auto* weight = source.find(module + ".weight");
    QVERIFY(weight);
    const auto bytes = source.bytes(*weight);
    WeightRows rows;
    rows.dtype = weight->info.dtype;
    rows.data = bytes.data();
    rows.rowCount = static_cast<std::size_t>(weight->info.shape[0]);
    rows.cols = static_cast<std::size_t>(weight->info.shape[1]);
    rows.tensor = weight->info.name;
    const auto backend = makeBackend(Backend::Cpu);
    const auto& codec = *scheme.codec();
    const auto parts = encodeWeight(codec, rows, {}, *backend);
    const auto tensors = codec.tensors(weight->info.shape[0], weight->info.shape[1], weight->info.dtype);
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        out.set(module + "." + tensors[i].suffix, tensors[i].dtype, tensors[i].shape, parts[i]);
    }
    out.tensors.erase(module + ".weight");
}

std::vector<std::byte> bytesOf(const std::vector<std::int64_t>& values)
{
    std::vector<std::byte> out(values.size() * 8);
    std::memcpy(out.data(), values.data(), out.size());
    return out;
}

} // namespace

class TestAuditCheck : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void initTestCase();
    void passesProductExports_data();
    void passesProductExports();
    void passesGoldenMixedExample();
    void brokenCheckpoints_data();
    void brokenCheckpoints();
    void hostileInputs_data();
    void hostileInputs();
    void dequantizesLikeCompressedTensors_data();
    void dequantizesLikeCompressedTensors();
    void threeBitOldAndNewPacking();
    void speculatorsConfigInsideTransformerLayerConfig();
    void cliExitCodes();

  private:
    QTemporaryDir m_dir;
    fs::path m_root;
};

void TestAuditCheck::initTestCase()
{
    QVERIFY(m_dir.isValid());
    m_root = fs::path(m_dir.path().toStdString());
}

void TestAuditCheck::passesProductExports_data()
{
    QTest::addColumn<QString>("arch");
    QTest::addColumn<QString>("scheme"); // "" = the mixed rules
    for (const auto& arch : demoArchitectures()) {
        QTest::addRow("%s W4A16", arch.c_str()) << QString::fromStdString(arch) << QStringLiteral("W4A16");
        QTest::addRow("%s mixed", arch.c_str()) << QString::fromStdString(arch) << QString();
    }
    for (const auto& s : weightSchemes()) {
        if (s.product && s.quantizes() && s.name != "W4A16") {
            QTest::addRow("qwen3-dflash %s", std::string(s.name).c_str())
                << QStringLiteral("qwen3-dflash") << QString::fromStdString(std::string(s.name));
            QTest::addRow("llama-eagle3 %s", std::string(s.name).c_str())
                << QStringLiteral("llama-eagle3") << QString::fromStdString(std::string(s.name));
        }
    }
}

void TestAuditCheck::passesProductExports()
{
    QFETCH(QString, arch);
    QFETCH(QString, scheme);
    // The default plan is W4A16; another scheme goes to every Linear vLLM can load quantized (a rule for
    // "Linear" would also claim DFlash's qkv_proj, which the planner refuses).
    std::vector<std::string> rules = kMixedRules;
    if (scheme == QStringLiteral("W4A16")) {
        rules.clear();
    } else if (!scheme.isEmpty()) {
        rules = {"re:.*\\.(o|down|gate|up|gate_up)_proj$=" + scheme.toStdString(),
                 "re:.*\\.fc$=" + scheme.toStdString()};
    }
    std::string error;
    const auto name = arch.toStdString() + "-" + (scheme.isEmpty() ? "mixed" : scheme.toStdString());
    const auto out = exportDemo(m_root, arch.toStdString(), rules, name, &error);
    QVERIFY2(!out.empty(), error.c_str());
    const auto checkpoint = Checkpoint::open(out);
    const auto report = checkCheckpoint(checkpoint);
    QVERIFY2(report.ok(), describe(report).c_str());
    QVERIFY2(report.count(LintSeverity::Warning) == 0, describe(report).c_str());
    // Every quantized module is recognised as the scheme its plan gave it, with a group vLLM selects.
    const auto source = Checkpoint::open(demoSource(m_root, arch.toStdString()));
    PlanOptions options;
    options.schemes = rules;
    const auto plan = makePlan(source.config(), infosOf(source), options);
    std::size_t quantized = 0;
    for (const auto* planned : plan.quantizedModules()) {
        const auto* m = report.view.find(planned->name);
        QVERIFY2(m && m->quantizedOnDisk, planned->name.c_str());
        QCOMPARE(m->scheme, std::string(planned->scheme->name));
        QVERIFY(m->vllmQuantizes());
        QCOMPARE(m->module.outFeatures, planned->outFeatures);
        QCOMPARE(m->module.inFeatures, planned->inFeatures);
        QCOMPARE(m->weightBytes,
                 planned->scheme->quantizedBytes(planned->outFeatures, planned->inFeatures, planned->dtype));
        QVERIFY(m->bitsPerWeight > 3.9 && m->bitsPerWeight < 9);
        ++quantized;
    }
    QVERIFY(quantized > 0);
    for (const auto& m : report.view.modules) {
        QVERIFY2(!m.quantizedOnDisk || plan.findModule(m.module.name)->decision == PlanDecision::Quantize,
                 m.module.name.c_str());
    }
}

void TestAuditCheck::passesGoldenMixedExample()
{
    // The compressed-tensors oracle's own mixed checkpoint (golden-schemes/mixed-example): 6 groups, 3
    // formats.
    const auto checkpoint = Checkpoint::open(dataPath("golden-schemes/mixed-example"));
    CheckOptions options;
    options.targetLayers = 32;
    const auto report = checkCheckpoint(checkpoint, options);
    // The fixture's f16_proj / f32_proj are not modules of the EAGLE-3 layout (its notes: "shapes are not a
    // consistent architecture"); vLLM has no such layer, quantized or not. Those are the only errors.
    for (const auto& f : report.findings) {
        if (f.severity == LintSeverity::Error) {
            QVERIFY2(f.id == "not-quantizable" && f.modules.size() == 1 &&
                         (f.modules[0] == "layers.1.mlp.f16_proj" || f.modules[0] == "layers.1.mlp.f32_proj"),
                     describe(report).c_str());
        }
    }
    QCOMPARE(report.count(LintSeverity::Error), std::size_t{2});
    QCOMPARE(report.view.find("fc")->scheme, std::string("W4A16_ASYM"));
    QCOMPARE(report.view.find("layers.0.mlp.gate_proj")->scheme, std::string("NVFP4A16"));
    QCOMPARE(report.view.find("layers.0.self_attn.q_proj")->scheme, std::string("W8A16:channel"));
    QCOMPARE(report.view.find("lm_head")->scheme, std::string("W8A16:channel"));
    QVERIFY(report.has("lm-head-quantized")); // EAGLE-3: a warning (needs vllm#37280), not an error
    QVERIFY(report.has("sglang-multi-group"));
    QVERIFY(report.has("kernel"));
    // An old vLLM is not known to carry vllm#37280: the quantized lm_head becomes an error.
    options.vllm = *VllmVersion::parse("0.10.1");
    QCOMPARE(checkCheckpoint(checkpoint, options).count(LintSeverity::Error), std::size_t{3});
}

void TestAuditCheck::brokenCheckpoints_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("rule");
    QTest::addColumn<QString>("module"); // a module the finding must name ("" = any)
    QTest::newRow("literal ignore names") << "literal-ignore"
                                          << "ignore-literal-name"
                                          << "";
    QTest::newRow("quantized DFlash qkv_proj") << "dflash-qkv"
                                               << "raw-weight-quantized"
                                               << "layers.0.self_attn.q_proj";
    QTest::newRow("fused set split across groups") << "split-groups"
                                                   << "fused-set-split"
                                                   << "midlayer.self_attn.k_proj";
    QTest::newRow("mixed without per-group formats") << "no-formats"
                                                     << "group-format-missing"
                                                     << "";
    QTest::newRow("zero point on a symmetric scheme") << "zero-point"
                                                      << "zero-point-symmetric"
                                                      << "midlayer.mlp.down_proj";
    QTest::newRow("scale of the wrong shape") << "scale-shape"
                                              << "tensor-shape"
                                              << "midlayer.mlp.down_proj";
    QTest::newRow("quantized lm_head on DSpark") << "dspark-head"
                                                 << "lm-head-quantized"
                                                 << "lm_head";
}

void TestAuditCheck::brokenCheckpoints()
{
    QFETCH(QString, kind);
    QFETCH(QString, rule);
    QFETCH(QString, module);
    const auto k = kind.toStdString();
    const std::string arch = k == "dflash-qkv" || k == "literal-ignore" ? "qwen3-dflash"
                             : k == "dspark-head"                       ? "glm-dspark"
                                                                        : "llama-eagle3";
    const auto exported =
        exportDemo(m_root, arch, k == "no-formats" ? kMixedRules : std::vector<std::string>{}, "base-" + k);
    QVERIFY(!exported.empty());
    QVERIFY2(checkCheckpoint(Checkpoint::open(exported)).ok(), "the unbroken export must pass");
    auto e = EditableCheckpoint::load(exported);
    const auto source = Checkpoint::open(demoSource(m_root, arch));
    auto& qc = e.quantizationConfig();
    if (k == "literal-ignore") {
        // The HF names of the BF16 attention, as people write them by hand: vLLM never sees these names.
        qc["ignore"] = {"lm_head", "layers.0.self_attn.q_proj", "layers.0.self_attn.k_proj",
                        "layers.0.self_attn.v_proj"};
    } else if (k == "dflash-qkv") {
        for (const char* shard : {"q_proj", "k_proj", "v_proj"}) {
            quantizeInto(e, source, std::string("layers.0.self_attn.") + shard, *findWeightScheme("W4A16"));
        }
        nlohmann::json ignore = nlohmann::json::array();
        for (const auto& entry : qc["ignore"]) {
            if (entry.get<std::string>().find("qkv") == std::string::npos) {
                ignore.push_back(entry);
            }
        }
        qc["ignore"] = ignore;
    } else if (k == "split-groups") {
        // k_proj's shard name gets its own group: vLLM still decides the fused qkv_proj by "Linear".
        auto group = qc["config_groups"]["group_0"];
        group["targets"] = {"re:.*\\.k_proj$"};
        group["weights"] = findWeightScheme("W8A16")->weightsConfig();
        qc["config_groups"]["group_1"] = group;
    } else if (k == "no-formats") {
        for (auto& [name, group] : qc["config_groups"].items()) {
            group.erase("format");
        }
    } else if (k == "zero-point") {
        const auto& scale = e.tensors.at("midlayer.mlp.down_proj.weight_scale").first;
        const std::uint64_t rows = (scale.shape[0] + 7) / 8;
        e.set("midlayer.mlp.down_proj.weight_zero_point", DType::I32, {rows, scale.shape[1]},
              std::vector<std::byte>(rows * scale.shape[1] * 4, std::byte{0x88}));
    } else if (k == "scale-shape") {
        auto& [spec, bytes] = e.tensors.at("midlayer.mlp.down_proj.weight_scale");
        spec.shape[1] *= 2;
        bytes.resize(bytes.size() * 2);
    } else if (k == "dspark-head") {
        quantizeInto(e, source, "lm_head", *findWeightScheme("W8A16:channel"));
        nlohmann::json ignore = nlohmann::json::array();
        for (const auto& entry : qc["ignore"]) {
            if (entry.get<std::string>().find("lm_head") == std::string::npos) {
                ignore.push_back(entry);
            }
        }
        qc["ignore"] = ignore;
        auto group = qc["config_groups"]["group_0"];
        group["targets"] = {"lm_head"};
        group["weights"] = findWeightScheme("W8A16:channel")->weightsConfig();
        qc["config_groups"]["group_1"] = group;
    }
    const auto broken = m_root / ("broken-" + k);
    e.write(broken);
    const auto report = checkCheckpoint(Checkpoint::open(broken));
    QVERIFY2(!report.ok(), describe(report).c_str());
    bool named = false;
    for (const auto& f : report.findings) {
        if (f.id == rule.toStdString()) {
            named = named || module.isEmpty() ||
                    std::find(f.modules.begin(), f.modules.end(), module.toStdString()) != f.modules.end();
        }
    }
    QVERIFY2(named, describe(report).c_str());
    // Each broken checkpoint is told apart by its own rule: no other rule of the set fires.
    for (const auto& other : kBrokenRules) {
        if (other != rule.toStdString()) {
            QVERIFY2(!report.has(other), (other + " fired too:\n" + describe(report)).c_str());
        }
    }
}

void TestAuditCheck::hostileInputs_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("rule");
    QTest::newRow("huge weight_shape") << "huge-shape"
                                       << "weight-shape";
    QTest::newRow("negative weight_shape") << "negative-shape"
                                           << "weight-shape";
    QTest::newRow("group does not divide") << "group-96"
                                           << "group-divides";
    QTest::newRow("scale of the wrong dtype") << "scale-i32"
                                              << "tensor-dtype";
    QTest::newRow("missing scale") << "no-scale"
                                   << "tensor-missing";
    QTest::newRow("num_bits a string") << "bits-string"
                                       << "group-scheme";
    QTest::newRow("num_bits 0") << "bits-zero"
                                << "group-scheme";
    QTest::newRow("targets a string") << "targets-string"
                                      << "config-unreadable";
    QTest::newRow("quant_method a number") << "method-number"
                                           << "config-unreadable";
    QTest::newRow("ignore holds a number") << "ignore-number"
                                           << "config-unreadable";
    QTest::newRow("dynamic a string") << "dynamic-string"
                                      << "";
    QTest::newRow("invalid regex") << "bad-regex"
                                   << "config-unreadable";
    QTest::newRow("int-quantized weight-only") << "int-quantized"
                                               << "int-quantized-weight-only";
    QTest::newRow("naive FP8 weight-only") << "naive-fp8"
                                           << "fp8-weight-only";
    QTest::newRow("no quantization_config") << "no-config"
                                            << "config-missing";
}

void TestAuditCheck::hostileInputs()
{
    QFETCH(QString, kind);
    QFETCH(QString, rule);
    const auto k = kind.toStdString();
    static fs::path base;
    if (base.empty()) {
        base = exportDemo(m_root, "llama-eagle3", {}, "hostile-base");
    }
    QVERIFY(!base.empty());
    auto e = EditableCheckpoint::load(base);
    auto& qc = e.quantizationConfig();
    auto& weights = qc["config_groups"]["group_0"]["weights"];
    const std::string p = "midlayer.mlp.down_proj";
    if (k == "huge-shape") {
        e.set(p + ".weight_shape", DType::I64, {2}, bytesOf({std::int64_t{1} << 40, std::int64_t{1} << 40}));
    } else if (k == "negative-shape") {
        e.set(p + ".weight_shape", DType::I64, {2}, bytesOf({-5, 256}));
    } else if (k == "group-96") {
        weights["group_size"] = 96;
    } else if (k == "scale-i32") {
        e.tensors.at(p + ".weight_scale").first.dtype = DType::I16;
    } else if (k == "no-scale") {
        e.tensors.erase(p + ".weight_scale");
    } else if (k == "bits-string") {
        weights["num_bits"] = "four";
    } else if (k == "bits-zero") {
        weights["num_bits"] = 0;
    } else if (k == "targets-string") {
        qc["config_groups"]["group_0"]["targets"] = "Linear";
    } else if (k == "method-number") {
        qc["quant_method"] = 3;
    } else if (k == "ignore-number") {
        qc["ignore"].push_back(5);
    } else if (k == "dynamic-string") {
        qc["config_groups"]["group_0"]["input_activations"] = {
            {"dynamic", "yes"}, {"strategy", 1}, {"type", false}};
    } else if (k == "bad-regex") {
        qc["ignore"].push_back("re:model\\.layers\\.(unclosed");
    } else if (k == "int-quantized") {
        qc["config_groups"]["group_0"]["format"] = "int-quantized";
        qc["format"] = "int-quantized";
    } else if (k == "naive-fp8") {
        weights = {{"num_bits", 8}, {"type", "float"}, {"symmetric", true}, {"strategy", "channel"}};
        qc["config_groups"]["group_0"]["format"] = "naive-quantized";
        qc["format"] = "naive-quantized";
    } else if (k == "no-config") {
        e.config.erase("quantization_config");
    }
    const auto path = m_root / ("hostile-" + k);
    e.write(path);
    const auto report = checkCheckpoint(Checkpoint::open(path));
    QVERIFY2(!report.ok() || rule.isEmpty(), describe(report).c_str());
    if (!rule.isEmpty()) {
        QVERIFY2(report.has(rule.toStdString()), describe(report).c_str());
    }
    for (const auto& f : report.findings) {
        if (f.id == "weight-shape" || f.id == "tensor-dtype" || f.id == "tensor-missing" ||
            f.id == "group-divides") {
            QVERIFY2(!f.modules.empty() && report.view.find(f.modules.front()), describe(report).c_str());
        }
    }
    // Dequantizing a module whose tensors do not fit is a clear error naming it, never a crash.
    const auto checkpoint = Checkpoint::open(path);
    if (const auto* m = report.view.find(p); m && m->quantizedOnDisk && !m->decodable()) {
        try {
            moduleWeightValues(checkpoint, report.view, *m, 0, 1);
            QFAIL("decoding a module that does not fit its scheme must throw");
        } catch (const std::invalid_argument& error) {
            QVERIFY2(std::string(error.what()).find(p) != std::string::npos, error.what());
        }
    }
}

void TestAuditCheck::dequantizesLikeCompressedTensors_data()
{
    QTest::addColumn<QString>("scheme");
    for (const char* s : {"W4A16", "W4A16:g32", "W4A16:g64", "W4A16:channel", "W4A16_ASYM", "W8A16",
                          "W8A16:channel", "FP8_DYNAMIC", "NVFP4A16"}) {
        QTest::newRow(s) << QString::fromLatin1(s);
    }
}

void TestAuditCheck::dequantizesLikeCompressedTensors()
{
    // expected.json holds compressed-tensors' own dequantization error (rel_err_fro, max_abs_err) of every
    // module of the golden fixture: the audit's decoder, reading only the stored tensors, must reproduce it.
    QFETCH(QString, scheme);
    const auto expected = readJsonFile(dataPath("golden-schemes/expected.json"));
    const auto& entry = expected["schemes"][scheme.toStdString()];
    const auto stored = Checkpoint::open(dataPath("golden-schemes/" + entry["file"].get<std::string>()));
    const auto fixture = Checkpoint::open(dataPath("golden-schemes/fixture"));
    std::vector<std::string> problems;
    auto group = entry["config_group"];
    group["format"] = entry["format"];
    const auto args = parseQuantArgs(group, "", "group_0", problems);
    QVERIFY(problems.empty());
    QVERIFY(args.scheme && args.scheme->name == scheme.toStdString());
    int checked = 0;
    for (const auto& [module, m] : entry["modules"].items()) {
        const auto dtype = *parseDType(m["dtype"].get<std::string>());
        const auto layout = readStoredLayout(stored, module, args, dtype, 18);
        QVERIFY2(layout.decodable(),
                 (module + ": " + (layout.issues.empty() ? "" : layout.issues.front().message)).c_str());
        QCOMPARE(layout.weightDtype, dtype);
        ModuleDecoder decoder(stored, module, args, layout);
        std::vector<float> d(static_cast<std::size_t>(layout.out * layout.in));
        decoder.decode(0, static_cast<std::size_t>(layout.out), d.data());
        const auto* w = fixture.find(m["source_tensor"].get<std::string>());
        std::vector<float> values(d.size());
        toFloat(w->info.dtype, fixture.bytes(*w).data(), values.size(), values.data());
        double sqErr = 0, sqNorm = 0, maxAbs = 0;
        bool finite = true;
        for (std::size_t i = 0; i < d.size(); ++i) {
            finite = finite && std::isfinite(d[i]);
            const double e = static_cast<double>(values[i]) - static_cast<double>(d[i]);
            sqErr += e * e;
            sqNorm += static_cast<double>(values[i]) * values[i];
            maxAbs = std::max(maxAbs, std::fabs(e));
        }
        if (m["rel_err_fro"].is_null()) {
            QVERIFY2(!finite, module.c_str());
        } else {
            QVERIFY2(finite, module.c_str());
            const double rel = std::sqrt(sqErr) / std::sqrt(sqNorm);
            QVERIFY2(std::fabs(rel - m["rel_err_fro"].get<double>()) <= 1e-12 * std::max(1.0, rel),
                     module.c_str());
            QCOMPARE(maxAbs, m["max_abs_err"].get<double>());
        }
        ++checked;
    }
    QVERIFY(checked >= 10);
}

void TestAuditCheck::threeBitOldAndNewPacking()
{
    // format-spec §2.2: the 3-bit row [1, -2, 3, 0 x8] packs to [613566933, 4] before CT 0.18 and to
    // [613566933, 1] after: the config's version decides which layout the words follow.
    for (const bool old : {true, false}) {
        EditableCheckpoint e;
        e.config = {{"architectures", {"LlamaForCausalLM"}},
                    {"quantization_config",
                     {{"quant_method", "compressed-tensors"},
                      {"format", "pack-quantized"},
                      {"version", old ? "0.12.2" : "0.18.0"},
                      {"ignore", nlohmann::json::array()},
                      {"config_groups",
                       {{"group_0",
                         {{"targets", {"Linear"}},
                          {"format", "pack-quantized"},
                          {"input_activations", nullptr},
                          {"weights",
                           {{"num_bits", 3},
                            {"type", "int"},
                            {"symmetric", true},
                            {"strategy", "channel"},
                            {"group_size", nullptr}}}}}}}}}};
        const std::int32_t words[2] = {613566933, old ? 4 : 1};
        std::vector<std::byte> packed(8);
        std::memcpy(packed.data(), words, 8);
        e.set("model.layers.0.mlp.down_proj.weight_packed", DType::I32, {1, 2}, packed);
        const std::uint16_t one = floatToBf16(0.5f);
        std::vector<std::byte> scale(2);
        std::memcpy(scale.data(), &one, 2);
        e.set("model.layers.0.mlp.down_proj.weight_scale", DType::BF16, {1, 1}, scale);
        e.set("model.layers.0.mlp.down_proj.weight_shape", DType::I64, {2}, bytesOf({1, 11}));
        const auto path = m_root / (old ? "int3-old" : "int3-new");
        e.write(path);
        const auto checkpoint = Checkpoint::open(path);
        const auto report = checkCheckpoint(checkpoint);
        const auto* m = report.view.find("model.layers.0.mlp.down_proj");
        QVERIFY(m && m->decodable());
        QCOMPARE(m->layout.oldPacking, old);
        QCOMPARE(m->scheme, std::string("int3 sym channel (pack-quantized)"));
        const auto values = moduleWeightValues(checkpoint, report.view, *m, 0, 1);
        const std::vector<float> expected = {0.5f, -1.0f, 1.5f, 0, 0, 0, 0, 0, 0, 0, 0};
        QCOMPARE(values, expected);
        // vLLM's WNA16 serves 4 and 8 bits only.
        QVERIFY(report.has("group-scheme"));
        QVERIFY(!report.ok());
    }
}

void TestAuditCheck::speculatorsConfigInsideTransformerLayerConfig()
{
    // llm-compressor's speculators-format output: the config only inside transformer_layer_config.
    const auto exported = exportDemo(m_root, "glm-dspark", {}, "dspark-nested");
    QVERIFY(!exported.empty());
    auto e = EditableCheckpoint::load(exported);
    QVERIFY(e.config["transformer_layer_config"].contains("quantization_config"));
    e.config.erase("quantization_config");
    const auto path = m_root / "dspark-nested-only";
    e.write(path);
    const auto report = checkCheckpoint(Checkpoint::open(path));
    QVERIFY2(report.ok(), describe(report).c_str());
    QCOMPARE(report.view.config.location, std::string("transformer_layer_config.quantization_config"));
    // The two copies disagreeing is an error.
    auto differ = EditableCheckpoint::load(exported);
    differ.config["transformer_layer_config"]["quantization_config"]["ignore"] = nlohmann::json::array();
    const auto differPath = m_root / "dspark-nested-differ";
    differ.write(differPath); // write() copies the top level into the nested one: break it afterwards

    auto config = readJsonFile(differPath / "config.json");
    config["transformer_layer_config"]["quantization_config"]["ignore"] = nlohmann::json::array();
    std::ofstream(differPath / "config.json") << config.dump(2);
    const auto differReport = checkCheckpoint(Checkpoint::open(differPath));
    QVERIFY(differReport.has("config-placement"));
    QVERIFY(!differReport.ok());
}

void TestAuditCheck::cliExitCodes()
{
    const auto good = exportDemo(m_root, "qwen3-dflash", {}, "cli-good");
    QVERIFY(!good.empty());
    auto ok = runCli({"check", good.string()});
    QVERIFY2(ok.exitCode == 0, (ok.out + ok.err).c_str());
    QVERIFY(ok.out.find("check: ") != std::string::npos);

    auto e = EditableCheckpoint::load(good);
    e.quantizationConfig()["ignore"] = {"layers.0.self_attn.q_proj", "layers.0.self_attn.k_proj",
                                        "layers.0.self_attn.v_proj"};
    const auto broken = m_root / "cli-broken";
    e.write(broken);
    auto bad = runCli({"check", broken.string()});
    QCOMPARE(bad.exitCode, 1);
    QVERIFY2(bad.out.find("warning[ignore-literal-name] layers.0.self_attn.q_proj: ") != std::string::npos,
             bad.out.c_str());
    QVERIFY2(bad.out.find("error[bf16-not-ignored] layers.0.self_attn.k_proj: ") != std::string::npos,
             bad.out.c_str());

    auto json = runCli({"check", broken.string(), "--json", "--vllm-version", "0.11.2"});
    QCOMPARE(json.exitCode, 1);
    const auto parsed = nlohmann::json::parse(json.out);
    QCOMPARE(parsed["ok"].get<bool>(), false);
    QCOMPARE(parsed["vllm_version"].get<std::string>(), std::string("0.11.2"));
    QVERIFY(!parsed["modules"].empty());

    QCOMPARE(runCli({"check", (m_root / "does-not-exist").string()}).exitCode, 2);
    QCOMPARE(runCli({"check", good.string(), "--vllm-version", "banana"}).exitCode, 2);
    writeFile(m_root / "garbage" / "model.safetensors", "not a safetensors file");
    QCOMPARE(runCli({"check", (m_root / "garbage").string()}).exitCode, 2);
}

QTEST_GUILESS_MAIN(TestAuditCheck)
#include "tst_audit_check.moc"
