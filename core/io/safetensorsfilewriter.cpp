#include "core/io/safetensorsfilewriter.h"

#include "core/io/filewriter.h"
#include "core/io/ioerror.h"

#include <array>
#include <stdexcept>
#include <unistd.h>

namespace spark {

namespace {

/// Counts what a tensor's writer hands on, so that a short or long tensor is an error, not a broken file.
class CountingSink : public ByteSink
{
  public:
    explicit CountingSink(ByteSink& out) : m_out(out) {}
    void write(std::span<const std::byte> bytes) override
    {
        m_count += bytes.size();
        m_out.write(bytes);
    }
    std::uint64_t count() const { return m_count; }

  private:
    ByteSink& m_out;
    std::uint64_t m_count = 0;
};

} // namespace

void writeSafetensorsFile(const std::filesystem::path& path, std::vector<TensorSpec> tensors,
                          const std::map<std::string, std::string>& metadata,
                          const std::function<void(const TensorInfo&, ByteSink&)>& write)
{
    const auto layout = layoutSafetensors(std::move(tensors), metadata);
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
            CountingSink sink(writer);
            write(info, sink);
            if (sink.count() != info.byteSize()) {
                throw std::invalid_argument(path.string() + ": tensor '" + info.name + "' was written with " +
                                            std::to_string(sink.count()) + " bytes, its shape needs " +
                                            std::to_string(info.byteSize()));
            }
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
    writeSafetensorsFile(path, std::move(specs), metadata, [&](const TensorInfo& info, ByteSink& sink) {
        sink.write(std::span<const std::byte>(byName.at(info.name)->bytes));
    });
}

} // namespace spark
