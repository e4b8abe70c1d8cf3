// Captures as other tools write them (tools/reference/capture_formats.py wrote them from the writers'
// sources): vLLM's connector folder replays exactly like the same sequences in a speculators BF16 folder
// (whose replay tst_trainedreplay ties to the product's file), speculators' FP8 folder exactly like the
// product's file holding its values dequantized; `capture convert` keeps every bit; what a folder cannot say
// (layer ids, prompt length) comes from the draft or the options, or is an error naming them.
#include "core/forward/acceptancejob.h"
#include "core/forward/captureconverter.h"
#include "core/io/safetensorsfile.h"
#include "core/io/safetensorsfilewriter.h"
#include "testsupport.h"

#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <fstream>
#include <map>

using namespace spark;

namespace {

namespace fs = std::filesystem;

fs::path trained(const char* name)
{
    return test::dataPath("trained") / name;
}

/// Each sample's replayed cycles (anchor position, accepted length, proposals), keyed by its tokens.
using Cycles = std::vector<std::tuple<std::int64_t, int, std::vector<std::int64_t>>>;
std::map<std::vector<std::int64_t>, Cycles> replayBySequence(const char* draft, const fs::path& capture,
                                                             CaptureReadOptions options = {})
{
    AcceptanceJob job;
    job.draft = trained(draft);
    job.target = trained("target");
    job.capture = capture;
    job.captureOptions = std::move(options);
    job.replay = true;
    job.options.k = 4;
    const auto run = runAcceptance(job);
    const auto opened = openJobCapture(job);
    std::map<std::vector<std::int64_t>, Cycles> out;
    for (std::int64_t s = 0; s < opened.sampleCount(); ++s) {
        out[opened.sequence(s).tokens];
    }
    for (const auto& c : run.replayBaseCycles) {
        out[opened.sequence(c.anchor.sample).tokens].emplace_back(c.anchor.position, c.base.accepted,
                                                                  c.base.tokens);
    }
    return out;
}

std::string errorOf(const std::function<void()>& f)
{
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(no error)";
}

std::string readFileText(const fs::path& path)
{
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::byte> tensorBytes(const fs::path& file, const char* name)
{
    const auto f = SafetensorsFile::open(file);
    const auto bytes = f->bytes(*f->find(name));
    return {bytes.begin(), bytes.end()};
}

} // namespace

class TestCaptureReaders : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;

    fs::path temp(const char* name) const { return fs::path(m_dir.path().toStdString()) / name; }

  private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void vllmFolderReplaysLikeTheSameSequences_data()
    {
        QTest::addColumn<QString>("draft");
        QTest::newRow("eagle3") << "eagle3";
        QTest::newRow("qwen3-dflash") << "qwen3-dflash";
    }

    // No ids on disk: the draft's ids plus the target's last layer (6) are assumed; the prompt length given.
    void vllmFolderReplaysLikeTheSameSequences()
    {
        QFETCH(QString, draft);
        const auto name = draft.toStdString();
        CaptureReadOptions options;
        options.promptTokens = 64;
        const auto vllm = replayBySequence(name.c_str(), trained("capture-vllm"), options);
        const auto speculators = replayBySequence(name.c_str(), trained("capture-hs"));
        QCOMPARE(vllm.size(), std::size_t{4});
        std::size_t cycles = 0;
        for (const auto& [tokens, replay] : vllm) {
            QVERIFY2(speculators.count(tokens) == 1, "a connector sequence is not in the speculators folder");
            QVERIFY(!replay.empty());
            QVERIFY(replay == speculators.at(tokens));
            cycles += replay.size();
        }
        QVERIFY(cycles > 100);
    }

