// The definitions behind analyze's speed: histograms of large tensors counted on the fixed sample of
// kernels::histogramSampled(), and float64 sums in eight virtual lanes, so that every SIMD target (vector
// widths from 1 to 16 floats, lanes in registers or in memory), thread count and row blocking gives the
// same bits.
#include "core/quant/dequantize.h"
#include "core/quant/errorstats.h"
#include "core/quant/quantbackend.h"
#include "core/quant/rtn.h"
#include "core/quant/rtnreference.h"
#include "core/quant/rtnscalar.h"
#include "core/quant/schemecodec.h"
#include "core/quant/statskernels.h"
#include "core/quant/weightscheme.h"
#include "quanttesthelpers.h"

#include <QTest>
#include <algorithm>
#include <bit>
#include <cmath>
#include <hwy/targets.h>
#include <random>

using namespace spark;
using namespace spark::test;

Q_DECLARE_METATYPE(spark::DType)

namespace {

/// Normal weights with outliers, all-zero groups and tiny values; in F32 also a few -max elements (whose
/// integer D overflows: non-finite elements must be counted whether sampled or not).
std::vector<std::byte> weightsWithOutliers(DType dtype, std::size_t rows, std::size_t cols,
                                           std::uint32_t seed)
{
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    const float max = dtype == DType::F32 ? 3.4028235e38f : 0.0f;
    std::vector<float> values(rows * cols);
    for (std::size_t i = 0; i < values.size(); ++i) {
        const std::size_t pick = rng() % 1000;
        values[i] =
            pick == 0 && max > 0 ? -max : normal(rng) * (pick < 10 ? 30.0f : (pick < 20 ? 1e-6f : 1.0f));
        if ((i / 32) % 61 == 5) {
            values[i] = 0.0f;
        }
    }
    return encode(dtype, values);
}

bool sameBits(double a, double b)
{
    return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

template <typename T> std::uint64_t total(const std::vector<T>& counts)
{
    std::uint64_t sum = 0;
    for (const auto c : counts) {
        sum += c;
    }
    return sum;
}

/// Every field the statistics report, compared exactly.
void compareStats(const TensorErrorStats& a, const TensorErrorStats& b, const char* what)
{
    QVERIFY2(sameBits(a.sqNorm, b.sqNorm), what);
    QVERIFY2(sameBits(a.meanAbsW, b.meanAbsW), what);
    QVERIFY2(a.sqErr == b.sqErr, what);
    QVERIFY2(a.relErr == b.relErr, what);
    QVERIFY2(a.relErrExactQs == b.relErrExactQs, what);
    QVERIFY2(a.meanAbsErr == b.meanAbsErr, what);
    QVERIFY2(a.maxAbsErr == b.maxAbsErr, what);
    QVERIFY2(a.p95AbsErr == b.p95AbsErr, what);
    QVERIFY2(a.dequantNonFinite == b.dequantNonFinite, what);
    QVERIFY2(a.epsScaleGroups == b.epsScaleGroups, what);
    QVERIFY2(a.histogramStride == b.histogramStride, what);
    QVERIFY2(a.qHist == b.qHist, what);
    QVERIFY2(a.weightHist.counts == b.weightHist.counts, what);
    QVERIFY2(a.errorHist.counts == b.errorHist.counts, what);
}

/// The statistics on every compiled SIMD target, 1 and 3 threads, and streamed in uneven row blocks:
/// all identical; returns the first.
TensorErrorStats statsEverywhere(const WeightRows& weights, const WeightScheme& scheme,
                                 const SchemeContext& context)
{
    std::optional<TensorErrorStats> first;
    for (const auto target : hwy::SupportedAndGeneratedTargets()) {
        hwy::SetSupportedTargetsForTest(target);
        hwy::SupportedTargets();
        for (const unsigned threads : {1u, 3u}) {
            const auto stats = computeErrorStats(weights, scheme, context, threads);
            if (!first) {
                first = stats;
            }
            compareStats(stats, *first, hwy::TargetName(target));
        }
    }
    hwy::SetSupportedTargetsForTest(0);
    ErrorStatsAccumulator streamed(scheme, weights.rowCount, weights.cols, context);
    for (std::size_t row = 0; row < weights.rowCount;) {
        auto block = weights;
        block.data = weights.row(row);
        block.rowCount = std::min<std::size_t>(weights.rowCount - row, 1 + row % 113);
        block.firstRow = row;
        streamed.addRows(block, 2);
        row += block.rowCount;
    }
    compareStats(streamed.result(), *first, "streamed");
    return *first;
}

} // namespace

class TestStatsSample : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void strideFollowsTensorSize();
    void sampledHistograms_data();
    void sampledHistograms();
    void sumsFollowEightLanes_data();
    void sumsFollowEightLanes();
};

