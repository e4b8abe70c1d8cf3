// Rounding methods against tests/data/golden-rounding: `mse` byte for byte with llm-compressor's
// memoryless_mse observer + the compressed-tensors compressors (the real code wrote the expected files, see
// the folder's README), on BF16, F16 and F32 weights with zero, one-signed, tiny and outlier groups and a
// module whose result depends on the global patience; `range` and `hessian` against independent naive
// searches; NVFP4 `codes` byte for byte with tools/reference/nvfp4_codes.py (its definition in numpy, from
// the spec); the stored scales of `hessian` matched back to their candidates.
#include "core/io/checkpoint.h"
#include "core/io/floatconv.h"
#include "core/io/safetensorsfile.h"
#include "core/quant/fp8e4m3.h"
#include "core/quant/modulecontexts.h"
#include "core/quant/quantbackend.h"
#include "core/quant/quanterror.h"
#include "core/quant/roundingsearch.h"
#include "core/quant/rtnscalar.h"
#include "core/quant/schemecodec.h"
#include "core/quant/storedranges.h"
#include "core/quant/weightscheme.h"
#include "goldentesthelpers.h"
#include "testsupport.h"

#include <QTest>
#include <cmath>
#include <limits>
#include <random>

using namespace spark;
using namespace spark::test;

