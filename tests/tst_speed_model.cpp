// The speed model of speed-model.md: the GLM worked example of §5 from bench files that encode
// it, the invariants on the bundled samples (τ(k) is the mean acceptance length, D(k) the measured rate),
// the verify fit from an arm without speculation, chain against block drafters, the plan's saving, ties,
// the JSON keys, and inconsistent inputs as errors that name the cell.
#include "core/bench/benchimport.h"
#include "core/bench/benchreport.h"
#include "core/bench/benchreportformat.h"
#include "core/bench/speedmodel.h"
#include "core/bench/speedmodelformat.h"
#include "core/bench/speedmodelplan.h"
#include "core/util/textformat.h"
#include "testsupport.h"

#include <QTest>
#include <cmath>

using namespace spark;

namespace {

const char* const kGlmBf16 = "bench/glm-dspark-bf16-infqps-concurrency1-GLM-5.2-20260301-101500.json";
const char* const kGlmW4 = "bench/glm-dspark-w4a16-infqps-concurrency1-GLM-5.2-20260301-104000.json";

BenchReport reportOf(const std::vector<std::string>& names, const RecordTags& tags = {})
{
    std::vector<std::filesystem::path> paths;
    for (const auto& n : names) {
        paths.push_back(test::dataPath(n));
    }
    const auto imported = importBenchFiles(paths, tags);
    return buildBenchReport(imported.records, {}, imported.warnings);
}

// speed-model.md §5: t_D = 15.88 ms, Δ = 7.9 ms, block drafter (DSpark).
SpeedModelOptions glmOptions()
{
    SpeedModelOptions o;
    o.drafterMs = 15.88;
    o.kind = DrafterKind::Block;
    o.savingMs = 7.9;
    return o;
}

bool near(double actual, double expected, double relative = 1e-12)
{
    return std::abs(actual - expected) <= relative * std::abs(expected);
}

// One repeat of a cell, built in code.
BenchRecord record(const std::string& arm, long long len, double tokS, std::vector<double> perPosition,
                   double drafts = 1000)
{
    BenchRecord r;
    r.arm = arm;
    r.promptLen = len;
    r.sourceFile = "mem";
    r.metrics[benchmetric::kDecodeTokS] = tokS;
    if (!perPosition.empty()) {
        r.perPositionAcceptance = perPosition;
        SpecDecodeCounters c;
        c.numDrafts = drafts;
        c.draftTokens = drafts * static_cast<double>(perPosition.size());
        for (const double p : perPosition) {
            c.acceptedPerPosition.push_back(p * drafts);
            c.acceptedTokens += p * drafts;
        }
        r.counters = c;
    }
    return r;
}

} // namespace

class TestSpeedModel : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void glmWorkedExample();
    void glmFromRawNumbers();
    void samplesTauIsAcceptanceLength_data();
    void samplesTauIsAcceptanceLength();
    void verifyFittedFromNoSpeculationArm();
    void chainAgainstBlock();
    void planSaving();
    void tiesGoToSmallerK();
    void jsonKeys();
    void inconsistentInputs_data();
    void inconsistentInputs();
    void formatting();
};

