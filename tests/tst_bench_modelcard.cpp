// renderModelCard: the README.md of an exported draft.
#include "core/bench/benchcsv.h"
#include "core/bench/benchimport.h"
#include "core/bench/modelcard.h"
#include "core/bench/speedmodel.h"
#include "testsupport.h"

#include <QTest>

using namespace spark;

namespace {

ModelCardInputs sampleInputs()
{
    ModelCardInputs in;
    in.modelName = "me/Qwen3-32B-eagle3-W4A16";
    in.baseModel = "org/Qwen3-32B-eagle3";
    in.license = "apache-2.0";
    in.architecture = "eagle3";
    in.architectureName = "EAGLE-3";
    in.targetModel = "Qwen/Qwen3-32B";
    in.quantized = {{"re:.*layers\\.0\\.mlp\\..*_proj", "linear layers dominate the bytes"}};
    in.keptBf16 = {{"fc", "fuses target hidden states; sensitive"}, {"lm_head", "vocabulary | logits"}};
    in.sizes = {{"total", 2000000000, 600000000}};
    in.numSpeculativeTokens = 3;
    in.toolVersion = "0.1.0";
    return in;
}

bool contains(const std::string& haystack, const std::string& needle)
{
    return haystack.find(needle) != std::string::npos;
}

} // namespace

class TestBenchModelCard : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void frontMatter();
    void sections_data();
    void sections();
    void benchmarksIncluded();
    void speedModelSideBySide();
    void yamlQuoting_data();
    void yamlQuoting();
};

void TestBenchModelCard::frontMatter()
{
    const auto card = renderModelCard(sampleInputs());
    const std::string expected = "---\nbase_model: org/Qwen3-32B-eagle3\nlicense: apache-2.0\ntags:\n"
                                 "- speculative-decoding\n- eagle3\n- w4a16\n- compressed-tensors\n---\n\n"
                                 "# me/Qwen3-32B-eagle3-W4A16\n";
    QVERIFY2(card.rfind(expected, 0) == 0, card.substr(0, 300).c_str());
    // A missing license is "other", not an empty YAML value.
    auto in = sampleInputs();
    in.license.clear();
    QVERIFY(contains(renderModelCard(in), "\nlicense: other\n"));
    QCOMPARE(renderModelCard(sampleInputs()), card); // deterministic
}

void TestBenchModelCard::sections_data()
{
    QTest::addColumn<QString>("fragment");
    QTest::addRow("quantized") << QStringLiteral(
        "| `re:.*layers\\.0\\.mlp\\..*_proj` | linear layers dominate the bytes |");
    QTest::addRow("kept") << QStringLiteral("| `fc` | fuses target hidden states; sensitive |");
    QTest::addRow("pipe_escaped") << QStringLiteral("| `lm_head` | vocabulary \\| logits |");
    QTest::addRow("size") << QStringLiteral(
        "| total | 1.86 GiB (2000000000 B) | 572.20 MiB (600000000 B) | 0.300 |");
    QTest::addRow("pairing") << QStringLiteral("| target (verifier) | Qwen/Qwen3-32B |");
    QTest::addRow("precision") << QStringLiteral("| target precision | BF16 |");
    QTest::addRow("serve") << QStringLiteral(
        "vllm serve Qwen/Qwen3-32B \\\n  --speculative-config '{\"method\": \"eagle3\", \"model\": "
        "\"me/Qwen3-32B-eagle3-W4A16\", \"num_speculative_tokens\": 3}'");
    QTest::addRow("caveat_issue") << QStringLiteral("vllm#47911");
    QTest::addRow("caveat_workaround") << QStringLiteral("`VLLM_DISABLE_COMPILE_CACHE=1`");
    QTest::addRow("scheme") << QStringLiteral("A W4A16 (4-bit weights, group size 128, symmetric");
}

