// Offline acceptance end to end on synthetic captures of every demo draft: BF16 against itself, a plan in
// memory against the same plan exported and read back, determinism, the replayed loop, bad captures.
#include "core/demo/democapture.h"
#include "core/demo/demodraft.h"
#include "core/export/exporter.h"
#include "core/forward/acceptancejob.h"
#include "core/io/safetensorsfilewriter.h"
#include "testsupport.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <cstring>

using namespace spark;

namespace {

/// `acceptance` of the trained EAGLE-3 head on 256 anchors of its greedy capture at k = 3, as JSON.
std::vector<std::string> trainedEagle3Run()
{
    const auto trained = test::dataPath("trained");
    return {"acceptance",
            (trained / "eagle3").string(),
            "--hidden-states",
            (trained / "capture").string(),
            "--target-model",
            (trained / "target").string(),
            "--k",
            "3",
            "--anchors",
            "256",
            "--json"};
}

struct DemoSet
{
    std::filesystem::path draft, capture, target;
};

DemoSet writeDemo(const std::filesystem::path& root, const std::string& arch)
{
    const auto draft = describeDemoDraft(arch, DemoScale::Tiny);
    DemoSet set{root / arch, root / (arch + "-capture"), {}};
    writeDemoDraft(draft, set.draft, {.seed = 1, .threads = 2});
    DemoCaptureOptions options;
    // Small enough for the emulated aarch64 runs (one thread under qemu), large enough for > 10 cycles.
    options.samples = 2;
    options.length = 32;
    options.prompt = 6;
    options.threads = 2;
    writeDemoCapture(draft, set.draft, set.capture, options);
    if (describeDemoTarget(draft)) {
        set.target = set.capture / "target";
    }
    return set;
}

/// A copy of @p set's capture at @p path with one metadata entry set: @p key = @p value.
std::filesystem::path captureWith(const DemoSet& set, const std::filesystem::path& path,
                                  const std::string& key, const std::string& value)
{
    const auto source = SafetensorsFile::open(set.capture / "hidden_states.safetensors");
    std::vector<TensorBytes> tensors;
    for (const auto& t : source->tensors()) {
        const auto bytes = source->bytes(t);
        tensors.push_back({{t.name, t.dtype, t.shape}, std::vector<std::byte>(bytes.begin(), bytes.end())});
    }
    auto meta = source->header().metadata;
    meta[key] = value;
    writeSafetensorsFile(path, std::move(tensors), meta);
    return path;
}

AcceptanceJob jobFor(const DemoSet& set, int k)
{
    AcceptanceJob job;
    job.draft = set.draft;
    job.capture = set.capture / "hidden_states.safetensors";
    job.target = set.target;
    job.options.k = k;
    job.options.anchorCount = 16;
    job.options.seed = 7;
    job.options.threads = 2;
    return job;
}

} // namespace

class TestAcceptance : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void initTestCase();
    void bf16AgainstItselfHasNoFlips_data();
    void bf16AgainstItselfHasNoFlips();
    void planInMemoryEqualsExportedCheckpoint_data();
    void planInMemoryEqualsExportedCheckpoint();
    void sameSeedSameNumbers();
    void replayedLoopMatchesOfflineCounters();
    void referenceProposalsAreReused();
    void badCapturesAreNamed_data();
    void badCapturesAreNamed();
    void cliReportsAndDumps();
    void nonGreedyCaptureUsesTargetHead();
    void temperatureZeroIsGreedy();
    void temperatureNeedsTheTargetsDistribution();
    void objectiveTendsToTheGreedyCount();
    void perUnitSensitivityRanksUnits();

  private:
    QTemporaryDir m_dir;
    std::map<std::string, DemoSet> m_sets;
};

void TestAcceptance::initTestCase()
{
    QVERIFY(m_dir.isValid());
    for (const auto& arch : demoArchitectures()) {
        m_sets[arch] = writeDemo(m_dir.path().toStdString(), arch);
    }
}

void TestAcceptance::bf16AgainstItselfHasNoFlips_data()
{
    QTest::addColumn<QString>("arch");
    for (const auto& arch : demoArchitectures()) {
        QTest::addRow("%s", arch.c_str()) << QString::fromStdString(arch);
    }
}