void TestSpeedModel::glmWorkedExample()
{
    auto report = reportOf({kGlmBf16, kGlmW4});
    QCOMPARE(report.baselineArm, std::string("bf16_draft"));
    const auto model = computeSpeedModel(report, glmOptions());
    QCOMPARE(model.cells.size(), std::size_t(2));
    const auto* c = model.cell("bf16_draft", 2048);
    QVERIFY(c);
    // BF16 arm: D = 20.21 tok/s, k = 2, a = [0.6460, 0.3872] → τ(2) = 2.0332, T = 100.60 ms.
    QCOMPARE(c->k, 2);
    QCOMPARE(formatSignificant(c->measuredTokS), std::string("20.21"));
    QCOMPARE(formatSignificant(c->acceptance[0]), std::string("0.6460"));
    QCOMPARE(formatSignificant(c->acceptance[1]), std::string("0.3872"));
    QVERIFY(near(c->tokensPerVerify[2], 2.0332));
    QCOMPARE(formatSignificant(c->cycleMs), std::string("100.6"));
    QVERIFY(std::abs(c->cycleMs - 100.60) < 0.005);
    // k sweep, v = 0: V₀ = 84.72 ms; D(0) = 11.80, D(1) = 16.36, D(2) = 20.21 → k* = 2.
    QCOMPARE(c->verifyMsPerToken, 0.0);
    QCOMPARE(formatSignificant(c->verifyMs), std::string("84.72"));
    QCOMPARE(c->predictedTokS.size(), std::size_t(3));
    QCOMPARE(formatSignificant(c->predictedTokS[0]), std::string("11.80"));
    QCOMPARE(formatSignificant(c->predictedTokS[1]), std::string("16.36"));
    QCOMPARE(formatSignificant(c->predictedTokS[2]), std::string("20.21"));
    QCOMPARE(c->bestK, 2);
    // T′ = 92.70 ms; acceptance unchanged D′ = 21.93 tok/s (+8.5 %).
    QVERIFY(c->quantized);
    const auto& q = *c->quantized;
    QCOMPARE(formatSignificant(q.cycleMs), std::string("92.70"));
    QCOMPARE(formatSignificant(q.predictedTokS), std::string("21.93"));
    QCOMPARE(formatFixed(100 * q.predictedChange, 1), std::string("8.5"));
    // With the quantized arm's measured a′ = [0.6345, 0.3822], τ′ = 2.0167: D′ = 21.75 tok/s (+7.6 %).
    QVERIFY(q.measured);
    const auto& m = *q.measured;
    QCOMPARE(m.arm, std::string("w4a16_draft"));
    QVERIFY(near(m.tokensPerVerify, 2.0167));
    QCOMPARE(formatSignificant(m.predictedTokS), std::string("21.75"));
    QCOMPARE(formatFixed(100 * m.predictedChange, 1), std::string("7.6"));
    // Measured: 21.97 tok/s (+8.7 %); residual +0.2 % (acceptance unchanged) and +1.0 % (measured).
    QCOMPARE(formatSignificant(m.measuredTokS), std::string("21.97"));
    QCOMPARE(formatFixed(100 * m.measuredChange, 1), std::string("8.7"));
    QCOMPARE(formatFixed(100 * m.residual, 1), std::string("0.2"));
    QCOMPARE(formatFixed(100 * m.residualMeasuredAcceptance, 1), std::string("1.0"));
    // The quantized sweep: t′_D = 7.98 ms, a cheaper drafter; k′* stays 2 here.
    QVERIFY(near(q.drafterMs, 15.88 - 7.9));
    QVERIFY(near(q.predictedTokSByK[2], q.predictedTokS));
    QCOMPARE(q.bestK, 2);
    // The quantized arm's own cell runs with t_D − Δ.
    const auto* w = model.cell("w4a16_draft", 2048);
    QVERIFY(w && !w->quantized);
    QVERIFY(near(w->drafterMs, 15.88 - 7.9));
    QCOMPARE(formatSignificant(w->measuredTokS), std::string("21.97"));
}

void TestSpeedModel::glmFromRawNumbers()
{
    // The same numbers by the formulas of speed-model §2–§4 written out, to double precision.
    const auto model = computeSpeedModel(reportOf({kGlmBf16, kGlmW4}), glmOptions());
    const auto& c = *model.cell("bf16_draft", 2048);
    const double tau = 1 + 0.6460 + 0.3872;
    const double t = 1000 * tau / 20.21;
    QVERIFY(near(c.cycleMs, t, 1e-13));
    QVERIFY(near(c.verifyMs, t - 15.88, 1e-13));
    QVERIFY(near(c.predictedTokS[0], 1000 / (t - 15.88), 1e-13));
    QVERIFY(near(c.predictedTokS[1], 1000 * 1.6460 / t, 1e-13)); // block: one draft forward at j = 1
    QVERIFY(near(c.predictedTokS[2], 20.21, 1e-13));
    QVERIFY(near(c.drafterShare(), 15.88 / t, 1e-13));
    const auto& q = *c.quantized;
    QVERIFY(near(q.cycleMs, t - 7.9, 1e-13));
    QVERIFY(near(q.predictedTokS, 1000 * tau / (t - 7.9), 1e-13));
    QVERIFY(near(q.predictedTokSByK[0], 1000 / (t - 15.88), 1e-13)); // no drafter at j = 0
    QVERIFY(near(q.measured->predictedTokS, 1000 * 2.0167 / (t - 7.9), 1e-13));
    QVERIFY(near(q.measured->residual, 21.97 / (1000 * tau / (t - 7.9)) - 1, 1e-11));
}

