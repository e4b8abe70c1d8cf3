// format-spec §8 items 1-9 and 13: packing layout, scale rule, tie rules and the hand-derived
// golden vectors G1/G2, on both the SIMD path (spark::quantize) and the scalar reference.
#include "core/quant/dequantize.h"
#include "core/quant/packing.h"
#include "core/quant/quanterror.h"
#include "core/quant/rtn.h"
#include "core/quant/rtnreference.h"
#include "quanttesthelpers.h"

#include <QTest>

using namespace spark;
using namespace spark::test;

Q_DECLARE_METATYPE(std::vector<std::int8_t>)
Q_DECLARE_METATYPE(std::vector<std::int32_t>)
Q_DECLARE_METATYPE(std::vector<float>)
Q_DECLARE_METATYPE(spark::DType)

class TestQuantPack : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void packing_data();
    void packing();
    void schemeHelpers();
    void shapeGate_data();
    void shapeGate();
    void zeroGroup_data();
    void zeroGroup();
    void tieRules();
    void goldenG1();
    void goldenG2();
    void eightBitScale();
    void dequantize();
    void invalidInput();
};

void TestQuantPack::packing_data()
{
    QTest::addColumn<std::vector<std::int8_t>>("q");
    QTest::addColumn<int>("bits");
    QTest::addColumn<std::vector<std::int32_t>>("expected");
    // format-spec §8.1: element 0 is bits 0-3.
    QTest::addRow("nibble order") << std::vector<std::int8_t>{-8, -7, -1, 0, 1, 2, 3, 7} << 4
                                  << words({0xFBA98710u});
    QCOMPARE(words({0xFBA98710u})[0], -72775920);
    // format-spec §8.2: 32 values, 4 words.
    std::vector<std::int8_t> ramp;
    for (int v = -8; v <= 7; ++v) {
        ramp.push_back(static_cast<std::int8_t>(v));
    }
    for (int v = 7; v >= -8; --v) {
        ramp.push_back(static_cast<std::int8_t>(v));
    }
    QTest::addRow("32 values") << ramp << 4
                               << std::vector<std::int32_t>{1985229328, -19088744, -1985229329, 19088743};
    // format-spec §8.3: q = 0 everywhere.
    QTest::addRow("all zero") << std::vector<std::int8_t>(16, 0) << 4
                              << std::vector<std::int32_t>{-2004318072, -2004318072};
    // format-spec §8.4: 8-bit, 4 values per word, offset 128.
    QTest::addRow("8-bit") << std::vector<std::int8_t>{-128, -1, 0, 127, 1, 2, 3, 4} << 8
                           << std::vector<std::int32_t>{-8356096, -2071756159};
    // format-spec §8.5: 5 columns: the pad nibbles are 0 in the unsigned domain.
    QTest::addRow("padding 4-bit") << std::vector<std::int8_t>{1, 2, 3, 4, 5} << 4
                                   << std::vector<std::int32_t>{904105};
    QTest::addRow("padding 8-bit") << std::vector<std::int8_t>{1, -1, 0, 2, 3} << 8
                                   << words({0x82807F81u, 0x00000083u});
}

void TestQuantPack::packing()
{
    QFETCH(std::vector<std::int8_t>, q);
    QFETCH(int, bits);
    QFETCH(std::vector<std::int32_t>, expected);
    QuantScheme scheme{bits, -1};
    QCOMPARE(scheme.packedWordsPerRow(q.size()), expected.size());
    std::vector<std::int32_t> packed(expected.size(), 0x5A5A5A5A);
    packRow(q.data(), q.size(), bits, packed.data());
    QCOMPARE(packed, expected);
    std::vector<std::int8_t> back(q.size());
    unpackRow(packed.data(), q.size(), bits, back.data());
    QCOMPARE(back, q);
}

void TestQuantPack::schemeHelpers()
{
    const QuantScheme w4{4, 128};
    QCOMPARE(w4.qMin(), -8);
    QCOMPARE(w4.qMax(), 7);
    QCOMPARE(w4.scaleDivisor(), 7.5f);
    QCOMPARE(w4.packedWordsPerRow(4096), std::size_t{512});
    QCOMPARE(w4.packedWordsPerRow(5), std::size_t{1});
    QCOMPARE(w4.groupsPerRow(4096), std::size_t{32});
    const QuantScheme w8{8, -1};
    QCOMPARE(w8.qMin(), -128);
    QCOMPARE(w8.scaleDivisor(), 127.5f);
    QCOMPARE(w8.packedWordsPerRow(4096), std::size_t{1024});
    QCOMPARE(w8.groupsPerRow(4096), std::size_t{1});
    QCOMPARE(w8.groupWidth(4096), std::size_t{4096});
    QVERIFY(QuantScheme({4, 32}).isValid());
    QVERIFY(!QuantScheme({3, 128}).isValid());
    QVERIFY(!QuantScheme({4, 96}).isValid());
    QVERIFY_THROWS_EXCEPTION(QuantError, QuantScheme({4, 0}).validate());
}

