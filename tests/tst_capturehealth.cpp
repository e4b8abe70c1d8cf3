// Captures with the defects of the wild, made from the trained capture by overwriting a few BF16 values:
// every check fires on its defect, names the file, sample and layer, and stays silent on the clean captures;
// `capture check` exits 1 on an error, `acceptance` refuses such a capture and warns of the lesser defects.
#include "capturepatcher.h"
#include "core/forward/capturehealth.h"
#include "testsupport.h"

#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>

using namespace spark;
using namespace spark::test;

namespace {

constexpr std::uint16_t kBf16NaN = 0x7FC0;
constexpr std::uint16_t kBf16One = 0x3F80;

std::filesystem::path trainedCapture()
{
    return test::dataPath("trained") / "capture" / "hidden_states.safetensors";
}

std::filesystem::path copyOf(const QTemporaryDir& dir, const char* name)
{
    const auto folder = std::filesystem::path(dir.path().toStdString()) / name;
    std::filesystem::create_directories(folder);
    const auto copy = folder / "hidden_states.safetensors";
    std::filesystem::copy_file(trainedCapture(), copy);
    std::filesystem::permissions(copy, std::filesystem::perms::owner_write,
                                 std::filesystem::perm_options::add);
    return copy;
}

} // namespace

class TestCaptureHealth : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::filesystem::path m_defective, m_warnings;

  private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        // Errors and warnings: sample 2's last layer all zero (layer id 6), a NaN in sample 5 (layer 1, token
        // 10), three zero rows in sample 7 (layer 3), one constant row in sample 9 (layer 5).
        m_defective = copyOf(m_dir, "defective");
        {
            CapturePatcher p(m_defective);
            for (std::int64_t t = 0; t < p.length(2); ++t) {
                p.setRow(2, t, 3, kBf16Zero);
            }
            p.at(5, 10, 0, 7) = kBf16NaN;
            for (std::int64_t t = 20; t < 23; ++t) {
                p.setRow(7, t, 1, kBf16Zero);
            }
            p.setRow(9, 30, 2, kBf16One);
        }
        // Warnings only.
        m_warnings = copyOf(m_dir, "warnings");
        CapturePatcher w(m_warnings);
        for (std::int64_t t = 20; t < 23; ++t) {
            w.setRow(7, t, 1, kBf16Zero);
        }
    }

    void eachCheckFiresOnItsDefect()
    {
        const auto capture = HiddenStateCapture::open(m_defective);
        const auto health = checkCaptureHealth(capture);
        QVERIFY(health.hasErrors());
        QCOMPARE(health.samples, std::int64_t{64});
        struct Expected
        {
            std::int64_t sample;
            const char* check;
            const char* field;
            CaptureFinding::Severity severity;
            const char* says;
        };
        const Expected expected[] = {
            {2, "all-zero", "hidden_states[layer 6]", CaptureFinding::Severity::Error, "vllm#46301"},
            {5, "non-finite", "hidden_states[layer 1]", CaptureFinding::Severity::Error,
             "1 of 256 rows hold NaN or Inf (first at token 10)"},
            {7, "zero-rows", "hidden_states[layer 3]", CaptureFinding::Severity::Warning,
             "3 of 256 rows are all zero (first at token 20)"},
            {9, "constant-rows", "hidden_states[layer 5]", CaptureFinding::Severity::Warning,
             "1 of 256 rows hold one value repeated (first at token 30)"},
        };
        QCOMPARE(health.findings.size(), std::size(expected));
        for (std::size_t i = 0; i < std::size(expected); ++i) {
            const auto& f = health.findings[i];
            QCOMPARE(f.sample, expected[i].sample);
            QCOMPARE(f.check, std::string(expected[i].check));
            QCOMPARE(f.field, std::string(expected[i].field));
            QVERIFY(f.severity == expected[i].severity);
            QVERIFY2(f.message.find(expected[i].says) != std::string::npos, f.message.c_str());
            QCOMPARE(std::filesystem::path(f.file), m_defective);
        }
    }

    void cleanCapturesAreSilent()
    {
        for (const char* path :
             {"capture", "capture-hs", "capture-hs-fp8", "capture-fp8-dequantized", "capture-shifted"}) {
            const auto capture = HiddenStateCapture::open(test::dataPath("trained") / path);
            const auto health = checkCaptureHealth(capture);
            QVERIFY2(health.findings.empty(), path);
            QCOMPARE(health.samples, capture.sampleCount());
        }
    }

    // The last layer after the target's final norm (as SpecForge and DeepSpec store it): one warning for
    // the capture as a whole, naming the layer; the same sequences before the norm (capture-shifted's last
    // stream, and the trained capture) stay silent above.
    void postNormLastLayerIsNamed()
    {
        const auto capture = HiddenStateCapture::open(test::dataPath("trained") / "capture-postnorm");
        const auto health = checkCaptureHealth(capture);
        QCOMPARE(health.findings.size(), std::size_t{1});
        const auto& f = health.findings.front();
        QCOMPARE(f.check, std::string("post-norm"));
        QCOMPARE(f.sample, std::int64_t{-1});
        QCOMPARE(f.field, std::string("hidden_states[layer 6]"));
        QVERIFY(f.severity == CaptureFinding::Severity::Warning);
        QVERIFY2(findingLine(f).find("warning: " + capture.info().path.string() +
                                     ": hidden_states[layer 6]: "
                                     "the last layer looks taken after the final norm") == 0,
                 findingLine(f).c_str());
    }

    void cliCaptureCheck()
    {
        const auto bad = test::runCli({"capture", "check", m_defective.parent_path().string()});
        QCOMPARE(bad.exitCode, 1);
        QVERIFY2(bad.out.find("error: " + m_defective.string() + ": sample 2, hidden_states[layer 6]") !=
                     std::string::npos,
                 bad.out.c_str());
        const auto clean =
            test::runCli({"capture", "check", (test::dataPath("trained") / "capture-hs").string()});
        QCOMPARE(clean.exitCode, 0);
        QVERIFY(clean.out.find("8 samples") != std::string::npos);
        QCOMPARE(test::runCli({"capture", "repair", m_defective.string()}).exitCode, 2);
    }

    void acceptanceRefusesErrorsAndWarnsOfTheRest()
    {
        // Every anchor: a run checks the samples it reads, and these read them all.
        const auto trained = test::dataPath("trained");
        const auto run = [&](const std::filesystem::path& capture) {
            return test::runCli({"acceptance", (trained / "dspark").string(), "--hidden-states",
                                 capture.string(), "--target", (trained / "target").string(), "--anchors",
                                 "all", "--k", "1", "--bf16-only"});
        };
        const auto refused = run(m_defective);
        QCOMPARE(refused.exitCode, 2);
        QVERIFY2(refused.err.find(m_defective.string() + ": sample 2: hidden_states[layer 6]") !=
                     std::string::npos,
                 refused.err.c_str());
        const auto warned = run(m_warnings);
        QCOMPARE(warned.exitCode, 0);
        QVERIFY2(warned.err.find("warning: " + m_warnings.string() + ": sample 7, hidden_states[layer 3]") !=
                     std::string::npos,
                 warned.err.c_str());
    }

    void nearZeroAcceptanceIsExplained()
    {
        QVERIFY(lowAcceptanceHint(0.3).empty());
        QVERIFY(lowAcceptanceHint(0.05).empty());
        QVERIFY(lowAcceptanceHint(0.01).find("layer ids") != std::string::npos);
        // Every hidden state with its sign flipped is a capture the draft was not trained on: the trained
        // Qwen3 DFlash then accepts under 1 % at position 0 (the states stay finite and non-zero, so the
        // capture checks pass and only the note can say what is wrong).
        QTemporaryDir dir;
        const auto flipped = copyOf(dir, "flipped");
        {
            CapturePatcher p(flipped);
            for (auto& v : p.values()) {
                v ^= 0x8000;
            }
        }
        const auto trained = test::dataPath("trained");
        const auto r = test::runCli({"acceptance", (trained / "qwen3-dflash").string(), "--hidden-states",
                                     flipped.string(), "--target", (trained / "target").string(), "--anchors",
                                     "256", "--bf16-only", "--k", "1"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.err.find("note: the BF16 draft accepts almost nothing") != std::string::npos,
                 r.err.c_str());
    }
};

QTEST_GUILESS_MAIN(TestCaptureHealth)
#include "tst_capturehealth.moc"
