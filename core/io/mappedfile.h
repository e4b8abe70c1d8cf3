#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>

namespace spark {

/// @brief A whole file mapped read-only: what every reader of large binary files stands on (safetensors
/// files, other tools' capture shards). Pages are touched only when read.
class MappedFile
{
  public:
    /// @brief Opens and maps @p path. Throws IoError naming the file (missing, not a regular file,
    /// unmappable).
    static std::shared_ptr<const MappedFile> open(const std::filesystem::path& path);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    const std::filesystem::path& path() const { return m_path; }
    std::uint64_t size() const { return m_size; }
    /// @brief The whole file (valid while this object lives).
    std::span<const std::byte> bytes() const { return {m_map, m_size}; }
    /// @brief Copies out.size() bytes at @p offset with pread, bypassing the mapping. Throws IoError naming
    /// the file and @p what.
    void read(std::uint64_t offset, std::span<std::byte> out, const std::string& what) const;
    /// @brief Drops the pages of [offset, offset + size) from this process's resident set (the page cache
    /// keeps them warm).
    void release(std::uint64_t offset, std::uint64_t size) const;

  private:
    MappedFile() = default;

    std::filesystem::path m_path;
    int m_fd = -1;
    const std::byte* m_map = nullptr;
    std::uint64_t m_size = 0;
};

} // namespace spark
