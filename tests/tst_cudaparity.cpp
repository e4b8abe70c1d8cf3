// CPU vs CUDA backend (core/quant/quantbackend.h): packed words and scales bit-identical, error
// statistics equal (histograms and counts exactly, float64 sums to 1e-12 relative), the same first
// non-finite index. Tests that need a device QSKIP without one; backend selection and the CPU side of
// the statistics contract run everywhere.
#include "core/io/checkpoint.h"
#include "core/io/safetensorsfile.h"
#include "core/quant/analyzer.h"
#include "core/quant/errorstats.h"
#include "core/quant/quantbackend.h"
#include "core/quant/quanterror.h"
#include "quanttesthelpers.h"
#include "testsupport.h"

#include <QTest>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>

using namespace spark;
using namespace spark::test;

Q_DECLARE_METATYPE(spark::DType)

namespace {

constexpr const char* kNoDevice =
    "no usable CUDA device (or a build without CUDA): CPU/CUDA parity not checked";

/// The totals ErrorStatsAccumulator forms from per-row partials: rows reduced in row order.
struct Totals : kernels::ErrorTotals
{
    explicit Totals(const std::vector<kernels::RowErrorPartials>& rows)
    {
        for (const auto& p : rows) {
            add(p);
        }
    }
    double relErr() const { return std::sqrt(sumErr2) / std::sqrt(sumW2); }
    double relErrExactQs() const { return std::sqrt(sumErr2Exact) / std::sqrt(sumW2); }
};

bool closeRelative(double a, double b, double tolerance = 1e-12)
{
    return std::fabs(a - b) <= tolerance * std::fabs(b);
}

QString describe(double a, double b)
{
    return QStringLiteral("%1 vs %2").arg(a, 0, 'g', 17).arg(b, 0, 'g', 17);
}

struct StatsRun
{
    std::vector<kernels::RowErrorPartials> perRow;
    kernels::StatsHistograms hist;
};

StatsRun statsOf(const QuantBackend& backend, const WeightRows& rows, const QuantScheme& scheme,
                 unsigned histogramStride = 1)
{
    StatsRun run;
    run.perRow.resize(rows.rowCount);
    backend.errorStatsRows(rows, scheme, histogramStride, run.perRow.data(), run.hist, 2);
    return run;
}

/// Normal weights with a few outliers and exact zeros, encoded (RNE) in @p dtype.
std::vector<std::byte> randomWeights(DType dtype, std::size_t count, std::uint64_t seed, float sigma = 0.02f)
{
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.0f, sigma);
    std::uniform_int_distribution<int> pick(0, 999);
    std::vector<float> values(count);
    for (auto& v : values) {
        const int p = pick(rng);
        v = p < 5 ? normal(rng) * 40.0f : (p < 10 ? 0.0f : normal(rng));
    }
    return encode(dtype, values);
}

std::vector<std::byte> bitsOf16(std::size_t count, const std::function<std::uint16_t(std::size_t)>& bits)
{
    std::vector<std::uint16_t> raw(count);
    for (std::size_t i = 0; i < count; ++i) {
        raw[i] = bits(i);
    }
    return fromBits16(raw);
}

std::vector<std::byte> bitsOf32(std::size_t count, const std::function<std::uint32_t(std::size_t)>& bits)
{
    std::vector<std::byte> out(count * 4);
    for (std::size_t i = 0; i < count; ++i) {
        const std::uint32_t b = bits(i);
        std::memcpy(out.data() + 4 * i, &b, 4);
    }
    return out;
}

} // namespace

class TestCudaParity : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void initTestCase();
    void parseBackendNames();
    void backendSelection();
    void cpuBackendMatchesEngine();
    void golden_data();
    void golden();
    void randomSchemes_data();
    void randomSchemes();
    void edgeCases_data();
    void edgeCases();
    void nonFinite_data();
    void nonFinite();
    void streamingChunks();
    void analyzerOnBothBackends();

  private:
    /// Every comparison of one block: scales, packed words (fused and in two calls), statistics.
    void compareAll(const WeightRows& rows, const QuantScheme& scheme);

    std::unique_ptr<QuantBackend> m_cpu;
    std::unique_ptr<QuantBackend> m_cuda;
    std::shared_ptr<const SafetensorsFile> m_fixture;
};