void TestAcceptance::bf16AgainstItselfHasNoFlips()
{
    QFETCH(QString, arch);
    auto job = jobFor(m_sets.at(arch.toStdString()), 3);
    job.quantized = job.draft; // the BF16 checkpoint read as the "quantized" side
    const auto run = runAcceptance(job);
    QVERIFY(run.summary.paired);
    QCOMPARE(run.summary.anchors, 16);
    for (const auto& p : run.summary.positions) {
        QCOMPARE(p.flipRate, 0.0);
        QCOMPARE(p.delta, 0.0);
        QCOMPARE(p.acceptQuant, p.acceptBase);
        QCOMPARE(p.meanKl, 0.0);
    }
    // The synthetic target follows the BF16 draft's proposals about 60% of the time on its own loop: on
    // sampled anchors the first position is accepted often, but not always.
    QVERIFY2(run.summary.positions[0].acceptBase > 0.15 && run.summary.positions[0].acceptBase < 0.95,
             qPrintable(QString::number(run.summary.positions[0].acceptBase)));
}

void TestAcceptance::planInMemoryEqualsExportedCheckpoint_data()
{
    QTest::addColumn<QString>("arch");
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<QString>("rounding");
    QTest::addRow("glm-dspark W4A16")
        << QStringLiteral("glm-dspark") << QStringLiteral("") << QStringLiteral("rtn");
    QTest::addRow("laguna-dflash W4A16_ASYM")
        << QStringLiteral("laguna-dflash") << QStringLiteral("re:.*\\.mlp\\..*=W4A16_ASYM")
        << QStringLiteral("rtn");
    // A searching rounding method: the in-memory plan must search exactly as the exporter (one small draft:
    // the search is the slow part of this test).
    QTest::addRow("llama-eagle3 NVFP4A16 mse")
        << QStringLiteral("llama-eagle3") << QStringLiteral("Linear=NVFP4A16") << QStringLiteral("mse");
    QTest::addRow("qwen3-dflash FP8_DYNAMIC")
        << QStringLiteral("qwen3-dflash") << QStringLiteral("re:.*\\.mlp\\..*=FP8_DYNAMIC")
        << QStringLiteral("rtn");
}

void TestAcceptance::planInMemoryEqualsExportedCheckpoint()
{
    QFETCH(QString, arch);
    QFETCH(QString, scheme);
    QFETCH(QString, rounding);
    const auto& set = m_sets.at(arch.toStdString());
    PlanOptions planOptions;
    planOptions.rounding = rounding.toStdString();
    if (!scheme.isEmpty()) {
        planOptions.schemes.push_back(scheme.toStdString());
    }
    auto inMemory = jobFor(set, 2);
    inMemory.plan = planOptions;
    const auto a = runAcceptance(inMemory);

    const auto source = Checkpoint::open(set.draft);
    const auto plan = makePlan(source.config(), test::infosOf(source), planOptions);
    QVERIFY(plan.errors.empty());
    QVERIFY(!plan.quantizedModules().empty());
    const auto out = std::filesystem::path(m_dir.path().toStdString()) /
                     (arch.toStdString() + "-q" + std::to_string(scheme.size()) + rounding.toStdString());
    ExportOptions exportOptions;
    exportOptions.output = out;
    exportOptions.threads = 2;
    exportCheckpoint(source, plan, exportOptions);
    auto fromDisk = jobFor(set, 2);
    fromDisk.quantized = out;
    const auto b = runAcceptance(fromDisk);

    QCOMPARE(a.outcomes.size(), b.outcomes.size());
    for (std::size_t i = 0; i < a.outcomes.size(); ++i) {
        QCOMPARE(a.outcomes[i].quantized->tokens, b.outcomes[i].quantized->tokens);
        QCOMPARE(a.outcomes[i].quantized->topMargin, b.outcomes[i].quantized->topMargin);
    }
    QCOMPARE(a.summary.tauQuant, b.summary.tauQuant);
}

void TestAcceptance::sameSeedSameNumbers()
{
    auto job = jobFor(m_sets.at("glm-dspark"), 2);
    job.plan = PlanOptions{};
    const auto first = runAcceptance(job);
    const auto second = runAcceptance(job);
    QCOMPARE(first.anchors, second.anchors);
    for (int i = 0; i < 2; ++i) {
        QCOMPARE(first.summary.positions[i].acceptQuant, second.summary.positions[i].acceptQuant);
        QCOMPARE(first.summary.positions[i].meanKl, second.summary.positions[i].meanKl);
    }
    job.options.seed = 8;
    QVERIFY(runAcceptance(job).anchors != first.anchors);
}