namespace {

const char* const kModules[] = {"model.layers.0.mlp.gate_proj", "model.layers.0.mlp.up_proj",
                                "model.layers.0.self_attn.o_proj"};
// File name part -> product scheme.
const std::pair<const char*, const char*> kSchemes[] = {{"W4A16", "W4A16"},
                                                        {"W4A16-g64", "W4A16:g64"},
                                                        {"W4A16-g32", "W4A16:g32"},
                                                        {"W4A16-channel", "W4A16:channel"},
                                                        {"W4A16_ASYM", "W4A16_ASYM"},
                                                        {"W8A16", "W8A16"},
                                                        {"W8A16-channel", "W8A16:channel"},
                                                        {"FP8_DYNAMIC", "FP8_DYNAMIC"},
                                                        {"NVFP4A16", "NVFP4A16"}};

WeightRows rowsIn(const SafetensorsFile& file, const std::string& name)
{
    const auto* info = file.find(name);
    if (!info) {
        throw std::runtime_error("golden input lacks " + name);
    }
    return {info->dtype,
            file.bytes(*info).data(),
            static_cast<std::size_t>(info->shape[0]),
            static_cast<std::size_t>(info->shape[1]),
            0,
            info->name};
}

/// The contexts of every module under @p method: searched ranges, and NVFP4's global scale from the shrunk
/// absmax over the gate/up fused pair (LC Observer.get_global_scale).
std::map<std::string, SchemeContext> contexts(const SafetensorsFile& input, const WeightScheme& scheme,
                                              const RoundingMethod& method, unsigned threads)
{
    std::map<std::string, SchemeContext> out;
    for (const auto* module : kModules) {
        out[module].ranges =
            searchRanges(method, scheme, rowsIn(input, std::string(module) + ".weight"), threads);
    }
    if (scheme.codec()->usesGlobalScale()) {
        const auto dt = input.tensors().front().dtype;
        const float fused = std::max(out[kModules[0]].ranges->absmax, out[kModules[1]].ranges->absmax);
        for (const auto* module : kModules) {
            const float absmax = module == kModules[2] ? out[module].ranges->absmax : fused;
            out[module].globalScale = scheme.codec()->contextForAbsmax(dt, absmax).globalScale;
        }
    }
    return out;
}

// ---- the naive reference of `range` (independent of core/quant/candidatequant.h) --------------------------

float rnd(DType dt, float x)
{
    return rtn::roundToDType(dt, x);
}

/// Dequantized value of @p w under the range [lo, hi] of @p scheme, written from schemes-spec §3 directly.
float naiveDequant(const WeightScheme& scheme, DType dt, float lo, float hi, float w)
{
    const float absmax = std::max(-lo, hi);
    auto scaleOf = [&](float divisor) {
        const float s = rnd(dt, absmax / divisor);
        return s == 0.0f ? rtn::scaleEps(dt) : s;
    };
    switch (scheme.family) {
    case SchemeFamily::IntAsymmetric: {
        float s = rnd(dt, rnd(dt, hi - lo) / 15.0f);
        const float zf = std::clamp(rnd(dt, -8.0f - rnd(dt, lo / s)), -8.0f, 7.0f);
        if (s == 0.0f) {
            s = rtn::scaleEps(dt);
        }
        const float zp = std::isnan(zf) ? 0.0f : std::nearbyint(zf);
        const float q = std::nearbyint(std::clamp(rnd(dt, rnd(dt, w / s) + zp), -8.0f, 7.0f));
        return rnd(dt, (q - zp) * s);
    }
    case SchemeFamily::Fp8: {
        const float s = scaleOf(448.0f);
        const float x = std::clamp(rnd(dt, w / s), -448.0f, 448.0f);
        return rnd(dt, minifloat::e4m3ToFloat(minifloat::e4m3FromFloat(x)) * s);
    }
    case SchemeFamily::Nvfp4: {
        const float s = scaleOf(6.0f);
        const float x = std::fabs(std::clamp(rnd(dt, w / s), -6.0f, 6.0f));
        // Nearest e2m1 magnitude, ties to the even mantissa (schemes-spec §2.6).
        const float grid[] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
        float best = 0.0f;
        for (int i = 1; i < 8; ++i) {
            const float dNew = std::fabs(x - grid[i]), dOld = std::fabs(x - best);
            if (dNew < dOld || (dNew == dOld && i % 2 == 0)) {
                best = grid[i];
            }
        }
        return rnd(dt, std::copysign(best, w / s) * s);
    }
    default: {
        const int qmax = (1 << (scheme.bits - 1)) - 1;
        const float s = scaleOf(scheme.bits == 4 ? 7.5f : 127.5f);
        const float q = std::nearbyint(
            std::clamp(rnd(dt, w / s), static_cast<float>(-qmax - 1), static_cast<float>(qmax)));
        return rnd(dt, q * s);
    }
    }
}

/// `range` as docs/quantization.md defines it: p_i = 1 - i/100, i = 0..50; error sum of f32((Q(w)-w)^2) in
/// f64; strict
/// <; asymmetric: then min alone, then max alone.
std::pair<float, float> naiveRange(const WeightScheme& scheme, DType dt, const std::vector<float>& w)
{
    float lo = 0, hi = 0;
    for (const float v : w) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    auto shrink = [&](float m, int i) { return rnd(dt, m * static_cast<float>(1.0 - i / 100.0)); };
    auto error = [&](float a, float b) {
        double e = 0;
        for (const float v : w) {
            const float d = naiveDequant(scheme, dt, a, b, v) - v;
            e += static_cast<double>(d * d);
        }
        return e;
    };
    int bestLo = 0, bestHi = 0;
    double best = std::numeric_limits<double>::infinity();
    for (int i = 0; i <= 50; ++i) {
        const double e = error(shrink(lo, i), shrink(hi, i));
        if (e < best) {
            best = e;
            bestLo = bestHi = i;
        }
    }
    if (scheme.family == SchemeFamily::IntAsymmetric) {
        for (int i = 0; i <= 50; ++i) {
            const double e = error(shrink(lo, i), shrink(hi, bestHi));
            if (e < best) {
                best = e;
                bestLo = i;
            }
        }
        for (int i = 0; i <= 50; ++i) {
            const double e = error(shrink(lo, bestLo), shrink(hi, i));
            if (e < best) {
                best = e;
                bestHi = i;
            }
        }
    }
    return {shrink(lo, bestLo), shrink(hi, bestHi)};
}

/// A deterministic input Hessian XᵀX of @p cols columns: 2·cols token rows whose columns have scales from
/// 0.05 to 5 and one dead column (3, never active), so that H is far from a multiple of the identity.
std::vector<double> testHessian(std::size_t cols)
{
    std::mt19937 rng(static_cast<unsigned>(cols));
    std::normal_distribution<double> normal(0.0, 1.0);
    std::vector<double> x(2 * cols * cols);
    for (std::size_t t = 0; t < 2 * cols; ++t) {
        for (std::size_t c = 0; c < cols; ++c) {
            const double scale = c == 3 ? 0.0 : 0.05 + 4.95 * static_cast<double>((c * 37) % cols) / cols;
            x[t * cols + c] = scale * normal(rng);
        }
    }
    std::vector<double> h(cols * cols, 0.0);
    for (std::size_t t = 0; t < 2 * cols; ++t) {
        for (std::size_t a = 0; a < cols; ++a) {
            for (std::size_t b = 0; b < cols; ++b) {
                h[a * cols + b] += x[t * cols + a] * x[t * cols + b];
            }
        }
    }
    return h;
}

/// `hessian` as docs/quantization.md defines it: range's grid p_i = 1 - i/100, i = 0..50, on min and max
/// together; error (D - w)ᵀ H_gg (D - w) in f64 with H_gg the block of @p h ([cols, cols]) at the group's
/// columns from @p first; strict <.
std::pair<float, float> naiveHessian(const WeightScheme& scheme, DType dt, const std::vector<float>& w,
                                     const std::vector<double>& h, std::size_t cols, std::size_t first)
{
    float lo = 0, hi = 0;
    for (const float v : w) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    auto shrink = [&](float m, int i) { return rnd(dt, m * static_cast<float>(1.0 - i / 100.0)); };
    int bestStep = 0;
    double best = std::numeric_limits<double>::infinity();
    std::vector<double> d(w.size());
    for (int i = 0; i <= 50; ++i) {
        for (std::size_t k = 0; k < w.size(); ++k) {
            d[k] = static_cast<double>(naiveDequant(scheme, dt, shrink(lo, i), shrink(hi, i), w[k])) - w[k];
        }
        double e = 0;
        for (std::size_t a = 0; a < w.size(); ++a) {
            for (std::size_t b = 0; b < w.size(); ++b) {
                e += d[a] * h[(first + a) * cols + first + b] * d[b];
            }
        }
        if (e < best) {
            best = e;
            bestStep = i;
        }
    }
    return {shrink(lo, bestStep), shrink(hi, bestStep)};
}

std::vector<float> groupValues(const WeightRows& rows, std::size_t r, std::size_t g, std::size_t width)
{
    std::vector<float> w(width);
    for (std::size_t k = 0; k < width; ++k) {
        w[k] = rtn::loadWeight(rows.dtype, rows.row(r), g * width + k);
    }
    return w;
}

/// The first group of @p module whose searched range differs from @p naive(values, first column), as a
/// failure message ("" when every group agrees).
template <class Naive>
QString firstDifference(const char* module, const WeightRows& rows, const GroupRanges& ranges,
                        std::size_t width, Naive naive)
{
    for (std::size_t r = 0; r < rows.rowCount; ++r) {
        for (std::size_t g = 0; g < rows.cols / width; ++g) {
            const auto [lo, hi] = naive(groupValues(rows, r, g, width), g * width);
            if (lo != ranges.min(r, g) || hi != ranges.max(r, g)) {
                return QStringLiteral("%1 row %2 group %3: [%4, %5], naive [%6, %7]")
                    .arg(QString::fromLatin1(module))
                    .arg(r)
                    .arg(g)
                    .arg(ranges.min(r, g))
                    .arg(ranges.max(r, g))
                    .arg(lo)
                    .arg(hi);
            }
        }
    }
    return {};
}

} // namespace

