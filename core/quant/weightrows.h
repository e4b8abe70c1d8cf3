#pragma once

#include "core/io/dtype.h"
#include "core/quant/quantscheme.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace spark {

/// @brief A block of consecutive rows of one 2-D weight `[out, in]`, row-major, in its source dtype
/// (BF16, F16 or F32, little-endian as in safetensors). Streaming callers pass one chunk at a time;
/// @ref firstRow and @ref tensor only serve to name the tensor and the global flat index in errors.
struct WeightRows
{
    DType dtype = DType::BF16;
    const std::byte* data = nullptr;
    std::size_t rowCount = 0;
    std::size_t cols = 0;
    std::uint64_t firstRow = 0;
    std::string_view tensor;

    /// Bytes per element of the source dtype (2 or 4).
    std::size_t elementBytes() const { return dtype == DType::F32 ? 4 : 2; }
    const std::byte* row(std::size_t r) const { return data + r * cols * elementBytes(); }

    /// @brief Throws QuantError unless the dtype is BF16/F16/F32, the scheme is valid and the
    /// columns are divisible by the group (format-spec §2.4).
    void validate(const QuantScheme& scheme) const;
    /// @brief Throws the NonFinite QuantError for @p blockIndex (a flat index inside this block).
    [[noreturn]] void throwNonFinite(std::size_t blockIndex) const;
};

/// @brief Bytes of one scale (the weight dtype: CT's `initialize_qparams` keeps scales in it).
inline std::size_t scaleBytes(DType dtype)
{
    return dtype == DType::F32 ? 4 : 2;
}

} // namespace spark