void TestBenchModelCard::sections()
{
    QFETCH(QString, fragment);
    const auto card = renderModelCard(sampleInputs());
    QVERIFY2(contains(card, fragment.toStdString()), card.c_str());
    QVERIFY(!contains(card, "## Benchmarks"));
}

void TestBenchModelCard::benchmarksIncluded()
{
    auto in = sampleInputs();
    const auto import = importBenchCsvFile(test::dataPath("bench/spec_decode_repeats_long.csv"));
    in.benchmarks = buildBenchReport(import.records);
    const auto card = renderModelCard(in);
    QVERIFY(contains(card, "## Benchmarks\n\n### Benchmark cells\n"));
    QVERIFY(contains(card, "| w4a16_draft | 2048 | 12 | 46.562 ± 0.860 | 46.585 |"));
    QVERIFY(contains(card, "### decode tok/s: arm − bf16_draft"));
}

void TestBenchModelCard::speedModelSideBySide()
{
    // speed-model.md §5: the GLM arms, t_D = 15.88 ms, Δ = 7.9 ms, block drafter.
    auto in = sampleInputs();
    const auto import = importBenchFiles(
        {test::dataPath("bench/glm-dspark-bf16-infqps-concurrency1-GLM-5.2-20260301-101500.json"),
         test::dataPath("bench/glm-dspark-w4a16-infqps-concurrency1-GLM-5.2-20260301-104000.json")});
    in.benchmarks = buildBenchReport(import.records);
    QVERIFY(!contains(renderModelCard(in), "Predicted and measured speed"));
    SpeedModelOptions options;
    options.drafterMs = 15.88;
    options.kind = DrafterKind::Block;
    options.savingMs = 7.9;
    in.benchmarks->speedModel = computeSpeedModel(*in.benchmarks, options);
    const auto card = renderModelCard(in);
    QVERIFY2(contains(card, "## Predicted and measured speed\n"), card.c_str());
    QVERIFY(contains(card, "| prompt len | bf16_draft tok/s | predicted tok/s | predicted change | "
                           "measured tok/s | measured change | residual | k* → k′* |"));
    QVERIFY(contains(card, "| 2048 | 20.21 | 21.93 | +8.522 % | 21.97 | +8.709 % | +0.1721 % | 2 → 2 |"));
    QVERIFY(contains(card, "Assumptions of the prediction:"));
    QVERIFY(contains(card, "Drafter: block (given). One draft forward per verify cycle"));
    QVERIFY(contains(card, "acceptance assumed unchanged"));
    QVERIFY(contains(card, "Verify cost v = 0"));
    // Without a quantized prediction the card has no such section (the tables stay in the benchmarks).
    options.savingMs.reset();
    in.benchmarks->speedModel = computeSpeedModel(*in.benchmarks, options);
    QVERIFY(!contains(renderModelCard(in), "Predicted and measured speed"));
}

void TestBenchModelCard::yamlQuoting_data()
{
    QTest::addColumn<QString>("input");
    QTest::addColumn<QString>("expected");
    QTest::addRow("plain") << QStringLiteral("org/model-1.5") << QStringLiteral("org/model-1.5");
    QTest::addRow("colon") << QStringLiteral("a: b") << QStringLiteral("\"a: b\"");
    QTest::addRow("quote") << QStringLiteral("say \"x\"") << QStringLiteral("\"say \\\"x\\\"\"");
    QTest::addRow("bool_word") << QStringLiteral("no") << QStringLiteral("\"no\"");
    QTest::addRow("number") << QStringLiteral("3") << QStringLiteral("\"3\"");
    QTest::addRow("empty") << QString() << QStringLiteral("\"\"");
}

void TestBenchModelCard::yamlQuoting()
{
    QFETCH(QString, input);
    QFETCH(QString, expected);
    QCOMPARE(QString::fromStdString(yamlScalar(input.toStdString())), expected);
}

QTEST_GUILESS_MAIN(TestBenchModelCard)
#include "tst_bench_modelcard.moc"