class TestRoundingGolden : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void registry();
    void mse_data();
    void mse();
    void range_data();
    void range();
    void codes_data();
    void codes();
    void hessian_data();
    void hessian();
    void hessianStoredScalesMatch();
    void streamedAndThreaded();
    void rtnUntouched();
    void errors();
};

void TestRoundingGolden::registry()
{
    QCOMPARE(roundingMethods().size(), std::size_t{5});
    QCOMPARE(&rtnRounding(), findRoundingMethod("RTN"));
    QVERIFY(!rtnRounding().searches());
    const auto* mse = findRoundingMethod("mse");
    QVERIFY(mse && mse->ctExact && mse->observer == "memoryless_mse" && mse->steps == 20 &&
            mse->patience == 5);
    QCOMPARE(mse->shrink(19), static_cast<float>(1.0 - 19 / 100.0));
    const auto* range = findRoundingMethod("range");
    QVERIFY(range && !range->ctExact && range->steps == 51 && range->shrink(50) == 0.5f);
    QVERIFY(!findRoundingMethod("gptq"));
    QCOMPARE(roundingMethodNames(), std::string("rtn, mse, range, codes, hessian"));
    const auto* hessian = findRoundingMethod("hessian");
    QVERIFY(hessian && !hessian->ctExact && hessian->needsHessian() && hessian->steps == 51 &&
            hessian->shrink(50) == 0.5f && !range->needsHessian());
    for (const char* scheme : {"W4A16", "W4A16:channel", "W8A16"}) {
        QVERIFY2(hessian->appliesTo(*findWeightScheme(scheme)), scheme);
    }
    for (const char* scheme : {"W4A16_ASYM", "FP8_DYNAMIC", "NVFP4A16", "BF16"}) {
        QVERIFY2(!hessian->appliesTo(*findWeightScheme(scheme)), scheme);
    }
    const auto* codes = findRoundingMethod("codes");
    QVERIFY(codes && !codes->ctExact && !codes->searches() && !codes->isRtn() && rtnRounding().isRtn());
    QVERIFY(codes->appliesTo(*findWeightScheme("NVFP4A16")));
    for (const char* scheme : {"W4A16", "W8A16", "W4A16_ASYM", "FP8_DYNAMIC", "BF16"}) {
        QVERIFY2(!codes->appliesTo(*findWeightScheme(scheme)), scheme);
    }
}

