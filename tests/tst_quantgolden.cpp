// The golden set (tests/data/golden, produced by the real compressed-tensors 0.18 code): every module's
// weight_packed / weight_scale / weight_shape byte for byte, and the error statistics of expected.json.
#include "core/io/checkpoint.h"
#include "core/quant/errorstats.h"
#include "core/quant/quantbackend.h"
#include "core/quant/rtn.h"
#include "goldentesthelpers.h"
#include "quanttesthelpers.h"
#include "testsupport.h"

#include <QTest>
#include <cmath>
#include <cstring>

using namespace spark;
using namespace spark::test;

namespace {

void compareRelative(double actual, double expected)
{
    QVERIFY2(std::fabs(actual - expected) <= 1e-12 * std::fabs(expected),
             qPrintable(QStringLiteral("%1 vs %2").arg(actual, 0, 'g', 17).arg(expected, 0, 'g', 17)));
}

} // namespace

class TestQuantGolden : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void initTestCase();
    void module_data();
    void module();
    void analyzeCli();
    void analyzeCliOptions();

  private:
    nlohmann::json m_expected;
    std::optional<Checkpoint> m_fixture;
    std::shared_ptr<const SafetensorsFile> m_golden;
};

void TestQuantGolden::initTestCase()
{
    m_expected = expectedJson("golden");
    m_fixture = Checkpoint::open(dataPath("golden/fixture"));
    m_golden = SafetensorsFile::open(dataPath("golden/expected.safetensors"));
    QCOMPARE(m_expected["modules"].size(), std::size_t{14});
}

void TestQuantGolden::module_data()
{
    QTest::addColumn<QString>("module");
    for (const auto& [name, _] : m_expected["modules"].items()) {
        QTest::addRow("%s", name.c_str()) << QString::fromStdString(name);
    }
}

void TestQuantGolden::module()
{
    QFETCH(QString, module);
    const std::string prefix = module.toStdString();
    const auto& expected = m_expected["modules"][prefix];
    const auto* tensor = m_fixture->find(expected["source_tensor"].get<std::string>());
    QVERIFY(tensor);
    const auto source = m_fixture->bytes(*tensor);
    const auto rows = static_cast<std::size_t>(tensor->info.shape[0]);
    const auto cols = static_cast<std::size_t>(tensor->info.shape[1]);
    const WeightRows weights{tensor->info.dtype, source.data(), rows, cols, 0, tensor->info.name};
    const QuantScheme scheme{4, 128};

    // Bytes: weight_packed (I32), weight_scale (BF16) and weight_shape (I64 [out, in]).
    const auto result = quantize(weights, scheme, 0);
    std::vector<std::byte> packed(result.packed.size() * 4);
    std::memcpy(packed.data(), result.packed.data(), packed.size());
    QCOMPARE(m_golden->find(prefix + ".weight_packed")->shape,
             (std::vector<std::uint64_t>{rows, scheme.packedWordsPerRow(cols)}));
    QVERIFY(packed == bytesOf(*m_golden, prefix + ".weight_packed"));
    QVERIFY(result.scales == bytesOf(*m_golden, prefix + ".weight_scale"));
    const std::int64_t shape[2] = {static_cast<std::int64_t>(rows), static_cast<std::int64_t>(cols)};
    std::vector<std::byte> shapeBytes(16);
    std::memcpy(shapeBytes.data(), shape, 16);
    QVERIFY(shapeBytes == bytesOf(*m_golden, prefix + ".weight_shape"));

    // Statistics.
    const auto stats = computeErrorStats(weights, scheme, 0);
    QCOMPARE(stats.dequantNonFinite, expected["dequant_nonfinite"].get<std::uint64_t>());
    QCOMPARE(stats.groups, expected["groups"].get<std::uint64_t>());
    // Only exact-zero scales become eps (CT >= 0.13); in bf16 that means an all-zero group.
    QCOMPARE(stats.epsScaleGroups, expected["zero_absmax_groups"].get<std::uint64_t>());
    QCOMPARE(stats.qHist, expected["q_hist"].get<std::vector<std::uint64_t>>());
    QVERIFY(stats.relErrExactQs.has_value());
    compareRelative(*stats.relErrExactQs, expected["rel_err_fro_exact_qs"].get<double>());
    if (expected["rel_err_fro"].is_null()) {
        QVERIFY(!stats.relErr.has_value());
        QVERIFY(!stats.maxAbsErr.has_value());
        QVERIFY(stats.dequantNonFinite > 0);
    } else {
        QVERIFY(stats.relErr.has_value());
        compareRelative(*stats.relErr, expected["rel_err_fro"].get<double>());
        QCOMPARE(*stats.maxAbsErr, expected["max_abs_err"].get<double>());
        QVERIFY(*stats.p95AbsErr <= *stats.maxAbsErr);
        QVERIFY(*stats.p95AbsErr > 0);
    }
}

