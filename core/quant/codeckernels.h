#pragma once

#include "core/quant/rtnkernels.h"

#include <cstddef>
#include <cstdint>

/// @brief Single-threaded SIMD encoders of the W4A16_ASYM, FP8_DYNAMIC and NVFP4A16 codecs (internal to
/// core/quant; rowblocks::run splits the rows over threads). Each writes exactly what the scalar
/// definitions in schemecodecs.h give, byte for byte, and returns the flat index in the block of the
/// first NaN/Inf weight (nothing is written from that row on) or kNoIndex. A null value output computes
/// only the scales (the exporter writes one tensor at a time).
namespace spark::kernels {

/// @brief Per row: int4 codes q + 8 packed 8 per int32 word (@p packedOut, may be null), and per group of
/// @p groupSize the scale in the weight dtype (@p scalesOut) and the zero point in [-8, 7] (@p zeroPoints,
/// one byte per group; the caller packs 8 rows per word).
std::size_t encodeAsymRows(const WeightRows& rows, std::size_t groupSize, std::int32_t* packedOut,
                           std::byte* scalesOut, std::int8_t* zeroPoints);

/// @brief Per row: float8_e4m3fn codes (@p codesOut, may be null) and the row scale in the weight dtype.
std::size_t encodeFp8Rows(const WeightRows& rows, std::uint8_t* codesOut, std::byte* scalesOut);

/// @brief Per row: FP4 nibbles packed two per byte, the first in the low nibble (@p packedOut, may be
/// null), and per 16 weights the float8_e4m3fn scale code under @p globalScale (@p scaleCodesOut).
std::size_t encodeNvfp4Rows(const WeightRows& rows, float globalScale, std::uint8_t* packedOut,
                            std::uint8_t* scaleCodesOut);

} // namespace spark::kernels