void TestAcceptance::referenceProposalsAreReused()
{
    auto job = jobFor(m_sets.at("qwen3-dflash"), 3);
    job.plan = PlanOptions{};
    const auto capture = HiddenStateCapture::open(job.capture);
    const auto drafts = openAcceptanceDrafts(job, capture);
    const auto anchors = sampleAnchors(eligibleAnchors(capture, 3), 16, 7);
    ReferenceProposals reference, full(0);
    auto options = job.options;
    options.batchAnchors = 5; // several batches, one of them short
    options.reference = &reference;
    const auto first = evaluateAnchors(*drafts.base, &*drafts.quantized, capture, anchors, options);
    // The quantized draft now stands where the reference was: the stored reference must answer for it, so
    // the pairs come out as in the first run.
    const auto second = evaluateAnchors(*drafts.quantized, &*drafts.quantized, capture, anchors, options);
    // Without room for the list nothing is kept, and the quantized draft is paired with itself.
    options.reference = &full;
    evaluateAnchors(*drafts.base, &*drafts.quantized, capture, anchors, options);
    const auto self = evaluateAnchors(*drafts.quantized, &*drafts.quantized, capture, anchors, options);
    bool differs = false;
    for (std::size_t i = 0; i < anchors.size(); ++i) {
        QCOMPARE(second[i].anchor, first[i].anchor);
        QCOMPARE(second[i].base.tokens, first[i].base.tokens);
        QCOMPARE(second[i].base.topMargin, first[i].base.topMargin);
        QCOMPARE(second[i].kl.size(), first[i].kl.size());
        for (std::size_t j = 0; j < first[i].kl.size(); ++j) { // NaN where the earlier proposals differ
            QVERIFY(second[i].kl[j] == first[i].kl[j] ||
                    (std::isnan(second[i].kl[j]) && std::isnan(first[i].kl[j])));
        }
        QCOMPARE(self[i].base.topMargin, self[i].quantized->topMargin);
        differs = differs || first[i].base.topMargin != first[i].quantized->topMargin;
    }
    QVERIFY2(differs, "W4A16 left every margin unchanged: the test would not see a missed reuse");
}

void TestAcceptance::replayedLoopMatchesOfflineCounters()
{
    const auto& set = m_sets.at("qwen3-dflash");
    auto job = jobFor(set, 4);
    job.options.anchorCount = 0;
    const auto capture = HiddenStateCapture::open(job.capture);
    const auto drafts = openAcceptanceDrafts(job, capture);
    const auto replayed = replayLoop(*drafts.base, capture, job.options);
    QVERIFY(replayed.size() > 10);
    std::vector<Anchor> visited;
    for (const auto& o : replayed) {
        visited.push_back(o.anchor);
    }
    // Consecutive cycles: anchor_{n+1} = anchor_n + L_n + 1 within a sample.
    for (std::size_t i = 1; i < replayed.size(); ++i) {
        if (replayed[i].anchor.sample == replayed[i - 1].anchor.sample) {
            QCOMPARE(replayed[i].anchor.position,
                     replayed[i - 1].anchor.position + replayed[i - 1].base.accepted + 1);
        }
    }
    const auto offline = evaluateAnchors(*drafts.base, nullptr, capture, visited, job.options);
    const auto online = summarizeAcceptance(replayed, 4);
    const auto batched = summarizeAcceptance(offline, 4);
    for (int i = 0; i < 4; ++i) {
        QCOMPARE(batched.positions[i].acceptBase, online.positions[i].acceptBase);
    }
    // The capture was generated by this loop with a 0.6 chance per proposal.
    QVERIFY2(online.positions[0].acceptBase > 0.35 && online.positions[0].acceptBase < 0.85,
             qPrintable(QString::number(online.positions[0].acceptBase)));
}

void TestAcceptance::badCapturesAreNamed_data()
{
    QTest::addColumn<QString>("defectName");
    QTest::addColumn<QString>("field");
    QTest::addRow("wrong layer ids") << QStringLiteral("layers") << QStringLiteral("layer_ids");
    QTest::addRow("wrong hidden size") << QStringLiteral("hidden") << QStringLiteral("hidden_states");
    QTest::addRow("truncated offsets") << QStringLiteral("offsets") << QStringLiteral("sample_offsets");
    QTest::addRow("non-greedy without argmax") << QStringLiteral("greedy") << QStringLiteral("target_argmax");
    QTest::addRow("not a capture") << QStringLiteral("format") << QStringLiteral("__metadata__.format");
}

