#pragma once

#include "core/io/dtype.h"

#include <cstdint>
#include <string>
#include <vector>

namespace spark {

/// @brief One tensor entry of a safetensors header. Offsets are relative to the data section.
struct TensorInfo
{
    std::string name;
    DType dtype = DType::F32;
    std::vector<std::uint64_t> shape;
    std::uint64_t begin = 0;
    std::uint64_t end = 0;

    std::uint64_t byteSize() const { return end - begin; }
    /// Element count; callers only see validated entries, so this cannot overflow.
    std::uint64_t numel() const
    {
        std::uint64_t n = 1;
        for (auto d : shape) {
            n *= d;
        }
        return n;
    }
    /// "[4096, 4096]"
    std::string shapeText() const;
};

/// @brief Bytes taken by @p numel elements of @p dtype (sub-byte types rounded up).
std::uint64_t dataBytes(DType dtype, std::uint64_t numel);

} // namespace spark
