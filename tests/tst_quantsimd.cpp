// The Highway kernels against the scalar reference on random tensors of every scheme and dtype
// (subnormals, signed zeros, ±max, all-zero groups), NaN/Inf reporting, and thread-count
// independence of the statistics.
#include "core/io/floatconv.h"
#include "core/quant/dequantize.h"
#include "core/quant/dequantkernel.h"
#include "core/quant/errorstats.h"
#include "core/quant/packing.h"
#include "core/quant/powtable.h"
#include "core/quant/quantbackend.h"
#include "core/quant/quanterror.h"
#include "core/quant/roundingkernels.h"
#include "core/quant/rtn.h"
#include "core/quant/rtnkernels.h"
#include "core/quant/rtnreference.h"
#include "core/quant/rtnscalar.h"
#include "core/quant/schemecodec.h"
#include "core/quant/weightscheme.h"
#include "quanttesthelpers.h"

#include <QTest>
#include <bit>
#include <cmath>
#include <cstring>
#include <hwy/targets.h>
#include <random>
#include <sstream>

using namespace spark;
using namespace spark::test;

Q_DECLARE_METATYPE(spark::DType)

namespace {

/// Raw element bits: mostly ordinary weights, plus subnormals, ±0, ±max finite and all-zero groups.
std::vector<std::byte> randomTensor(DType dtype, std::size_t rows, std::size_t cols, std::uint32_t seed)
{
    std::mt19937 rng(seed);
    const bool f32 = dtype == DType::F32;
    const int mantBits = f32 ? 23 : (dtype == DType::F16 ? 10 : 7);
    const int expBits = dtype == DType::F16 ? 5 : 8;
    const std::uint32_t expMax = (1u << expBits) - 2; // largest finite exponent field
    const std::uint32_t bias = (1u << (expBits - 1)) - 1;
    std::vector<std::byte> out(rows * cols * (f32 ? 4 : 2));
    for (std::size_t i = 0; i < rows * cols; ++i) {
        const std::uint32_t pick = rng() % 100;
        const std::uint32_t sign = rng() & 1u;
        std::uint32_t exponent;
        std::uint32_t mantissa = rng() & ((1u << mantBits) - 1u);
        if (pick < 5) {
            exponent = 0; // subnormal or zero
        } else if (pick < 7) {
            exponent = expMax; // near ±max
            mantissa = pick == 5 ? (1u << mantBits) - 1u : mantissa;
        } else if (pick < 9) {
            exponent = 0;
            mantissa = 0;
        } else {
            exponent = bias - 12 + rng() % 12; // about 2^-12 .. 2^-1
        }
        // Whole groups of zeros now and then (eps scale path).
        if ((i / 32) % 53 == 7) {
            exponent = 0;
            mantissa = 0;
        }
        const std::uint32_t bits = (sign << (expBits + mantBits)) | (exponent << mantBits) | mantissa;
        if (f32) {
            std::memcpy(out.data() + 4 * i, &bits, 4);
        } else {
            const auto b16 = static_cast<std::uint16_t>(bits);
            std::memcpy(out.data() + 2 * i, &b16, 2);
        }
    }
    return out;
}

/// Rounding ties of NVFP4's FP4 cast: the absmax 1.3125 makes the global scale 2^11, a group whose absmax
/// is 6·2^j then has the exact effective scale 2^j, and its other weights t·2^j sit on the e2m1 rounding
/// boundaries t (random data almost never hits them exactly). Rows 2 and 3 are all +0 and all -0.
std::vector<std::byte> nvfp4TiesTensor(DType dtype, std::size_t rows, std::size_t cols)
{
    const float ties[] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f};
    std::vector<float> values(rows * cols, 0.0f);
    for (std::size_t i = 0; i < values.size(); ++i) {
        const std::size_t group = i / 16;
        const std::size_t k = i % 16;
        const float unit = std::ldexp(1.0f, -3 - static_cast<int>(group % 8));
        const float sign = (i / 7) % 2 ? -1.0f : 1.0f;
        values[i] = k == 0 ? 6.0f * unit : sign * ties[(i + group) % 7] * unit;
    }
    values[5] = 1.3125f; // the global absmax, in group 0
    // A row of zeros and one of negative zeros: zero scales (eps), 0/0 zero points, signed zero codes.
    std::fill(values.begin() + static_cast<std::ptrdiff_t>(2 * cols),
              values.begin() + static_cast<std::ptrdiff_t>(3 * cols), 0.0f);
    std::fill(values.begin() + static_cast<std::ptrdiff_t>(3 * cols),
              values.begin() + static_cast<std::ptrdiff_t>(4 * cols), -0.0f);
    return encode(dtype, values);
}