void TestRoundingGolden::mse_data()
{
    QTest::addColumn<QString>("dtype");
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("scheme");
    for (const char* dt : {"BF16", "F16", "F32"}) {
        for (const auto& [file, scheme] : kSchemes) {
            QTest::addRow("%s %s", scheme, dt)
                << QString::fromLatin1(dt) << QString::fromLatin1(file) << QString::fromLatin1(scheme);
        }
    }
}

void TestRoundingGolden::mse()
{
    QFETCH(QString, dtype);
    QFETCH(QString, file);
    QFETCH(QString, scheme);
    const auto input =
        SafetensorsFile::open(dataPath("golden-rounding/input-" + dtype.toStdString() + ".safetensors"));
    const auto expected = SafetensorsFile::open(dataPath("golden-rounding/expected-" + file.toStdString() +
                                                         "-" + dtype.toStdString() + ".safetensors"));
    const auto* ws = findWeightScheme(scheme.toStdString());
    QVERIFY(ws);
    const auto& codec = *ws->codec();
    const auto backend = makeBackend(Backend::Cpu);
    const auto ctx = contexts(*input, *ws, *findRoundingMethod("mse"), 2);
    for (const auto* module : kModules) {
        const auto rows = rowsIn(*input, std::string(module) + ".weight");
        const auto parts = encodeWeight(codec, rows, ctx.at(module), *backend);
        const auto tensors = codec.tensors(rows.rowCount, rows.cols, rows.dtype);
        for (std::size_t i = 0; i < tensors.size(); ++i) {
            const std::string name = std::string(module) + "." + tensors[i].suffix;
            const auto want = bytesOf(*expected, name);
            QVERIFY2(!want.empty(), name.c_str());
            if (parts[i] != want) {
                std::size_t first = 0;
                while (first < want.size() && first < parts[i].size() && parts[i][first] == want[first]) {
                    ++first;
                }
                QFAIL(qPrintable(QStringLiteral("%1: first differing byte %2 of %3")
                                     .arg(QString::fromStdString(name))
                                     .arg(first)
                                     .arg(want.size())));
            }
        }
    }
}

