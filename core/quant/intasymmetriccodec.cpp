// W4A16_ASYM (schemes-spec §3.2): int4 with a zero point per group, packed along the output dimension.
#include "core/quant/codeckernels.h"
#include "core/quant/packing.h"
#include "core/quant/rowblocks.h"
#include "core/quant/schemecodecs.h"

#include <cmath>

namespace spark {
namespace {

constexpr int kQMin = -8;
constexpr int kQMax = 7;
constexpr std::size_t kRowsPerZeroWord = 8; // 4-bit zero points, 8 rows per int32 word

class IntAsymmetricCodec final : public CpuEncodedCodec
{
  public:
    explicit IntAsymmetricCodec(int groupSize) : m_group(groupSize) {}

    std::vector<EncodedTensor> tensors(std::uint64_t out, std::uint64_t in, DType dtype) const override
    {
        const auto groups = in / static_cast<std::uint64_t>(m_group);
        return {{"weight_packed", DType::I32, {out, (in + 7) / 8}, 1},
                {"weight_scale", dtype, {out, groups}, 1},
                {"weight_zero_point",
                 DType::I32,
                 {(out + kRowsPerZeroWord - 1) / kRowsPerZeroWord, groups},
                 kRowsPerZeroWord},
                {"weight_shape", DType::I64, {2}, 0}};
    }
    std::size_t rowAlignment() const override { return kRowsPerZeroWord; }

    void decode(std::span<const std::span<const std::byte>> parts, DType dtype, std::size_t rowCount,
                std::size_t cols, float* out) const override
    {
        const std::size_t groups = cols / static_cast<std::size_t>(m_group);
        const std::size_t words = (cols + 7) / 8;
        std::vector<std::int32_t> rowWords(words);
        std::vector<std::int8_t> q(cols);
        for (std::size_t r = 0; r < rowCount; ++r) {
            std::memcpy(rowWords.data(), parts[0].data() + r * words * 4, words * 4);
            unpackRow(rowWords.data(), cols, 4, q.data());
            for (std::size_t k = 0; k < cols; ++k) {
                const std::size_t g = k / static_cast<std::size_t>(m_group);
                const float s = rtn::loadScale(dtype, parts[1].data(), r * groups + g);
                const auto word =
                    static_cast<std::uint32_t>(codec::loadI32(parts[2], (r / kRowsPerZeroWord) * groups + g));
                const int zp = static_cast<int>((word >> (4 * (r % kRowsPerZeroWord))) & 0xFu) - 8;
                out[r * cols + k] = rtn::roundToDType(dtype, static_cast<float>(q[k] - zp) * s);
            }
        }
    }

    std::size_t traceRow(const WeightRows& rows, std::size_t r, const SchemeContext& context,
                         ElementCode* out) const override
    {
        thread_local std::vector<float> w; // traceRow runs once per row: no allocation per call
        w.resize(rows.cols);
        codec::loadRow(rows, r, w.data());
        std::size_t epsGroups = 0;
        for (std::size_t g0 = 0; g0 < rows.cols; g0 += static_cast<std::size_t>(m_group)) {
            const auto p = groupParams(rows, r, context, w.data(), g0);
            epsGroups += p.eps;
            for (std::size_t k = g0; k < g0 + static_cast<std::size_t>(m_group); ++k) {
                const int q = codec::quantizeAsym(rows.dtype, w[k], p);
                out[k] = {static_cast<float>(q - p.zeroPoint), p.scale,
                          static_cast<std::uint16_t>(q - kQMin)};
            }
        }
        return epsGroups;
    }

    int codeCount() const override { return 16; }
    double gridRange() const override { return 16; } // w/s spans up to 15 steps on either side of zero
    std::size_t groupsPerRow(std::size_t cols) const override
    {
        return cols / static_cast<std::size_t>(m_group);
    }

  private:
    /// The parameters of the group starting at column @p g0 of row @p r (values @p w): from its own
    /// min-max, or from the searched range of the context.
    codec::AsymGroupParams groupParams(const WeightRows& rows, std::size_t r, const SchemeContext& context,
                                       const float* w, std::size_t g0) const
    {
        const auto width = static_cast<std::size_t>(m_group);
        if (!context.ranges) {
            return codec::asymGroupParams(rows.dtype, w + g0, width);
        }
        const auto [mn, mx] = codec::groupRange(*context.ranges, rows, r, g0 / width);
        return codec::asymGroupParams(rows.dtype, mn, mx);
    }

