// Every product scheme against tests/data/golden-schemes (the real compressed-tensors 0.18 output,
// schemes-spec §9): each module's tensors byte for byte, rel_err and max error of expected.json, the
// dequantization of the written bytes, and the worked vectors V1-V9 that pin single rounding rules.
#include "core/io/checkpoint.h"
#include "core/io/floatconv.h"
#include "core/quant/errorstats.h"
#include "core/quant/fp8e4m3.h"
#include "core/quant/quantbackend.h"
#include "core/quant/rtnscalar.h"
#include "core/quant/schemecodec.h"
#include "core/quant/weightscheme.h"
#include "goldentesthelpers.h"
#include "quanttesthelpers.h"
#include "testsupport.h"

#include <QTest>
#include <cmath>
#include <cstring>
#include <qfloat16.h>

using namespace spark;
using namespace spark::test;

namespace {

std::vector<std::uint16_t> bf16s(std::initializer_list<float> values, std::size_t size)
{
    std::vector<std::uint16_t> out(size, 0);
    std::size_t i = 0;
    for (const float v : values) {
        out[i++] = floatToBf16(v);
    }
    return out;
}

WeightRows bf16Rows(const std::vector<std::uint16_t>& values, std::size_t rows, std::size_t cols)
{
    return {DType::BF16, reinterpret_cast<const std::byte*>(values.data()), rows, cols, 0, "vector"};
}

std::vector<std::uint32_t> words(const std::vector<std::byte>& bytes)
{
    std::vector<std::uint32_t> out(bytes.size() / 4);
    std::memcpy(out.data(), bytes.data(), out.size() * 4);
    return out;
}

std::vector<std::uint8_t> octets(const std::vector<std::byte>& bytes)
{
    std::vector<std::uint8_t> out(bytes.size());
    std::memcpy(out.data(), bytes.data(), out.size());
    return out;
}

} // namespace

class TestSchemeGolden : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void initTestCase();
    void registry();
    void module_data();
    void module();
    void e4m3Cast_data();
    void e4m3Cast();
    void vectorW4g32();
    void vectorW8();
    void vectorAsym();
    void vectorFp8();
    void vectorNvfp4();
    void vectorNvfp4GlobalScale();
    void badInput();

  private:
    nlohmann::json m_expected;
    std::optional<Checkpoint> m_fixture;
};

void TestSchemeGolden::initTestCase()
{
    m_expected = expectedJson("golden-schemes");
    m_fixture = Checkpoint::open(dataPath("golden-schemes/fixture"));
    QCOMPARE(m_expected["schemes"].size(), std::size_t{9});
}

void TestSchemeGolden::registry()
{
    // Every golden scheme is a product scheme with its format and config group.
    for (const auto& [name, scheme] : m_expected["schemes"].items()) {
        const auto* s = findWeightScheme(name);
        QVERIFY2(s, name.c_str());
        QVERIFY(s->product);
        QCOMPARE(std::string(s->format), scheme["format"].get<std::string>());
        QCOMPARE(s->weightsConfig(), scheme["config_group"]["weights"]);
        QCOMPARE(s->inputActivationsConfig(), scheme["config_group"]["input_activations"]);
    }
    QCOMPARE(findWeightScheme("w4a16:g128"), findWeightScheme("W4A16"));
    QCOMPARE(findWeightScheme("bf16"), &keepScheme());
    QVERIFY(!findWeightScheme("W3A16"));
    QVERIFY(!keepScheme().quantizes());
}

void TestSchemeGolden::module_data()
{
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<QString>("module");
    for (const auto& [scheme, body] : m_expected["schemes"].items()) {
        for (const auto& [module, _] : body["modules"].items()) {
            QTest::addRow("%s %s", scheme.c_str(), module.c_str())
                << QString::fromStdString(scheme) << QString::fromStdString(module);
        }
    }
}

