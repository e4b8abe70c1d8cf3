#pragma once

#include "core/io/tensorinfo.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace spark {

/// The reference reader's limit on the header length N (safetensors MAX_HEADER_SIZE).
inline constexpr std::uint64_t kMaxHeaderSize = 100'000'000;

/// @brief A validated safetensors header.
struct SafetensorsHeader
{
    std::uint64_t headerSize = 0;    ///< N: bytes of JSON after the 8-byte length
    std::vector<TensorInfo> tensors; ///< in data-offset order
    std::map<std::string, std::string> metadata;

    std::uint64_t dataStart() const { return 8 + headerSize; }
};

/// @brief Reads N from the first 8 bytes and checks it against the file size (format-spec §1.3 rows 1–3).
/// @param fileLabel used in error messages. Throws IoError.
std::uint64_t readHeaderLength(std::span<const std::byte> head, std::uint64_t fileSize,
                               const std::string& fileLabel);

/// @brief Parses and validates the header JSON exactly as the reference reader does (format-spec §1.3 rows
/// 4–10), and also rejects duplicate keys. Throws IoError naming @p fileLabel and, where relevant, the
/// tensor.
SafetensorsHeader parseSafetensorsHeader(std::string_view headerJson, std::uint64_t fileSize,
                                         const std::string& fileLabel);

/// @brief Validates a whole in-memory safetensors image (header length + header).
SafetensorsHeader parseSafetensorsImage(std::span<const std::byte> image, const std::string& fileLabel);

} // namespace spark