void TestRoundingGolden::range_data()
{
    mse_data();
}

void TestRoundingGolden::range()
{
    QFETCH(QString, dtype);
    QFETCH(QString, scheme);
    const auto input =
        SafetensorsFile::open(dataPath("golden-rounding/input-" + dtype.toStdString() + ".safetensors"));
    const auto* ws = findWeightScheme(scheme.toStdString());
    const auto ctx = contexts(*input, *ws, *findRoundingMethod("range"), 1);
    for (const auto* module : kModules) {
        const auto rows = rowsIn(*input, std::string(module) + ".weight");
        const std::size_t width = ws->groupSize > 0 ? static_cast<std::size_t>(ws->groupSize) : rows.cols;
        const auto failure =
            firstDifference(module, rows, *ctx.at(module).ranges, width,
                            [&](const auto& w, std::size_t) { return naiveRange(*ws, rows.dtype, w); });
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
    }
}

void TestRoundingGolden::hessian_data()
{
    QTest::addColumn<QString>("dtype");
    QTest::addColumn<QString>("scheme");
    // Per channel the group is the whole row and the naive search costs 51 · cols² per row: one dtype
    // suffices there (the search's arithmetic is the same), which keeps the emulated runs short.
    for (const char* dt : {"BF16", "F16", "F32"}) {
        for (const char* scheme : {"W4A16", "W4A16:g32", "W8A16"}) {
            QTest::addRow("%s %s", scheme, dt) << QString::fromLatin1(dt) << QString::fromLatin1(scheme);
        }
    }
    QTest::addRow("W4A16:channel BF16") << QStringLiteral("BF16") << QStringLiteral("W4A16:channel");
}

void TestRoundingGolden::hessian()
{
    QFETCH(QString, dtype);
    QFETCH(QString, scheme);
    const auto input =
        SafetensorsFile::open(dataPath("golden-rounding/input-" + dtype.toStdString() + ".safetensors"));
    const auto* ws = findWeightScheme(scheme.toStdString());
    const auto& method = *findRoundingMethod("hessian");
    std::size_t differFromRange = 0;
    for (const auto* module : kModules) {
        const auto rows = rowsIn(*input, std::string(module) + ".weight");
        const auto h = testHessian(rows.cols);
        QVERIFY_THROWS_EXCEPTION(QuantError, searchRanges(method, *ws, rows, 2));
        const auto ranges = searchRanges(method, *ws, rows, 2, &h);
        const auto plain = searchRanges(*findRoundingMethod("range"), *ws, rows, 2);
        const std::size_t width = ws->groupSize > 0 ? static_cast<std::size_t>(ws->groupSize) : rows.cols;
        const auto failure =
            firstDifference(module, rows, *ranges, width, [&](const auto& w, std::size_t first) {
                return naiveHessian(*ws, rows.dtype, w, h, rows.cols, first);
            });
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
        for (std::size_t i = 0; i < ranges->maxs.size(); ++i) {
            differFromRange += ranges->maxs[i] != plain->maxs[i] ? 1 : 0;
        }
    }
    QVERIFY2(differFromRange > 0, "the Hessian changes no group's choice: the test would not see it ignored");
}

