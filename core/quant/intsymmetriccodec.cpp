// W4A16 / W8A16 at any group size (schemes-spec §3.1): the SIMD and CUDA kernels of core/quant/rtn.h
// encode; the scalar definitions of rtnscalar.h trace and decode.
#include "core/quant/dequantkernel.h"
#include "core/quant/packing.h"
#include "core/quant/quantbackend.h"
#include "core/quant/schemecodecs.h"

namespace spark {
namespace {

/// Index of weight_scale in tensors().
constexpr std::size_t kScaleTensor = 1;

class IntSymmetricCodec final : public SchemeCodec
{
  public:
    explicit IntSymmetricCodec(const QuantScheme& scheme) : m_scheme(scheme) {}

    std::vector<EncodedTensor> tensors(std::uint64_t out, std::uint64_t in, DType dtype) const override
    {
        const auto cols = static_cast<std::size_t>(in);
        return {{"weight_packed", DType::I32, {out, m_scheme.packedWordsPerRow(cols)}, 1},
                {"weight_scale", dtype, {out, m_scheme.groupsPerRow(cols)}, 1},
                {"weight_shape", DType::I64, {2}, 0}};
    }

    void encode(const WeightRows& rows, const SchemeContext& context,
                std::vector<std::vector<std::byte>>& parts, const QuantBackend& backend,
                unsigned threads) const override
    {
        codec::sizeParts(tensors(rows.rowCount, rows.cols, rows.dtype), rows, parts);
        if (context.ranges) {
            encodeRanged(rows, *context.ranges, parts, &backend, threads);
            return;
        }
        backend.quantizeBlock(rows, m_scheme, parts[1].data(),
                              reinterpret_cast<std::int32_t*>(parts[0].data()), threads);
    }

    void encodeTensor(const WeightRows& rows, const SchemeContext& context, std::size_t index,
                      std::vector<std::vector<std::byte>>& parts, const QuantBackend& backend,
                      unsigned threads) const override
    {
        if (index != kScaleTensor) {
            encode(rows, context, parts, backend, threads);
            return;
        }
        codec::sizeParts(tensors(rows.rowCount, rows.cols, rows.dtype), rows, parts);
        if (context.ranges) {
            encodeRanged(rows, *context.ranges, parts, nullptr, threads);
            return;
        }
        backend.computeScales(rows, m_scheme, parts[kScaleTensor].data(), threads);
    }

    void decode(std::span<const std::span<const std::byte>> parts, DType dtype, std::size_t rowCount,
                std::size_t cols, float* out) const override
    {
        const std::size_t words = m_scheme.packedWordsPerRow(cols);
        const std::size_t groups = m_scheme.groupsPerRow(cols);
        const std::size_t width = m_scheme.groupWidth(cols);
        std::vector<std::int32_t> rowWords(words);
        std::vector<std::int8_t> q(cols);
        for (std::size_t r = 0; r < rowCount; ++r) {
            std::memcpy(rowWords.data(), parts[0].data() + r * words * 4, words * 4);
            unpackRow(rowWords.data(), cols, m_scheme.bits, q.data());
            kernels::dequantizeIntRow(
                q.data(), parts[1].data() + r * groups * (static_cast<std::size_t>(dtypeBits(dtype)) / 8),
                dtype, cols, width, out + r * cols);
        }
    }

    std::size_t traceRow(const WeightRows& rows, std::size_t r, const SchemeContext& context,
                         ElementCode* out) const override
    {
        thread_local std::vector<float> w; // traceRow runs once per row: no allocation per call
        w.resize(rows.cols);
        codec::loadRow(rows, r, w.data());
        const std::size_t width = m_scheme.groupWidth(rows.cols);
        std::size_t epsGroups = 0;
        for (std::size_t g0 = 0; g0 < rows.cols; g0 += width) {
            float absmax = 0;
            if (context.ranges) {
                const auto [mn, mx] = codec::groupRange(*context.ranges, rows, r, g0 / width);
                absmax = std::max(-mn, mx);
            } else {
                for (std::size_t k = g0; k < g0 + width; ++k) {
                    absmax = std::max(absmax, std::fabs(w[k]));
                }
            }
            const float s = rtn::scaleFromAbsmax(rows.dtype, absmax, m_scheme.scaleDivisor());
            epsGroups += rtn::roundToDType(rows.dtype, absmax / m_scheme.scaleDivisor()) == 0.0f;
            for (std::size_t k = g0; k < g0 + width; ++k) {
                const int q = rtn::quantizeValue(rows.dtype, w[k], s, m_scheme.qMin(), m_scheme.qMax());
                out[k] = {static_cast<float>(q), s, static_cast<std::uint16_t>(q - m_scheme.qMin())};
            }
        }
        return epsGroups;
    }

    int codeCount() const override { return 1 << m_scheme.bits; }
    double gridRange() const override { return m_scheme.packOffset(); }
    std::size_t groupsPerRow(std::size_t cols) const override { return m_scheme.groupsPerRow(cols); }

  private:
    /// The searched-range path: the scale CT's calculate_qparams gives each group's range (no weight read),
    /// then, with a @p backend, the RTN codes under those scales by its kernel (SIMD or CUDA), which also
    /// rejects non-finite weights.
    void encodeRanged(const WeightRows& rows, const GroupRanges& ranges,
                      std::vector<std::vector<std::byte>>& parts, const QuantBackend* backend,
                      unsigned threads) const
    {
        rows.validate(m_scheme);
        const std::size_t groups = m_scheme.groupsPerRow(rows.cols);
        const std::size_t bytes = scaleBytes(rows.dtype);
        std::byte* scales = parts[kScaleTensor].data();
        for (std::size_t r = 0; r < rows.rowCount; ++r) {
            for (std::size_t g = 0; g < groups; ++g) {
                const auto [mn, mx] = codec::groupRange(ranges, rows, r, g);
                const float s = rtn::scaleFromAbsmax(rows.dtype, std::max(-mn, mx), m_scheme.scaleDivisor());
                rtn::storeScale(rows.dtype, s, scales + (r * groups + g) * bytes);
            }
        }
        if (backend) {
            backend->quantizeRows(rows, m_scheme, scales, reinterpret_cast<std::int32_t*>(parts[0].data()),
                                  threads);
        }
    }

    QuantScheme m_scheme;
};

} // namespace

std::unique_ptr<SchemeCodec> makeIntSymmetricCodec(const QuantScheme& scheme)
{
    return std::make_unique<IntSymmetricCodec>(scheme);
}

} // namespace spark