    // DeepSpec's cache numbers the layers whose output it keeps (0, 2, 4 = vLLM's 1, 3, 5) and keeps the
    // last layer after the norm apart (not read): the same sequences replay alike.
    void deepSpecCacheReplaysLikeTheSameSequences_data() { vllmFolderReplaysLikeTheSameSequences_data(); }
    void deepSpecCacheReplaysLikeTheSameSequences()
    {
        QFETCH(QString, draft);
        const auto name = draft.toStdString();
        const auto capture = HiddenStateCapture::open(trained("capture-deepspec"));
        QCOMPARE(capture.info().layerIds, (std::vector<int>{1, 3, 5}));
        QVERIFY(!capture.info().lastLayerIncluded);
        const auto deepspec = replayBySequence(name.c_str(), trained("capture-deepspec"));
        const auto speculators = replayBySequence(name.c_str(), trained("capture-hs"));
        QCOMPARE(deepspec.size(), std::size_t{4});
        for (const auto& [tokens, replay] : deepspec) {
            QVERIFY(speculators.count(tokens) == 1);
            QVERIFY(!replay.empty());
            QVERIFY(replay == speculators.at(tokens));
        }
    }

    void badDeepSpecCachesAreRefused()
    {
        const auto copy = temp("deepspec");
        fs::copy(trained("capture-deepspec"), copy);
        for (const auto& e : fs::directory_iterator(copy)) {
            fs::permissions(e.path(), fs::perms::owner_write, fs::perm_options::add);
        }
        const auto manifest = readFileText(copy / "manifest.json");
        const auto rewrite = [&](const std::string& from, const std::string& to) {
            auto text = manifest;
            text.replace(text.find(from), from.size(), to);
            std::ofstream(copy / "manifest.json") << text;
            return errorOf([&] { HiddenStateCapture::open(copy); });
        };
        QVERIFY2(rewrite("\"version\": 2", "\"version\": 3").find("manifest.json: version: is 3") !=
                     std::string::npos,
                 rewrite("\"version\": 2", "\"version\": 3").c_str());
        const auto dtype = rewrite("\"bfloat16\"", "\"float16\"");
        QVERIFY2(dtype.find("hidden_dtype: is 'float16'") != std::string::npos, dtype.c_str());
        const auto count = rewrite("\"num_samples\": 4", "\"num_samples\": 5");
        QVERIFY2(count.find("samples.idx: size: is 224 bytes; num_samples 5 needs 280") != std::string::npos,
                 count.c_str());
        std::ofstream(copy / "manifest.json") << manifest;
        fs::resize_file(copy / "shard-00001.bin", 1000);
        const auto truncated = errorOf([&] { HiddenStateCapture::open(copy); });
        QVERIFY2(truncated.find("record 2 input_ids: lies past the end of shard-00001.bin") !=
                     std::string::npos,
                 truncated.c_str());
    }

    // No prompt length, but the last layer and the target: the target's tokens are recomputed at every
    // position, and the BF16 draft's first proposals are accepted as often as on the generated region.
    void vllmFolderWithTheTargetNeedsNoPromptLength()
    {
        AcceptanceJob job;
        job.draft = trained("eagle3");
        job.target = trained("target");
        job.capture = trained("capture-vllm");
        job.options.k = 1;
        job.options.anchorCount = 0;
        const auto capture = openJobCapture(job);
        QVERIFY(!capture.info().greedy);
        const auto mask = capture.sequence(0).lossMask;
        QCOMPARE(std::count(mask.begin(), mask.end(), 1), static_cast<std::ptrdiff_t>(mask.size()));
        const auto run = runAcceptance(job);
        QCOMPARE(run.eligibleAnchors, std::int64_t{4 * 255});
        QVERIFY(run.summary.positions.front().acceptBase > 0.3);
        job.target.clear();
        const auto refused = errorOf([&] { openJobCapture(job); });
        QVERIFY2(refused.find("--prompt-tokens") != std::string::npos, refused.c_str());
    }

