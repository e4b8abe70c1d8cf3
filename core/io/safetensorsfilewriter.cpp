#include "core/io/safetensorsfilewriter.h"

#include "core/io/filewriter.h"
#include "core/io/ioerror.h"

#include <array>
#include <stdexcept>
#include <unistd.h>

namespace spark {

void writeSafetensorsFile(const std::filesystem::path& path, std::vector<TensorBytes> tensors,
                          const std::map<std::string, std::string>& metadata)
{
    std::vector<TensorSpec> specs;
    std::map<std::string, const TensorBytes*> byName;
    for (const auto& t : tensors) {
        if (t.bytes.size() != t.spec.byteSize()) {
            throw std::invalid_argument(path.string() + ": tensor '" + t.spec.name + "' has " +
                                        std::to_string(t.bytes.size()) + " bytes, its shape needs " +
                                        std::to_string(t.spec.byteSize()));
        }
        specs.push_back(t.spec);
        byName[t.spec.name] = &t;
    }
    const auto layout = layoutSafetensors(std::move(specs), metadata);
    const auto temporary =
        path.parent_path() / (".tmp-" + path.filename().string() + "-" + std::to_string(::getpid()));
    try {
        FileWriter writer(temporary);
        std::array<std::byte, 8> size{};
        auto n = static_cast<std::uint64_t>(layout.header.size());
        for (auto& b : size) {
            b = static_cast<std::byte>(n & 0xFF);
            n >>= 8;
        }
        writer.write(std::span<const std::byte>(size));
        writer.write(std::string_view(layout.header));
        for (const auto& info : layout.tensors) {
            writer.write(std::span<const std::byte>(byName.at(info.name)->bytes));
        }
        writer.close();
        std::error_code ec;
        std::filesystem::rename(temporary, path, ec);
        if (ec) {
            throw IoError(IoErrorKind::FileSystem, path.string(),
                          "cannot rename the finished file: " + ec.message());
        }
    } catch (...) {
        std::error_code ignored;
        std::filesystem::remove(temporary, ignored);
        throw;
    }
}

} // namespace spark