void TestCudaParity::initTestCase()
{
    m_cpu = makeBackend(Backend::Cpu);
    QVERIFY(m_cpu->kind() == Backend::Cpu);
    if (cudaAvailable()) {
        m_cuda = makeBackend(Backend::Cuda);
        qInfo("CUDA device: %s", cudaDeviceDescription().c_str());
    } else {
        qInfo("CUDA: %s", cudaDeviceDescription().c_str());
    }
    m_fixture = SafetensorsFile::open(dataPath("golden/fixture/model.safetensors"));
}

void TestCudaParity::parseBackendNames()
{
    QVERIFY(parseBackend("auto") == Backend::Auto);
    QVERIFY(parseBackend("cpu") == Backend::Cpu);
    QVERIFY(parseBackend("cuda") == Backend::Cuda);
    QVERIFY(!parseBackend("gpu").has_value());
    QVERIFY(!parseBackend("").has_value());
    QCOMPARE(std::string(backendName(Backend::Cuda)), std::string("cuda"));
}

void TestCudaParity::backendSelection()
{
    std::string notice = "stale";
    const auto cpu = makeBackend(Backend::Cpu, &notice);
    QVERIFY(cpu->kind() == Backend::Cpu);
    QVERIFY(notice.empty());
    QVERIFY(cpu->description().starts_with("CPU ("));

    const auto automatic = makeBackend(Backend::Auto, &notice);
    if (cudaAvailable()) {
        QVERIFY(automatic->kind() == Backend::Cuda);
        QVERIFY(notice.empty());
        const auto cuda = makeBackend(Backend::Cuda, &notice);
        QVERIFY(cuda->kind() == Backend::Cuda);
        QVERIFY(cuda->description().starts_with("CUDA: "));
        return;
    }
    // No device: Auto falls back to the CPU with a one-line notice; Cuda is a clear error.
    QVERIFY(automatic->kind() == Backend::Cpu);
    QVERIFY(!notice.empty());
    QVERIFY(notice.find('\n') == std::string::npos);
    QVERIFY2(notice.find("using the CPU backend") != std::string::npos, notice.c_str());
    if (cudaCompiledIn()) {
        QCOMPARE(notice, std::string("no CUDA device: using the CPU backend"));
    }
    try {
        (void)makeBackend(Backend::Cuda, &notice);
        QFAIL("makeBackend(Cuda) without a device must throw");
    } catch (const std::runtime_error& e) {
        QVERIFY2(std::string(e.what()).starts_with("CUDA backend requested but "), e.what());
    }
}

// Runs everywhere: the CPU backend is the engine of rtn.h, and its statistics partials reduced in row
// order are exactly what ErrorStatsAccumulator reports (the contract the CUDA backend is held to).
void TestCudaParity::cpuBackendMatchesEngine()
{
    const std::size_t rows = 37;
    const std::size_t cols = 512;
    const auto data = randomWeights(DType::BF16, rows * cols, 7);
    const auto weights = rowsOf(DType::BF16, data, rows, cols);
    for (const QuantScheme scheme : {QuantScheme{4, 128}, QuantScheme{8, -1}, QuantScheme{4, 32}}) {
        const auto expected = quantize(weights, scheme, 2);
        const auto actual = m_cpu->quantize(weights, scheme, 3);
        QVERIFY(actual.scales == expected.scales);
        QVERIFY(actual.packed == expected.packed);

        const auto stats = computeErrorStats(weights, scheme, 2);
        const auto run = statsOf(*m_cpu, weights, scheme);
        const Totals totals(run.perRow);
        QVERIFY(stats.relErr.has_value());
        // Exactly: the same row partials reduced in the same order.
        QVERIFY2(totals.relErr() == *stats.relErr, qPrintable(describe(totals.relErr(), *stats.relErr)));
        QVERIFY(totals.relErrExactQs() == *stats.relErrExactQs);
        QVERIFY(totals.maxAbsErr == *stats.maxAbsErr);
        QCOMPARE(totals.epsScales, stats.epsScaleGroups);
        std::vector<std::uint64_t> qHist(stats.qHist.size());
        for (std::size_t i = 0; i < qHist.size(); ++i) {
            qHist[i] = run.hist.q[i];
        }
        QCOMPARE(qHist, stats.qHist);
        for (std::size_t i = 0; i < stats.weightHist.counts.size(); ++i) {
            QCOMPARE(static_cast<std::uint64_t>(run.hist.weight[i]), stats.weightHist.counts[i]);
        }
    }
}