void addSchemes(bool withNonDivisible)
{
    QTest::addColumn<spark::DType>("dtype");
    QTest::addColumn<int>("bits");
    QTest::addColumn<int>("group");
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("cols");
    for (const auto dtype : {DType::BF16, DType::F16, DType::F32}) {
        for (const int bits : {4, 8}) {
            for (const int group : {32, 64, 128, -1}) {
                QTest::addRow("%s w%d g%d", dtypeName(dtype).data(), bits, group)
                    << dtype << bits << group << 37 << 384;
            }
            if (withNonDivisible) {
                // Per channel with ragged widths: SIMD tails and padded last words.
                QTest::addRow("%s w%d channel 389", dtypeName(dtype).data(), bits)
                    << dtype << bits << -1 << 9 << 389;
                QTest::addRow("%s w%d channel 5", dtypeName(dtype).data(), bits)
                    << dtype << bits << -1 << 3 << 5;
            }
        }
    }
}

} // namespace

class TestQuantSimd : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void simdMatchesReference_data() { addSchemes(true); }
    void simdMatchesReference();
    void statsMatchReference_data() { addSchemes(true); }
    void statsMatchReference();
    void nonFinite_data();
    void nonFinite();
    void statsThreadIndependent();
    void codecsMatchScalarTrace_data();
    void codecsMatchScalarTrace();
    void powTermsMatchTable();
    void loadFiniteWeightsExact();
    void candidateSumsMatchScalar_data();
    void candidateSumsMatchScalar();
    void decodeMatchesScalar();
};

void TestQuantSimd::decodeMatchesScalar()
{
    // Codes over the whole int8 range, scales of every magnitude (products that overflow F16 and BF16,
    // subnormal ones, a NaN scale of a damaged checkpoint), group widths that divide the row and that don't.
    const std::size_t cols = 200;
    std::mt19937 rng(17);
    std::uniform_int_distribution<int> code(-128, 127);
    std::vector<std::int8_t> q(cols);
    for (auto& v : q) {
        v = static_cast<std::int8_t>(code(rng));
    }
    for (const auto dtype : {DType::BF16, DType::F16, DType::F32}) {
        for (const std::size_t width : {std::size_t{128}, std::size_t{32}, std::size_t{7}, cols}) {
            const std::size_t groups = (cols + width - 1) / width;
            std::vector<float> scaleValues(groups);
            std::uniform_real_distribution<float> exponent(-30.0f, 30.0f);
            for (auto& s : scaleValues) {
                s = std::exp2(exponent(rng));
            }
            scaleValues[0] = std::numeric_limits<float>::quiet_NaN();
            const auto scales = encode(dtype, scaleValues);
            for (const auto target : hwy::SupportedAndGeneratedTargets()) {
                hwy::SetSupportedTargetsForTest(target);
                hwy::SupportedTargets();
                std::vector<float> out(cols);
                kernels::dequantizeIntRow(q.data(), scales.data(), dtype, cols, width, out.data());
                for (std::size_t k = 0; k < cols; ++k) {
                    const float expected =
                        rtn::dequantizeValue(dtype, q[k], rtn::loadScale(dtype, scales.data(), k / width));
                    QVERIFY2(std::bit_cast<std::uint32_t>(out[k]) == std::bit_cast<std::uint32_t>(expected) ||
                                 (std::isnan(out[k]) && std::isnan(expected)),
                             qPrintable(QStringLiteral("%1 %2, width %3, column %4: %5, expected %6")
                                            .arg(QString::fromUtf8(hwy::TargetName(target)))
                                            .arg(QString::fromUtf8(dtypeName(dtype).data(),
                                                                   static_cast<int>(dtypeName(dtype).size())))
                                            .arg(width)
                                            .arg(k)
                                            .arg(static_cast<double>(out[k]))
                                            .arg(static_cast<double>(expected))));
                }
            }
            hwy::SetSupportedTargetsForTest(0);
        }
    }
}

