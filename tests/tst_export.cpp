// Export and verify end to end on real files: the golden set through the exporter, sharding, speculators
// configs, corrupted outputs caught by verify, and failures that must leave nothing behind.
#include "core/demo/demodraft.h"
#include "core/export/exporter.h"
#include "core/export/verifier.h"
#include "core/io/ioerror.h"
#include "core/io/shardedwriter.h"
#include "core/io/stagingdirectory.h"
#include "testsupport.h"

#include <QTemporaryDir>
#include <QTest>
#include <csignal>
#include <sys/resource.h>
#include <thread>

using namespace spark;
namespace fs = std::filesystem;

namespace {

QuantPlan planFor(const Checkpoint& cp, PlanOptions options = {})
{
    return makePlan(cp.config(), test::infosOf(cp), options);
}

std::string bytesOf(const Checkpoint& cp, const std::string& name)
{
    const auto* t = cp.find(name);
    if (!t) {
        return "<missing " + name + ">";
    }
    const auto b = cp.bytes(*t);
    return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

fs::path makeDemo(const QTemporaryDir& dir, const std::string& arch, const std::string& name)
{
    const auto out = fs::path(dir.path().toStdString()) / name;
    writeDemoDraft(describeDemoDraft(arch, DemoScale::Tiny), out, {});
    return out;
}

/// Rewrites @p from into @p to with @p edit applied to the tensor list (a corrupted export).
void rewrite(const fs::path& from, const fs::path& to,
             const std::function<void(std::vector<std::pair<TensorSpec, std::string>>&)>& edit)
{
    const auto cp = Checkpoint::open(from);
    std::vector<std::pair<TensorSpec, std::string>> tensors;
    for (const auto& t : cp.tensors()) {
        tensors.push_back({{t.info.name, t.info.dtype, t.info.shape}, bytesOf(cp, t.info.name)});
    }
    edit(tensors);
    StagingDirectory staging(to, {});
    std::vector<PlannedTensor> planned;
    for (const auto& [spec, bytes] : tensors) {
        planned.push_back({spec, [bytes](ByteSink& sink) {
                               sink.write(std::as_bytes(std::span(bytes.data(), bytes.size())));
                           }});
    }
    writeSafetensorsShards(staging.path(), std::move(planned));
    fs::copy_file(from / "config.json", staging.path() / "config.json");
    staging.commit();
}

} // namespace

class TestExport : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void goldenModulesAreByteIdentical();
    void demoExportsVerify_data();
    void demoExportsVerify();
    void speculatorsConfigGetsBothPlacements();
    void verifyCatchesCorruption_data();
    void verifyCatchesCorruption();
    void cancelLeavesNothing();
    void writeFailureLeavesNothing();
    void interruptLeavesNothing();
    void refusesOutputInsideSource();
};

void TestExport::goldenModulesAreByteIdentical()
{
    const auto source = Checkpoint::open(test::dataPath("golden/fixture"));
    const auto expected = Checkpoint::open(test::dataPath("golden/expected.safetensors"));
    const auto plan = planFor(source);
    QVERIFY2(plan.errors.empty(), plan.errors.empty() ? "" : plan.errors.front().c_str());
    QTemporaryDir dir;
    const auto out = fs::path(dir.path().toStdString()) / "w4a16";
    const auto result = exportCheckpoint(source, plan, {out, 0, 2, {}, {}});
    QVERIFY(result.quantizedModules > 0);
    const auto output = Checkpoint::open(out);
    for (const auto* module : plan.quantizedModules()) {
        for (const char* suffix : {".weight_packed", ".weight_scale", ".weight_shape"}) {
            const auto name = module->name + suffix;
            QVERIFY2(bytesOf(output, name) == bytesOf(expected, name), name.c_str());
        }
        QVERIFY(!output.find(module->weightTensor));
    }
    // lm_head and embed_tokens are shape-eligible but must stay BF16; the bias is copied.
    QCOMPARE(bytesOf(output, "lm_head.weight"), bytesOf(source, "lm_head.weight"));
    QCOMPARE(bytesOf(output, "embed_tokens.weight"), bytesOf(source, "embed_tokens.weight"));
    QCOMPARE(bytesOf(output, "layers.0.self_attn.qkv_proj.bias"),
             bytesOf(source, "layers.0.self_attn.qkv_proj.bias"));
    QCOMPARE(bytesOf(output, "t2d"), bytesOf(source, "t2d"));
    const auto report = verifyExport(source, output);
    QVERIFY2(report.ok(), report.problems.empty()
                              ? ""
                              : (report.problems[0].subject + ": " + report.problems[0].message).c_str());
    QCOMPARE(report.bitExactModules, result.quantizedModules);
}

void TestExport::demoExportsVerify_data()
{
    QTest::addColumn<QString>("arch");
    QTest::addColumn<QString>("preset");
    QTest::addColumn<qulonglong>("maxShard");
    QTest::addRow("laguna") << "laguna-dflash"
                            << "laguna-dflash" << 0ull;
    QTest::addRow("glm patched sharded") << "glm-dspark"
                                         << "glm-dspark-patched" << 2000000ull;
    QTest::addRow("qwen3 auto") << "qwen3-dflash"
                                << "auto" << 0ull;
    QTest::addRow("eagle3") << "llama-eagle3"
                            << "eagle3" << 0ull;
}

