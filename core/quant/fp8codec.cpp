// FP8_DYNAMIC weights (schemes-spec §3.3): float8_e4m3fn per element, one scale per output channel.
#include "core/quant/codeckernels.h"
#include "core/quant/rowblocks.h"
#include "core/quant/schemecodecs.h"

namespace spark {
namespace {

constexpr float kFp8Max = 448.0f;

class Fp8Codec final : public CpuEncodedCodec
{
  public:
    std::vector<EncodedTensor> tensors(std::uint64_t out, std::uint64_t in, DType dtype) const override
    {
        return {{"weight", DType::F8_E4M3, {out, in}, 1}, {"weight_scale", dtype, {out, 1}, 1}};
    }

    void decode(std::span<const std::span<const std::byte>> parts, DType dtype, std::size_t rowCount,
                std::size_t cols, float* out) const override
    {
        for (std::size_t r = 0; r < rowCount; ++r) {
            const float s = rtn::loadScale(dtype, parts[1].data(), r);
            for (std::size_t k = 0; k < cols; ++k) {
                const auto code = static_cast<std::uint8_t>(parts[0][r * cols + k]);
                out[r * cols + k] = rtn::roundToDType(dtype, minifloat::e4m3ToFloat(code) * s);
            }
        }
    }

    std::size_t traceRow(const WeightRows& rows, std::size_t r, const SchemeContext& context,
                         ElementCode* out) const override
    {
        thread_local std::vector<float> w; // traceRow runs once per row: no allocation per call
        w.resize(rows.cols);
        codec::loadRow(rows, r, w.data());
        float absmax = 0;
        if (context.ranges) {
            const auto [mn, mx] = codec::groupRange(*context.ranges, rows, r, 0);
            absmax = std::max(-mn, mx);
        } else {
            for (const float v : w) {
                absmax = std::max(absmax, std::fabs(v));
            }
        }
        const float s = rtn::scaleFromAbsmax(rows.dtype, absmax, kFp8Max);
        for (std::size_t k = 0; k < rows.cols; ++k) {
            const std::uint8_t code = codec::fp8Code(rows.dtype, w[k], s);
            out[k] = {minifloat::e4m3ToFloat(code), s, code};
        }
        return rtn::roundToDType(rows.dtype, absmax / kFp8Max) == 0.0f ? 1 : 0;
    }

    int codeCount() const override { return 256; }
    double gridRange() const override { return kFp8Max; }
    std::size_t groupsPerRow(std::size_t /*cols*/) const override { return 1; }

  private:
    /// The row scales always (weight_scale alone needs only the absmax).
    void encodeRows(const WeightRows& rows, const SchemeContext& context,
                    std::vector<std::vector<std::byte>>& parts, unsigned threads, bool codes) const override
    {
        codec::validateRows(rows, -1);
        codec::sizeParts(tensors(rows.rowCount, rows.cols, rows.dtype), rows, parts);
        auto* codeBytes = reinterpret_cast<std::uint8_t*>(parts[0].data());
        if (context.ranges) {
            // The searched row ranges: CT's scale of each, then the codes under it (scalar).
            codec::forEachRow(rows, threads, [&](std::size_t r, const float* w) {
                const auto [mn, mx] = codec::groupRange(*context.ranges, rows, r, 0);
                const float s = rtn::scaleFromAbsmax(rows.dtype, std::max(-mn, mx), kFp8Max);
                rtn::storeScale(rows.dtype, s, parts[1].data() + r * scaleBytes(rows.dtype));
                for (std::size_t k = 0; codes && k < rows.cols; ++k) {
                    codeBytes[r * rows.cols + k] = codec::fp8Code(rows.dtype, w[k], s);
                }
            });
            return;
        }
        rowblocks::run(rows, 1, threads, [&](const WeightRows& part, std::size_t begin) {
            return kernels::encodeFp8Rows(part, codes ? codeBytes + begin * rows.cols : nullptr,
                                          parts[1].data() + begin * scaleBytes(rows.dtype));
        });
    }
};

} // namespace

std::unique_ptr<SchemeCodec> makeFp8Codec()
{
    return std::make_unique<Fp8Codec>();
}

} // namespace spark