void TestQuantSimd::simdMatchesReference()
{
    QFETCH(spark::DType, dtype);
    QFETCH(int, bits);
    QFETCH(int, group);
    QFETCH(int, rows);
    QFETCH(int, cols);
    const QuantScheme scheme{bits, group};
    for (std::uint32_t seed = 1; seed <= 3; ++seed) {
        const auto data = randomTensor(dtype, rows, cols, seed * 7919u + static_cast<std::uint32_t>(bits));
        const auto weights = rowsOf(dtype, data, rows, cols);
        std::vector<std::byte> refScales(rows * scheme.groupsPerRow(cols) * scaleBytes(dtype));
        std::vector<std::int32_t> refPacked(rows * scheme.packedWordsPerRow(cols));
        reference::computeScales(weights, scheme, refScales.data());
        reference::quantizeRows(weights, scheme, refScales.data(), refPacked.data());
        // Every compiled target this CPU runs (e.g. AVX3, AVX2, SSE4, SSSE3), not only the best one,
        // so that narrower vectors (NEON has 4 float lanes) are covered too.
        for (const auto target : hwy::SupportedAndGeneratedTargets()) {
            hwy::SetSupportedTargetsForTest(target);
            hwy::SupportedTargets(); // re-chooses the dispatch target under the mock
            for (const unsigned threads : {1u, 3u}) {
                const auto simd = quantize(weights, scheme, threads);
                QVERIFY2(simd.scales == refScales, hwy::TargetName(target));
                QVERIFY2(simd.packed == refPacked, hwy::TargetName(target));
            }
            const auto stats = computeErrorStats(weights, scheme, 1);
            QVERIFY(stats.qHist.size() == std::size_t(1 << bits));
        }
        hwy::SetSupportedTargetsForTest(0);
    }
}

void TestQuantSimd::statsMatchReference()
{
    QFETCH(spark::DType, dtype);
    QFETCH(int, bits);
    QFETCH(int, group);
    QFETCH(int, rows);
    QFETCH(int, cols);
    const QuantScheme scheme{bits, group};
    const auto data = randomTensor(dtype, rows, cols, 4242u);
    const auto weights = rowsOf(dtype, data, rows, cols);
    const auto n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);

    // Reference: q from the scalar path, D from dequantizeRows, sums in float64 one by one.
    std::vector<std::byte> scales(rows * scheme.groupsPerRow(cols) * scaleBytes(dtype));
    reference::computeScales(weights, scheme, scales.data());
    std::vector<std::int8_t> q(n);
    reference::quantizeValues(weights, scheme, scales.data(), q.data());
    const auto quantized = quantize(weights, scheme);
    std::vector<std::byte> dequant(n * scaleBytes(dtype));
    dequantizeRows(dtype, quantized.packed.data(), quantized.scales.data(), rows, cols, scheme,
                   dequant.data());
    std::vector<std::uint64_t> qHist(static_cast<std::size_t>(1 << bits), 0);
    double sumW2 = 0, sumErr2 = 0, maxErr = 0;
    std::uint64_t nonFinite = 0;
    for (std::size_t i = 0; i < n; ++i) {
        ++qHist[static_cast<std::size_t>(q[i] - scheme.qMin())];
        const double w = rtn::loadWeight(dtype, data.data(), i);
        const double d = rtn::loadWeight(dtype, dequant.data(), i);
        sumW2 += w * w;
        if (!std::isfinite(d)) {
            ++nonFinite;
            continue;
        }
        sumErr2 += (w - d) * (w - d);
        maxErr = std::max(maxErr, std::fabs(w - d));
    }
    // Exact plot histograms: the kernel's float bin steps, element by element (quotient w/s, error
    // (w - D)/s with 1/s precomputed), checked on every compiled target.
    std::vector<std::uint64_t> weightHist(64, 0), errorHist(64, 0);
    {
        const std::size_t width = scheme.groupWidth(cols);
        const std::size_t groups = scheme.groupsPerRow(cols);
        const float range = static_cast<float>(scheme.packOffset());
        const float wInv = 64.0f / (2 * range);
        const float eInv = 64.0f / (2 * 0.64f);
        const auto bin = [](float t) { return static_cast<std::size_t>(std::min(std::max(t, 0.0f), 63.0f)); };
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t r = i / static_cast<std::size_t>(cols);
            const std::size_t g = (i % static_cast<std::size_t>(cols)) / width;
            const float s = rtn::loadScale(dtype, scales.data(), r * groups + g);
            const float w = rtn::loadWeight(dtype, data.data(), i);
            const float d = rtn::loadWeight(dtype, dequant.data(), i);
            ++weightHist[bin((w / s + range) * wInv)];
            if (std::isfinite(d)) {
                ++errorHist[bin(((w - d) * (1.0f / s) + 0.64f) * eInv)];
            }
        }
    }
    for (const auto target : hwy::SupportedAndGeneratedTargets()) {
        hwy::SetSupportedTargetsForTest(target);
        hwy::SupportedTargets();
        const auto perTarget = computeErrorStats(weights, scheme, 2);
        QVERIFY2(perTarget.qHist == qHist, hwy::TargetName(target));
        QVERIFY2(perTarget.weightHist.counts == weightHist, hwy::TargetName(target));
        QVERIFY2(perTarget.errorHist.counts == errorHist, hwy::TargetName(target));
        QVERIFY2(perTarget.dequantNonFinite == nonFinite, hwy::TargetName(target));
    }
    hwy::SetSupportedTargetsForTest(0);
    const auto stats = computeErrorStats(weights, scheme, 2);
    QCOMPARE(stats.qHist, qHist);
    QCOMPARE(stats.dequantNonFinite, nonFinite);
    std::uint64_t weightCount = 0, errorCount = 0;
    for (auto c : stats.weightHist.counts) {
        weightCount += c;
    }
    for (auto c : stats.errorHist.counts) {
        errorCount += c;
    }
    QCOMPARE(weightCount, std::uint64_t{n});
    QCOMPARE(errorCount, std::uint64_t{n - nonFinite});
    if (nonFinite == 0) {
        QVERIFY(stats.relErr.has_value());
        const double relErr = std::sqrt(sumErr2) / std::sqrt(sumW2);
        QVERIFY2(
            std::fabs(*stats.relErr - relErr) <= 1e-12 * relErr,
            qPrintable(QStringLiteral("%1 vs %2").arg(*stats.relErr, 0, 'g', 17).arg(relErr, 0, 'g', 17)));
        QCOMPARE(*stats.maxAbsErr, maxErr);
    } else {
        QVERIFY(!stats.relErr.has_value());
        QVERIFY(stats.relErrExactQs.has_value());
    }
}