void TestSchemeGolden::module()
{
    QFETCH(QString, scheme);
    QFETCH(QString, module);
    const auto& body = m_expected["schemes"][scheme.toStdString()];
    const auto& expected = body["modules"][module.toStdString()];
    const auto* ws = findWeightScheme(scheme.toStdString());
    QVERIFY(ws);
    const auto& codec = *ws->codec();
    const auto golden = SafetensorsFile::open(dataPath("golden-schemes/" + body["file"].get<std::string>()));
    const auto rows = rowsOf(*m_fixture, expected["source_tensor"].get<std::string>());

    // NVFP4: the global scale comes from the absmax over the whole fused set (schemes-spec §3.4.1).
    SchemeContext context;
    if (codec.usesGlobalScale()) {
        float absmax = weightAbsmax(rows);
        for (const auto& member : expected["fused_set"]) {
            absmax =
                std::max(absmax, weightAbsmax(rowsOf(*m_fixture, member.get<std::string>() + ".weight")));
        }
        context = codec.contextForAbsmax(rows.dtype, absmax);
        QCOMPARE(std::bit_cast<std::uint32_t>(context.globalScale),
                 static_cast<std::uint32_t>(
                     std::stoul(expected["global_scale_bits"].get<std::string>(), nullptr, 16)));
    }

    const auto parts = encodeWeight(codec, rows, context, cpuBackend(), 2);
    const auto tensors = codec.tensors(rows.rowCount, rows.cols, rows.dtype);
    QCOMPARE(tensors.size(), expected["tensors"].size());
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        const auto name = module.toStdString() + "." + tensors[i].suffix;
        const auto* info = golden->find(name);
        QVERIFY2(info, name.c_str());
        QCOMPARE(info->dtype, tensors[i].dtype);
        QCOMPARE(info->shape, tensors[i].shape);
        QVERIFY2(parts[i] == bytesOf(*golden, name), name.c_str());
    }

    // The same bytes encoded in blocks of rows (as the exporter streams) give the same result.
    std::vector<std::vector<std::byte>> blockParts;
    const std::size_t block = std::max<std::size_t>(codec.rowAlignment(), 16);
    for (std::size_t first = 0; first < rows.rowCount; first += block) {
        WeightRows part = rows;
        part.data = rows.row(first);
        part.firstRow = first;
        part.rowCount = std::min(block, rows.rowCount - first);
        codec.encode(part, context, blockParts, cpuBackend(), 1);
        for (std::size_t i = 0; i < tensors.size(); ++i) {
            if (tensors[i].rowsPerEntry == 0) {
                continue;
            }
            const auto [offset, size] = tensors[i].rowRange(first, part.rowCount);
            QCOMPARE(blockParts[i].size(), static_cast<std::size_t>(size));
            QVERIFY(std::memcmp(blockParts[i].data(), parts[i].data() + offset, size) == 0);
        }
    }

    // Statistics against CT's dequantization.
    const auto stats = computeErrorStats(rows, *ws, context, 2);
    QCOMPARE(stats.dequantNonFinite, expected["dequant_nonfinite"].get<std::uint64_t>());
    if (expected["rel_err_fro"].is_null()) {
        QVERIFY(!stats.relErr);
    } else {
        QVERIFY(stats.relErr);
        const double want = expected["rel_err_fro"].get<double>();
        QVERIFY2(std::fabs(*stats.relErr - want) <= 1e-12 * std::max(want, 1e-300),
                 qPrintable(QStringLiteral("%1 vs %2").arg(*stats.relErr, 0, 'g', 17).arg(want, 0, 'g', 17)));
        QCOMPARE(*stats.maxAbsErr, expected["max_abs_err"].get<double>());
    }

    // decode() of the written bytes is CT's dequantization: the same error as the statistics.
    std::vector<std::span<const std::byte>> spans(parts.begin(), parts.end());
    std::vector<float> decoded(rows.rowCount * rows.cols);
    codec.decode(spans, rows.dtype, rows.rowCount, rows.cols, decoded.data());
    double err2 = 0;
    double w2 = 0;
    bool finite = true;
    for (std::size_t i = 0; i < decoded.size(); ++i) {
        const double w = rtn::loadWeight(rows.dtype, rows.data, i);
        finite = finite && std::isfinite(decoded[i]);
        err2 += (w - decoded[i]) * (w - decoded[i]);
        w2 += w * w;
    }
    if (finite && stats.relErr) {
        QVERIFY(std::fabs(std::sqrt(err2 / w2) - *stats.relErr) <= 1e-12 * *stats.relErr + 1e-300);
    }
    QCOMPARE(!finite, stats.dequantNonFinite > 0);
}

