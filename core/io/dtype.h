#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace spark {

/// @brief safetensors element types, in the reference "increasing alignment" order (format-spec §1.2).
/// The writer sorts by this order descending, so the enumerator order is part of the file format.
enum class DType : std::uint8_t {
    Bool,
    F4,
    F6_E2M3,
    F6_E3M2,
    U8,
    I8,
    F8_E5M2,
    F8_E4M3,
    F8_E8M0,
    F8_E4M3FNUZ,
    F8_E5M2FNUZ,
    I16,
    U16,
    F16,
    BF16,
    I32,
    U32,
    F32,
    C64,
    F64,
    I64,
    U64,
};

/// @brief Parses a safetensors dtype string ("BF16", "F8_E4M3", ...); nullopt for unknown strings.
std::optional<DType> parseDType(std::string_view text);
/// @brief The safetensors spelling of a dtype.
std::string_view dtypeName(DType dtype);
/// @brief Bits per element (4 for F4, 6 for F6_*, 8..64 otherwise).
int dtypeBits(DType dtype);
/// @brief True for BF16, F16 and F32: the source dtypes the quantizer accepts.
bool isQuantizableFloat(DType dtype);
/// @brief True for any floating-point dtype (F4 .. F64, excluding complex).
bool isFloatingPoint(DType dtype);

} // namespace spark
