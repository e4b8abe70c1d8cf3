#pragma once

#include "core/io/safetensorslayout.h"

#include <cstddef>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace spark {

/// @brief A tensor whose bytes are already in memory (small outputs: capture files, logit dumps).
struct TensorBytes
{
    TensorSpec spec;
    std::vector<std::byte> bytes; ///< exactly spec.byteSize() bytes, little-endian
};

/// @brief The bytes of @p values as stored (little-endian hosts, like every platform Sparkulator builds for).
template <typename T> std::vector<std::byte> bytesOf(const std::vector<T>& values)
{
    std::vector<std::byte> out(values.size() * sizeof(T));
    std::memcpy(out.data(), values.data(), out.size());
    return out;
}

/// @brief Writes one safetensors file with @p metadata atomically: a temporary file beside @p path,
/// fsynced, then renamed over it, so a failure (full disk) never leaves a partial file. Throws IoError
/// naming the file, std::invalid_argument when a tensor's bytes do not match its spec.
void writeSafetensorsFile(const std::filesystem::path& path, std::vector<TensorBytes> tensors,
                          const std::map<std::string, std::string>& metadata);

class ByteSink;

/// @brief The same file written as its tensors' bytes are made, for files too large to hold: @p write is
/// called once per tensor, in data order, and must hand the sink exactly its byteSize() bytes.
void writeSafetensorsFile(const std::filesystem::path& path, std::vector<TensorSpec> tensors,
                          const std::map<std::string, std::string>& metadata,
                          const std::function<void(const TensorInfo&, ByteSink&)>& write);

} // namespace spark