void TestCudaParity::compareAll(const WeightRows& rows, const QuantScheme& scheme)
{
    // Fused pass vs the CPU.
    const auto cpu = m_cpu->quantize(rows, scheme, 2);
    const auto gpu = m_cuda->quantize(rows, scheme);
    QCOMPARE(gpu.scales.size(), cpu.scales.size());
    QVERIFY2(gpu.scales == cpu.scales, "scales differ");
    QCOMPARE(gpu.packed.size(), cpu.packed.size());
    for (std::size_t i = 0; i < cpu.packed.size(); ++i) {
        if (gpu.packed[i] != cpu.packed[i]) {
            QFAIL(qPrintable(QStringLiteral("packed word %1 (row %2): CUDA %3, CPU %4")
                                 .arg(i)
                                 .arg(i / scheme.packedWordsPerRow(rows.cols))
                                 .arg(static_cast<std::uint32_t>(gpu.packed[i]), 8, 16, QLatin1Char('0'))
                                 .arg(static_cast<std::uint32_t>(cpu.packed[i]), 8, 16, QLatin1Char('0'))));
        }
    }
    // The two-call path the exporter and verifier use.
    std::vector<std::byte> scales(cpu.scales.size());
    m_cuda->computeScales(rows, scheme, scales.data());
    QVERIFY2(scales == cpu.scales, "computeScales differs");
    std::vector<std::int32_t> packed(cpu.packed.size());
    m_cuda->quantizeRows(rows, scheme, cpu.scales.data(), packed.data());
    QVERIFY2(packed == cpu.packed, "quantizeRows differs");

    // Statistics.
    const auto a = statsOf(*m_cpu, rows, scheme);
    const auto b = statsOf(*m_cuda, rows, scheme);
    for (std::size_t r = 0; r < rows.rowCount; ++r) {
        const auto& p = a.perRow[r];
        const auto& q = b.perRow[r];
        QCOMPARE(q.maxAbsErr, p.maxAbsErr);
        QCOMPARE(q.dequantNonFinite, p.dequantNonFinite);
        QCOMPARE(q.epsScales, p.epsScales);
        QVERIFY2(closeRelative(q.sumW2, p.sumW2), qPrintable(describe(q.sumW2, p.sumW2)));
        QVERIFY2(closeRelative(q.sumAbsW, p.sumAbsW), qPrintable(describe(q.sumAbsW, p.sumAbsW)));
        QVERIFY2(closeRelative(q.sumErr2, p.sumErr2), qPrintable(describe(q.sumErr2, p.sumErr2)));
        QVERIFY2(closeRelative(q.sumAbsErr, p.sumAbsErr), qPrintable(describe(q.sumAbsErr, p.sumAbsErr)));
        QVERIFY2(closeRelative(q.sumErr2Exact, p.sumErr2Exact),
                 qPrintable(describe(q.sumErr2Exact, p.sumErr2Exact)));
    }
    QCOMPARE(b.hist.q, a.hist.q);
    QCOMPARE(b.hist.weight, a.hist.weight);
    QCOMPARE(b.hist.error, a.hist.error);
    QCOMPARE(b.hist.absErr, a.hist.absErr);
    const Totals ta(a.perRow);
    const Totals tb(b.perRow);
    QCOMPARE(tb.dequantNonFinite, ta.dequantNonFinite);
    QCOMPARE(tb.epsScales, ta.epsScales);
    if (ta.sumW2 > 0) {
        QVERIFY2(closeRelative(tb.relErr(), ta.relErr()), qPrintable(describe(tb.relErr(), ta.relErr())));
        QVERIFY2(closeRelative(tb.relErrExactQs(), ta.relErrExactQs()),
                 qPrintable(describe(tb.relErrExactQs(), ta.relErrExactQs())));
    }
}