void TestQuantPack::shapeGate_data()
{
    QTest::addColumn<qulonglong>("out");
    QTest::addColumn<qulonglong>("in");
    QTest::addColumn<int>("group");
    QTest::addColumn<bool>("accepted");
    QTest::addRow("laguna g_proj") << 72ull << 3072ull << 128 << false; // format-spec §8.13
    QTest::addRow("in 192") << 128ull << 192ull << 128 << false;
    QTest::addRow("out 1") << 1ull << 256ull << 128 << false;
    QTest::addRow("ok") << 64ull << 128ull << 128 << true;
    QTest::addRow("in 192 g64") << 128ull << 192ull << 64 << true;
    QTest::addRow("channel") << 128ull << 100ull << -1 << true;
}

void TestQuantPack::shapeGate()
{
    QFETCH(qulonglong, out);
    QFETCH(qulonglong, in);
    QFETCH(int, group);
    QFETCH(bool, accepted);
    QCOMPARE(QuantScheme({4, group}).acceptsShape(out, in), accepted);
}

void TestQuantPack::zeroGroup_data()
{
    QTest::addColumn<spark::DType>("dtype");
    QTest::addColumn<float>("zero");
    QTest::addColumn<std::vector<std::int32_t>>("epsBits"); // scale bits, as one int
    QTest::addRow("bf16 +0") << DType::BF16 << 0.0f << std::vector<std::int32_t>{0x3C00};
    QTest::addRow("bf16 -0") << DType::BF16 << -0.0f << std::vector<std::int32_t>{0x3C00};
    QTest::addRow("f16 +0") << DType::F16 << 0.0f << std::vector<std::int32_t>{0x1400};
    QTest::addRow("f32 -0") << DType::F32 << -0.0f << std::vector<std::int32_t>{0x34000000};
}

void TestQuantPack::zeroGroup()
{
    QFETCH(spark::DType, dtype);
    QFETCH(float, zero);
    QFETCH(std::vector<std::int32_t>, epsBits);
    // format-spec §8.3: an all-zero group gets the eps scale (CT >= 0.13) and q = 0 → 0x88888888 words.
    const auto data = encode(dtype, std::vector<float>(2 * 128, zero));
    const auto rows = rowsOf(dtype, data, 2, 128);
    const auto result = quantize(rows, {4, 128});
    QCOMPARE(result.packed, std::vector<std::int32_t>(2 * 16, -2004318072));
    std::int32_t scale = 0;
    std::memcpy(&scale, result.scales.data(), scaleBytes(dtype));
    QCOMPARE(scale, epsBits[0]);
}

void TestQuantPack::tieRules()
{
    // format-spec §8.6: absmax 7.5 → scale exactly 1.0; +7.5 → 7 by clamp, -7.5 → -8, ties to even.
    std::vector<float> w(128, 0.0f);
    const std::vector<float> head{7.5f, -7.5f, 0.5f, 1.5f, 2.5f, -2.5f, 3.5f, -0.5f};
    std::copy(head.begin(), head.end(), w.begin());
    const auto data = encode(DType::BF16, w);
    const auto rows = rowsOf(DType::BF16, data, 1, 128);
    const auto result = quantize(rows, {4, 128});
    QCOMPARE(bits16(result.scales), std::vector<std::uint16_t>{0x3F80});
    std::vector<std::int8_t> q(128);
    unpackRow(result.packed.data(), 128, 4, q.data());
    const std::vector<std::int8_t> expectedHead{7, -8, 0, 2, 2, -2, 4, 0};
    QCOMPARE(std::vector<std::int8_t>(q.begin(), q.begin() + 8), expectedHead);
    QVERIFY(std::all_of(q.begin() + 8, q.end(), [](std::int8_t v) { return v == 0; }));
}