void TestRoundingGolden::hessianStoredScalesMatch()
{
    const auto input = SafetensorsFile::open(dataPath("golden-rounding/input-BF16.safetensors"));
    const auto& method = *findRoundingMethod("hessian");
    const auto backend = makeBackend(Backend::Cpu);
    for (const char* scheme : {"W4A16", "W8A16:channel"}) {
        const auto* ws = findWeightScheme(scheme);
        const auto rows = rowsIn(*input, std::string(kModules[0]) + ".weight");
        const auto h = testHessian(rows.cols);
        SchemeContext searched;
        searched.ranges = searchRanges(method, *ws, rows, 1, &h);
        const auto parts = encodeWeight(*ws->codec(), rows, searched, *backend);
        const auto tensors = ws->codec()->tensors(rows.rowCount, rows.cols, rows.dtype);
        std::size_t scaleIndex = tensors.size();
        for (std::size_t i = 0; i < tensors.size(); ++i) {
            scaleIndex = tensors[i].suffix == "weight_scale" ? i : scaleIndex;
        }
        QVERIFY(scaleIndex < tensors.size());
        std::vector<float> scales(parts[scaleIndex].size() / 2);
        toFloat(DType::BF16, parts[scaleIndex].data(), scales.size(), scales.data());

        StoredRangeMatch match(method, *ws, rows.rowCount, rows.cols, rows.dtype, scales);
        match.addRows(rows);
        SchemeContext matched;
        matched.ranges = match.finish();
        QVERIFY2(encodeWeight(*ws->codec(), rows, matched, *backend) == parts, scheme);

        // Twice the first group's scale is above its unshrunk candidate: no candidate of the method.
        scales[0] *= 2.0f;
        StoredRangeMatch tampered(method, *ws, rows.rowCount, rows.cols, rows.dtype, scales);
        try {
            tampered.addRows(rows);
            QFAIL("a scale no candidate has was matched");
        } catch (const QuantError& e) {
            QCOMPARE(e.kind(), QuantErrorKind::StoredMismatch);
            QVERIFY2(std::string(e.what()).find("row 0, group 0") != std::string::npos, e.what());
        }
    }
}

void TestRoundingGolden::codes_data()
{
    QTest::addColumn<QString>("dtype");
    for (const char* dt : {"BF16", "F16", "F32"}) {
        QTest::addRow("%s", dt) << QString::fromLatin1(dt);
    }
}

void TestRoundingGolden::codes()
{
    // Through moduleContexts, as export, verify and compare reach it: gate/up one fused set, o_proj alone.
    QFETCH(QString, dtype);
    const auto path = dataPath("golden-rounding/input-" + dtype.toStdString() + ".safetensors");
    const auto checkpoint = Checkpoint::open(path);
    const auto expected = SafetensorsFile::open(
        dataPath("golden-rounding/expected-NVFP4A16-codes-" + dtype.toStdString() + ".safetensors"));
    const auto& scheme = *findWeightScheme("NVFP4A16");
    const auto& codec = *scheme.codec();
    std::vector<ContextRequest> requests;
    for (const auto* module : kModules) {
        const std::string set = module == kModules[2] ? "o_proj" : "gate_up";
        requests.push_back(
            {checkpoint.find(std::string(module) + ".weight"), &scheme, findRoundingMethod("codes"), set});
    }
    const auto contexts = moduleContexts(checkpoint, requests, 2);
    const auto backend = makeBackend(Backend::Cpu);
    const auto input = SafetensorsFile::open(path);
    std::size_t searchedBlocks = 0;
    for (std::size_t m = 0; m < std::size(kModules); ++m) {
        QVERIFY(contexts[m].error.empty() && contexts[m].context.scaleCodeSearch);
        const auto rows = rowsIn(*input, std::string(kModules[m]) + ".weight");
        const auto parts = encodeWeight(codec, rows, contexts[m].context, *backend);
        SchemeContext rtn = contexts[m].context;
        rtn.scaleCodeSearch = false;
        const auto rtnParts = encodeWeight(codec, rows, rtn, *backend);
        const auto tensors = codec.tensors(rows.rowCount, rows.cols, rows.dtype);
        for (std::size_t i = 0; i < tensors.size(); ++i) {
            const std::string name = std::string(kModules[m]) + "." + tensors[i].suffix;
            QVERIFY2(parts[i] == bytesOf(*expected, name), name.c_str());
        }
        for (std::size_t b = 0; b < parts[1].size(); ++b) {
            searchedBlocks += parts[1][b] != rtnParts[1][b];
        }
    }
    // The data is not one where the search changes nothing.
    QVERIFY2(searchedBlocks > 50, qPrintable(QString::number(searchedBlocks)));
}