void TestQuantSimd::nonFinite_data()
{
    QTest::addColumn<spark::DType>("dtype");
    QTest::addColumn<int>("group");
    QTest::addColumn<float>("bad");
    QTest::addColumn<qulonglong>("first");
    QTest::addColumn<qulonglong>("second");
    const auto nan = std::numeric_limits<float>::quiet_NaN();
    const auto inf = std::numeric_limits<float>::infinity();
    // 64 rows of 1024 columns: several row chunks, so the first bad index must win across threads.
    QTest::addRow("bf16 nan") << DType::BF16 << 128 << nan << 40ull * 1024 + 3 << 50ull * 1024;
    QTest::addRow("bf16 -inf late") << DType::BF16 << 32 << -inf << 63ull * 1024 + 1023
                                    << 63ull * 1024 + 1023;
    QTest::addRow("f16 inf") << DType::F16 << 64 << inf << 5ull << 60ull * 1024 + 7;
    QTest::addRow("f32 nan channel") << DType::F32 << -1 << nan << 17ull * 1024 + 500 << 17ull * 1024 + 501;
}

void TestQuantSimd::nonFinite()
{
    QFETCH(spark::DType, dtype);
    QFETCH(int, group);
    QFETCH(float, bad);
    QFETCH(qulonglong, first);
    QFETCH(qulonglong, second);
    const std::size_t rows = 64;
    const std::size_t cols = 1024;
    std::vector<float> values(rows * cols, 0.25f);
    values[second] = bad;
    values[first] = bad;
    const auto data = encode(dtype, values);
    auto weights = rowsOf(dtype, data, rows, cols);
    weights.firstRow = 104; // a streamed block (aligned for zero points): indices are global
    const auto expected = first + 104 * cols;
    const QuantScheme scheme{4, group};
    std::vector<std::byte> scales(rows * scheme.groupsPerRow(cols) * scaleBytes(dtype));
    std::vector<std::int32_t> packed(rows * scheme.packedWordsPerRow(cols));
    const auto check = [&](auto&& call) {
        try {
            call();
            QFAIL("NaN/Inf must be rejected");
        } catch (const QuantError& e) {
            QCOMPARE(e.kind(), QuantErrorKind::NonFinite);
            QCOMPARE(e.tensor(), std::string("test.weight"));
            QVERIFY(e.index().has_value());
            QCOMPARE(*e.index(), std::uint64_t{expected});
            QVERIFY(std::string(e.what()).find(std::to_string(expected)) != std::string::npos);
        }
    };
    check([&] { computeScales(weights, scheme, scales.data(), 4); });
    for (const char* name : {"W4A16_ASYM", "FP8_DYNAMIC", "NVFP4A16"}) {
        std::vector<std::vector<std::byte>> parts;
        const auto& codec = *findWeightScheme(name)->codec();
        check([&] { codec.encode(weights, {}, parts, cpuBackend(), 4); });
        check([&] { codec.encodeTensor(weights, {}, 1, parts, cpuBackend(), 4); });
    }
    check([&] { quantizeRows(weights, scheme, scales.data(), packed.data(), 4); });
    check([&] { computeErrorStats(weights, scheme, 4); });
    check([&] { reference::computeScales(weights, scheme, scales.data()); });
}

