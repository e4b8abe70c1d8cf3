#pragma once

#include <cstddef>
#include <cstdint>

namespace spark {

/// @brief Packs one row of unsigned codes u = q + 2^(bits-1) into int32 words (format-spec §2.2,
/// CT `pack_to_int32`, packed_dim = 1): 4-bit puts element 8j in the LOW nibble of word j, 8-bit puts
/// element 4j in the low byte. A partial last word is padded with 0 in the unsigned domain.
/// Writes ceil(cols * bits / 32) words.
void packUnsignedRow(const std::uint8_t* u, std::size_t cols, int bits, std::int32_t* words);

/// @brief packUnsignedRow() for signed values q in [-2^(bits-1), 2^(bits-1) - 1].
void packRow(const std::int8_t* q, std::size_t cols, int bits, std::int32_t* words);

/// @brief The inverse (CT `unpack_from_int32`): q = ((word >> (bits*t)) & mask) - 2^(bits-1).
void unpackRow(const std::int32_t* words, std::size_t cols, int bits, std::int8_t* q);

} // namespace spark