void TestSpeedModel::samplesTauIsAcceptanceLength_data()
{
    QTest::addColumn<QStringList>("files");
    QTest::addColumn<double>("tolerance"); // absolute, on τ(k)
    QTest::addColumn<int>("cells");
    // The CSV keeps per-position rates to 4 decimals: τ(k) agrees with 1 + Σaccepted/Σdrafts to k·0.5e-4.
    QTest::addRow("csv") << QStringList{QStringLiteral("bench/spec_decode_repeats_long.csv")} << 1.5e-4 << 6;
    QTest::addRow("vllm json")
        << QStringList{QStringLiteral("bench/bf16-draft-infqps-concurrency1-Qwen3-32B-20251202-141503.json"),
                       QStringLiteral("bench/w4a16-draft-infqps-concurrency1-Qwen3-32B-20251202-143122.json")}
        << 1e-12 << 2;
    QTest::addRow("metrics pair with its json")
        << QStringList{QStringLiteral("bench/metrics_before.prom"),
                       QStringLiteral("bench/metrics_after.prom"),
                       QStringLiteral("bench/bf16-draft-infqps-concurrency1-Qwen3-32B-20251202-141503.json")}
        << 1e-12 << 1;
    QTest::addRow("all samples")
        << QStringList{QStringLiteral("bench/spec_decode_repeats_long.csv"),
                       QStringLiteral("bench/metrics_before.prom"),
                       QStringLiteral("bench/metrics_after.prom"),
                       QStringLiteral("bench/bf16-draft-infqps-concurrency1-Qwen3-32B-20251202-141503.json"),
                       QStringLiteral("bench/w4a16-draft-infqps-concurrency1-Qwen3-32B-20251202-143122.json")}
        << 1.5e-4 << 6;
}

void TestSpeedModel::samplesTauIsAcceptanceLength()
{
    QFETCH(QStringList, files);
    QFETCH(double, tolerance);
    QFETCH(int, cells);
    std::vector<std::string> names;
    for (const auto& f : files) {
        names.push_back(f.toStdString());
    }
    RecordTags tags; // the /metrics pair describes the BF16 JSON's run
    tags.arm = "bf16_draft";
    tags.promptLen = 2048;
    const auto report = reportOf(names, tags);
    for (const double drafterMs : {1.0, 5.0, 12.0}) {
        for (const auto kind : {DrafterKind::Chain, DrafterKind::Block}) {
            SpeedModelOptions o;
            o.drafterMs = drafterMs;
            o.kind = kind;
            const auto model = computeSpeedModel(report, o);
            QCOMPARE(int(model.cells.size()), cells);
            for (const auto& c : model.cells) {
                const auto* cell = report.cell(c.arm, c.promptLen);
                QVERIFY(cell && cell->pooledCounters);
                QCOMPARE(c.k, 3);
                // Mean acceptance length (bonus token included) = 1 + Σ accepted / Σ drafts.
                const double al = cell->pooledCounters->meanAcceptanceLength();
                QVERIFY2(std::abs(c.tokensPerVerify[3] - al) <= tolerance,
                         (c.arm + " " + std::to_string(c.promptLen) + ": τ(k) " +
                          std::to_string(c.tokensPerVerify[3]) + " vs AL " + std::to_string(al))
                             .c_str());
                QVERIFY(near(c.predictedTokS[3], cell->metric(benchmetric::kDecodeTokS)->mean, 1e-12));
                QVERIFY(near(c.predictedTokS[3], c.measuredTokS, 1e-12));
                QCOMPARE(c.tokensPerVerify.front(), 1.0);
            }
        }
    }
}

