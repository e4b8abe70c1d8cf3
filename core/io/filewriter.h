#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace spark {

/// @brief Receives a tensor's bytes in order, in pieces of any size.
class ByteSink
{
  public:
    virtual ~ByteSink() = default;
    virtual void write(std::span<const std::byte> bytes) = 0;
};

/// @brief A new file written through a fixed buffer. Every failure (full disk, file-size limit) throws
/// IoError naming the file; close() flushes and fsyncs. An unclosed writer leaves its file for the
/// caller's staging folder to remove.
class FileWriter : public ByteSink
{
  public:
    explicit FileWriter(std::filesystem::path path, std::size_t bufferBytes = 4u << 20);
    ~FileWriter() override;
    FileWriter(const FileWriter&) = delete;
    FileWriter& operator=(const FileWriter&) = delete;

    void write(std::span<const std::byte> bytes) override;
    void write(std::string_view text) { write(std::as_bytes(std::span(text.data(), text.size()))); }
    std::uint64_t written() const { return m_written; }
    void close();

  private:
    void flush();

    std::filesystem::path m_path;
    int m_fd = -1;
    std::vector<std::byte> m_buffer;
    std::size_t m_used = 0;
    std::uint64_t m_written = 0;
};

/// @brief Writes a whole small file (config, index) durably. Throws IoError.
void writeTextFile(const std::filesystem::path& path, std::string_view text);

/// @brief Writes @p text beside @p path and renames it over @p path: an existing file is replaced whole or
/// not at all. Throws IoError naming @p path.
void replaceTextFile(const std::filesystem::path& path, std::string_view text);

} // namespace spark