void TestQuantSimd::statsThreadIndependent()
{
    const std::size_t rows = 300;
    const std::size_t cols = 2048;
    // Ordinary weights (no ±max, whose dequant overflows and voids rel_err) with a few outliers.
    std::mt19937 rng(99u);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    std::vector<float> values(rows * cols);
    for (std::size_t i = 0; i < values.size(); ++i) {
        values[i] = normal(rng) * (i % 509 == 0 ? 20.0f : 1.0f);
    }
    const auto data = encode(DType::BF16, values);
    const auto weights = rowsOf(DType::BF16, data, rows, cols);
    const QuantScheme scheme{4, 128};
    const auto base = computeErrorStats(weights, scheme, 1);
    const auto same = [&](const TensorErrorStats& s) {
        QCOMPARE(s.relErr, base.relErr);
        QCOMPARE(s.relErrExactQs, base.relErrExactQs);
        QCOMPARE(s.maxAbsErr, base.maxAbsErr);
        QCOMPARE(s.p95AbsErr, base.p95AbsErr);
        QCOMPARE(s.snrDb, base.snrDb);
        QCOMPARE(s.meanAbsErr, base.meanAbsErr);
        QCOMPARE(s.meanAbsW, base.meanAbsW);
        QCOMPARE(s.qHist, base.qHist);
        QCOMPARE(s.weightHist.counts, base.weightHist.counts);
        QCOMPARE(s.errorHist.counts, base.errorHist.counts);
    };
    for (const unsigned threads : {2u, 3u, 8u}) {
        same(computeErrorStats(weights, scheme, threads));
    }
    // Streaming in uneven blocks gives the same numbers as one call.
    ErrorStatsAccumulator acc(scheme, rows, cols);
    for (std::size_t first = 0; first < rows;) {
        const std::size_t count = std::min<std::size_t>(rows - first, 1 + first % 97);
        auto block = weights;
        block.data = weights.row(first);
        block.rowCount = count;
        block.firstRow = first;
        acc.addRows(block, 3);
        first += count;
    }
    same(acc.result());
    QVERIFY(base.relErr.has_value());
    QVERIFY(*base.relErr > 0);
}

void TestQuantSimd::codecsMatchScalarTrace_data()
{
    QTest::addColumn<spark::DType>("dtype");
    QTest::addColumn<QByteArray>("scheme");
    for (const auto dtype : {DType::BF16, DType::F16, DType::F32}) {
        for (const char* scheme : {"W4A16_ASYM", "FP8_DYNAMIC", "NVFP4A16"}) {
            QTest::addRow("%s %s", dtypeName(dtype).data(), scheme) << dtype << QByteArray(scheme);
        }
    }
}