// analyze as the CLI and the GUI run it (checkpoint read in row blocks, statistics accumulated across
// blocks) gives the same answer on either backend: exactly on the CPU whether or not the backend is
// named, and within the documented float64 tolerance on CUDA, with identical histograms.
void TestCudaParity::analyzerOnBothBackends()
{
    const auto checkpoint = Checkpoint::open(dataPath("golden/fixture"));
    AnalyzeOptions options;
    options.scheme = intSymmetricScheme(4, 128);
    options.chunkBytes = 4096; // several blocks per tensor
    const auto reference = analyzeCheckpoint(checkpoint, options);
    QVERIFY(!reference.empty());
    const auto check = [&](const QuantBackend& backend, bool exact) {
        options.backend = &backend;
        const auto results = analyzeCheckpoint(checkpoint, options);
        QCOMPARE(results.size(), reference.size());
        for (std::size_t i = 0; i < results.size(); ++i) {
            const auto& a = reference[i];
            const auto& b = results[i];
            QCOMPARE(b.name, a.name);
            QCOMPARE(b.error, a.error);
            QCOMPARE(b.stats.has_value(), a.stats.has_value());
            if (!a.stats) {
                continue;
            }
            QCOMPARE(b.stats->qHist, a.stats->qHist);
            QCOMPARE(b.stats->weightHist.counts, a.stats->weightHist.counts);
            QCOMPARE(b.stats->errorHist.counts, a.stats->errorHist.counts);
            QVERIFY(b.stats->maxAbsErr == a.stats->maxAbsErr);
            QVERIFY(b.stats->p95AbsErr == a.stats->p95AbsErr);
            QCOMPARE(b.stats->dequantNonFinite, a.stats->dequantNonFinite);
            QCOMPARE(b.stats->relErr.has_value(), a.stats->relErr.has_value());
            if (a.stats->relErr) {
                QVERIFY2(exact ? *b.stats->relErr == *a.stats->relErr
                               : closeRelative(*b.stats->relErr, *a.stats->relErr),
                         qPrintable(QString::fromStdString(a.name) + QStringLiteral(": ") +
                                    describe(*b.stats->relErr, *a.stats->relErr)));
            }
        }
    };
    check(*m_cpu, true);
    if (!m_cuda) {
        QSKIP(kNoDevice);
    }
    check(*m_cuda, false);
}

void TestCudaParity::golden_data()
{
    QTest::addColumn<QString>("tensor");
    QTest::addColumn<int>("bits");
    QTest::addColumn<int>("group");
    const auto fixture = SafetensorsFile::open(dataPath("golden/fixture/model.safetensors"));
    for (const auto& t : fixture->tensors()) {
        if (t.shape.size() != 2 || !isQuantizableFloat(t.dtype)) {
            continue;
        }
        for (const QuantScheme scheme : {QuantScheme{4, 128}, QuantScheme{4, 32}, QuantScheme{8, 64},
                                         QuantScheme{8, -1}, QuantScheme{4, -1}}) {
            if (scheme.dividesColumns(static_cast<std::size_t>(t.shape[1]))) {
                QTest::addRow("%s %s", t.name.c_str(), scheme.label().c_str())
                    << QString::fromStdString(t.name) << scheme.bits << scheme.groupSize;
            }
        }
    }
}

void TestCudaParity::golden()
{
    if (!m_cuda) {
        QSKIP(kNoDevice);
    }
    QFETCH(QString, tensor);
    QFETCH(int, bits);
    QFETCH(int, group);
    const auto name = tensor.toStdString();
    const auto* info = m_fixture->find(name);
    QVERIFY(info);
    const auto bytes = m_fixture->bytes(*info);
    const WeightRows rows{info->dtype,
                          bytes.data(),
                          static_cast<std::size_t>(info->shape[0]),
                          static_cast<std::size_t>(info->shape[1]),
                          0,
                          info->name};
    compareAll(rows, QuantScheme{bits, group});
}

void TestCudaParity::randomSchemes_data()
{
    QTest::addColumn<DType>("dtype");
    QTest::addColumn<int>("bits");
    QTest::addColumn<int>("group");
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("cols");
    const std::pair<DType, const char*> dtypes[] = {
        {DType::BF16, "bf16"}, {DType::F16, "f16"}, {DType::F32, "f32"}};
    for (const auto& [dtype, dname] : dtypes) {
        for (int bits : {4, 8}) {
            for (int group : {32, 64, 128, -1}) {
                // An odd row count, and (per channel) a column count that leaves a partial last word.
                const int cols = group < 0 ? 203 : 384;
                QTest::addRow("%s w%d g%d", dname, bits, group) << dtype << bits << group << 67 << cols;
            }
            QTest::addRow("%s w%d channel wide", dname, bits) << dtype << bits << -1 << 9 << 4096;
            QTest::addRow("%s w%d channel 128", dname, bits) << dtype << bits << -1 << 130 << 128;
            QTest::addRow("%s w%d g128 many rows", dname, bits) << dtype << bits << 128 << 1031 << 256;
        }
    }
}

