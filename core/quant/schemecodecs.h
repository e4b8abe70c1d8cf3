#pragma once

// The codec of each scheme family and the helpers they share (internal to core/quant).

#include "core/quant/fp8e4m3.h"
#include "core/quant/quanterror.h"
#include "core/quant/rtnscalar.h"
#include "core/quant/schemecodec.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>

namespace spark {

std::unique_ptr<SchemeCodec> makeIntSymmetricCodec(const QuantScheme& scheme);
std::unique_ptr<SchemeCodec> makeIntAsymmetricCodec(int groupSize);
std::unique_ptr<SchemeCodec> makeFp8Codec();
std::unique_ptr<SchemeCodec> makeNvfp4Codec();

/// @brief A codec encoded on the CPU in one pass that yields every tensor: tensor 0 holds the codes, the
/// others (scales, zero points) are what the pass computes anyway, so a pass for one of those skips the
/// codes (the exporter writes one tensor at a time and would otherwise quantize the weight three times).
class CpuEncodedCodec : public SchemeCodec
{
  public:
    void encode(const WeightRows& rows, const SchemeContext& context,
                std::vector<std::vector<std::byte>>& parts, const QuantBackend& /*backend*/,
                unsigned threads) const final
    {
        encodeRows(rows, context, parts, threads, true);
    }

    void encodeTensor(const WeightRows& rows, const SchemeContext& context, std::size_t index,
                      std::vector<std::vector<std::byte>>& parts, const QuantBackend& /*backend*/,
                      unsigned threads) const final
    {
        encodeRows(rows, context, parts, threads, index == 0);
    }

  protected:
    /// @brief Fills every row-aligned part for @p rows, tensor 0 (the codes) only when @p codes.
    virtual void encodeRows(const WeightRows& rows, const SchemeContext& context,
                            std::vector<std::vector<std::byte>>& parts, unsigned threads,
                            bool codes) const = 0;
};

namespace codec {

/// @brief Throws QuantError unless @p rows holds BF16/F16/F32 values whose columns divide by @p group
/// (-1: any) and, with @p alignment, starts on an aligned row.
void validateRows(const WeightRows& rows, int group, std::size_t alignment = 1);

/// @brief The values of row @p r as floats; throws the NonFinite QuantError at the first NaN/Inf.
void loadRow(const WeightRows& rows, std::size_t r, float* out);

/// @brief Calls @p body(r, w) for every row r of @p rows with its values @p w as floats, rows spread over
/// @p threads (the searched-range paths of the codecs); throws the NonFinite QuantError at a NaN/Inf.
void forEachRow(const WeightRows& rows, unsigned threads,
                const std::function<void(std::size_t r, const float* w)>& body);

/// @brief The searched range of group @p g of row @p r of @p rows (SchemeContext::ranges).
inline std::pair<float, float> groupRange(const GroupRanges& ranges, const WeightRows& rows, std::size_t r,
                                          std::size_t g)
{
    const auto row = static_cast<std::size_t>(rows.firstRow) + r;
    return {ranges.min(row, g), ranges.max(row, g)};
}

/// @brief Resizes @p parts to @p tensors.size() and each row-aligned part to its byte range for @p rows.
void sizeParts(const std::vector<EncodedTensor>& tensors, const WeightRows& rows,
               std::vector<std::vector<std::byte>>& parts);

/// @brief Scale and zero point of one W4A16_ASYM group, exactly as CT's calculate_qparams computes them.
struct AsymGroupParams
{
    float scale = 0;
    int zeroPoint = 0;
    bool eps = false; ///< the scale was zero and became eps(dtype)
};

/// @brief The parameters of the @p width weights @p w of one group (schemes-spec §3.2).
AsymGroupParams asymGroupParams(DType dt, const float* w, std::size_t width);
/// @brief The same from the group's min(w, 0) and max(w, 0) (@p mn <= 0 <= @p mx).
AsymGroupParams asymGroupParams(DType dt, float mn, float mx);

/// @brief W4A16_ASYM's code of one weight: x = rnd(rnd(w / s) + zp) in the dtype, q = clamp(rint(x), -8, 7).
inline int quantizeAsym(DType dt, float w, const AsymGroupParams& p)
{
    const float x =
        rtn::roundToDType(dt, rtn::roundToDType(dt, w / p.scale) + static_cast<float>(p.zeroPoint));
    return static_cast<int>(rtn::roundHalfEven(std::clamp(x, -8.0f, 7.0f)));
}

/// @brief FP8_DYNAMIC's code of one weight for the row scale @p s: the quotient is rounded to the weight
/// dtype before the clamp and the FP8 cast (schemes-spec V6).
inline std::uint8_t fp8Code(DType dt, float w, float s)
{
    return minifloat::e4m3FromFloat(std::clamp(rtn::roundToDType(dt, w / s), -448.0f, 448.0f));
}

/// @brief The FP8 code of an NVFP4 group's scale and the float32 effective scale it gives.
struct Nvfp4GroupScale
{
    std::uint8_t code = 0;
    float effective = 0;
    bool eps = false; ///< the scale rounded to zero and became float8's eps 0.125
};

/// @brief NVFP4's scale of a group whose largest |w| is @p absmax, under @p globalScale (schemes-spec §3.4).
Nvfp4GroupScale nvfp4GroupScale(DType dt, float absmax, float globalScale);

/// @brief NVFP4's nibble (sign << 3 | e2m1 index) of one weight: f32(w / effective), clamped, cast.
inline std::uint8_t nvfp4Nibble(float w, float effective)
{
    return minifloat::e2m1FromFloat(std::clamp(w / effective, -6.0f, 6.0f));
}

inline std::int32_t loadI32(std::span<const std::byte> bytes, std::size_t i)
{
    std::int32_t v;
    std::memcpy(&v, bytes.data() + 4 * i, 4);
    return v;
}

inline void storeI32(std::byte* out, std::size_t i, std::int32_t v)
{
    std::memcpy(out + 4 * i, &v, 4);
}

} // namespace codec
} // namespace spark
