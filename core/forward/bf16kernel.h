#pragma once

#include <cstddef>
#include <cstdint>

/// @brief Rounding FP32 to BF16 a vector at a time (one copy per Highway target): the serving numerics round
/// every activation and every weight tile, so the scalar floatToBf16 would cost as much as the GEMM.
/// Both give exactly floatToBf16 (nearest even, NaN kept as a quiet NaN).
namespace spark::kernels {

/// @brief out[i] = floatToBf16(in[i]).
void toBf16(const float* in, std::size_t count, std::uint16_t* out);

/// @brief values[i] = bf16ToFloat(floatToBf16(values[i])).
void roundToBf16(float* values, std::size_t count);

} // namespace spark::kernels