void TestCudaParity::randomSchemes()
{
    if (!m_cuda) {
        QSKIP(kNoDevice);
    }
    QFETCH(DType, dtype);
    QFETCH(int, bits);
    QFETCH(int, group);
    QFETCH(int, rows);
    QFETCH(int, cols);
    const auto n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
    const auto data = randomWeights(dtype, n, 1000u + static_cast<unsigned>(bits * 1000 + group));
    compareAll(rowsOf(dtype, data, static_cast<std::size_t>(rows), static_cast<std::size_t>(cols)),
               QuantScheme{bits, group});
}

void TestCudaParity::edgeCases_data()
{
    QTest::addColumn<DType>("dtype");
    QTest::addColumn<QByteArray>("kind");
    const std::pair<DType, const char*> dtypes[] = {
        {DType::BF16, "bf16"}, {DType::F16, "f16"}, {DType::F32, "f32"}};
    for (const auto& [dtype, dname] : dtypes) {
        for (const char* kind : {"zeros", "subnormals", "dtype max", "zero groups", "ties", "tiny"}) {
            QTest::addRow("%s %s", dname, kind) << dtype << QByteArray(kind);
        }
    }
}

void TestCudaParity::edgeCases()
{
    if (!m_cuda) {
        QSKIP(kNoDevice);
    }
    QFETCH(DType, dtype);
    QFETCH(QByteArray, kind);
    const std::size_t rows = 24;
    const std::size_t cols = 256;
    const std::size_t n = rows * cols;
    std::mt19937 rng(11);
    std::vector<std::byte> data;
    const bool f32 = dtype == DType::F32;
    if (kind == "zeros") {
        data = std::vector<std::byte>(n * (f32 ? 4 : 2));
        // Negative zeros too.
        for (std::size_t i = 1; i < n; i += 3) {
            data[i * (f32 ? 4 : 2) + (f32 ? 3 : 1)] = std::byte{0x80};
        }
    } else if (kind == "subnormals") {
        // Random subnormal bit patterns of either sign.
        if (f32) {
            data = bitsOf32(n, [&](std::size_t) { return (rng() & 0x807FFFFFu); });
        } else if (dtype == DType::F16) {
            data = bitsOf16(n, [&](std::size_t) { return static_cast<std::uint16_t>(rng() & 0x83FFu); });
        } else {
            data = bitsOf16(n, [&](std::size_t) { return static_cast<std::uint16_t>(rng() & 0x807Fu); });
        }
    } else if (kind == "dtype max") {
        // ±max in some groups: -max gives q = -8 and the dequantized -8*s overflows (non-finite D).
        const std::uint32_t max32 = 0x7F7FFFFFu;
        const std::uint16_t max16 = dtype == DType::F16 ? 0x7BFFu : 0x7F7Fu;
        auto base = randomWeights(dtype, n, 5);
        for (std::size_t i = 0; i < n; i += 97) {
            const bool negative = (i / 97) % 2 == 1;
            if (f32) {
                const std::uint32_t b = max32 | (negative ? 0x80000000u : 0u);
                std::memcpy(base.data() + 4 * i, &b, 4);
            } else {
                const std::uint16_t b = static_cast<std::uint16_t>(max16 | (negative ? 0x8000u : 0u));
                std::memcpy(base.data() + 2 * i, &b, 2);
            }
        }
        data = std::move(base);
    } else if (kind == "zero groups") {
        data = randomWeights(dtype, n, 9);
        const std::size_t eb = f32 ? 4 : 2;
        for (std::size_t r = 0; r < rows; r += 2) {
            std::memset(data.data() + (r * cols + 32 * (r % 8)) * eb, 0, 32 * eb);
        }
    } else if (kind == "ties") {
        // Multiples of s/2 with absmax 7.5 s: quotients hit .5 ties that must round to even.
        std::vector<float> values(n);
        for (std::size_t i = 0; i < n; ++i) {
            const int k = static_cast<int>(i % 31) - 15; // -15 .. 15 halves
            values[i] = static_cast<float>(k) * 0.5f * (i % 64 < 32 ? 1.0f : 0.25f);
        }
        data = encode(dtype, values);
    } else {
        // Groups whose absmax / 7.5 rounds to zero in the dtype (scale becomes eps) next to normal ones.
        std::vector<float> values(n);
        std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
        for (std::size_t i = 0; i < n; ++i) {
            const float scale =
                (i / 32) % 3 == 0 ? (f32 ? 1e-44f : (dtype == DType::F16 ? 1e-7f : 1e-38f)) : 1.0f;
            values[i] = unit(rng) * scale;
        }
        data = encode(dtype, values);
    }
    for (const QuantScheme scheme :
         {QuantScheme{4, 32}, QuantScheme{4, 128}, QuantScheme{8, 64}, QuantScheme{4, -1}}) {
        compareAll(rowsOf(dtype, data, rows, cols), scheme);
        if (QTest::currentTestFailed()) {
            qWarning("failed for %s", scheme.label().c_str());
            return;
        }
    }
}

