// The CLI as a user runs it: demo drafts written and re-read, inspect text and JSON, exit codes.
#include "core/demo/demodraft.h"
#include "core/io/checkpoint.h"
#include "testsupport.h"

#include <QTemporaryDir>
#include <QTest>
#include <nlohmann/json.hpp>

using namespace spark;
namespace fs = std::filesystem;

class TestCliInspect : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void demoWritesEveryArchitecture_data();
    void demoWritesEveryArchitecture();
    void demoIsDeterministic();
    void fullScaleSizes_data();
    void fullScaleSizes();
    void inspectJson();
    void inspectErrorsExitTwo_data();
    void inspectErrorsExitTwo();
    void usageErrors();
};

void TestCliInspect::demoWritesEveryArchitecture_data()
{
    QTest::addColumn<QString>("arch");
    QTest::addColumn<QString>("architecture");
    QTest::addColumn<QString>("mustHave");
    QTest::addRow("laguna") << "laguna-dflash"
                            << "laguna-dflash"
                            << "layers.5.self_attn.g_proj.weight";
    QTest::addRow("glm") << "glm-dspark"
                         << "dspark"
                         << "markov_head.markov_w2.weight";
    QTest::addRow("qwen3") << "qwen3-dflash"
                           << "qwen3-dflash"
                           << "layers.4.mlp.gate_proj.weight";
    QTest::addRow("eagle3") << "llama-eagle3"
                            << "eagle3"
                            << "midlayer.self_attn.q_proj.weight";
}

void TestCliInspect::demoWritesEveryArchitecture()
{
    QFETCH(QString, arch);
    QFETCH(QString, architecture);
    QFETCH(QString, mustHave);
    QTemporaryDir dir;
    const auto out = fs::path(dir.path().toStdString()) / "draft";
    const auto demo =
        test::runCli({"demo", "--arch", arch.toStdString(), "--out", out.string(), "--seed", "3"});
    QVERIFY2(demo.exitCode == 0, demo.err.c_str());
    QVERIFY(fs::exists(out / "config.json"));
    QVERIFY(fs::exists(out / "README.md"));

    const auto cp = Checkpoint::open(out);
    QVERIFY(cp.find(mustHave.toStdString()));
    const auto described = describeDemoDraft(arch.toStdString(), DemoScale::Tiny);
    QCOMPARE(cp.tensors().size(), described.tensors.size());
    QCOMPARE(cp.totalBytes(), described.totalBytes());
    // Weights are finite bf16 with a plausible spread.
    for (const auto& t : cp.tensors()) {
        if (t.info.dtype != DType::BF16 || t.info.shape.size() != 2) {
            continue;
        }
        const auto bytes = cp.bytes(t);
        double sumSquares = 0;
        for (std::size_t i = 0; i + 1 < bytes.size(); i += 2) {
            const auto bits = static_cast<std::uint32_t>(static_cast<std::uint8_t>(bytes[i])) |
                              static_cast<std::uint32_t>(static_cast<std::uint8_t>(bytes[i + 1])) << 8;
            const float v = std::bit_cast<float>(bits << 16);
            QVERIFY(std::isfinite(v));
            sumSquares += static_cast<double>(v) * v;
        }
        const double rms = std::sqrt(sumSquares / static_cast<double>(t.info.numel()));
        QVERIFY2(rms > 0.002 && rms < 0.2, t.info.name.c_str());
    }

    const auto inspect = test::runCli({"inspect", "--json", out.string()});
    QCOMPARE(inspect.exitCode, 0);
    const auto json = nlohmann::json::parse(inspect.out);
    QCOMPARE(QString::fromStdString(json["architecture"].get<std::string>()), architecture);
}

void TestCliInspect::demoIsDeterministic()
{
    QTemporaryDir dir;
    const auto root = fs::path(dir.path().toStdString());
    for (const char* name : {"a", "b"}) {
        const auto r = test::runCli({"demo", "--arch", "llama-eagle3", "--out", (root / name).string(),
                                     "--seed", "11", "--threads", name[0] == 'a' ? "1" : "2"});
        QCOMPARE(r.exitCode, 0);
    }
    QCOMPARE(test::readFile(root / "a" / "model.safetensors"),
             test::readFile(root / "b" / "model.safetensors"));
    const auto other =
        test::runCli({"demo", "--arch", "llama-eagle3", "--out", (root / "c").string(), "--seed", "12"});
    QCOMPARE(other.exitCode, 0);
    QVERIFY(test::readFile(root / "a" / "model.safetensors") !=
            test::readFile(root / "c" / "model.safetensors"));
}

