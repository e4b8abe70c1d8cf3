#pragma once

#include "core/io/tensorinfo.h"

#include <map>
#include <string>
#include <vector>

namespace spark {

/// @brief What a writer knows of a tensor before its bytes exist.
struct TensorSpec
{
    std::string name;
    DType dtype = DType::BF16;
    std::vector<std::uint64_t> shape;

    std::uint64_t byteSize() const;
};

/// @brief The reference layout of one safetensors file (format-spec §1.4).
struct SafetensorsLayout
{
    std::string header;              ///< JSON padded with spaces to a multiple of 8 bytes
    std::vector<TensorInfo> tensors; ///< in data order, with offsets
    std::uint64_t dataBytes = 0;

    std::uint64_t fileSize() const { return 8 + header.size() + dataBytes; }
};

/// @brief Lays tensors out like the reference writer: dtype descending then name, contiguous from 0,
/// compact JSON header padded with 0x20 to N % 8 == 0. Throws std::invalid_argument on duplicate names
/// or a header over the 100 MB limit.
SafetensorsLayout layoutSafetensors(std::vector<TensorSpec> tensors,
                                    const std::map<std::string, std::string>& metadata = {{"format", "pt"}});

} // namespace spark
