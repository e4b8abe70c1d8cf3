#pragma once

#include "core/quant/weightrows.h"

#include <cstddef>
#include <cstdint>
#include <limits>

/// @brief Single-threaded SIMD kernels over a block of rows, dispatched at run time to the best
/// Highway target of the CPU. Internal to core/quant: callers use rtn.h, which splits the rows
/// across threads. Arguments are validated by the caller.
namespace spark::kernels {

/// Returned when every element was finite.
inline constexpr std::size_t kNoIndex = std::numeric_limits<std::size_t>::max();

/// @brief Scales of every (row, group); returns the first non-finite flat index in the block, or kNoIndex.
std::size_t computeScales(const WeightRows& rows, const QuantScheme& scheme, std::byte* scalesOut);

/// @brief Packed words of every row for the given scales; first non-finite index or kNoIndex.
std::size_t quantizeRows(const WeightRows& rows, const QuantScheme& scheme, const std::byte* scales,
                         std::int32_t* packedOut);

/// @brief The @p n weights of @p dtype (BF16, F16 or F32) at @p data as floats (exact, rtn::loadWeight) into
/// @p out; false when one of them is Inf or NaN (@p out is then unspecified).
bool loadFiniteWeights(DType dtype, const std::byte* data, std::size_t n, float* out);

/// @brief Name of the Highway target chosen on this CPU, e.g. "AVX2" (for perf output).
const char* targetName();

} // namespace spark::kernels
