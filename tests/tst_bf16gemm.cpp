// The serving numerics' arithmetic (draft-forward.md §9): FP32 → BF16 rounding a vector at a time, the
// activations' BF16 block layout and every BF16 GEMM kernel the machine runs (AMX tiles where the CPU has
// them, and the widened FP32 GEMM). Expected values come from the scalar floatToBf16 and from FP64 sums of
// the exact products.
#include "core/forward/bf16kernel.h"
#include "core/forward/blocks.h"
#include "core/forward/gemm.h"
#include "core/io/floatconv.h"

#include <QTest>
#include <bit>
#include <cmath>
#include <hwy/targets.h>
#include <limits>
#include <random>
#include <vector>

using namespace spark;

namespace {

/// Values that exercise every branch of the rounding: ties to even both ways, the carry into the exponent,
/// the largest finite values, infinities, quiet and signalling NaNs, subnormals and zeros.
std::vector<float> trickyValues()
{
    std::vector<float> v{0.0f,
                         -0.0f,
                         1.0f,
                         -1.0f,
                         INFINITY,
                         -INFINITY,
                         std::numeric_limits<float>::max(),
                         -std::numeric_limits<float>::max(),
                         std::numeric_limits<float>::denorm_min(),
                         std::numeric_limits<float>::min()};
    for (const std::uint32_t bits :
         {0x3F808000u, 0x3F818000u, 0x3F80FFFFu, 0x3F807FFFu, 0x7F7FFFFFu, 0x7F7F8000u, 0x7FC00000u,
          0x7F800001u, 0xFFBFFFFFu, 0x7FFFFFFFu, 0x00008000u, 0x80018000u}) {
        v.push_back(std::bit_cast<float>(bits));
    }
    std::mt19937 rng(11);
    std::uniform_int_distribution<std::uint32_t> any;
    for (int i = 0; i < 1000; ++i) {
        v.push_back(std::bit_cast<float>(any(rng)));
    }
    return v;
}

/// Random BF16 values in about [-2, 2] (bit patterns), with exact zeros sprinkled in.
std::vector<std::uint16_t> randomBf16(std::size_t count, std::uint32_t seed)
{
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal;
    std::vector<std::uint16_t> out(count);
    for (std::size_t i = 0; i < count; ++i) {
        out[i] = i % 13 == 5 ? std::uint16_t{0} : floatToBf16(normal(rng));
    }
    return out;
}

} // namespace

class TestBf16Gemm : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void roundingMatchesScalar();
    void blocksHoldRoundedRows();
    void gemmMatchesExactSums_data();
    void gemmMatchesExactSums();
    void linearRoundsWeightsAndInputs();
};

void TestBf16Gemm::roundingMatchesScalar()
{
    const auto values = trickyValues();
    for (const auto target : hwy::SupportedAndGeneratedTargets()) {
        hwy::SetSupportedTargetsForTest(target);
        hwy::SupportedTargets(); // re-chooses the dispatch target under the mock
        std::vector<std::uint16_t> bits(values.size());
        kernels::toBf16(values.data(), values.size(), bits.data());
        std::vector<float> rounded = values;
        kernels::roundToBf16(rounded.data(), rounded.size());
        for (std::size_t i = 0; i < values.size(); ++i) {
            const auto expected = floatToBf16(values[i]);
            QVERIFY2(bits[i] == expected,
                     qPrintable(QStringLiteral("%1: value %2 (0x%3)")
                                    .arg(QString::fromUtf8(hwy::TargetName(target)))
                                    .arg(static_cast<double>(values[i]))
                                    .arg(std::bit_cast<std::uint32_t>(values[i]), 0, 16)));
            QVERIFY(std::bit_cast<std::uint32_t>(rounded[i]) ==
                    std::bit_cast<std::uint32_t>(bf16ToFloat(expected)));
        }
    }
    hwy::SetSupportedTargetsForTest(0);
}

void TestBf16Gemm::blocksHoldRoundedRows()
{
    const std::int64_t m = 19, k = 45;
    std::vector<float> x(static_cast<std::size_t>(m * k));
    for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = 1.0f + static_cast<float>(i) / 1024.0f; // not all BF16 values: the blocks round them
    }
    const gemm::Bf16Blocks blocks(x.data(), m, k);
    QCOMPARE(blocks.rowBlocks(), 2);
    QCOMPARE(blocks.columnBlocks(), 2);
    for (std::int64_t i = 0; i < 32; ++i) {
        for (std::int64_t c = 0; c < 64; ++c) {
            const std::uint16_t stored = blocks.block(i / 16, c / 32)[(i % 16) * 32 + c % 32];
            const std::uint16_t expected =
                i < m && c < k ? floatToBf16(x[static_cast<std::size_t>(i * k + c)]) : 0;
            QCOMPARE(stored, expected);
        }
    }
}