    /// Scales and zero points always.
    void encodeRows(const WeightRows& rows, const SchemeContext& context,
                    std::vector<std::vector<std::byte>>& parts, unsigned threads, bool codes) const override
    {
        codec::validateRows(rows, m_group, kRowsPerZeroWord);
        codec::sizeParts(tensors(rows.rowCount, rows.cols, rows.dtype), rows, parts);
        const std::size_t groups = rows.cols / static_cast<std::size_t>(m_group);
        const std::size_t words = (rows.cols + 7) / 8;
        auto* packed = reinterpret_cast<std::int32_t*>(parts[0].data());
        std::vector<std::int8_t> zeroPoints(rows.rowCount * groups);
        if (context.ranges) {
            // The searched ranges: CT's parameters of each, then the RTN codes under them (scalar).
            const std::size_t width = static_cast<std::size_t>(m_group);
            codec::forEachRow(rows, threads, [&](std::size_t r, const float* w) {
                std::vector<std::uint8_t> u(codes ? rows.cols : 0);
                for (std::size_t g = 0; g < groups; ++g) {
                    const auto [mn, mx] = codec::groupRange(*context.ranges, rows, r, g);
                    const auto p = codec::asymGroupParams(rows.dtype, mn, mx);
                    rtn::storeScale(rows.dtype, p.scale,
                                    parts[1].data() + (r * groups + g) * scaleBytes(rows.dtype));
                    zeroPoints[r * groups + g] = static_cast<std::int8_t>(p.zeroPoint);
                    for (std::size_t k = g * width; codes && k < (g + 1) * width; ++k) {
                        u[k] = static_cast<std::uint8_t>(codec::quantizeAsym(rows.dtype, w[k], p) + 8);
                    }
                }
                if (codes) {
                    packUnsignedRow(u.data(), rows.cols, 4, packed + r * words);
                }
            });
        } else {
            rowblocks::run(rows, kRowsPerZeroWord, threads, [&](const WeightRows& part, std::size_t begin) {
                return kernels::encodeAsymRows(part, static_cast<std::size_t>(m_group),
                                               codes ? packed + begin * words : nullptr,
                                               parts[1].data() + begin * groups * scaleBytes(rows.dtype),
                                               zeroPoints.data() + begin * groups);
            });
        }
        // Zero points + 8 as nibbles along the output dimension: row 8u + t in bits 4t of word (u, g);
        // rows past the end pad with 0.
        for (std::size_t unit = 0; unit * kRowsPerZeroWord < rows.rowCount; ++unit) {
            for (std::size_t g = 0; g < groups; ++g) {
                std::uint32_t word = 0;
                for (std::size_t t = 0; t < kRowsPerZeroWord; ++t) {
                    const std::size_t r = unit * kRowsPerZeroWord + t;
                    if (r < rows.rowCount) {
                        word |= static_cast<std::uint32_t>(zeroPoints[r * groups + g] + 8) << (4 * t);
                    }
                }
                codec::storeI32(parts[2].data(), unit * groups + g, static_cast<std::int32_t>(word));
            }
        }
    }

    int m_group;
};

} // namespace

namespace codec {

AsymGroupParams asymGroupParams(DType dt, const float* w, std::size_t width)
{
    float mn = 0.0f; // min(min_g, 0), max(max_g, 0): zero is always representable
    float mx = 0.0f;
    for (std::size_t k = 0; k < width; ++k) {
        mn = std::min(mn, w[k]);
        mx = std::max(mx, w[k]);
    }
    return asymGroupParams(dt, mn, mx);
}

AsymGroupParams asymGroupParams(DType dt, float mn, float mx)
{
    AsymGroupParams p;
    // The difference is rounded to the dtype before the division.
    p.scale = rtn::roundToDType(dt, rtn::roundToDType(dt, mx - mn) / 15.0f);
    // 0/0 is NaN for an all-zero group; the clamp keeps NaN and int8(NaN) is 0 on the CPU (spec: zp 0).
    float zf = rtn::roundToDType(dt, static_cast<float>(kQMin) - rtn::roundToDType(dt, mn / p.scale));
    zf = std::clamp(zf, static_cast<float>(kQMin), static_cast<float>(kQMax));
    if (p.scale == 0.0f) { // after the zero point, as CT does
        p.scale = rtn::scaleEps(dt);
        p.eps = true;
    }
    p.zeroPoint = std::isnan(zf) ? 0 : static_cast<int>(rtn::roundHalfEven(std::clamp(zf, -128.0f, 127.0f)));
    return p;
}

} // namespace codec

std::unique_ptr<SchemeCodec> makeIntAsymmetricCodec(int groupSize)
{
    return std::make_unique<IntAsymmetricCodec>(groupSize);
}

} // namespace spark