    // What `demo --capture DIR` writes: the folder is the capture, and the target beside it is used unnamed
    // (this draft reads the target's embeddings and head).
    void demoCaptureFolderJustWorks()
    {
        const auto draft = temp("demo-draft"), capture = temp("demo-capture");
        const auto run = test::runCli({"demo", "--arch", "qwen3-dflash", "--out", draft.string(), "--capture",
                                       capture.string(), "--capture-samples", "2", "--capture-length", "48"});
        QVERIFY2(run.exitCode == 0, run.err.c_str());
        QVERIFY(fs::exists(capture / "target" / "config.json"));
        AcceptanceJob job;
        job.draft = draft;
        job.capture = capture;
        job.options.k = 2;
        job.options.anchorCount = 16;
        QCOMPARE(jobTarget(job), capture / "target");
        const auto result = runAcceptance(job);
        QCOMPARE(result.summary.anchors, std::int64_t{16});
        const auto cli = test::runCli({"acceptance", draft.string(), "--hidden-states", capture.string(),
                                       "--bf16-only", "--anchors", "16"});
        QVERIFY2(cli.exitCode == 0, cli.err.c_str());
    }

    void fp8FolderReplaysLikeItsDequantizedValues()
    {
        const auto fp8 = replayBySequence("eagle3", trained("capture-hs-fp8"));
        const auto dequantized = replayBySequence("eagle3", trained("capture-fp8-dequantized"));
        QCOMPARE(fp8.size(), std::size_t{4});
        QVERIFY(fp8 == dequantized);
        // ... and FP8 is not a no-op: the BF16 states of the same sequences replay differently somewhere.
        const auto bf16 = replayBySequence("eagle3", trained("capture-hs"));
        bool differs = false;
        for (const auto& [tokens, replay] : fp8) {
            differs = differs || replay != bf16.at(tokens);
        }
        QVERIFY(differs);
    }

    // The FP8 folder converted is bit for bit the file the reference dequantized in FP32; the connector
    // folder converted keeps its BF16 bits, in file-name order, and the prompt as loss_mask 0.
    void convertKeepsEveryBit()
    {
        const auto fp8 = temp("fp8.safetensors");
        convertCapture(HiddenStateCapture::open(trained("capture-hs-fp8")), fp8);
        const auto reference = trained("capture-fp8-dequantized") / "hidden_states.safetensors";
        QVERIFY(tensorBytes(fp8, "hidden_states") == tensorBytes(reference, "hidden_states"));
        QVERIFY(tensorBytes(fp8, "loss_mask") == tensorBytes(reference, "loss_mask"));
        QVERIFY(tensorBytes(fp8, "sample_offsets") == tensorBytes(reference, "sample_offsets"));

        CaptureReadOptions options;
        options.promptTokens = 64;
        options.draftLayerIds = {1, 3, 5};
        options.targetLayers = 6;
        const auto vllm = temp("vllm.safetensors");
        convertCapture(HiddenStateCapture::open(trained("capture-vllm"), options), vllm);
        std::vector<fs::path> files;
        for (const auto& e : fs::directory_iterator(trained("capture-vllm"))) {
            if (e.path().extension() == ".safetensors") {
                files.push_back(e.path());
            }
        }
        std::sort(files.begin(), files.end());
        std::vector<std::byte> concatenated;
        for (const auto& f : files) {
            const auto b = tensorBytes(f, "hidden_states");
            concatenated.insert(concatenated.end(), b.begin(), b.end());
        }
        QVERIFY(tensorBytes(vllm, "hidden_states") == concatenated);
        const auto converted = HiddenStateCapture::open(vllm);
        QCOMPARE(converted.info().layerIds, (std::vector<int>{1, 3, 5, 6}));
        QVERIFY(converted.info().lastLayerIncluded);
        const auto seq = converted.sequence(1);
        QCOMPARE(std::count(seq.lossMask.begin(), seq.lossMask.end(), 0), 64);
        QCOMPARE(seq.lossMask[63], std::uint8_t{0});
        QCOMPARE(seq.lossMask[64], std::uint8_t{1});
    }