void TestCudaParity::nonFinite_data()
{
    QTest::addColumn<DType>("dtype");
    QTest::addColumn<int>("group");
    QTest::addColumn<QByteArray>("value");
    QTest::addColumn<int>("first");
    QTest::addColumn<int>("second");
    const std::pair<DType, const char*> dtypes[] = {
        {DType::BF16, "bf16"}, {DType::F16, "f16"}, {DType::F32, "f32"}};
    for (const auto& [dtype, dname] : dtypes) {
        for (int group : {128, -1}) {
            for (const char* value : {"nan", "+inf", "-inf"}) {
                QTest::addRow("%s g%d %s first element", dname, group, value)
                    << dtype << group << QByteArray(value) << 0 << 5000;
                // The second bad element sits earlier in its own group/row than the first in its row.
                QTest::addRow("%s g%d %s two rows", dname, group, value)
                    << dtype << group << QByteArray(value) << 3 * 256 + 200 << 9 * 256 + 1;
                QTest::addRow("%s g%d %s last", dname, group, value)
                    << dtype << group << QByteArray(value) << 40 * 256 - 1 << -1;
            }
        }
    }
}

void TestCudaParity::nonFinite()
{
    if (!m_cuda) {
        QSKIP(kNoDevice);
    }
    QFETCH(DType, dtype);
    QFETCH(int, group);
    QFETCH(QByteArray, value);
    QFETCH(int, first);
    QFETCH(int, second);
    const std::size_t rows = 40;
    const std::size_t cols = 256;
    auto data = randomWeights(dtype, rows * cols, 3);
    const bool f32 = dtype == DType::F32;
    const bool negative = value == "-inf";
    const bool nan = value == "nan";
    auto poison = [&](int index) {
        if (index < 0) {
            return;
        }
        const auto i = static_cast<std::size_t>(index);
        if (f32) {
            const std::uint32_t b = (nan ? 0x7FC00001u : 0x7F800000u) | (negative ? 0x80000000u : 0u);
            std::memcpy(data.data() + 4 * i, &b, 4);
        } else {
            const std::uint16_t inf = dtype == DType::F16 ? 0x7C00u : 0x7F80u;
            const std::uint16_t b =
                static_cast<std::uint16_t>((nan ? inf | 0x0001u : inf) | (negative ? 0x8000u : 0u));
            std::memcpy(data.data() + 2 * i, &b, 2);
        }
    };
    poison(first);
    poison(second);
    auto weights = rowsOf(dtype, data, rows, cols);
    weights.firstRow = 1000; // the index names the whole tensor, not the block
    const QuantScheme scheme{4, group};
    const std::uint64_t expected = 1000 * cols + static_cast<std::uint64_t>(first);

    auto errorOf = [&](const std::function<void()>& call) -> std::optional<QuantError> {
        try {
            call();
        } catch (const QuantError& e) {
            return e;
        }
        return std::nullopt;
    };
    std::vector<std::byte> scales(rows * scheme.groupsPerRow(cols) * scaleBytes(dtype));
    std::vector<std::int32_t> packed(rows * scheme.packedWordsPerRow(cols));
    std::vector<kernels::RowErrorPartials> perRow(rows);
    kernels::StatsHistograms hist;
    // Scales for quantizeRows: any finite values (the weights are what is checked).
    std::vector<std::byte> someScales =
        encode(dtype, std::vector<float>(rows * scheme.groupsPerRow(cols), 0.01f));
    const std::function<void(const QuantBackend&)> calls[] = {
        [&](const QuantBackend& b) { b.computeScales(weights, scheme, scales.data()); },
        [&](const QuantBackend& b) { b.quantizeRows(weights, scheme, someScales.data(), packed.data()); },
        [&](const QuantBackend& b) { b.quantizeBlock(weights, scheme, scales.data(), packed.data()); },
        [&](const QuantBackend& b) { b.errorStatsRows(weights, scheme, 1, perRow.data(), hist); },
    };
    for (const auto& call : calls) {
        const auto cpu = errorOf([&] { call(*m_cpu); });
        const auto gpu = errorOf([&] { call(*m_cuda); });
        QVERIFY(cpu.has_value());
        QVERIFY(gpu.has_value());
        QVERIFY(cpu->kind() == QuantErrorKind::NonFinite);
        QVERIFY(gpu->kind() == QuantErrorKind::NonFinite);
        QCOMPARE(*cpu->index(), expected);
        QCOMPARE(*gpu->index(), expected);
        QCOMPARE(std::string(gpu->what()), std::string(cpu->what()));
        QCOMPARE(gpu->tensor(), std::string("test.weight"));
    }
}

