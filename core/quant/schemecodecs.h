#pragma once

// The codec of each scheme family and the helpers they share (internal to core/quant).

#include "core/quant/quanterror.h"
#include "core/quant/rtnscalar.h"
#include "core/quant/schemecodec.h"

#include <cstring>
#include <memory>

namespace spark {

std::unique_ptr<SchemeCodec> makeIntSymmetricCodec(const QuantScheme& scheme);
std::unique_ptr<SchemeCodec> makeIntAsymmetricCodec(int groupSize);
std::unique_ptr<SchemeCodec> makeFp8Codec();
std::unique_ptr<SchemeCodec> makeNvfp4Codec();

namespace codec {

/// @brief Throws QuantError unless @p rows holds BF16/F16/F32 values whose columns divide by @p group
/// (-1: any) and, with @p alignment, starts on an aligned row.
void validateRows(const WeightRows& rows, int group, std::size_t alignment = 1);

/// @brief The values of row @p r as floats; throws the NonFinite QuantError at the first NaN/Inf.
void loadRow(const WeightRows& rows, std::size_t r, float* out);

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