void TestSpeedModel::verifyFittedFromNoSpeculationArm()
{
    // D₀ = 25 tok/s without speculation: V₀ = 40 ms; the k = 2 cell runs at 40 tok/s with τ(2) = 2.2.
    std::vector<BenchRecord> records{record("bf16", 512, 40, {0.7, 0.5}), record("no_spec", 512, 25, {}),
                                     record("no_spec", 1024, 20, {}), record("bf16", 1024, 30, {0.7, 0.5})};
    const auto report = buildBenchReport(records);
    SpeedModelOptions o;
    o.drafterMs = 6;
    o.kind = DrafterKind::Chain;
    const auto model = computeSpeedModel(report, o);
    QCOMPARE(model.cells.size(), std::size_t(2)); // the k = 0 arm has no model of its own
    const auto& c = *model.cell("bf16", 512);
    const double t = 1000 * 2.2 / 40; // 55 ms
    QCOMPARE(c.noSpeculationArm, std::string("no_spec"));
    QVERIFY(near(c.verifyMs, 40));
    QVERIFY(near(c.verifyMsPerToken, (t - 6 - 40) / 2));
    QVERIFY(near(c.predictedTokS[0], 25));
    QVERIFY(near(c.predictedTokS[1], 1000 * 1.7 / (40 + c.verifyMsPerToken + 3)));
    QVERIFY(near(c.predictedTokS[2], 40));
    // The other prompt length fits from its own D₀.
    QVERIFY(near(model.cell("bf16", 1024)->verifyMs, 50));
    QVERIFY(std::any_of(model.assumptions.begin(), model.assumptions.end(),
                        [](const std::string& a) { return a.find("V₀ = 1/D₀") != std::string::npos; }));
    // Without the k = 0 arm, v = 0.
    const auto alone = computeSpeedModel(buildBenchReport({record("bf16", 512, 40, {0.7, 0.5})}), o);
    QCOMPARE(alone.cells.front().verifyMsPerToken, 0.0);
    QVERIFY(near(alone.cells.front().verifyMs, t - 6));
}

void TestSpeedModel::chainAgainstBlock()
{
    const auto report = buildBenchReport({record("bf16", 512, 40, {0.8, 0.6, 0.4})});
    SpeedModelOptions o;
    o.drafterMs = 12;
    o.kind = DrafterKind::Chain;
    const auto chain = computeSpeedModel(report, o).cells.front();
    o.kind = DrafterKind::Block;
    const auto block = computeSpeedModel(report, o).cells.front();
    const double t = 1000 * 2.8 / 40;
    // Chain: n(j) = j, t_d = 4 ms; block: n(j) = 1, t_d = 12 ms.
    QVERIFY(near(chain.cycleMsByK[1], t - 12 + 4));
    QVERIFY(near(chain.cycleMsByK[2], t - 12 + 8));
    QVERIFY(near(block.cycleMsByK[1], t));
    QVERIFY(near(block.cycleMsByK[2], t));
    QVERIFY(near(chain.predictedTokS[3], block.predictedTokS[3]));
    QVERIFY(chain.predictedTokS[1] > block.predictedTokS[1]);
    QCOMPARE(draftStepsPerCycle(DrafterKind::Chain, 0), 0);
    QCOMPARE(draftStepsPerCycle(DrafterKind::Block, 0), 0);
    QCOMPARE(draftStepsPerCycle(DrafterKind::Block, 5), 1);
    QCOMPARE(draftStepsPerCycle(DrafterKind::Chain, 5), 5);
    // A drafter that eats most of the cycle moves k* below the measured k.
    o.kind = DrafterKind::Chain;
    o.drafterMs = 60;
    const auto slow = computeSpeedModel(report, o).cells.front();
    QVERIFY(slow.bestK < 3);
    QVERIFY(slow.predictedTokS[static_cast<std::size_t>(slow.bestK)] > slow.predictedTokS[3]);
}

