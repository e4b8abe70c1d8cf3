// The forward of each trained draft against the PyTorch reference's logits stored in tests/data/golden-logits
// (tools/reference/golden_logits.py): a few anchors of the trained capture, every row within 1e-3 of the
// reference's largest |logit| and the same argmax except at near-ties. Small enough to run under every
// emulated aarch64 CPU model (packaging/test-aarch64.sh), where torch cannot run: the GEMMs, the attention
// kernel and the W/BF16 decoding of each SIMD target are held against numbers the product did not make.
// tools/reference/check_product.py makes the same comparison natively on many more anchors.
#include "core/forward/acceptancejob.h"
#include "core/io/safetensorsfile.h"
#include "testsupport.h"

#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <cstring>

using namespace spark;

namespace {

constexpr double kTolerance = 1e-3; // relative to the row's largest |logit|
constexpr double kNearTie = 1e-4;   // top-2 margin under which the argmax may differ

template <typename T> std::vector<T> tensorValues(const SafetensorsFile& file, const char* name)
{
    const TensorInfo* info = file.find(name);
    if (info == nullptr) {
        throw std::runtime_error(file.path().string() + ": no tensor " + name);
    }
    const auto bytes = file.bytes(*info);
    std::vector<T> values(bytes.size() / sizeof(T));
    std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
    return values;
}

} // namespace

class TestForwardGolden : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void logitsMatchTheReference_data()
    {
        QTest::addColumn<QString>("family");
        for (const char* family : {"eagle3", "qwen3-dflash", "dspark"}) {
            QTest::newRow(family) << family;
        }
    }

    void logitsMatchTheReference()
    {
        QFETCH(QString, family);
        const auto golden =
            SafetensorsFile::open(test::dataPath("golden-logits") / (family.toStdString() + ".safetensors"));
        const int k = std::stoi(golden->header().metadata.at("k"));
        const auto samples = tensorValues<std::int64_t>(*golden, "anchor_sample");
        const auto positions = tensorValues<std::int64_t>(*golden, "anchor_position");
        const auto expected = tensorValues<float>(*golden, "logits");
        QVERIFY(!samples.empty() && samples.size() == positions.size());

        AcceptanceJob job;
        job.draft = test::dataPath("trained") / family.toStdString();
        job.capture = test::dataPath("trained") / "capture";
        job.target = test::dataPath("trained") / "target";
        const auto capture = openJobCapture(job);
        const auto drafts = openAcceptanceDrafts(job, capture);
        std::vector<Anchor> anchors;
        for (std::size_t i = 0; i < samples.size(); ++i) {
            anchors.push_back({samples[i], positions[i]});
        }
        QTemporaryDir dir;
        const auto dumped = std::filesystem::path(dir.path().toStdString()) / "logits.safetensors";
        dumpLogits(dumped, *drafts.base, nullptr, capture, anchors, k);
        const auto mine = tensorValues<float>(*SafetensorsFile::open(dumped), "logits_base");
        QCOMPARE(mine.size(), expected.size());

        const std::size_t rows = samples.size() * static_cast<std::size_t>(k);
        const std::size_t vocab = expected.size() / rows;
        double worst = 0;
        int ties = 0;
        for (std::size_t r = 0; r < rows; ++r) {
            const float* want = expected.data() + r * vocab;
            const float* got = mine.data() + r * vocab;
            double scale = 0, error = 0;
            std::size_t top = 0, second = 1, mineTop = 0;
            for (std::size_t v = 0; v < vocab; ++v) {
                scale = std::max(scale, std::abs(static_cast<double>(want[v])));
                error = std::max(error, std::abs(static_cast<double>(got[v]) - want[v]));
                mineTop = got[v] > got[mineTop] ? v : mineTop;
                if (want[v] > want[top]) {
                    second = top;
                    top = v;
                } else if (v != top && want[v] > want[second]) {
                    second = v;
                }
            }
            worst = std::max(worst, error / scale);
            const bool tie = static_cast<double>(want[top]) - want[second] < kNearTie * scale;
            ties += tie ? 1 : 0;
            QVERIFY2(error <= kTolerance * scale,
                     qPrintable(QStringLiteral("row %1 (anchor %2, step %3): relative error %4")
                                    .arg(r)
                                    .arg(r / static_cast<std::size_t>(k))
                                    .arg(r % static_cast<std::size_t>(k))
                                    .arg(error / scale)));
            QVERIFY2(
                tie || mineTop == top,
                qPrintable(QStringLiteral("row %1: argmax %2, reference %3").arg(r).arg(mineTop).arg(top)));
        }
        qInfo("%s: %zu rows, largest relative error %.2e, %d near-ties", qPrintable(family), rows, worst,
              ties);
    }
};

QTEST_GUILESS_MAIN(TestForwardGolden)
#include "tst_forwardgolden.moc"