void TestAcceptance::badCapturesAreNamed()
{
    QFETCH(QString, defectName);
    QFETCH(QString, field);
    const std::string defect = defectName.toStdString();
    const auto& set = m_sets.at("glm-dspark");
    const std::int64_t n = 20, h = defect == "hidden" ? 64 : 256;
    std::vector<std::uint16_t> hidden(static_cast<std::size_t>(n * 6 * h), 0x3F80);
    std::vector<std::int32_t> tokens(static_cast<std::size_t>(n), 5);
    std::vector<std::int64_t> offsets{0, defect == "offsets" ? n - 3 : n};
    std::vector<std::uint8_t> mask(static_cast<std::size_t>(n), 1);
    std::map<std::string, std::string> meta{
        {"format", defect == "format" ? "pt" : "sparkulator.hidden-states/1"},
        {"layer_ids", defect == "layers" ? "[8, 23, 39, 56, 70, 71]" : "[8, 23, 39, 55, 70, 71]"},
        {"greedy", defect == "greedy" ? "false" : "true"}};
    const auto path = std::filesystem::path(m_dir.path().toStdString()) / ("bad-" + defect + ".safetensors");
    const auto un = static_cast<std::uint64_t>(n);
    writeSafetensorsFile(
        path,
        {{{"hidden_states", DType::BF16, {un, 6, static_cast<std::uint64_t>(h)}}, bytesOf(hidden)},
         {{"token_ids", DType::I32, {un}}, bytesOf(tokens)},
         {{"sample_offsets", DType::I64, {2}}, bytesOf(offsets)},
         {{"loss_mask", DType::U8, {un}}, bytesOf(mask)}},
        meta);
    const auto result =
        test::runCli({"acceptance", set.draft.string(), "--hidden-states", path.string(), "--bf16-only"});
    QCOMPARE(result.exitCode, 2);
    QVERIFY2(result.err.find(path.string()) != std::string::npos, result.err.c_str());
    QVERIFY2(result.err.find(field.toStdString()) != std::string::npos, result.err.c_str());
}

void TestAcceptance::cliReportsAndDumps()
{
    const auto& set = m_sets.at("laguna-dflash");
    const auto dump = std::filesystem::path(m_dir.path().toStdString()) / "dump.safetensors";
    const auto result = test::runCli({"acceptance",
                                      set.draft.string(),
                                      "--hidden-states",
                                      (set.capture / "hidden_states.safetensors").string(),
                                      "--target",
                                      set.target.string(),
                                      "--k",
                                      "3",
                                      "--anchors",
                                      "12",
                                      "--json",
                                      "--dump-logits",
                                      dump.string(),
                                      "--max-anchors",
                                      "4",
                                      "--drafter-ms",
                                      "2",
                                      "--cycle-ms",
                                      "20",
                                      "--threads",
                                      "2"});
    QCOMPARE(result.exitCode, 0);
    const auto json = nlohmann::json::parse(result.out);
    QCOMPARE(json["anchors"].get<int>(), 12);
    QCOMPARE(json["positions"].size(), 3u);
    QVERIFY(json["paired"].get<bool>());
    QVERIFY(json["speed"]["saving_ms"].get<double>() > 0);
    const auto file = SafetensorsFile::open(dump);
    QVERIFY(file->find("logits_base") != nullptr);
    QCOMPARE(file->find("logits_quantized")->shape, (std::vector<std::uint64_t>{4, 3, 1024}));
    // The capture alone, without the target the demo writes beside it.
    const auto alone = std::filesystem::path(m_dir.path().toStdString()) / "capture-alone.safetensors";
    std::filesystem::copy_file(set.capture / "hidden_states.safetensors", alone);
    const auto missingTarget =
        test::runCli({"acceptance", set.draft.string(), "--hidden-states", alone.string()});
    QCOMPARE(missingTarget.exitCode, 2);
    QVERIFY2(missingTarget.err.find("--target") != std::string::npos, missingTarget.err.c_str());

    // Serving numerics with their floor: the JSON says which numerics ran and what the other changes.
    const std::vector<std::string> common{
        "acceptance",      set.draft.string(),
        "--hidden-states", (set.capture / "hidden_states.safetensors").string(),
        "--target-model",  set.target.string(),
        "--anchors",       "12",
        "--threads",       "2"};
    auto args = common;
    args.insert(args.end(), {"--numerics", "bf16", "--numerics-floor", "--json"});
    const auto bf16 = test::runCli(args);
    QVERIFY2(bf16.exitCode == 0, bf16.err.c_str());
    const auto served = nlohmann::json::parse(bf16.out);
    QCOMPARE(served["numerics"].get<std::string>(), std::string("bf16"));
    QCOMPARE(served["numerics_floor"]["other"].get<std::string>(), std::string("fp32"));
    QVERIFY(served["numerics_floor"]["first_differs"].get<double>() <=
            served["numerics_floor"]["any_differs"].get<double>());
    args = common;
    args.insert(args.end(), {"--numerics", "fp16"});
    const auto bad = test::runCli(args);
    QCOMPARE(bad.exitCode, 2);
    QVERIFY2(bad.err.find("--numerics 'fp16': fp32 or bf16") != std::string::npos, bad.err.c_str());
    args = common;
    args.insert(args.end(), {"--numerics-floor", "--replay"});
    QCOMPARE(test::runCli(args).exitCode, 2);
}