void TestExport::demoExportsVerify()
{
    QFETCH(QString, arch);
    QFETCH(QString, preset);
    QFETCH(qulonglong, maxShard);
    QTemporaryDir dir;
    const auto src = makeDemo(dir, arch.toStdString(), "src");
    const auto sourceBytes = test::readFile(src / "model.safetensors");
    const auto source = Checkpoint::open(src);
    PlanOptions options;
    options.preset = preset.toStdString();
    const auto plan = planFor(source, options);
    QVERIFY2(plan.errors.empty(), plan.errors.empty() ? "" : plan.errors.front().c_str());
    const auto out = fs::path(dir.path().toStdString()) / "out";
    const auto result = exportCheckpoint(source, plan, {out, maxShard, 0, {}, {}});
    QCOMPARE(result.quantizedModules, plan.quantizedModules().size());
    QVERIFY(result.bytesAfter < result.bytesBefore);
    QCOMPARE(result.bytesAfter, plan.sizes.bytesAfter);
    QVERIFY(fs::exists(out / "README.md")); // the demo's README travels with the weights
    if (maxShard) {
        QVERIFY(result.shardFiles.size() > 1);
        QVERIFY(fs::exists(out / "model.safetensors.index.json"));
    }
    const auto report = verifyExport(source, Checkpoint::open(out));
    QVERIFY2(report.ok(), report.problems.empty()
                              ? ""
                              : (report.problems[0].subject + ": " + report.problems[0].message).c_str());
    QCOMPARE(test::readFile(src / "model.safetensors"), sourceBytes); // the source is never touched
}

void TestExport::speculatorsConfigGetsBothPlacements()
{
    QTemporaryDir dir;
    const auto src = makeDemo(dir, "glm-dspark", "src");
    const auto source = Checkpoint::open(src);
    const auto out = fs::path(dir.path().toStdString()) / "out";
    exportCheckpoint(source, planFor(source), {out, 0, 0, {}, {}});
    const auto config = readJsonFile(out / "config.json");
    const auto& qc = config["quantization_config"];
    QCOMPARE(qc["quant_method"].get<std::string>(), std::string("compressed-tensors"));
    QCOMPARE(qc["format"].get<std::string>(), std::string("pack-quantized"));
    QVERIFY(!qc["config_groups"]["group_0"]["weights"].contains("scale_dtype"));
    QVERIFY(!qc["config_groups"]["group_0"]["weights"].contains("zp_dtype"));
    QVERIFY(qc["config_groups"]["group_0"]["input_activations"].is_null());
    QVERIFY(config["transformer_layer_config"]["quantization_config"] == qc);
    QCOMPARE(config["speculators_model_type"].get<std::string>(), std::string("dspark"));
}

void TestExport::verifyCatchesCorruption_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("message");
    QTest::addRow("flipped nibble") << "nibble"
                                    << "weight_packed differs";
    QTest::addRow("leftover weight") << "leftover"
                                     << "must not write 'weight'";
    QTest::addRow("changed copy") << "copy"
                                  << "not byte-identical";
    QTest::addRow("extra tensor") << "extra"
                                  << "unexpected tensor";
    QTest::addRow("zero point") << "zp"
                                << "weight_zero_point";
}

void TestExport::verifyCatchesCorruption()
{
    QFETCH(QString, kind);
    QFETCH(QString, message);
    QTemporaryDir dir;
    const auto src = makeDemo(dir, "laguna-dflash", "src");
    const auto source = Checkpoint::open(src);
    const auto good = fs::path(dir.path().toStdString()) / "good";
    exportCheckpoint(source, planFor(source), {good, 0, 0, {}, {}});
    const auto bad = fs::path(dir.path().toStdString()) / "bad";
    const std::string module = "layers.0.mlp.down_proj";
    rewrite(good, bad, [&](std::vector<std::pair<TensorSpec, std::string>>& tensors) {
        for (auto& [spec, bytes] : tensors) {
            if (kind == QStringLiteral("nibble") && spec.name == module + ".weight_packed") {
                bytes[100] = static_cast<char>(bytes[100] ^ 0x01);
            }
            if (kind == QStringLiteral("copy") && spec.name == "norm.weight") {
                bytes[0] = static_cast<char>(bytes[0] ^ 0x40);
            }
        }
        if (kind == QStringLiteral("leftover")) {
            tensors.push_back(
                {{module + ".weight", DType::BF16, {256, 512}}, bytesOf(source, module + ".weight")});
        }
        if (kind == QStringLiteral("extra")) {
            tensors.push_back({{"stray", DType::U8, {1}}, std::string(1, '\0')});
        }
        if (kind == QStringLiteral("zp")) {
            tensors.push_back({{module + ".weight_zero_point", DType::I32, {32, 4}}, std::string(512, '\0')});
        }
    });
    const auto report = verifyExport(source, Checkpoint::open(bad));
    QVERIFY(!report.ok());
    bool found = false;
    for (const auto& p : report.problems) {
        found = found || QString::fromStdString(p.message).contains(message);
    }
    QVERIFY2(found, report.problems[0].message.c_str());
    // The CLI says the same with exit 1 and the summary last.
    const auto cli = test::runCli({"verify", src.string(), bad.string()});
    QCOMPARE(cli.exitCode, 1);
    QVERIFY(cli.out.find("verify: ") != std::string::npos);
    QVERIFY(cli.out.find(" problems\n") != std::string::npos);
}

