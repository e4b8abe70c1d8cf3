#include "core/io/mappedfile.h"

#include "core/io/ioerror.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace spark {

std::shared_ptr<const MappedFile> MappedFile::open(const std::filesystem::path& path)
{
    const std::string label = path.string();
    std::shared_ptr<MappedFile> file(new MappedFile);
    file->m_path = path;
    file->m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (file->m_fd < 0) {
        throw IoError(errno == ENOENT ? IoErrorKind::MissingFile : IoErrorKind::FileSystem, label,
                      std::string("cannot open: ") + std::strerror(errno));
    }
    struct stat st
    {
    };
    if (::fstat(file->m_fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        throw IoError(IoErrorKind::FileSystem, label, "not a regular file");
    }
    file->m_size = static_cast<std::uint64_t>(st.st_size);
    if (file->m_size > 0) {
        void* map = ::mmap(nullptr, file->m_size, PROT_READ, MAP_SHARED, file->m_fd, 0);
        if (map == MAP_FAILED) {
            throw IoError(IoErrorKind::FileSystem, label, std::string("cannot map: ") + std::strerror(errno));
        }
        file->m_map = static_cast<const std::byte*>(map);
    }
    return file;
}

MappedFile::~MappedFile()
{
    if (m_map) {
        ::munmap(const_cast<std::byte*>(m_map), m_size);
    }
    if (m_fd >= 0) {
        ::close(m_fd);
    }
}

void MappedFile::read(std::uint64_t offset, std::span<std::byte> out, const std::string& what) const
{
    if (offset + out.size() > m_size) {
        throw IoError(IoErrorKind::FileSystem, m_path.string(), "read past the end of the file", what);
    }
    std::size_t done = 0;
    while (done < out.size()) {
        const auto got =
            ::pread(m_fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            throw IoError(IoErrorKind::FileSystem, m_path.string(),
                          got == 0 ? std::string("unexpected end of file (changed while open?)")
                                   : std::string("read failed: ") + std::strerror(errno),
                          what);
        }
        done += static_cast<std::size_t>(got);
    }
}

void MappedFile::release(std::uint64_t offset, std::uint64_t size) const
{
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    const auto alignedBegin = offset / page * page;
    const auto end = offset + size;
    if (m_map && end > alignedBegin) {
        ::madvise(const_cast<std::byte*>(m_map) + alignedBegin, end - alignedBegin, MADV_DONTNEED);
    }
}

} // namespace spark