// The SIMD encoders of the asymmetric, FP8 and NVFP4 codecs against the scalar per-element definitions
// (traceRow, which the statistics use): on every compiled target, with 1 and 3 threads, every dequantized
// value bit for bit, and the scale-only pass (the exporter's weight_scale) gives the same scales.
void TestQuantSimd::codecsMatchScalarTrace()
{
    QFETCH(spark::DType, dtype);
    QFETCH(QByteArray, scheme);
    const auto& codec = *findWeightScheme(scheme.toStdString())->codec();
    const std::size_t rows = 37; // not a multiple of 8: the last zero-point word is padded
    const std::size_t cols = 384;
    for (std::uint32_t seed = 0; seed <= 3; ++seed) {
        const auto data =
            seed == 0 ? nvfp4TiesTensor(dtype, rows, cols) : randomTensor(dtype, rows, cols, seed * 104729u);
        const auto weights = rowsOf(dtype, data, rows, cols);
        const auto context = codec.contextForAbsmax(dtype, weightAbsmax(weights));
        if (seed == 0 && codec.usesGlobalScale() && dtype != DType::F16) {
            QCOMPARE(context.globalScale, 2048.0f); // the ties are exact only then
        }
        std::vector<ElementCode> codes(cols);
        std::vector<float> expected(rows * cols);
        std::vector<std::uint16_t> expectedCodes(rows * cols);
        for (std::size_t r = 0; r < rows; ++r) {
            codec.traceRow(weights, r, context, codes.data());
            for (std::size_t k = 0; k < cols; ++k) {
                expected[r * cols + k] = rtn::roundToDType(dtype, codes[k].value * codes[k].scale);
                expectedCodes[r * cols + k] = codes[k].code;
            }
        }
        // The stored codes: for these three schemes, element i's code is bits [i·b, (i+1)·b) of the first
        // tensor read as a little-endian bit stream (b = 8 for FP8, 4 for the packed int4 and FP4).
        const std::size_t codeBits = codec.codeCount() == 256 ? 8 : 4;
        const auto storedCode = [&](const std::vector<std::byte>& bytes, std::size_t i) {
            const auto byte = static_cast<unsigned>(bytes[i * codeBits / 8]);
            return codeBits == 8 ? byte : (byte >> (4 * (i % 2))) & 0xFu;
        };
        for (const auto target : hwy::SupportedAndGeneratedTargets()) {
            hwy::SetSupportedTargetsForTest(target);
            hwy::SupportedTargets();
            for (const unsigned threads : {1u, 3u}) {
                const auto parts = encodeWeight(codec, weights, context, cpuBackend(), threads);
                std::vector<std::span<const std::byte>> views(parts.begin(), parts.end());
                std::vector<float> decoded(rows * cols);
                codec.decode(views, dtype, rows, cols, decoded.data());
                for (std::size_t i = 0; i < decoded.size(); ++i) {
                    if (std::bit_cast<std::uint32_t>(decoded[i]) !=
                        std::bit_cast<std::uint32_t>(expected[i])) {
                        const auto why = std::string(hwy::TargetName(target)) + ": element " +
                                         std::to_string(i) + " decodes to " + std::to_string(decoded[i]) +
                                         ", the scalar definition gives " + std::to_string(expected[i]);
                        QFAIL(why.c_str());
                    }
                }
                for (std::size_t i = 0; i < rows * cols; ++i) {
                    if (storedCode(parts[0], i) != expectedCodes[i]) {
                        const auto why = std::string(hwy::TargetName(target)) + ": element " +
                                         std::to_string(i) + " stored code " +
                                         std::to_string(storedCode(parts[0], i)) + ", the scalar gives " +
                                         std::to_string(expectedCodes[i]);
                        QFAIL(why.c_str());
                    }
                }
                std::vector<std::vector<std::byte>> scalesOnly;
                codec.encodeTensor(weights, context, 1, scalesOnly, cpuBackend(), threads);
                QVERIFY2(scalesOnly[1] == parts[1], hwy::TargetName(target));
            }
        }
        hwy::SetSupportedTargetsForTest(0);
    }
}

/// The kernel's pow lookup of every finite or infinite magnitude of both 16-bit dtypes on every compiled
/// target: on AVX-512 for bf16 the factor tables (permutes, exponent arithmetic) where they apply, the table
/// by bits elsewhere (zero, subnormal, huge and infinite magnitudes). NaN never reaches it (weights are
/// checked finite).
void TestQuantSimd::powTermsMatchTable()
{
    for (const DType dtype : {DType::BF16, DType::F16}) {
        const PowTable& table = powTable(dtype, 2.4);
        const auto lookup = table.lookup();
        // For bf16 the factor tables must exist: the AVX-512 kernel's speed depends on them.
        QCOMPARE(lookup.mantissaPowers != nullptr, dtype == DType::BF16);
        std::vector<float> a(1u << 15), terms(a.size());
        for (std::uint32_t bits = 0; bits < a.size(); ++bits) {
            a[bits] = rtn::rawToFloat(dtype, bits);
        }
        for (const auto target : hwy::SupportedAndGeneratedTargets()) {
            hwy::SetSupportedTargetsForTest(target);
            hwy::SupportedTargets();
            // Odd lengths leave a part-filled last vector on every target.
            kernels::powTerms(lookup, dtype, a.data(), a.size() - 1, terms.data());
            for (std::uint32_t bits = 0; bits + 1 < a.size(); ++bits) {
                const float want = table.term(bits);
                if (!std::isnan(a[bits]) &&
                    std::bit_cast<std::uint32_t>(terms[bits]) != std::bit_cast<std::uint32_t>(want)) {
                    hwy::SetSupportedTargetsForTest(0);
                    std::ostringstream msg;
                    msg.precision(9);
                    msg << hwy::TargetName(target) << ' ' << dtypeName(dtype) << " bits " << bits << ": "
                        << terms[bits] << " != " << want;
                    QFAIL(msg.str().c_str());
                }
            }
        }
        hwy::SetSupportedTargetsForTest(0);
    }
}