void TestSpeedModel::planSaving()
{
    auto report = buildBenchReport(
        {record("bf16", 512, 40, {0.8, 0.6, 0.4}), record("w4", 512, 44, {0.78, 0.58, 0.4})});
    SpeedModelOptions o;
    o.drafterMs = 20;
    o.kind = DrafterKind::Chain;
    o.streamedBefore = 4000;
    o.streamedAfter = 1000;
    const auto model = computeSpeedModel(report, o);
    QVERIFY(model.savingMs);
    QVERIFY(near(*model.savingMs, 15)); // t_D·(1 − S′/S)
    const auto& c = *model.cell("bf16", 512);
    const double t = 1000 * 2.8 / 40;
    QVERIFY(near(c.quantized->cycleMs, t - 15));
    // t′_d = t_d·S′/S: 20/3 · 1/4 ms per chain step.
    QVERIFY(near(c.quantized->predictedTokSByK[1], 1000 * 1.8 / (t - 20 + 5.0 / 3)));
    QVERIFY(c.quantized->bestK >= c.bestK); // a cheaper drafter never moves the optimum shallower
    QCOMPARE(c.quantized->measured->arm, std::string("w4"));
    QVERIFY(near(model.cell("w4", 512)->drafterMs, 5));
    // A given saving wins over streamed bytes.
    o.savingMs = 2;
    QVERIFY(near(*computeSpeedModel(report, o).savingMs, 2));
    // Drafter kinds of the architectures.
    QCOMPARE(drafterKindOf(DraftArchitecture::Eagle3), std::optional(DrafterKind::Chain));
    QCOMPARE(drafterKindOf(DraftArchitecture::DSpark), std::optional(DrafterKind::Block));
    QCOMPARE(drafterKindOf(DraftArchitecture::LagunaDFlash), std::optional(DrafterKind::Block));
    QCOMPARE(drafterKindOf(DraftArchitecture::Qwen3DFlash), std::optional(DrafterKind::Block));
    QVERIFY(!drafterKindOf(DraftArchitecture::Generic));
}

void TestSpeedModel::tiesGoToSmallerK()
{
    // a = [0.5], chain, t_D = 1 ms, D = 500 tok/s: T = 3 ms, V₀ = 2 ms, D(0) = D(1) = 500.
    const auto report = buildBenchReport({record("bf16", 1, 500, {0.5})});
    SpeedModelOptions o;
    o.drafterMs = 1;
    const auto c = computeSpeedModel(report, o).cells.front();
    QCOMPARE(c.predictedTokS[0], c.predictedTokS[1]);
    QCOMPARE(c.bestK, 0);
}

void TestSpeedModel::jsonKeys()
{
    auto report = reportOf({kGlmBf16, kGlmW4});
    report.speedModel = computeSpeedModel(report, glmOptions());
    const auto json = benchReportJson(report);
    const auto& cell = json.at("cells").at(0);
    QCOMPARE(cell.at("arm").get<std::string>(), std::string("bf16_draft"));
    const auto& s = cell.at("speed_model");
    for (const char* key : {"k", "acceptance_per_position", "tokens_per_verify", "cycle_ms", "drafter_ms",
                            "verify_ms_per_token", "predicted_tok_s", "best_k", "quantized"}) {
        QVERIFY2(s.contains(key), key);
    }
    QCOMPARE(s.at("tokens_per_verify").size(), std::size_t(3));
    QCOMPARE(s.at("predicted_tok_s").size(), std::size_t(3));
    const auto& q = s.at("quantized");
    for (const char* key : {"saving_ms", "cycle_ms", "predicted_tok_s", "predicted_change_pct",
                            "predicted_tok_s_by_k", "best_k", "measured_tok_s", "residual_pct"}) {
        QVERIFY2(q.contains(key), key);
    }
    QVERIFY(near(q.at("saving_ms").get<double>(), 7.9));
    QVERIFY(std::abs(q.at("residual_pct").get<double>() - 0.17) < 0.01);
    QVERIFY(!json.at("cells").at(1).at("speed_model").contains("quantized"));
    QCOMPARE(json.at("speed_model").at("drafter_kind").get<std::string>(), std::string("block"));
    QVERIFY(!json.at("speed_model").at("assumptions").empty());
}

