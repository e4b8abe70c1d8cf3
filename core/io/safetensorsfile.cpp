#include "core/io/safetensorsfile.h"

#include "core/io/ioerror.h"

#include <algorithm>

namespace spark {

std::shared_ptr<const SafetensorsFile> SafetensorsFile::open(const std::filesystem::path& path)
{
    const std::string label = path.string();
    std::shared_ptr<SafetensorsFile> file(new SafetensorsFile);
    file->m_file = MappedFile::open(path);
    const auto image = file->m_file->bytes();
    const auto n = readHeaderLength(image, image.size(), label);
    const std::string_view text(reinterpret_cast<const char*>(image.data()) + 8, n);
    file->m_header = parseSafetensorsHeader(text, image.size(), label);
    return file;
}

const TensorInfo* SafetensorsFile::find(std::string_view name) const
{
    const auto it = std::find_if(m_header.tensors.begin(), m_header.tensors.end(),
                                 [name](const TensorInfo& t) { return t.name == name; });
    return it == m_header.tensors.end() ? nullptr : &*it;
}

std::span<const std::byte> SafetensorsFile::bytes(const TensorInfo& tensor) const
{
    return m_file->bytes().subspan(m_header.dataStart() + tensor.begin, tensor.byteSize());
}

void SafetensorsFile::read(const TensorInfo& tensor, std::uint64_t offset, std::span<std::byte> out) const
{
    if (offset + out.size() > tensor.byteSize()) {
        throw IoError(IoErrorKind::FileSystem, path().string(), "read past the end of the tensor",
                      tensor.name);
    }
    m_file->read(m_header.dataStart() + tensor.begin + offset, out, tensor.name);
}

void SafetensorsFile::release(const TensorInfo& tensor) const
{
    m_file->release(m_header.dataStart() + tensor.begin, tensor.byteSize());
}

} // namespace spark