// A device memory budget of 1 MiB per stream splits a 4 MiB tensor into many chunks on three streams:
// the results (and the first bad index, in a late chunk) must not depend on it.
void TestCudaParity::streamingChunks()
{
    if (!m_cuda) {
        QSKIP(kNoDevice);
    }
    BackendOptions options;
    options.cudaDeviceMemory = std::size_t{3} << 20;
    options.cudaStreams = 3;
    const auto small = makeBackend(Backend::Cuda, nullptr, options);
    const std::size_t rows = 2048;
    const std::size_t cols = 1024;
    auto data = randomWeights(DType::BF16, rows * cols, 21);
    const auto weights = rowsOf(DType::BF16, data, rows, cols);
    for (const QuantScheme scheme : {QuantScheme{4, 128}, QuantScheme{8, -1}}) {
        const auto cpu = m_cpu->quantize(weights, scheme, 2);
        const auto gpu = small->quantize(weights, scheme);
        QVERIFY(gpu.scales == cpu.scales);
        QVERIFY(gpu.packed == cpu.packed);
        const auto a = statsOf(*m_cpu, weights, scheme);
        const auto b = statsOf(*small, weights, scheme);
        QCOMPARE(b.hist.absErr, a.hist.absErr);
        QVERIFY(closeRelative(Totals(b.perRow).relErr(), Totals(a.perRow).relErr()));
        // The histogram sample of a block that starts at tensor row 5, across the device chunks.
        auto block = weights;
        block.firstRow = 5;
        const auto sampledCpu = statsOf(*m_cpu, block, scheme, 4);
        const auto sampledGpu = statsOf(*small, block, scheme, 4);
        QCOMPARE(sampledGpu.hist.q, sampledCpu.hist.q);
        QCOMPARE(sampledGpu.hist.weight, sampledCpu.hist.weight);
        QCOMPARE(sampledGpu.hist.error, sampledCpu.hist.error);
        QCOMPARE(sampledGpu.hist.absErr, sampledCpu.hist.absErr);
        QCOMPARE(Totals(sampledGpu.perRow).dequantNonFinite, Totals(sampledCpu.perRow).dequantNonFinite);
        QVERIFY(sampledCpu.hist.absErr != a.hist.absErr);
    }
    const std::size_t bad = 1900 * cols + 77;
    const std::uint16_t nan = 0x7FC1;
    std::memcpy(data.data() + 2 * bad, &nan, 2);
    std::memcpy(data.data() + 2 * (2000 * cols), &nan, 2);
    try {
        (void)small->quantize(rowsOf(DType::BF16, data, rows, cols), QuantScheme{4, 128});
        QFAIL("NaN not reported");
    } catch (const QuantError& e) {
        QCOMPARE(*e.index(), static_cast<std::uint64_t>(bad));
    }
}

QTEST_GUILESS_MAIN(TestCudaParity)
#include "tst_cudaparity.moc"
