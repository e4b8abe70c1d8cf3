#pragma once

#include "core/io/dtype.h"
#include "core/quant/quantscheme.h"

#include <cstddef>
#include <cstdint>

namespace spark {

/// @brief CT's `decompress` of packed rows: w' = round_to_dtype(q * s), written in the weight dtype
/// (`[rowCount, cols]`, 2 or 4 bytes each). Values may overflow to ±Inf exactly as in CT (a bf16
/// -bf16max outlier gives q = -8 and -8 * s > bf16max); ErrorStats counts those. For verify and tests.
void dequantizeRows(DType dtype, const std::int32_t* packed, const std::byte* scales, std::size_t rowCount,
                    std::size_t cols, const QuantScheme& scheme, std::byte* out);

} // namespace spark
