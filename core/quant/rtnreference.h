#pragma once

#include "core/quant/weightrows.h"

#include <cstddef>
#include <cstdint>

/// @brief The plain scalar definition of RTN (format-spec §2.3, CT-compat mode), one element at a
/// time, single-threaded. It is the yardstick the SIMD kernels are tested against; production code
/// calls spark::computeScales / spark::quantizeRows (rtn.h), which must give identical bytes.
namespace spark::reference {

/// @brief Scales `[rowCount, groupsPerRow]` in the weight dtype. Throws QuantError on NaN/Inf.
void computeScales(const WeightRows& rows, const QuantScheme& scheme, std::byte* scalesOut);

/// @brief Quantized values `[rowCount, cols]` for the given scales. Throws QuantError on NaN/Inf.
void quantizeValues(const WeightRows& rows, const QuantScheme& scheme, const std::byte* scales,
                    std::int8_t* qOut);

/// @brief quantizeValues() followed by packing: `[rowCount, packedWordsPerRow]` int32 words.
void quantizeRows(const WeightRows& rows, const QuantScheme& scheme, const std::byte* scales,
                  std::int32_t* packedOut);

} // namespace spark::reference