void TestCliInspect::fullScaleSizes_data()
{
    QTest::addColumn<QString>("arch");
    QTest::addColumn<QString>("gib");
    QTest::addRow("laguna-dflash") << "laguna-dflash"
                                   << "2.08";
    QTest::addRow("glm-dspark") << "glm-dspark"
                                << "7.09";
}

void TestCliInspect::fullScaleSizes()
{
    QFETCH(QString, arch);
    QFETCH(QString, gib);
    const auto draft = describeDemoDraft(arch.toStdString(), DemoScale::Full);
    const double size = static_cast<double>(draft.totalBytes()) / (1024.0 * 1024 * 1024);
    QCOMPARE(QString::number(size, 'f', 2), gib);
}

void TestCliInspect::inspectJson()
{
    QTemporaryDir dir;
    const auto out = fs::path(dir.path().toStdString()) / "glm";
    QCOMPARE(test::runCli({"demo", "--arch", "glm-dspark", "--out", out.string(), "--max-shard-size", "3MiB"})
                 .exitCode,
             0);
    QVERIFY(fs::exists(out / "model.safetensors.index.json"));
    const auto r = test::runCli({"inspect", out.string(), "--json"});
    QCOMPARE(r.exitCode, 0);
    const auto json = nlohmann::json::parse(r.out);
    const auto cp = Checkpoint::open(out);
    QCOMPARE(json["total_bytes"].get<std::uint64_t>(), cp.totalBytes());
    QCOMPARE(json["total_params"].get<std::uint64_t>(), cp.totalParams());
    QCOMPARE(json["tensors"].size(), cp.tensors().size());
    QVERIFY(json["sharded"].get<bool>());
    QVERIFY(json["files"].size() > 1);
    for (const auto& t : json["tensors"]) {
        const auto* tensor = cp.find(t["name"].get<std::string>());
        QVERIFY(tensor);
        QCOMPARE(t["bytes"].get<std::uint64_t>(), tensor->info.byteSize());
        QCOMPARE(t["file"].get<std::string>(), cp.fileNameOf(*tensor));
        QCOMPARE(t["dtype"].get<std::string>(), std::string(dtypeName(tensor->info.dtype)));
    }
    const auto text = test::runCli({"inspect", out.string()});
    QCOMPARE(text.exitCode, 0);
    QVERIFY(text.out.find("DSpark") != std::string::npos);
    QVERIFY(text.out.find("by dtype:") != std::string::npos);
}

void TestCliInspect::inspectErrorsExitTwo_data()
{
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<QString>("message");
    QTest::addRow("truncated") << QByteArray::fromStdString(test::safetensorsImage(
                                      R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 8))
                               << "truncated";
    QTest::addRow("garbage") << QByteArray("not a safetensors file at all") << "header length";
    QTest::addRow("empty") << QByteArray() << "too small";
}

void TestCliInspect::inspectErrorsExitTwo()
{
    QFETCH(QByteArray, content);
    QFETCH(QString, message);
    QTemporaryDir dir;
    const auto path = fs::path(dir.path().toStdString()) / "bad.safetensors";
    test::writeFile(path, content.toStdString());
    const auto r = test::runCli({"inspect", path.string()});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(QString::fromStdString(r.err).contains(message), r.err.c_str());
    QVERIFY2(r.err.find(path.string()) != std::string::npos, r.err.c_str());
    QCOMPARE(std::count(r.err.begin(), r.err.end(), '\n'), 1L);
}

void TestCliInspect::usageErrors()
{
    QCOMPARE(test::runCli({"inspect"}).exitCode, 2);
    QCOMPARE(test::runCli({"inspect", "--bogus", "x"}).exitCode, 2);
    QCOMPARE(test::runCli({"nosuchcommand"}).exitCode, 2);
    QCOMPARE(test::runCli({"demo", "--arch", "nope", "--out", "/tmp/x"}).exitCode, 2);
    QCOMPARE(test::runCli({"inspect", "/nonexistent/path"}).exitCode, 2);
    QCOMPARE(test::runCli({"--help"}).exitCode, 0);
}

QTEST_GUILESS_MAIN(TestCliInspect)
#include "tst_cli_inspect.moc"