void TestBf16Gemm::gemmMatchesExactSums_data()
{
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("k");
    QTest::addColumn<int>("n");
    // Whole tiles, one row or column short or over, depths that leave a partial 32-wide block.
    for (const auto& [m, k, n] : std::vector<std::array<int, 3>>{
             {1, 1, 1}, {16, 32, 16}, {32, 64, 32}, {17, 33, 15}, {5, 37, 3}, {33, 96, 47}, {70, 300, 81}}) {
        QTest::addRow("m%d k%d n%d", m, k, n) << m << k << n;
    }
}

void TestBf16Gemm::gemmMatchesExactSums()
{
    QFETCH(int, m);
    QFETCH(int, k);
    QFETCH(int, n);
    const auto xBits = randomBf16(static_cast<std::size_t>(m * k), 3u + static_cast<std::uint32_t>(m));
    auto w = randomBf16(static_cast<std::size_t>(n * k), 5u + static_cast<std::uint32_t>(n));
    w.resize(w.size() + 64, 0x7FC0); // NaNs past the last row: a kernel that reads them turns its sums NaN
    std::vector<float> x(xBits.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = bf16ToFloat(xBits[i]);
    }
    const gemm::Bf16Blocks blocks(x.data(), m, k);
    const std::int64_t ldy = n + 3; // a row stride wider than the output, as a tile of a wider y has
    for (const auto& kernel : gemm::bf16Kernels()) {
        std::vector<float> y(static_cast<std::size_t>(m * ldy), -7.0f);
        kernel.multiply(blocks, w.data(), n, y.data(), ldy);
        for (int i = 0; i < m; ++i) {
            for (int j = 0; j < n; ++j) {
                // Each product of two BF16 values is exact in FP32 and in FP64; FP32 sums of k of them lie
                // within k · 2^-24 of Σ|p| of the exact sum.
                double sum = 0, magnitude = 0;
                for (int c = 0; c < k; ++c) {
                    const double p = static_cast<double>(x[static_cast<std::size_t>(i * k + c)]) *
                                     static_cast<double>(bf16ToFloat(w[static_cast<std::size_t>(j * k + c)]));
                    sum += p;
                    magnitude += std::abs(p);
                }
                const double got = y[static_cast<std::size_t>(i * ldy + j)];
                QVERIFY2(std::abs(got - sum) <= static_cast<double>(k) * 0x1p-24 * magnitude,
                         qPrintable(QStringLiteral("%1: y[%2, %3] = %4, exact %5")
                                        .arg(QString::fromStdString(kernel.name))
                                        .arg(i)
                                        .arg(j)
                                        .arg(got)
                                        .arg(sum)));
            }
            for (std::int64_t j = n; j < ldy; ++j) {
                QCOMPARE(y[static_cast<std::size_t>(i * ldy + j)], -7.0f); // nothing written past the tile
            }
        }
    }
}

void TestBf16Gemm::linearRoundsWeightsAndInputs()
{
    // A weight of FP32 values that BF16 cannot hold: the serving Linear multiplies their BF16 roundings,
    // and the inputs' BF16 roundings, as the widened FP32 Linear on those roundings does.
    const std::int64_t rows = 40, cols = 70;
    class Fp32Rows final : public LinearSource
    {
      public:
        std::int64_t rows() const override { return 40; }
        std::int64_t cols() const override { return 70; }
        void decode(std::int64_t firstRow, std::size_t rowCount, float* out) const override
        {
            for (std::size_t i = 0; i < rowCount * 70; ++i) {
                out[i] = std::sin(static_cast<float>(firstRow * 70 + static_cast<std::int64_t>(i)) * 0.37f);
            }
        }
        std::string describe() const override { return "test weight"; }
    };
    const Fp32Rows weight;
    Activations x(9, cols);
    for (std::size_t i = 0; i < x.values.size(); ++i) {
        x.values[i] = std::cos(static_cast<float>(i) * 0.11f);
    }
    const auto served = linearBf16(weight, x, 2);
    QCOMPARE(served.rows, 9);
    QCOMPARE(served.cols, rows);
    std::vector<float> w(static_cast<std::size_t>(rows * cols));
    weight.decode(0, static_cast<std::size_t>(rows), w.data());
    for (std::int64_t i = 0; i < x.rows; ++i) {
        for (std::int64_t j = 0; j < rows; ++j) {
            double sum = 0, magnitude = 0;
            for (std::int64_t c = 0; c < cols; ++c) {
                const double p =
                    static_cast<double>(bf16ToFloat(floatToBf16(x.row(i)[c]))) *
                    static_cast<double>(bf16ToFloat(floatToBf16(w[static_cast<std::size_t>(j * cols + c)])));
                sum += p;
                magnitude += std::abs(p);
            }
            QVERIFY(std::abs(static_cast<double>(served.row(i)[j]) - sum) <=
                    static_cast<double>(cols) * 0x1p-24 * magnitude);
        }
    }
}

QTEST_GUILESS_MAIN(TestBf16Gemm)
#include "tst_bf16gemm.moc"