void TestAcceptance::nonGreedyCaptureUsesTargetHead()
{
    // The demo capture again, declared non-greedy and without target_argmax: the target's tokens must then
    // come from its head on the captured last layer, which needs --target.
    const auto& set = m_sets.at("qwen3-dflash");
    const auto path = captureWith(
        set, std::filesystem::path(m_dir.path().toStdString()) / "sampled.safetensors", "greedy", "false");

    auto job = jobFor(set, 2);
    job.capture = path;
    const auto capture = HiddenStateCapture::open(path);
    const auto drafts = openAcceptanceDrafts(job, capture);
    QVERIFY(drafts.targetHead != nullptr);
    const auto expected = drafts.targetHead->argmax(capture, 0);
    QCOMPARE(static_cast<std::int64_t>(expected.size()), capture.sampleLength(0));
    const auto run = runAcceptance(job);
    for (const auto& o : run.outcomes) {
        if (o.anchor.sample == 0) {
            QCOMPARE(o.targets.front(), expected[static_cast<std::size_t>(o.anchor.position)]);
        }
    }
    job.target.clear();
    QVERIFY_THROWS_EXCEPTION(ForwardInputError, runAcceptance(job));
}

void TestAcceptance::temperatureZeroIsGreedy()
{
    // The trained EAGLE-3 head on its greedy capture: --temperature 0 is today's greedy count to the byte,
    // and a small temperature tends to it (the target's distribution sharpens onto its greedy token, which
    // the capture holds; only near-ties of the target keep a product from reaching 0 or 1).
    auto common = trainedEagle3Run();
    common.push_back("--bf16-only");
    const auto greedy = test::runCli(common);
    QVERIFY2(greedy.exitCode == 0, greedy.err.c_str());
    auto args = common;
    args.insert(args.end(), {"--temperature", "0"});
    const auto zero = test::runCli(args);
    QCOMPARE(zero.out, greedy.out);
    args = common;
    args.insert(args.end(), {"--temperature", "0.02"});
    const auto cold = test::runCli(args);
    QVERIFY2(cold.exitCode == 0, cold.err.c_str());
    QVERIFY2(cold.err.find("greedy continuations") != std::string::npos, cold.err.c_str());
    const auto g = nlohmann::json::parse(greedy.out), c = nlohmann::json::parse(cold.out);
    QCOMPARE(c["temperature"].get<double>(), 0.02);
    for (std::size_t i = 0; i < 3; ++i) {
        const double counted = g["positions"][i]["accept_base"].get<double>();
        QCOMPARE(c["positions"][i]["accept_base_counted"].get<double>(), counted);
        QVERIFY2(std::abs(c["positions"][i]["accept_base"].get<double>() - counted) < 0.01,
                 c["positions"][i].dump().c_str());
    }
}