void TestQuantGolden::analyzeCli()
{
    const auto run = runCli({"analyze", dataPath("golden/fixture").string(), "--json", "--threads", "2"});
    QCOMPARE(run.exitCode, 0);
    const auto out = nlohmann::json::parse(run.out);
    QCOMPARE(out["scheme"]["bits"].get<int>(), 4);
    QCOMPARE(out["scheme"]["group_size"].get<int>(), 128);
    QVERIFY(out["errors"].empty());
    std::map<std::string, nlohmann::json> byName;
    for (const auto& t : out["tensors"]) {
        byName[t["name"].get<std::string>()] = t;
    }
    // in % 128 != 0 is never analyzed; in % 128 == 0 is, whatever the out dimension.
    QVERIFY(!byName.count("layers.1.mlp.down_proj.weight"));
    QVERIFY(byName.count("layers.0.self_attn.g_proj.weight"));
    QVERIFY(!byName.count("layers.0.input_layernorm.weight"));
    for (const auto& [prefix, expected] : m_expected["modules"].items()) {
        const auto name = expected["source_tensor"].get<std::string>();
        QVERIFY2(byName.count(name), name.c_str());
        const auto& t = byName[name];
        QVERIFY(t["shape"] == expected["shape"]);
        QVERIFY(t["q_hist"] == expected["q_hist"]);
        QCOMPARE(t["histogram_stride"].get<int>(), 1); // small tensors: histograms of every element
        QVERIFY(t["dequant_nonfinite"] == expected["dequant_nonfinite"]);
        compareRelative(t["rel_err_exact_qs"].get<double>(), expected["rel_err_fro_exact_qs"].get<double>());
        if (expected["rel_err_fro"].is_null()) {
            QVERIFY(t["rel_err"].is_null());
            QVERIFY(t["snr_db"].is_null());
        } else {
            compareRelative(t["rel_err"].get<double>(), expected["rel_err_fro"].get<double>());
            QCOMPARE(t["max_abs_err"].get<double>(), expected["max_abs_err"].get<double>());
            QVERIFY(t["p95_abs_err"].get<double>() <= t["max_abs_err"].get<double>());
            QVERIFY(t["snr_db"].get<double>() > 0);
        }
    }
}

void TestQuantGolden::analyzeCliOptions()
{
    const auto fixture = dataPath("golden/fixture").string();
    const auto w8 = runCli({"analyze", fixture, "--json", "--bits", "8", "--group", "-1"});
    QCOMPARE(w8.exitCode, 0);
    const auto out = nlohmann::json::parse(w8.out);
    QCOMPARE(out["scheme"]["group_size"].get<int>(), -1);
    // Per channel, in=192 is analyzable too; 8-bit has 256 q bins.
    bool sawDownProj = false;
    for (const auto& t : out["tensors"]) {
        QCOMPARE(t["q_hist"].size(), std::size_t{256});
        sawDownProj |= t["name"] == "layers.1.mlp.down_proj.weight";
    }
    QVERIFY(sawDownProj);
    const auto bad = runCli({"analyze", fixture, "--group", "96"});
    QCOMPARE(bad.exitCode, 2);
    const auto missing = runCli({"analyze", dataPath("golden/no-such-folder").string()});
    QCOMPARE(missing.exitCode, 2);
    QVERIFY(!missing.err.empty());

    const auto cpu = runCli({"analyze", fixture, "--json", "--backend", "cpu"});
    QCOMPARE(cpu.exitCode, 0);
    QCOMPARE(nlohmann::json::parse(cpu.out)["backend"].get<std::string>(), std::string("cpu"));
    const auto budget = runCli({"analyze", fixture, "--backend", "cpu", "--cuda-memory", "512MiB"});
    QCOMPARE(budget.exitCode, 0);
    const auto tiny = runCli({"analyze", fixture, "--cuda-memory", "1MiB"});
    QCOMPARE(tiny.exitCode, 2);
    QVERIFY2(tiny.err.find("--cuda-memory must be at least 16MiB") != std::string::npos, tiny.err.c_str());
    const auto unknown = runCli({"analyze", fixture, "--backend", "gpu"});
    QCOMPARE(unknown.exitCode, 2);
    QVERIFY2(unknown.err.find("--backend must be auto, cpu or cuda") != std::string::npos,
             unknown.err.c_str());
    if (!cudaAvailable()) {
        // Asked for explicitly, a missing device is an error; auto falls back with a notice.
        const auto cuda = runCli({"analyze", fixture, "--backend", "cuda"});
        QCOMPARE(cuda.exitCode, 2);
        QVERIFY2(cuda.err.find("CUDA backend requested but") != std::string::npos, cuda.err.c_str());
        const auto automatic = runCli({"analyze", fixture, "--json"});
        QCOMPARE(automatic.exitCode, 0);
        QVERIFY2(automatic.err.find("using the CPU backend") != std::string::npos, automatic.err.c_str());
        QCOMPARE(nlohmann::json::parse(automatic.out)["backend"].get<std::string>(), std::string("cpu"));
    }
}

QTEST_GUILESS_MAIN(TestQuantGolden)
#include "tst_quantgolden.moc"