void TestExport::cancelLeavesNothing()
{
    QTemporaryDir dir;
    const auto src = makeDemo(dir, "qwen3-dflash", "src");
    const auto source = Checkpoint::open(src);
    const auto out = fs::path(dir.path().toStdString()) / "out";
    ExportOptions options{
        out, 0, 0, [](std::uint64_t done, std::uint64_t total) { return done < total / 2; }, {}};
    QVERIFY_THROWS_EXCEPTION(IoError, exportCheckpoint(source, planFor(source), options));
    QVERIFY(!fs::exists(out));
    for (const auto& entry : fs::directory_iterator(dir.path().toStdString())) {
        QVERIFY2(entry.path().filename() == "src", entry.path().c_str()); // no staging folder left
    }
}

void TestExport::writeFailureLeavesNothing()
{
    // A file-size limit stops the export mid-write, as a full disk would.
    QTemporaryDir dir;
    const auto src = makeDemo(dir, "glm-dspark", "src");
    const auto out = fs::path(dir.path().toStdString()) / "out";
    test::CliProcess process({"quantize", src.string(), "--out", out.string()}, [] {
        rlimit limit{1u << 20, 1u << 20};
        setrlimit(RLIMIT_FSIZE, &limit);
    });
    const auto r = process.wait(120000);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.find("write failed") != std::string::npos, r.err.c_str());
    QVERIFY2(r.err.find("model.safetensors") != std::string::npos, r.err.c_str());
    QVERIFY(!fs::exists(out));
    for (const auto& entry : fs::directory_iterator(dir.path().toStdString())) {
        QVERIFY2(entry.path().filename() == "src", entry.path().c_str());
    }
}

void TestExport::interruptLeavesNothing()
{
    // Ctrl-C in a terminal sends SIGINT to the CLI mid-export. The draft gets one large weight so the
    // export runs long enough to be caught while it writes.
    QTemporaryDir dir;
    auto draft = describeDemoDraft("glm-dspark", DemoScale::Tiny);
    auto big = std::find_if(draft.tensors.begin(), draft.tensors.end(),
                            [](const TensorSpec& t) { return t.name.ends_with("mlp.down_proj.weight"); });
    QVERIFY(big != draft.tensors.end());
    big->shape[0] *= 256; // 64 MiB of bf16
    const auto src = fs::path(dir.path().toStdString()) / "src";
    writeDemoDraft(draft, src, {});
    const auto sourceBytes = test::readFile(src / "model.safetensors");
    const auto out = fs::path(dir.path().toStdString()) / "out";

    test::CliProcess process({"quantize", src.string(), "--out", out.string(), "--threads", "1"});
    const auto stagingFolder = [&]() -> std::optional<fs::path> {
        for (const auto& entry : fs::directory_iterator(dir.path().toStdString())) {
            if (entry.path().filename() != "src") {
                return entry.path();
            }
        }
        return std::nullopt;
    };
    // Stop the process as soon as it has started writing, so the signal certainly lands before the
    // rename that would publish the output.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!stagingFolder() && process.running() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    const auto pid = static_cast<pid_t>(process.pid());
    QVERIFY2(process.running() && ::kill(pid, SIGSTOP) == 0,
             "the export finished before it could be interrupted");
    const auto staging = stagingFolder();
    QVERIFY(staging.has_value());
    QVERIFY2(!fs::exists(out), "the output was published before the interrupt");
    QCOMPARE(::kill(pid, SIGINT), 0);
    QCOMPARE(::kill(pid, SIGCONT), 0);
    const auto r = process.wait(120000);

    QCOMPARE(r.exitCode, 2); // handled (exit code 2), not killed by the signal (-1)
    QVERIFY2(r.err.find("cancelling (Ctrl-C again to quit at once)") != std::string::npos, r.err.c_str());
    QVERIFY2(r.err.find("cancelled") != std::string::npos, r.err.c_str());
    QVERIFY(!fs::exists(out));
    QVERIFY2(!fs::exists(*staging), staging->c_str());
    QVERIFY(!stagingFolder().has_value());
    QVERIFY(test::readFile(src / "model.safetensors") == sourceBytes);
}

void TestExport::refusesOutputInsideSource()
{
    QTemporaryDir dir;
    const auto src = makeDemo(dir, "laguna-dflash", "src");
    const auto r = test::runCli({"quantize", src.string(), "--out", (src / "w4").string()});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.find("inside, the input") != std::string::npos, r.err.c_str());
    QVERIFY(!fs::exists(src / "w4"));
}

QTEST_GUILESS_MAIN(TestExport)
#include "tst_export.moc"