void TestAcceptance::objectiveTendsToTheGreedyCount()
{
    // The trained EAGLE-3 head against a W4A16 plan on its greedy capture. Asking for the objective feeds
    // both drafts the target's tokens: every accepted count and flip stays what the serving loop gives (the
    // fed tokens equal the draft's own wherever a proposal can still be accepted). As the draft temperature
    // goes to 0, the expected accepted length tends to the count (1 + objective = tau), and it falls as
    // the temperature rises (a sampled draft misses tokens its argmax gets).
    QTemporaryDir dir;
    const auto table = dir.filePath(QStringLiteral("anchors.csv")).toStdString();
    const auto common = trainedEagle3Run();
    const auto plain = test::runCli(common);
    QVERIFY2(plain.exitCode == 0, plain.err.c_str());
    auto args = common;
    args.insert(args.end(), {"--objective-temperature", "0.001,0.2,1", "--anchor-table", table});
    const auto scored = test::runCli(args);
    QVERIFY2(scored.exitCode == 0, scored.err.c_str());
    const auto p = nlohmann::json::parse(plain.out), o = nlohmann::json::parse(scored.out);
    for (std::size_t i = 0; i < 3; ++i) {
        for (const char* key : {"accept_base", "accept_quantized", "flip_rate"}) {
            QCOMPARE(o["positions"][i][key].get<double>(), p["positions"][i][key].get<double>());
        }
    }
    const auto& objective = o["objective"];
    QCOMPARE(objective.size(), std::size_t{3});
    // Within a position or two of the 768: only a near-tie of the top two logits (under 1e-3 of 0.1-4
    // margins) keeps q from 0 or 1 at t = 0.001.
    QCOMPARE(objective[0]["draft_temperature"].get<double>(), 0.001);
    QVERIFY(std::abs(1 + objective[0]["base"].get<double>() - p["tau_base"].get<double>()) < 2.0 / 256);
    QVERIFY(std::abs(1 + objective[0]["quantized"].get<double>() - p["tau_quantized"].get<double>()) <
            2.0 / 256);
    QVERIFY(objective[1]["base"].get<double>() > objective[2]["base"].get<double>());
    // The table holds one row per anchor with both drafts' counts, whose mean difference is the run's Δτ.
    QFile file(QString::fromStdString(table));
    QVERIFY(file.open(QIODevice::ReadOnly));
    const auto lines = QString::fromUtf8(file.readAll()).trimmed().split(QLatin1Char('\n'));
    QCOMPARE(lines.size(), 257);
    QVERIFY(lines[0].startsWith(QStringLiteral("sample,position,accepted_base,accepted_quantized,")));
    double change = 0;
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const auto cells = lines[i].split(QLatin1Char(','));
        QCOMPARE(cells.size(), 10);
        change += cells[3].toDouble() - cells[2].toDouble();
    }
    QVERIFY(std::abs(change / 256 - o["tau_delta"].get<double>()) < 1e-12);
    // At a temperature, or replayed, there is no objective.
    args.insert(args.end(), {"--replay"});
    QCOMPARE(test::runCli(args).exitCode, 2);
}

void TestAcceptance::temperatureNeedsTheTargetsDistribution()
{
    const auto trained = test::dataPath("trained");
    const std::vector<std::string> common{"acceptance", (trained / "eagle3").string(), "--hidden-states",
                                          (trained / "capture").string(), "--bf16-only"};
    auto args = common;
    args.insert(args.end(),
                {"--target-model", (trained / "target").string(), "--draft-sampling", "probabilistic"});
    const auto noTemperature = test::runCli(args);
    QCOMPARE(noTemperature.exitCode, 2);
    QVERIFY2(noTemperature.err.find("--draft-sampling needs --temperature") != std::string::npos,
             noTemperature.err.c_str());
    args = common;
    args.insert(args.end(), {"--target-model", (trained / "target").string(), "--temperature", "-1"});
    QCOMPARE(test::runCli(args).exitCode, 2);
    // The target's distribution comes from the capture's last layer: a capture without it is refused, naming
    // the field.
    const auto& set = m_sets.at("qwen3-dflash");
    auto job = jobFor(set, 2);
    job.capture =
        captureWith(set, std::filesystem::path(m_dir.path().toStdString()) / "no-last-layer.safetensors",
                    "last_layer_included", "false");
    job.options.temperature = 0.7;
    try {
        runAcceptance(job);
        QFAIL("a run at a temperature without the capture's last layer must be refused");
    } catch (const ForwardInputError& e) {
        QVERIFY2(std::string(e.what()).find("last_layer_included") != std::string::npos, e.what());
    }
}

void TestAcceptance::perUnitSensitivityRanksUnits()
{
    auto job = jobFor(m_sets.at("llama-eagle3"), 2);
    job.plan = PlanOptions{};
    job.options.anchorCount = 12;
    const auto units = runSensitivity(job);
    QVERIFY(!units.empty());
    for (std::size_t i = 1; i < units.size(); ++i) {
        QVERIFY(units[i - 1].tauDelta <= units[i].tauDelta);
    }
    const auto json = sensitivityJson(job, units);
    QCOMPARE(json["units"].size(), units.size());
}

QTEST_GUILESS_MAIN(TestAcceptance)
#include "tst_acceptance.moc"