void TestSpeedModel::inconsistentInputs_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("expected");
    QTest::addRow("increasing") << "increasing"
                                << "arm 'bad' at prompt length 512: per-position acceptance increases";
    QTest::addRow("drafter longer than cycle") << "slow"
                                               << "arm 'bad' at prompt length 512: the drafter time 100.0 ms";
    QTest::addRow("k unknown") << "unknown k"
                               << "arm 'bad' at prompt length 512: k unknown";
    QTest::addRow("declared k") << "declared"
                                << "arm 'bad' at prompt length 512: num_speculative_tokens is 3";
    QTest::addRow("no decode rate") << "no rate"
                                    << "arm 'bad' at prompt length 512: no decode tok/s";
    QTest::addRow("mixed k") << "mixed"
                             << "arm 'bad' at prompt length 512: the repeats have per-position";
    QTest::addRow("saving too large") << "saving"
                                      << "saving 30.00 ms exceeds the drafter time 10.00 ms";
}

void TestSpeedModel::inconsistentInputs()
{
    QFETCH(QString, kind);
    QFETCH(QString, expected);
    std::vector<BenchRecord> records{record("good", 512, 40, {0.8, 0.6})};
    auto bad = record("bad", 512, 40, {0.6, 0.8});
    SpeedModelOptions o;
    o.drafterMs = 10;
    if (kind == QLatin1String("slow")) {
        bad = record("bad", 512, 40, {0.6, 0.3}); // T = 47.5 ms
        o.drafterMs = 100;
        records.clear();
    } else if (kind == QLatin1String("unknown k")) {
        bad = record("bad", 512, 40, {});
        bad.counters = SpecDecodeCounters::fromTotals(1000, 2000, 900);
    } else if (kind == QLatin1String("declared")) {
        bad = record("bad", 512, 40, {0.6, 0.3});
        bad.extras["num_speculative_tokens"] = "3";
    } else if (kind == QLatin1String("no rate")) {
        bad = record("bad", 512, 40, {0.6, 0.3});
        bad.metrics.clear();
    } else if (kind == QLatin1String("mixed")) {
        records.push_back(record("bad", 512, 40, {0.6, 0.3, 0.1}));
        bad = record("bad", 512, 40, {0.6, 0.3});
    } else if (kind == QLatin1String("saving")) {
        bad = record("bad", 512, 40, {0.6, 0.3});
        o.savingMs = 30;
    }
    records.push_back(bad);
    const auto report = buildBenchReport(records);
    try {
        computeSpeedModel(report, o);
        QFAIL("no error");
    } catch (const SpeedModelError& e) {
        QVERIFY2(std::string(e.what()).find(expected.toStdString()) != std::string::npos, e.what());
    }
}

void TestSpeedModel::formatting()
{
    QCOMPARE(formatSignificant(11.8028), std::string("11.80"));
    QCOMPARE(formatSignificant(100.6035), std::string("100.6"));
    QCOMPARE(formatSignificant(2.0332), std::string("2.033"));
    QCOMPARE(formatSignificant(9.99962), std::string("10.00"));
    QCOMPARE(formatSignificant(0.64600), std::string("0.6460"));
    QCOMPARE(formatSignificant(0.0), std::string("0.000"));
    QCOMPARE(formatChangePercent(0.085226), std::string("+8.523 %"));
    QCOMPARE(formatChangePercent(-0.01), std::string("-1.000 %"));
    auto report = reportOf({kGlmBf16, kGlmW4});
    report.speedModel = computeSpeedModel(report, glmOptions());
    const auto md = benchReportMarkdown(report);
    QVERIFY2(md.find("## Speed model: predicted decode tok/s against k") != std::string::npos, md.c_str());
    QVERIFY(
        md.find("| bf16_draft | 2048 | 2 | 0.6460, 0.3872 | 2.033 | 100.6 | 15.88 (15.8 %) | 84.72 | 0.000 | "
                "11.80, 16.36, 20.21 | 2 |") != std::string::npos);
    QVERIFY(md.find("| 2048 | 20.21 | 7.900 | 92.70 | 21.93 | +8.522 % | 11.80, 17.76, 21.93 | 2 |") !=
            std::string::npos);
    QVERIFY(md.find("| w4a16_draft | 21.97 | +8.709 % | +0.1721 % | 21.75 | +7.641 % | +0.9917 % |") !=
            std::string::npos);
    QVERIFY(md.find("acceptance measured at k is an approximation for j < k") != std::string::npos);
}

QTEST_GUILESS_MAIN(TestSpeedModel)
#include "tst_speed_model.moc"