void TestStatsSample::strideFollowsTensorSize()
{
    QCOMPARE(kernels::histogramStride(0), 1u);
    QCOMPARE(kernels::histogramStride((1u << 21) - 1), 1u);
    QCOMPARE(kernels::histogramStride(1u << 21), 2u);
    QCOMPARE(kernels::histogramStride(3u << 20), 2u);
    QCOMPARE(kernels::histogramStride(1u << 22), 4u);
    QCOMPARE(kernels::histogramStride(4096ull * 4096), 16u);
    QCOMPARE(kernels::histogramStride(1ull << 34), 16u);
    // Diagonal 64-column chunks: at stride 4, row 0 counts columns [0, 64) and [256, 320), row 1 [192, 256).
    QVERIFY(kernels::histogramSampled(0, 0, 4) && kernels::histogramSampled(0, 63, 4));
    QVERIFY(!kernels::histogramSampled(0, 64, 4) && kernels::histogramSampled(0, 256, 4));
    QVERIFY(kernels::histogramSampled(1, 192, 4) && !kernels::histogramSampled(1, 0, 4));
    QVERIFY(kernels::histogramSampled(7, 100, 1));
}

void TestStatsSample::sampledHistograms_data()
{
    QTest::addColumn<spark::DType>("dtype");
    QTest::addColumn<QByteArray>("scheme");
    for (const auto dtype : {DType::BF16, DType::F32}) {
        for (const char* scheme : {"W4A16", "W8A16:channel", "W4A16_ASYM", "FP8_DYNAMIC", "NVFP4A16"}) {
            QTest::addRow("%s %s", dtypeName(dtype).data(), scheme) << dtype << QByteArray(scheme);
        }
    }
}

// A tensor just past 2^21 elements (stride 2; 1000 rows of 17 groups of 128, 34 sample chunks): the
// histograms count exactly the sampled elements, identically everywhere; the sums, maximum and non-finite
// count still cover every element; p95 is the sample's, within the documented 3.2%.
void TestStatsSample::sampledHistograms()
{
    QFETCH(spark::DType, dtype);
    QFETCH(QByteArray, scheme);
    const std::size_t rows = 1000;
    const std::size_t cols = 2176;
    const auto data = weightsWithOutliers(dtype, rows, cols, 5u);
    const auto weights = rowsOf(dtype, data, rows, cols);
    const auto& ws = *findWeightScheme(scheme.toStdString());
    const auto& codec = *ws.codec();
    const auto context = codec.contextForAbsmax(dtype, weightAbsmax(weights));
    const auto stats = statsEverywhere(weights, ws, context);
    QCOMPARE(stats.histogramStride, 2u);

    // The scalar definition: each element's code and D from the codec's trace.
    std::vector<std::uint64_t> qHist(static_cast<std::size_t>(codec.codeCount()), 0);
    std::vector<double> sampledErrors;
    std::uint64_t sampled = 0, nonFinite = 0;
    double maxErr = 0;
    std::vector<ElementCode> codes(cols);
    for (std::size_t r = 0; r < rows; ++r) {
        codec.traceRow(weights, r, context, codes.data());
        for (std::size_t k = 0; k < cols; ++k) {
            const double w = rtn::loadWeight(dtype, weights.row(r), k);
            const double d = rtn::roundToDType(dtype, codes[k].value * codes[k].scale);
            const bool counted = kernels::histogramSampled(r, k, 2);
            sampled += counted ? 1 : 0;
            if (!std::isfinite(d)) {
                ++nonFinite;
            } else {
                maxErr = std::max(maxErr, std::fabs(w - d));
            }
            if (counted) {
                ++qHist[codes[k].code];
                if (std::isfinite(d)) {
                    sampledErrors.push_back(std::fabs(w - d));
                }
            }
        }
    }
    QVERIFY(sampled > (1u << 20) && sampled < rows * cols);
    QCOMPARE(stats.qHist, qHist);
    QCOMPARE(total(stats.weightHist.counts), sampled);
    QCOMPARE(total(stats.errorHist.counts), static_cast<std::uint64_t>(sampledErrors.size()));
    QCOMPARE(stats.dequantNonFinite, nonFinite);
    if (nonFinite > 0) {
        QVERIFY(!stats.relErr.has_value() && !stats.p95AbsErr.has_value());
        return;
    }
    QCOMPARE(*stats.maxAbsErr, maxErr);
    const auto rank = static_cast<std::size_t>(std::ceil(0.95 * static_cast<double>(sampledErrors.size())));
    std::nth_element(sampledErrors.begin(), sampledErrors.begin() + static_cast<std::ptrdiff_t>(rank - 1),
                     sampledErrors.end());
    const double exact = sampledErrors[rank - 1];
    QVERIFY2(*stats.p95AbsErr >= exact && *stats.p95AbsErr <= exact * 1.032,
             qPrintable(QStringLiteral("p95 %1, the sample's %2").arg(*stats.p95AbsErr).arg(exact)));
}

