#pragma once

#include "core/io/dtype.h"

#include <cstddef>
#include <cstdint>

/// @brief The symmetric integer schemes' decode (W4A16 / W8A16 at any group size), one copy per Highway
/// target: what the audit and the forward run on every weight of a quantized checkpoint or plan.
namespace spark::kernels {

/// @brief Weights from one row of codes @p q (integers in [-2^(bits-1), 2^(bits-1))) and the row's group
/// scales in @p dtype (@p groupWidth columns per scale): q · s rounded to @p dtype, exactly
/// rtn::dequantizeValue, into @p out.
void dequantizeIntRow(const std::int8_t* q, const std::byte* scales, DType dtype, std::size_t cols,
                      std::size_t groupWidth, float* out);

} // namespace spark::kernels