void TestSchemeGolden::e4m3Cast_data()
{
    QTest::addColumn<float>("input");
    QTest::addColumn<int>("code");
    // schemes-spec §2.5.
    QTest::addRow("448") << 448.0f << 0x7E;
    QTest::addRow("456") << 456.0f << 0x7E;
    QTest::addRow("464 tie to 448") << 464.0f << 0x7E;
    QTest::addRow("464.5 NaN") << 464.5f << 0x7F;
    QTest::addRow("inf NaN") << INFINITY << 0x7F;
    QTest::addRow("-448") << -448.0f << 0xFE;
    QTest::addRow("2^-10 tie to 0") << 0x1p-10f << 0x00;
    QTest::addRow("3*2^-10 tie up") << 3 * 0x1p-10f << 0x02;
    QTest::addRow("1.0625 tie even") << 1.0625f << 0x38;
    QTest::addRow("1.1875 tie even") << 1.1875f << 0x3A;
    QTest::addRow("-0") << -0.0f << 0x80;
    QTest::addRow("smallest normal") << 0x1p-6f << 0x08;
    QTest::addRow("subnormal rounds to normal") << 0x1p-6f - 0x1p-12f << 0x08;
}

void TestSchemeGolden::e4m3Cast()
{
    QFETCH(float, input);
    QFETCH(int, code);
    QCOMPARE(static_cast<int>(minifloat::e4m3FromFloat(input)), code);
    // Every finite code decodes and re-encodes to itself.
    for (int c = 0; c < 256; ++c) {
        if ((c & 0x7F) != 0x7F) {
            QCOMPARE(static_cast<int>(minifloat::e4m3FromFloat(f8e4m3ToFloat(static_cast<std::uint8_t>(c)))),
                     c);
        }
    }
}

void TestSchemeGolden::vectorW4g32()
{
    // V1: W4A16:g32 [1, 64].
    const auto values = bf16s({7.5f, -7.5f, 0.5f, 1.5f, 2.5f, -2.5f, 3.5f, -0.5f}, 64);
    const auto parts =
        encodeWeight(*findWeightScheme("W4A16:g32")->codec(), bf16Rows(values, 1, 64), {}, cpuBackend());
    QCOMPARE(words(parts[0]), (std::vector<std::uint32_t>{0x8C6AA80F, 0x88888888, 0x88888888, 0x88888888,
                                                          0x88888888, 0x88888888, 0x88888888, 0x88888888}));
    QCOMPARE(words(parts[1]), (std::vector<std::uint32_t>{0x3C003F80}));
}

void TestSchemeGolden::vectorW8()
{
    // V3: the bf16 quotient ties of the 8-bit scheme.
    const auto values = bf16s({1.0f, 0.5f, -1.0f, 0.25f, -0.5f, 0x1p-7f, -0x1p-8f, 0.75f}, 128);
    const auto parts =
        encodeWeight(*findWeightScheme("W8A16")->codec(), bf16Rows(values, 1, 128), {}, cpuBackend());
    QCOMPARE(words(parts[0])[0], 0xA001C0FFu);
    QCOMPARE(words(parts[0])[1], 0xE0808140u);
    QCOMPARE(octets(parts[1]), (std::vector<std::uint8_t>{0x01, 0x3C}));
}