/// The SIMD row load against rtn::loadWeight on every target: every finite bf16 and f16 pattern (f16
/// subnormals included), f32 patterns, and a non-finite value anywhere in the row (vector body or tail).
void TestQuantSimd::loadFiniteWeightsExact()
{
    for (const DType dtype : {DType::BF16, DType::F16, DType::F32}) {
        const std::size_t bytes = dtype == DType::F32 ? 4 : 2;
        std::vector<std::byte> data;
        std::mt19937 rng(7);
        for (std::uint32_t i = 0; i < 65536; ++i) {
            const std::uint32_t bits = dtype == DType::F32 ? static_cast<std::uint32_t>(rng()) : i;
            if (rtn::rawAbs(dtype, reinterpret_cast<const std::byte*>(&bits), 0) >=
                rtn::nonFiniteRaw(dtype)) {
                continue;
            }
            const auto* p = reinterpret_cast<const std::byte*>(&bits);
            data.insert(data.end(), p, p + bytes);
        }
        const std::size_t n = data.size() / bytes - 3; // a tail that fills no vector
        std::vector<float> out(n);
        for (const auto target : hwy::SupportedAndGeneratedTargets()) {
            hwy::SetSupportedTargetsForTest(target);
            hwy::SupportedTargets();
            QVERIFY2(kernels::loadFiniteWeights(dtype, data.data(), n, out.data()), hwy::TargetName(target));
            for (std::size_t k = 0; k < n; ++k) {
                const float want = rtn::loadWeight(dtype, data.data(), k);
                if (std::bit_cast<std::uint32_t>(out[k]) != std::bit_cast<std::uint32_t>(want)) {
                    hwy::SetSupportedTargetsForTest(0);
                    QFAIL(qPrintable(QStringLiteral("%1 %2 element %3")
                                         .arg(QString::fromLatin1(hwy::TargetName(target)))
                                         .arg(QString::fromLatin1(dtypeName(dtype)))
                                         .arg(k)));
                }
            }
            for (const std::size_t at : {std::size_t{0}, n / 2, n - 1}) {
                auto bad = data;
                const std::uint32_t nan = dtype == DType::F32   ? 0x7FC00000u
                                          : dtype == DType::F16 ? 0x7E00u
                                                                : 0x7FC0u;
                std::memcpy(bad.data() + at * bytes, &nan, bytes);
                QVERIFY2(!kernels::loadFiniteWeights(dtype, bad.data(), n, out.data()),
                         hwy::TargetName(target));
            }
        }
        hwy::SetSupportedTargetsForTest(0);
    }
}

void TestQuantSimd::candidateSumsMatchScalar_data()
{
    QTest::addColumn<QString>("scheme");
    for (const char* name : {"W4A16", "W8A16", "W4A16_ASYM", "FP8_DYNAMIC", "NVFP4A16"}) {
        QTest::newRow(name) << QString::fromLatin1(name);
    }
}