    void whatAFolderCannotSayIsAskedFor()
    {
        const auto vllm = trained("capture-vllm");
        const auto noIds = errorOf([&] { HiddenStateCapture::open(vllm); });
        QVERIFY2(noIds.find("layer_ids") != std::string::npos &&
                     noIds.find("--layer-ids") != std::string::npos,
                 noIds.c_str());
        CaptureReadOptions options;
        options.layerIds = {1, 3, 5, 6};
        const auto noPrompt = errorOf([&] { HiddenStateCapture::open(vllm, options); });
        QVERIFY2(noPrompt.find("prompt tokens") != std::string::npos &&
                     noPrompt.find("--prompt-tokens") != std::string::npos,
                 noPrompt.c_str());
        options.promptTokens = 64;
        options.layerIds = {1, 3, 5};
        const auto wrongCount = errorOf([&] { HiddenStateCapture::open(vllm, options); });
        QVERIFY2(wrongCount.find("the capture holds 4") != std::string::npos, wrongCount.c_str());
        options.layerIds = {2, 4, 6, 7};
        const auto given = HiddenStateCapture::open(vllm, options);
        QCOMPARE(given.info().layerIds, options.layerIds);
        QCOMPARE(given.info().layerIdsSource, std::string("given (--layer-ids)"));
        // A file that says which tokens were generated takes no prompt length.
        const auto both = errorOf([&] { HiddenStateCapture::open(trained("capture"), options); });
        QVERIFY2(both.find("loss_mask") != std::string::npos, both.c_str());
    }

    void badFp8FilesAreRefused()
    {
        const auto folder = temp("bad-fp8");
        fs::create_directories(folder);
        const std::vector<std::uint8_t> codes(2 * 2 * 8, 0x38);
        const std::vector<std::int64_t> tokens{5, 6};
        const auto write = [&](std::vector<TensorBytes> extra) {
            std::vector<TensorBytes> tensors{{{"hidden_states", DType::F8_E4M3, {2, 2, 8}}, bytesOf(codes)},
                                             {{"token_ids", DType::I64, {2}}, bytesOf(tokens)}};
            tensors.insert(tensors.end(), extra.begin(), extra.end());
            writeSafetensorsFile(folder / "hs_0.safetensors", tensors, {});
            CaptureReadOptions o;
            o.promptTokens = 0;
            o.layerIds = {1, 2};
            return errorOf([&] { HiddenStateCapture::open(folder, o); });
        };
        const auto missing = write({});
        QVERIFY2(missing.find("hs_0.safetensors: hidden_states_scales: missing") != std::string::npos,
                 missing.c_str());
        const std::vector<float> two{1.0f, 2.0f};
        // [T, 1] broadcasts against [T, L, H] as [1, T, 1] in torch: the layers, not the tokens.
        const auto perLayer = write({{{"hidden_states_scales", DType::F32, {2, 1}}, bytesOf(two)}});
        QCOMPARE(perLayer, std::string("(no error)"));
        const auto badShape =
            write({{{"hidden_states_scales", DType::F32, {2, 2, 2}}, bytesOf(std::vector<float>(8, 1.f))}});
        QVERIFY2(badShape.find("hidden_states_scales: is F32 [2, 2, 2]") != std::string::npos,
                 badShape.c_str());
        // Per token: code 0x38 is 1.0, so every value of token t is its scale.
        write({{{"hidden_states_scales", DType::F32, {2, 1, 1}}, bytesOf(two)}});
        CaptureReadOptions o;
        o.promptTokens = 0;
        o.layerIds = {1, 2};
        const auto capture = HiddenStateCapture::open(folder, o);
        const auto rows = capture.hidden(0, {1}, 2);
        QCOMPARE(rows.row(0)[3], 1.0f);
        QCOMPARE(rows.row(1)[7], 2.0f);
        fs::remove(folder / "hs_0.safetensors");
        std::ofstream(folder / "hs_0.safetensors.zst") << "not read";
        const auto compressed = errorOf([&] { HiddenStateCapture::open(folder, o); });
        QVERIFY2(compressed.find("zstd -d") != std::string::npos, compressed.c_str());
    }

    // Another family's checkpoint given as the quantized draft is named as such, not read as a damaged
    // export ("q_proj.weight: missing from the draft and the target").
    void quantizedDraftOfAnotherFamily()
    {
        AcceptanceJob job;
        job.draft = trained("eagle3");
        job.target = trained("target");
        job.capture = trained("capture");
        job.quantized = trained("dspark");
        job.options.anchorCount = 4;
        try {
            runAcceptance(job);
            QFAIL("a DSpark checkpoint ran as the EAGLE-3 draft's quantized export");
        } catch (const ForwardInputError& e) {
            const std::string what = e.what();
            QVERIFY2(what.find("not a quantized EAGLE-3 draft like eagle3") != std::string::npos &&
                         what.find("dspark") != std::string::npos,
                     what.c_str());
        }
    }

