// NVFP4A16 (schemes-spec §3.4): FP4 e2m1 values, an FP8 e4m3 scale per 16 weights and an FP32 global
// scale shared by the members of a fused set.
#include "core/quant/codeckernels.h"
#include "core/quant/rowblocks.h"
#include "core/quant/schemecodecs.h"

#include <bit>
#include <limits>

namespace spark {
namespace {

constexpr std::size_t kGroup = 16;
constexpr float kFp8Max = 448.0f;
constexpr float kFp4Max = 6.0f;
constexpr std::uint8_t kFp8Eps = 0x20;     // 0.125, float8_e4m3fn's eps: replaces a zero group scale
constexpr std::uint8_t kFp8MaxCode = 0x7E; // 448, the largest finite float8_e4m3fn code

float smallestNormal(DType dt)
{
    return dt == DType::F16 ? 0x1p-14f : 0x1p-126f;
}

codec::Nvfp4GroupScale groupScale(DType dt, const float* w, float globalScale)
{
    float absmax = 0;
    for (std::size_t k = 0; k < kGroup; ++k) {
        absmax = std::max(absmax, std::fabs(w[k]));
    }
    return codec::nvfp4GroupScale(dt, absmax, globalScale);
}

/// The scale of the block @p w (16 values) chosen by the `codes` method: RTN's scale first, then every finite
/// positive E4M3 code in ascending order, a later one kept only when its error sum of f32((D - w)^2), in f64,
/// is strictly smaller (ties keep RTN's code, then the smaller code). A code is skipped as soon as its
/// partial sum reaches the best, or when the clipped largest value alone does: the sums only grow, so the
/// result is that of the full search.
codec::Nvfp4GroupScale searchedScale(DType dt, const float* w, float globalScale)
{
    float absmax = 0;
    for (std::size_t k = 0; k < kGroup; ++k) {
        absmax = std::max(absmax, std::fabs(w[k]));
    }
    auto error = [&](float effective, double bound) {
        double sum = 0;
        for (std::size_t k = 0; k < kGroup && sum < bound; ++k) {
            const float d = rtn::roundToDType(
                                dt, minifloat::e2m1ToFloat(codec::nvfp4Nibble(w[k], effective)) * effective) -
                            w[k];
            sum += static_cast<double>(d * d);
        }
        return sum;
    };
    auto best = codec::nvfp4GroupScale(dt, absmax, globalScale);
    double bestError = error(best.effective, std::numeric_limits<double>::infinity());
    for (std::uint8_t code = 0x01; code <= kFp8MaxCode && bestError > 0; ++code) {
        const float effective = minifloat::e4m3ToFloat(code) / globalScale;
        const float clipped = absmax - rtn::roundToDType(dt, kFp4Max * effective);
        if (code == best.code || (clipped > 0 && static_cast<double>(clipped * clipped) >= bestError)) {
            continue;
        }
        if (const double e = error(effective, bestError); e < bestError) {
            best = {code, effective, false};
            bestError = e;
        }
    }
    return best;
}

/// The scale of group @p g of row @p r from the context's searched range (LC's get_qparams on the shrunk
/// statistics, under the global scale computed from them).
codec::Nvfp4GroupScale rangedScale(const WeightRows& rows, std::size_t r, std::size_t g,
                                   const SchemeContext& context)
{
    const auto [mn, mx] = codec::groupRange(*context.ranges, rows, r, g);
    return codec::nvfp4GroupScale(rows.dtype, std::max(-mn, mx), context.globalScale);
}

class Nvfp4Codec final : public CpuEncodedCodec
{
  public:
    std::vector<EncodedTensor> tensors(std::uint64_t out, std::uint64_t in, DType /*dtype*/) const override
    {
        return {{"weight_packed", DType::U8, {out, in / 2}, 1},
                {"weight_scale", DType::F8_E4M3, {out, in / kGroup}, 1},
                {"weight_global_scale", DType::F32, {1}, 0}};
    }
    bool usesGlobalScale() const override { return true; }
    bool searchesScaleCodes() const override { return true; }

    SchemeContext contextForAbsmax(DType dt, float absmax) const override
    {
        // 2688 / A as PyTorch evaluates it: the reciprocal first, both steps rounded to the dtype (V9).
        const float reciprocal = rtn::roundToDType(dt, 1.0f / std::max(absmax, smallestNormal(dt)));
        float gs = rtn::roundToDType(dt, reciprocal * (kFp8Max * kFp4Max));
        if (!std::isfinite(gs)) {
            gs = 1.0f;
        }
        return {gs};
    }

