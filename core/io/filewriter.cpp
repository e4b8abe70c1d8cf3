#include "core/io/filewriter.h"

#include "core/io/ioerror.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace spark {

FileWriter::FileWriter(std::filesystem::path path, std::size_t bufferBytes)
    : m_path(std::move(path)), m_buffer(bufferBytes)
{
    m_fd = ::open(m_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (m_fd < 0) {
        throw IoError(IoErrorKind::WriteFailed, m_path.string(),
                      std::string("cannot create: ") + std::strerror(errno));
    }
}

FileWriter::~FileWriter()
{
    if (m_fd >= 0) {
        ::close(m_fd);
    }
}

void FileWriter::write(std::span<const std::byte> bytes)
{
    while (!bytes.empty()) {
        if (m_used == m_buffer.size()) {
            flush();
        }
        const auto n = std::min(bytes.size(), m_buffer.size() - m_used);
        std::memcpy(m_buffer.data() + m_used, bytes.data(), n);
        m_used += n;
        bytes = bytes.subspan(n);
    }
}

void FileWriter::flush()
{
    std::size_t done = 0;
    while (done < m_used) {
        const auto n = ::write(m_fd, m_buffer.data() + done, m_used - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            // A short write without errno means the disk or RLIMIT_FSIZE stopped us.
            const int err = n < 0 ? errno : ENOSPC;
            throw IoError(IoErrorKind::WriteFailed, m_path.string(),
                          std::string("write failed after ") + std::to_string(m_written + done) +
                              " bytes: " + std::strerror(err));
        }
        done += static_cast<std::size_t>(n);
    }
    m_written += m_used;
    m_used = 0;
}

void FileWriter::close()
{
    if (m_fd < 0) {
        return;
    }
    flush();
    if (::fsync(m_fd) != 0) {
        throw IoError(IoErrorKind::WriteFailed, m_path.string(),
                      std::string("fsync failed: ") + std::strerror(errno));
    }
    const int fd = m_fd;
    m_fd = -1;
    if (::close(fd) != 0) {
        throw IoError(IoErrorKind::WriteFailed, m_path.string(),
                      std::string("close failed: ") + std::strerror(errno));
    }
}

void writeTextFile(const std::filesystem::path& path, std::string_view text)
{
    FileWriter writer(path, 64u << 10);
    writer.write(text);
    writer.close();
}

void replaceTextFile(const std::filesystem::path& path, std::string_view text)
{
    const auto partial = std::filesystem::path(path.string() + ".partial");
    std::error_code ec;
    std::filesystem::remove(partial, ec);
    writeTextFile(partial, text);
    std::filesystem::rename(partial, path, ec);
    if (ec) {
        std::filesystem::remove(partial, ec);
        throw IoError(IoErrorKind::WriteFailed, path.string(), "cannot replace the file: " + ec.message());
    }
}

} // namespace spark