    // A capture of every stream labelled one layer off: the BF16 draft's first proposals are accepted more
    // often with the ids one lower, and the run says how to pass them; with the right ids it says nothing.
    void layerIdProbeNamesTheShift_data()
    {
        QTest::addColumn<QString>("draft");
        QTest::newRow("eagle3") << "eagle3";
        QTest::newRow("dspark") << "dspark";
    }

    void layerIdProbeNamesTheShift()
    {
        QFETCH(QString, draft);
        AcceptanceJob job;
        job.draft = trained(draft.toStdString().c_str());
        job.target = trained("target");
        job.capture = trained("capture-shifted");
        job.options.k = 1;
        job.options.anchorCount = 16;
        const auto off = runAcceptance(job);
        QVERIFY(off.layerIdProbe.has_value());
        QCOMPARE(off.layerIdProbe->readings.size(), std::size_t{2});
        QCOMPARE(off.layerIdProbe->readings[1].shift, -1);
        QVERIFY2(off.layerIdProbe->advice.find("look one too high") != std::string::npos,
                 off.layerIdProbe->advice.c_str());
        QCOMPARE(off.layerIdProbe->suggestedLayerIds, (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
        QVERIFY(off.layerIdProbe->readings[1].accept0 > off.layerIdProbe->readings[0].accept0);

        job.captureOptions.layerIds = {0, 1, 2, 3, 4, 5, 6};
        const auto right = runAcceptance(job);
        QVERIFY(right.layerIdProbe.has_value());
        QCOMPARE(right.layerIdProbe->readings[1].shift, 1);
        QVERIFY2(right.layerIdProbe->advice.empty(), right.layerIdProbe->advice.c_str());

        // The trained capture holds no neighbours of the draft's ids: nothing to probe.
        job.capture = trained("capture-hs");
        job.captureOptions = {};
        QVERIFY(!runAcceptance(job).layerIdProbe.has_value());
    }

    void cliChecksAndConverts()
    {
        const auto vllm = trained("capture-vllm").string();
        const auto refused = test::runCli({"capture", "check", vllm});
        QCOMPARE(refused.exitCode, 2);
        QVERIFY2(refused.err.find("--layer-ids") != std::string::npos, refused.err.c_str());
        const auto checked =
            test::runCli({"capture", "check", vllm, "--draft", trained("eagle3").string(), "--target-model",
                          trained("target").string(), "--prompt-tokens", "64"});
        QCOMPARE(checked.exitCode, 0);
        QVERIFY2(
            checked.out.find("vLLM hidden-states connector folder") != std::string::npos &&
                checked.out.find("layer ids [1, 3, 5, 6] (the last is the target's final layer), assumed: "
                                 "the draft's") != std::string::npos,
            checked.out.c_str());
        const auto out = temp("cli.safetensors").string();
        const auto converted =
            test::runCli({"capture", "convert", trained("capture-hs-fp8").string(), "--out", out, "--json"});
        QCOMPARE(converted.exitCode, 0);
        QVERIFY2(converted.out.find("\"written\"") != std::string::npos, converted.out.c_str());
        QVERIFY(
            tensorBytes(out, "hidden_states") ==
            tensorBytes(trained("capture-fp8-dequantized") / "hidden_states.safetensors", "hidden_states"));
        const auto acceptance = test::runCli(
            {"acceptance", trained("eagle3").string(), "--hidden-states", vllm, "--prompt-tokens", "64",
             "--target-model", trained("target").string(), "--bf16-only", "--k", "2", "--anchors", "64"});
        QVERIFY2(acceptance.exitCode == 0, acceptance.err.c_str());
    }
};

QTEST_GUILESS_MAIN(TestCaptureReaders)
#include "tst_capturereaders.moc"