    std::vector<std::byte> constantBytes(const EncodedTensor& /*tensor*/, std::uint64_t /*out*/,
                                         std::uint64_t /*in*/, const SchemeContext& context) const override
    {
        const auto bits = std::bit_cast<std::array<std::byte, 4>>(context.globalScale);
        return {bits.begin(), bits.end()};
    }

    void decode(std::span<const std::span<const std::byte>> parts, DType dtype, std::size_t rowCount,
                std::size_t cols, float* out) const override
    {
        float globalScale;
        std::memcpy(&globalScale, parts[2].data(), 4);
        const std::size_t groups = cols / kGroup;
        for (std::size_t r = 0; r < rowCount; ++r) {
            for (std::size_t k = 0; k < cols; ++k) {
                const auto code = static_cast<std::uint8_t>(parts[1][r * groups + k / kGroup]);
                const float effective = minifloat::e4m3ToFloat(code) / globalScale;
                const auto byte = static_cast<std::uint8_t>(parts[0][(r * cols + k) / 2]);
                const auto bits = static_cast<std::uint8_t>(k % 2 ? byte >> 4 : byte & 0xF);
                out[r * cols + k] = rtn::roundToDType(dtype, minifloat::e2m1ToFloat(bits) * effective);
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
        for (std::size_t g0 = 0; g0 < rows.cols; g0 += kGroup) {
            const auto s = context.ranges ? rangedScale(rows, r, g0 / kGroup, context)
                           : context.scaleCodeSearch
                               ? searchedScale(rows.dtype, w.data() + g0, context.globalScale)
                               : groupScale(rows.dtype, w.data() + g0, context.globalScale);
            epsGroups += s.eps;
            for (std::size_t k = g0; k < g0 + kGroup; ++k) {
                const auto bits = codec::nvfp4Nibble(w[k], s.effective);
                out[k] = {minifloat::e2m1ToFloat(bits), s.effective, bits};
            }
        }
        return epsGroups;
    }

    int codeCount() const override { return 16; }
    double gridRange() const override { return kFp4Max; }
    std::size_t groupsPerRow(std::size_t cols) const override { return cols / kGroup; }

  private:
    /// The group scale codes always.
    void encodeRows(const WeightRows& rows, const SchemeContext& context,
                    std::vector<std::vector<std::byte>>& parts, unsigned threads, bool codes) const override
    {
        codec::validateRows(rows, static_cast<int>(kGroup));
        codec::sizeParts(tensors(rows.rowCount, rows.cols, rows.dtype), rows, parts);
        auto* packed = reinterpret_cast<std::uint8_t*>(parts[0].data());
        auto* scales = reinterpret_cast<std::uint8_t*>(parts[1].data());
        if (context.ranges || context.scaleCodeSearch) {
            // A searched range or scale code: the FP8 scale under the global scale, then the nibbles
            // (scalar).
            const std::size_t groups = rows.cols / kGroup;
            codec::forEachRow(rows, threads, [&](std::size_t r, const float* w) {
                for (std::size_t g = 0; g < groups; ++g) {
                    const auto s = context.ranges
                                       ? rangedScale(rows, r, g, context)
                                       : searchedScale(rows.dtype, w + g * kGroup, context.globalScale);
                    scales[r * groups + g] = s.code;
                    for (std::size_t k = g * kGroup; codes && k < (g + 1) * kGroup; k += 2) {
                        packed[(r * rows.cols + k) / 2] =
                            static_cast<std::uint8_t>(codec::nvfp4Nibble(w[k], s.effective) |
                                                      codec::nvfp4Nibble(w[k + 1], s.effective) << 4);
                    }
                }
            });
            return;
        }
        rowblocks::run(rows, 1, threads, [&](const WeightRows& part, std::size_t begin) {
            return kernels::encodeNvfp4Rows(part, context.globalScale,
                                            codes ? packed + begin * rows.cols / 2 : nullptr,
                                            scales + begin * (rows.cols / kGroup));
        });
    }
};

} // namespace

codec::Nvfp4GroupScale codec::nvfp4GroupScale(DType dt, float absmax, float globalScale)
{
    const float local = rtn::roundToDType(dt, absmax / kFp4Max);
    const float product = std::clamp(globalScale * local, -kFp8Max, kFp8Max);
    Nvfp4GroupScale s;
    s.code = minifloat::e4m3FromFloat(product);
    if ((s.code & 0x7F) == 0) {
        s.code = kFp8Eps;
        s.eps = true;
    }
    s.effective = minifloat::e4m3ToFloat(s.code) / globalScale;
    return s;
}

std::unique_ptr<SchemeCodec> makeNvfp4Codec()
{
    return std::make_unique<Nvfp4Codec>();
}

} // namespace spark