void TestSchemeGolden::vectorAsym()
{
    // V4: W4A16_ASYM [8, 128], one group per row.
    const float e = 0x1p-6f;
    std::vector<std::uint16_t> values(8 * 128, 0);
    const std::vector<std::vector<float>> rows = {
        {15 * e, 0.5f * e, 7.5f * e, 1 * e},
        {-15 * e, -0.5f * e, -7.5f * e, -1 * e},
        {-3 * e, 12 * e, 0.5f * e, -2.5f * e, 0.484375f * e},
        {-2.5f * e, 12.5f * e, 0.5f * e},
        {},
        {1.0f, -0x1p-8f, 0.5f, 0.25f},
        {-1.0f, 1.0f},
        {-0.1f, 0.3f, 0.2f, -0.05f},
    };
    for (std::size_t r = 0; r < rows.size(); ++r) {
        for (std::size_t k = 0; k < rows[r].size(); ++k) {
            values[r * 128 + k] = floatToBf16(rows[r][k]);
        }
    }
    const auto parts =
        encodeWeight(*findWeightScheme("W4A16_ASYM")->codec(), bf16Rows(values, 8, 128), {}, cpuBackend());
    std::vector<std::uint16_t> scales(8);
    std::memcpy(scales.data(), parts[1].data(), 16);
    QCOMPARE(scales,
             (std::vector<std::uint16_t>{0x3C80, 0x3C80, 0x3C80, 0x3C80, 0x3C00, 0x3D89, 0x3E09, 0x3CDB}));
    QCOMPARE(words(parts[2]), (std::vector<std::uint32_t>{0x470823F0}));
    const auto packed = words(parts[0]);
    QCOMPARE(packed[2 * 16], 0x333404F0u);
    QCOMPARE(packed[3 * 16], 0x222222E0u);
    QCOMPARE(packed[4 * 16], 0x88888888u);
}

void TestSchemeGolden::vectorFp8()
{
    // V5 and V6: FP8_DYNAMIC codes, -0, the eps scale of an all-zero row and the bf16 double rounding.
    const float u = 0x1p-10f;
    std::vector<std::uint16_t> values(32, 0);
    const float row0[16] = {448, -448,  1.0625f, 1.1875f, 17,       19, 232,   432,
                            u,   3 * u, 5 * u,   15 * u,  -1.3125f, 0,  -0.0f, 100};
    for (int k = 0; k < 16; ++k) {
        values[static_cast<std::size_t>(k)] = floatToBf16(row0[k] * u);
        values[16 + static_cast<std::size_t>(k)] = floatToBf16(k < 8 ? 0.0f : -0.0f);
    }
    const auto& codec = *findWeightScheme("FP8_DYNAMIC")->codec();
    auto parts = encodeWeight(codec, bf16Rows(values, 2, 16), {}, cpuBackend());
    QCOMPARE(octets(parts[0]),
             (std::vector<std::uint8_t>{0x7E, 0xFE, 0x38, 0x3A, 0x58, 0x5A, 0x76, 0x7E, 0x00, 0x02, 0x02,
                                        0x08, 0xBA, 0x00, 0x80, 0x6C, 0,    0,    0,    0,    0,    0,
                                        0,    0,    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80}));
    QCOMPARE(octets(parts[1]), (std::vector<std::uint8_t>{0x80, 0x3A, 0x00, 0x3C}));

    const auto v6 = bf16s({0.369140625f, 0.00087738037109375f, 0.0009765625f}, 16);
    parts = encodeWeight(codec, bf16Rows(v6, 1, 16), {}, cpuBackend());
    QCOMPARE(octets(parts[0]).at(0), std::uint8_t{0x7E});
    QCOMPARE(octets(parts[0]).at(1), std::uint8_t{0x38}); // not 0x39: the quotient is rounded to bf16 first
    QCOMPARE(octets(parts[0]).at(2), std::uint8_t{0x3A});
    QCOMPARE(octets(parts[1]), (std::vector<std::uint8_t>{0x58, 0x3A}));
}

