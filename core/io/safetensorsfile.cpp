#include "core/io/safetensorsfile.h"

#include "core/io/ioerror.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace spark {

std::shared_ptr<const SafetensorsFile> SafetensorsFile::open(const std::filesystem::path& path)
{
    const std::string label = path.string();
    std::shared_ptr<SafetensorsFile> file(new SafetensorsFile);
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
    file->m_fileSize = static_cast<std::uint64_t>(st.st_size);
    if (file->m_fileSize > 0) {
        void* map = ::mmap(nullptr, file->m_fileSize, PROT_READ, MAP_SHARED, file->m_fd, 0);
        if (map == MAP_FAILED) {
            throw IoError(IoErrorKind::FileSystem, label, std::string("cannot map: ") + std::strerror(errno));
        }
        file->m_map = static_cast<const std::byte*>(map);
    }
    const std::span<const std::byte> image(file->m_map, file->m_fileSize);
    const auto n = readHeaderLength(image, file->m_fileSize, label);
    const std::string_view text(reinterpret_cast<const char*>(file->m_map) + 8, n);
    file->m_header = parseSafetensorsHeader(text, file->m_fileSize, label);
    return file;
}

SafetensorsFile::~SafetensorsFile()
{
    if (m_map) {
        ::munmap(const_cast<std::byte*>(m_map), m_fileSize);
    }
    if (m_fd >= 0) {
        ::close(m_fd);
    }
}

const TensorInfo* SafetensorsFile::find(std::string_view name) const
{
    const auto it = std::find_if(m_header.tensors.begin(), m_header.tensors.end(),
                                 [name](const TensorInfo& t) { return t.name == name; });
    return it == m_header.tensors.end() ? nullptr : &*it;
}

std::span<const std::byte> SafetensorsFile::bytes(const TensorInfo& tensor) const
{
    return {m_map + m_header.dataStart() + tensor.begin, tensor.byteSize()};
}

void SafetensorsFile::read(const TensorInfo& tensor, std::uint64_t offset, std::span<std::byte> out) const
{
    if (offset + out.size() > tensor.byteSize()) {
        throw IoError(IoErrorKind::FileSystem, m_path.string(), "read past the end of the tensor",
                      tensor.name);
    }
    auto position = static_cast<off_t>(m_header.dataStart() + tensor.begin + offset);
    std::size_t done = 0;
    while (done < out.size()) {
        const auto got =
            ::pread(m_fd, out.data() + done, out.size() - done, position + static_cast<off_t>(done));
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            throw IoError(IoErrorKind::FileSystem, m_path.string(),
                          got == 0 ? std::string("unexpected end of file (changed while open?)")
                                   : std::string("read failed: ") + std::strerror(errno),
                          tensor.name);
        }
        done += static_cast<std::size_t>(got);
    }
}

void SafetensorsFile::release(const TensorInfo& tensor) const
{
    const auto begin = m_header.dataStart() + tensor.begin;
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    const auto alignedBegin = begin / page * page;
    const auto end = begin + tensor.byteSize();
    // Drops the pages from this process's resident set only; the page cache keeps them warm.
    if (m_map && end > alignedBegin) {
        ::madvise(const_cast<std::byte*>(m_map) + alignedBegin, end - alignedBegin, MADV_DONTNEED);
    }
}

} // namespace spark