/// The rounding search's SIMD kernel against the scalar definition it must follow, on every
/// compiled target, every candidate count layout (whole vectors, narrow tails, padding) and every dtype and
/// error rule: the shrunk ranges the search scores, and arbitrary scales whose quotients land near bf16
/// ties (where the kernel's reciprocal product must fall back to the division).
void TestQuantSimd::candidateSumsMatchScalar()
{
    QFETCH(QString, scheme);
    const auto* ws = findWeightScheme(scheme.toStdString());
    QVERIFY(ws);
    constexpr std::size_t kWidth = 128;
    std::mt19937 rng(4242);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    for (const DType dtype : {DType::BF16, DType::F16, DType::F32}) {
        const auto arith = candidate::arithFor(*ws, dtype);
        const PowTable& table = powTable(dtype == DType::F16 ? DType::F16 : DType::BF16, 2.4);
        for (int group = 0; group < 24; ++group) {
            // Magnitudes from 2^-12 to 2^2, an outlier in some groups.
            const float spread = std::ldexp(1.0f, -12 + group % 15);
            std::vector<float> w(kWidth);
            float mn = 0, mx = 0;
            for (auto& v : w) {
                v = rtn::roundToDType(dtype, normal(rng) * spread * (uniform(rng) < 0.01f ? 8.0f : 1.0f));
                mn = std::min(mn, v);
                mx = std::max(mx, v);
            }
            std::vector<candidate::Params> params;
            for (int i = 0; i < 32; ++i) {
                const float p = static_cast<float>(1.0 - i / 64.0);
                params.push_back(candidate::paramsFor(arith, rtn::roundToDType(dtype, mn * p),
                                                      rtn::roundToDType(dtype, mx * p)));
            }
            for (int i = 0; i < 32; ++i) { // scales off the range grid
                auto p = params[static_cast<std::size_t>(i)];
                p.scale = rtn::roundToDType(dtype, p.scale * (0.5f + uniform(rng)));
                params.push_back(p);
            }
            // Float scales that put a weight's quotient on a bf16 midpoint whose two sides round to different
            // codes (2.5 | 2.515625, 3.484375 | 3.5): a reciprocal product there would miss the division.
            for (std::size_t k = 0; k < 16; ++k) {
                auto p = params.front();
                p.scale = std::fabs(w[k * 7]) / (k % 2 == 0 ? 2.5078125f : 3.4921875f);
                if (p.scale > 0.0f) {
                    params.push_back(p);
                }
            }
            for (const auto rule : {RoundingError::DTypeLp, RoundingError::F32L2}) {
                if (!kernels::candidateKernelSupports(rule, dtype)) {
                    continue;
                }
                // Odd groups score 100 weights: a last vector that is not whole on any target.
                const std::size_t width = group % 2 == 0 ? kWidth : 100;
                std::vector<double> expected(params.size());
                for (std::size_t i = 0; i < params.size(); ++i) {
                    double sum = 0;
                    for (std::size_t k = 0; k < width; ++k) {
                        const float v = w[k];
                        const float deq = candidate::dequantize(arith, params[i], v);
                        if (rule == RoundingError::F32L2) {
                            const float d = deq - v;
                            sum += static_cast<double>(d * d);
                        } else {
                            const float d = std::fabs(rtn::roundToDType(dtype, deq - v));
                            const auto bits = dtype == DType::F16 ? floatToF16(d) : floatToBf16(d);
                            sum += table.term(bits);
                        }
                    }
                    expected[i] = sum;
                }
                for (const auto target : hwy::SupportedAndGeneratedTargets()) {
                    hwy::SetSupportedTargetsForTest(target);
                    hwy::SupportedTargets();
                    for (const std::size_t count : {1, 3, 4, 5, 8, 9, 16, 20, 24, 33, 51, 64}) {
                        // Windows of the candidate list, so every candidate meets every lane layout.
                        const std::size_t first =
                            static_cast<std::size_t>(group) % (params.size() - count + 1);
                        std::vector<double> sums(count);
                        kernels::candidateErrorSums(arith, rule, table.lookup(), w.data(), width,
                                                    params.data() + first, count, sums.data());
                        for (std::size_t i = 0; i < count; ++i) {
                            // F32L2 bit for bit; DTypeLp within the bound the search relies on.
                            const double slack =
                                rule == RoundingError::F32L2 ? 0.0 : kernels::lpSumTolerance(width) * sums[i];
                            if (std::fabs(sums[i] - expected[first + i]) > slack) {
                                hwy::SetSupportedTargetsForTest(0);
                                std::ostringstream msg;
                                msg.precision(17);
                                msg << hwy::TargetName(target) << ' ' << dtypeName(dtype) << " group "
                                    << group << " candidate " << first + i << " of " << count << ": "
                                    << sums[i] << " != " << expected[first + i];
                                QFAIL(msg.str().c_str());
                            }
                        }
                    }
                }
                hwy::SetSupportedTargetsForTest(0);
            }
        }
    }
}

QTEST_GUILESS_MAIN(TestQuantSimd)
#include "tst_quantsimd.moc"
