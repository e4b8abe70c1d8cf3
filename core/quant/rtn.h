#pragma once

#include "core/quant/weightrows.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace spark {

/// @brief Scales `[rowCount, groupsPerRow(cols)]` of a block of rows, in the weight dtype, exactly as
/// compressed-tensors computes them (format-spec §2.3): s = round_to_dtype(fp32(absmax) / 7.5f)
/// (8-bit: 127.5f), an exact-zero scale replaced by eps(dtype) (the CT >= 0.13 rule).
/// SIMD with runtime dispatch, rows split over @p threads (0 = all cores).
/// Throws QuantError (NonFinite) naming the tensor and the first NaN/Inf flat index; nothing else
/// is reported for that block.
void computeScales(const WeightRows& rows, const QuantScheme& scheme, std::byte* scalesOut,
                   unsigned threads = 1);

/// @brief Packed words `[rowCount, packedWordsPerRow(cols)]` (int32, format-spec §2.2) for scales from
/// computeScales(). The quotient is rounded to the weight dtype before clamp and round-half-even
/// ("CT-compat" mode, golden G2). Throws QuantError like computeScales().
/// The exporter writes weight_packed and weight_scale at different places in the output, so it calls
/// computeScales() again per chunk (cheap) instead of holding every scale of a tensor.
void quantizeRows(const WeightRows& rows, const QuantScheme& scheme, const std::byte* scales,
                  std::int32_t* packedOut, unsigned threads = 1);

/// @brief The compressed-tensors tensors of one quantized weight (without weight_shape, which is
/// just `[rows, cols]`).
struct QuantizedWeight
{
    std::size_t rows = 0;
    std::size_t cols = 0;
    std::vector<std::byte> scales;    ///< weight dtype, `[rows, groupsPerRow]`
    std::vector<std::int32_t> packed; ///< `[rows, packedWordsPerRow]`
};

/// @brief computeScales() + quantizeRows() of a whole block into new buffers (tests, small tensors).
QuantizedWeight quantize(const WeightRows& rows, const QuantScheme& scheme, unsigned threads = 1);

} // namespace spark