void TestQuantPack::goldenG1()
{
    // format-spec §8.7 golden G1: [2,128] BF16, w[r][k] = ((k*37 + r*11) % 31 - 15) / 8, per-channel scale =
    // group 128.
    std::vector<float> w(256);
    for (int r = 0; r < 2; ++r) {
        for (int k = 0; k < 128; ++k) {
            w[static_cast<std::size_t>(r * 128 + k)] = static_cast<float>((k * 37 + r * 11) % 31 - 15) / 8.0f;
        }
    }
    const auto data = encode(DType::BF16, w);
    const auto rows = rowsOf(DType::BF16, data, 2, 128);
    for (const int group : {128, -1}) {
        const auto result = quantize(rows, {4, group});
        QCOMPARE(bits16(result.scales), (std::vector<std::uint16_t>{0x3E80, 0x3E80}));
        const auto expected = words(
            {0x63fca640, 0xec862fc9, 0x842eb852, 0x0da741ea, 0x963fca64, 0x2ec862fc, 0xa842eb85, 0x40da741e,
             0xc963fca6, 0x52ec862f, 0xea842eb8, 0x640da741, 0xfc963fca, 0x852ec862, 0x1ea842eb, 0xa640da74,
             0xc862fc96, 0x42eb852e, 0xda741ea8, 0x63fca640, 0xec862fc9, 0x842eb852, 0x0da741ea, 0x963fca64,
             0x2ec862fc, 0xa842eb85, 0x40da741e, 0xc963fca6, 0x52ec862f, 0xea842eb8, 0x640da741, 0xfc963fca});
        QCOMPARE(result.packed, expected);
        std::vector<std::int8_t> q(16);
        unpackRow(result.packed.data(), 16, 4, q.data());
        QCOMPARE(q, (std::vector<std::int8_t>{-8, -4, -2, 2, 4, 7, -5, -2, 1, 4, 7, -6, -2, 0, 4, 6}));
    }
}

void TestQuantPack::goldenG2()
{
    // format-spec §8.8 golden G2: the quotient rounded to bf16 turns non-ties into ties (CT-compat mode).
    std::vector<std::uint16_t> bits{0x4040, 0xBFB3, 0x3FB3, 0x3F80, 0xC040, 0x3F1A, 0x4033, 0xBF1A};
    bits.resize(128, 0);
    const auto data = fromBits16(bits);
    const auto rows = rowsOf(DType::BF16, data, 1, 128);
    const auto result = quantize(rows, {4, 128});
    QCOMPARE(bits16(result.scales), std::vector<std::uint16_t>{0x3ECD});
    QCOMPARE(result.packed[0], static_cast<std::int32_t>(0x6FA0AC4Fu));
    for (std::size_t j = 1; j < 16; ++j) {
        QCOMPARE(result.packed[j], -2004318072);
    }
    std::vector<std::int32_t> reference(16);
    reference::quantizeRows(rows, {4, 128}, result.scales.data(), reference.data());
    QCOMPARE(result.packed, reference);
    // The fp32-quotient variant would give 0x6FA1AB5F: make sure that is not what we do.
    QVERIFY(result.packed[0] != static_cast<std::int32_t>(0x6FA1AB5Fu));
}

void TestQuantPack::eightBitScale()
{
    // format-spec §8.9: absmax 1.0 → bf16(1/127.5) = 0x3C01; w = 0.5 → 63.5039 → bf16 63.5 → tie → 64.
    std::vector<float> w(128, 0.0f);
    w[0] = 1.0f;
    w[1] = 0.5f;
    const auto data = encode(DType::BF16, w);
    const auto rows = rowsOf(DType::BF16, data, 1, 128);
    const auto result = quantize(rows, {8, 128});
    QCOMPARE(bits16(result.scales), std::vector<std::uint16_t>{0x3C01});
    QCOMPARE(result.packed.size(), std::size_t{32});
    std::vector<std::int8_t> q(128);
    unpackRow(result.packed.data(), 128, 8, q.data());
    QCOMPARE(int(q[0]), 127);
    QCOMPARE(int(q[1]), 64);
    QCOMPARE(int(q[2]), 0);
}

void TestQuantPack::dequantize()
{
    std::vector<float> w(128, 0.0f);
    w[0] = 7.5f;
    w[1] = -7.5f;
    w[2] = 2.5f;
    const auto data = encode(DType::BF16, w);
    const auto result = quantize(rowsOf(DType::BF16, data, 1, 128), {4, 128});
    std::vector<std::byte> d(256);
    dequantizeRows(DType::BF16, result.packed.data(), result.scales.data(), 1, 128, {4, 128}, d.data());
    const auto dBits = bits16(d);
    QCOMPARE(bf16ToFloat(dBits[0]), 7.0f);
    QCOMPARE(bf16ToFloat(dBits[1]), -8.0f);
    QCOMPARE(bf16ToFloat(dBits[2]), 2.0f);
    QCOMPARE(bf16ToFloat(dBits[3]), 0.0f);
}

void TestQuantPack::invalidInput()
{
    const auto data = encode(DType::BF16, std::vector<float>(192, 1.0f));
    try {
        quantize(rowsOf(DType::BF16, data, 1, 192), {4, 128});
        QFAIL("192 columns with group 128 must be rejected");
    } catch (const QuantError& e) {
        QCOMPARE(e.kind(), QuantErrorKind::BadShape);
        QVERIFY(std::string(e.what()).find("test.weight") != std::string::npos);
    }
    auto rows = rowsOf(DType::BF16, data, 1, 192);
    rows.dtype = DType::I32;
    QVERIFY_THROWS_EXCEPTION(QuantError, quantize(rows, {4, 64}));
}

QTEST_GUILESS_MAIN(TestQuantPack)
#include "tst_quantpack.moc"