void TestSchemeGolden::vectorNvfp4()
{
    // V7: NVFP4A16 [2, 32].
    const float a = 0x1p-12f;
    const float b = 0x1p-13f;
    const std::vector<float> r0 = {
        21 * 0x1p-9f, -6 * a,     0.25f * a, -0.25f * a, 0.75f * a, -0.75f * a, 1.25f * a, -1.25f * a,
        1.75f * a,    -1.75f * a, 2.5f * a,  -2.5f * a,  3.5f * a,  -3.5f * a,  5 * a,     -5 * a,
        6 * b,        -6 * b,     0.25f * b, -0.25f * b, 0.75f * b, -0.75f * b, 1.25f * b, -1.25f * b,
        1.75f * b,    -1.75f * b, 2.5f * b,  -2.5f * b,  3.5f * b,  -3.5f * b,  5 * b,     -5 * b};
    const std::vector<float> r1 = {6 * a,     -0.1f * a, -0.2f * a, -0.25f * a, 0.1f * a, 0.2f * a,
                                   0.25f * a, -0.0f,     0,         0.5f * a,   1 * a,    1.5f * a,
                                   2 * a,     3 * a,     4 * a,     -6 * a};
    std::vector<std::uint16_t> values(64, 0);
    for (std::size_t k = 0; k < 32; ++k) {
        values[k] = floatToBf16(r0[k]);
    }
    for (std::size_t k = 0; k < 16; ++k) {
        values[32 + k] = floatToBf16(r1[k]);
    }
    const auto rows = bf16Rows(values, 2, 32);
    const auto& codec = *findWeightScheme("NVFP4A16")->codec();
    const auto context = codec.contextForAbsmax(DType::BF16, weightAbsmax(rows));
    QCOMPARE(std::bit_cast<std::uint32_t>(context.globalScale), 0x47800000u);
    const auto parts = encodeWeight(codec, rows, context, cpuBackend());
    QCOMPARE(octets(parts[1]), (std::vector<std::uint8_t>{0x7E, 0x50, 0x58, 0x20}));
    QCOMPARE(octets(parts[0]),
             (std::vector<std::uint8_t>{0x87, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0xF7, 0x80, 0xA2,
                                        0xA2, 0xC4, 0xC4, 0xE6, 0xE6, 0x87, 0x88, 0x00, 0x00, 0x10, 0x32,
                                        0x54, 0xF6, 0,    0,    0,    0,    0,    0,    0,    0}));
    QCOMPARE(words(parts[2]), (std::vector<std::uint32_t>{0x47800000}));
}

void TestSchemeGolden::vectorNvfp4GlobalScale()
{
    // V9: 2688 / A evaluated as reciprocal-then-multiply in bf16: 12160, not float32(2688 / A) = 12179.257.
    const auto& codec = *findWeightScheme("NVFP4A16")->codec();
    QCOMPARE(codec.contextForAbsmax(DType::BF16, 0.220703125f).globalScale, 12160.0f);
    // A bf16-max absmax makes the reciprocal subnormal; an all-zero set falls back to the smallest normal.
    QVERIFY(codec.contextForAbsmax(DType::BF16, 3.3895313892515355e38f).globalScale < 1e-30f);
    QVERIFY(std::isfinite(codec.contextForAbsmax(DType::BF16, 0.0f).globalScale));
}

void TestSchemeGolden::badInput()
{
    // NaN weights name the tensor and index; a row block off the zero-point alignment is refused.
    auto values = bf16s({1.0f, NAN}, 128);
    const auto rows = bf16Rows(values, 1, 128);
    for (const auto& s : weightSchemes()) {
        if (!s.quantizes()) {
            continue;
        }
        std::vector<std::vector<std::byte>> parts;
        try {
            s.codec()->encode(rows, {}, parts, cpuBackend(), 1);
            QFAIL(qPrintable(QString::fromLatin1(s.name.data(), static_cast<int>(s.name.size()))));
        } catch (const std::exception& e) {
            QVERIFY2(std::string(e.what()).find("index 1") != std::string::npos, e.what());
        }
    }
    std::vector<std::uint16_t> zeros(16 * 128, 0);
    auto late = bf16Rows(zeros, 4, 128);
    late.firstRow = 4;
    std::vector<std::vector<std::byte>> parts;
    QVERIFY_THROWS_EXCEPTION(
        std::exception, findWeightScheme("W4A16_ASYM")->codec()->encode(late, {}, parts, cpuBackend(), 1));
}

QTEST_GUILESS_MAIN(TestSchemeGolden)
#include "tst_schemegolden.moc"