void TestStatsSample::sumsFollowEightLanes_data()
{
    QTest::addColumn<spark::DType>("dtype");
    QTest::addColumn<int>("group");
    QTest::addColumn<int>("cols");
    for (const auto dtype : {DType::BF16, DType::F16, DType::F32}) {
        QTest::addRow("%s g32", dtypeName(dtype).data()) << dtype << 32 << 384;
        QTest::addRow("%s g128", dtypeName(dtype).data()) << dtype << 128 << 2048;
        // Per channel with a ragged width: vectors, then a scalar tail that continues the lanes.
        QTest::addRow("%s channel 389", dtypeName(dtype).data()) << dtype << -1 << 389;
    }
}

// The integer kernel's float64 sums against their definition, computed here one element at a time:
// element j of a row is added to lane j mod 8, lanes are added in order at the end of the row, rows in
// order. Bit for bit, on every target (AVX-512 and AVX2 keep the lanes in registers, narrower vectors in
// memory).
void TestStatsSample::sumsFollowEightLanes()
{
    QFETCH(spark::DType, dtype);
    QFETCH(int, group);
    QFETCH(int, cols);
    const std::size_t rows = 23;
    const std::size_t n = rows * static_cast<std::size_t>(cols);
    const QuantScheme scheme{4, group};
    // Magnitudes spread over 2^-30 .. 2^5, so that even 16-bit weights' squares do not sum exactly and the
    // order of the additions shows. No -max elements: a non-finite D voids rel_err.
    std::mt19937 rng(17u);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> values(n);
    for (std::size_t i = 0; i < n; ++i) {
        values[i] = std::ldexp(normal(rng), -static_cast<int>(rng() % 36) + 5);
    }
    const auto data = encode(dtype, values);
    const auto weights = rowsOf(dtype, data, rows, static_cast<std::size_t>(cols));

    std::vector<std::byte> scales(rows * scheme.groupsPerRow(static_cast<std::size_t>(cols)) *
                                  scaleBytes(dtype));
    reference::computeScales(weights, scheme, scales.data());
    std::vector<std::int8_t> q(n);
    reference::quantizeValues(weights, scheme, scales.data(), q.data());
    const auto quantized = quantize(weights, scheme);
    std::vector<std::byte> dequant(n * scaleBytes(dtype));
    dequantizeRows(dtype, quantized.packed.data(), quantized.scales.data(), rows,
                   static_cast<std::size_t>(cols), scheme, dequant.data());
    double sumW2 = 0, sumAbsW = 0, sumErr2 = 0, sumAbsErr = 0, sumExact = 0;
    const std::size_t width = scheme.groupWidth(static_cast<std::size_t>(cols));
    for (std::size_t r = 0; r < rows; ++r) {
        double w2[8] = {}, absW[8] = {}, err2[8] = {}, absErr[8] = {}, exact[8] = {};
        for (std::size_t j = 0; j < static_cast<std::size_t>(cols); ++j) {
            const std::size_t i = r * static_cast<std::size_t>(cols) + j;
            const double w = rtn::loadWeight(dtype, data.data(), i);
            const double d = rtn::loadWeight(dtype, dequant.data(), i);
            const double s = rtn::loadScale(dtype, scales.data(), r * scheme.groupsPerRow(cols) + j / width);
            const double ex = w - static_cast<double>(q[i]) * s;
            w2[j % 8] += w * w;
            absW[j % 8] += std::fabs(w);
            err2[j % 8] += (w - d) * (w - d);
            absErr[j % 8] += std::fabs(w - d);
            exact[j % 8] += ex * ex;
        }
        const auto rowTotal = [](const double* lanes) {
            double sum = 0;
            for (std::size_t l = 0; l < 8; ++l) {
                sum += lanes[l];
            }
            return sum;
        };
        sumW2 += rowTotal(w2);
        sumAbsW += rowTotal(absW);
        sumErr2 += rowTotal(err2);
        sumAbsErr += rowTotal(absErr);
        sumExact += rowTotal(exact);
    }
    const auto stats = statsEverywhere(weights, *intSymmetricScheme(4, group), {});
    QCOMPARE(stats.dequantNonFinite, std::uint64_t{0});
    QVERIFY(sameBits(stats.sqNorm, sumW2));
    QVERIFY(sameBits(stats.meanAbsW, sumAbsW / static_cast<double>(n)));
    QVERIFY(stats.sqErr && sameBits(*stats.sqErr, sumErr2));
    QVERIFY(stats.meanAbsErr && sameBits(*stats.meanAbsErr, sumAbsErr / static_cast<double>(n)));
    QVERIFY(stats.relErrExactQs && sameBits(*stats.relErrExactQs, std::sqrt(sumExact) / std::sqrt(sumW2)));
}

QTEST_GUILESS_MAIN(TestStatsSample)
#include "tst_statssample.moc"