void TestRoundingGolden::streamedAndThreaded()
{
    // Row blocks in any split and any thread count give the same ranges as one pass (the global patience
    // is decided in finish()).
    const auto input = SafetensorsFile::open(dataPath("golden-rounding/input-BF16.safetensors"));
    const auto rows = rowsIn(*input, "model.layers.0.mlp.up_proj.weight");
    for (const char* method : {"mse", "range"}) {
        for (const char* scheme : {"W4A16:g32", "W4A16_ASYM", "NVFP4A16"}) {
            const auto& m = *findRoundingMethod(method);
            const auto& s = *findWeightScheme(scheme);
            const auto whole = searchRanges(m, s, rows, 1);
            RangeSearch search(m, s, rows.rowCount, rows.cols, rows.dtype);
            WeightRows first = rows, second = rows;
            first.rowCount = 5;
            second.data = rows.row(5);
            second.rowCount = rows.rowCount - 5;
            second.firstRow = 5;
            search.addRows(second, 2);
            search.addRows(first, 1);
            const auto split = search.finish();
            QCOMPARE(split->mins, whole->mins);
            QCOMPARE(split->maxs, whole->maxs);
            QCOMPARE(split->absmax, whole->absmax);
        }
    }
}

void TestRoundingGolden::rtnUntouched()
{
    // Ranges equal to each group's own min-max reproduce the RTN fast path byte for byte.
    const auto input = SafetensorsFile::open(dataPath("golden-rounding/input-BF16.safetensors"));
    const auto rows = rowsIn(*input, "model.layers.0.mlp.gate_proj.weight");
    const auto backend = makeBackend(Backend::Cpu);
    for (const auto& [file, name] : kSchemes) {
        const auto& s = *findWeightScheme(name);
        const std::size_t width = s.groupSize > 0 ? static_cast<std::size_t>(s.groupSize) : rows.cols;
        auto ranges = std::make_shared<GroupRanges>();
        ranges->groupsPerRow = rows.cols / width;
        for (std::size_t r = 0; r < rows.rowCount; ++r) {
            for (std::size_t g = 0; g < ranges->groupsPerRow; ++g) {
                float lo = 0, hi = 0;
                for (const float v : groupValues(rows, r, g, width)) {
                    lo = std::min(lo, v);
                    hi = std::max(hi, v);
                }
                ranges->mins.push_back(lo);
                ranges->maxs.push_back(hi);
            }
        }
        SchemeContext plain = s.codec()->contextForAbsmax(rows.dtype, weightAbsmax(rows));
        SchemeContext ranged = plain;
        ranged.ranges = ranges;
        QVERIFY2(encodeWeight(*s.codec(), rows, plain, *backend) ==
                     encodeWeight(*s.codec(), rows, ranged, *backend),
                 name);
    }
}

void TestRoundingGolden::errors()
{
    std::vector<std::uint16_t> data(2 * 128, floatToBf16(0.5f));
    data[130] = 0x7FC0; // NaN in row 1
    WeightRows rows{DType::BF16,         reinterpret_cast<const std::byte*>(data.data()), 2, 128, 0,
                    "layers.0.fc.weight"};
    try {
        searchRanges(*findRoundingMethod("mse"), *findWeightScheme("W4A16"), rows);
        QFAIL("no error for a NaN");
    } catch (const QuantError& e) {
        QVERIFY(std::string(e.what()).find("row 1, column 2") != std::string::npos);
        QCOMPARE(e.tensor(), std::string("layers.0.fc.weight"));
    }
    QVERIFY_THROWS_EXCEPTION(QuantError,
                             RangeSearch(rtnRounding(), *findWeightScheme("W4A16"), 2, 128, DType::BF16));
    QVERIFY_THROWS_EXCEPTION(
        QuantError, RangeSearch(*findRoundingMethod("mse"), *findWeightScheme("W4A16"), 2, 100, DType::BF16));
}

QTEST_GUILESS_MAIN(TestRoundingGolden)
#include "tst_roundinggolden.moc"
