#pragma once

#include "core/io/mappedfile.h"
#include "core/io/safetensorsheader.h"

#include <filesystem>
#include <memory>
#include <span>
#include <string_view>

namespace spark {

/// @brief One safetensors file, memory-mapped read-only. Opening reads and validates only the header;
/// tensor bytes are touched when a caller reads them (lazy views, no copies).
class SafetensorsFile
{
  public:
    /// @brief Opens and validates @p path. Throws IoError naming the file.
    static std::shared_ptr<const SafetensorsFile> open(const std::filesystem::path& path);

    const std::filesystem::path& path() const { return m_file->path(); }
    std::uint64_t fileSize() const { return m_file->size(); }
    const SafetensorsHeader& header() const { return m_header; }
    const std::vector<TensorInfo>& tensors() const { return m_header.tensors; }
    const TensorInfo* find(std::string_view name) const;
    /// @brief The mapping the tensors' bytes lie in.
    const std::shared_ptr<const MappedFile>& mapping() const { return m_file; }

    /// @brief A view of the tensor's bytes inside the mapping (valid while this object lives).
    std::span<const std::byte> bytes(const TensorInfo& tensor) const;

    /// @brief Copies @p out.size() bytes of @p tensor starting at @p offset with pread, bypassing the
    /// mapping. Used by streaming work that reads in chunks into reused buffers. Throws IoError.
    void read(const TensorInfo& tensor, std::uint64_t offset, std::span<std::byte> out) const;

    /// @brief Tells the kernel that the tensor's pages are no longer needed (keeps RSS bounded).
    void release(const TensorInfo& tensor) const;

  private:
    SafetensorsFile() = default;

    std::shared_ptr<const MappedFile> m_file;
    SafetensorsHeader m_header;
};

} // namespace spark
