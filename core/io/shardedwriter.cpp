#include "core/io/shardedwriter.h"

#include "core/io/checkpoint.h"
#include "core/io/ioerror.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace spark {
namespace {

/// Forwards to the file and checks that a producer writes exactly its tensor's size.
class CountingSink : public ByteSink
{
  public:
    CountingSink(FileWriter& file, const TensorSpec& spec) : m_file(file), m_spec(spec) {}
    void write(std::span<const std::byte> bytes) override
    {
        m_count += bytes.size();
        if (m_count > m_spec.byteSize()) {
            throw std::logic_error("producer of '" + m_spec.name + "' wrote more than " +
                                   std::to_string(m_spec.byteSize()) + " bytes");
        }
        m_file.write(bytes);
    }
    std::uint64_t count() const { return m_count; }

  private:
    FileWriter& m_file;
    const TensorSpec& m_spec;
    std::uint64_t m_count = 0;
};

} // namespace

std::string shardFileName(std::size_t index, std::size_t count)
{
    if (count == 1) {
        return "model.safetensors";
    }
    char name[64];
    std::snprintf(name, sizeof name, "model-%05zu-of-%05zu.safetensors", index + 1, count);
    return name;
}

ShardedWriteResult writeSafetensorsShards(const std::filesystem::path& folder,
                                          std::vector<PlannedTensor> tensors,
                                          const ShardedWriteOptions& options)
{
    std::sort(tensors.begin(), tensors.end(),
              [](const PlannedTensor& a, const PlannedTensor& b) { return a.spec.name < b.spec.name; });

    std::vector<std::vector<std::size_t>> shards(1);
    std::uint64_t shardBytes = 0;
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        const auto size = tensors[i].spec.byteSize();
        if (options.maxShardBytes > 0 && !shards.back().empty() &&
            shardBytes + size > options.maxShardBytes) {
            shards.emplace_back();
            shardBytes = 0;
        }
        shards.back().push_back(i);
        shardBytes += size;
        total += size;
    }

    ShardedWriteResult result;
    result.totalSize = total;
    std::map<std::string, std::string> weightMap;
    std::uint64_t done = 0;
    for (std::size_t s = 0; s < shards.size(); ++s) {
        const auto fileName = shardFileName(s, shards.size());
        std::vector<TensorSpec> specs;
        std::map<std::string, std::size_t> byName;
        for (auto i : shards[s]) {
            specs.push_back(tensors[i].spec);
            byName[tensors[i].spec.name] = i;
            weightMap[tensors[i].spec.name] = fileName;
        }
        const auto layout = layoutSafetensors(std::move(specs));
        const auto path = folder / fileName;
        FileWriter file(path);
        std::byte length[8];
        for (int b = 0; b < 8; ++b) {
            length[b] = static_cast<std::byte>((layout.header.size() >> (8 * b)) & 0xFF);
        }
        file.write(std::span<const std::byte>(length, 8));
        file.write(layout.header);
        for (const auto& info : layout.tensors) {
            const auto& planned = tensors[byName.at(info.name)];
            CountingSink sink(file, planned.spec);
            planned.produce(sink);
            if (sink.count() != info.byteSize()) {
                throw std::logic_error("producer of '" + info.name + "' wrote " +
                                       std::to_string(sink.count()) + " bytes instead of " +
                                       std::to_string(info.byteSize()));
            }
            done += info.byteSize();
            if (!reportProgress(options.progress, done, total)) {
                throw IoError(IoErrorKind::Cancelled, path.string(), "cancelled");
            }
        }
        file.close();
        result.files.push_back(fileName);
    }

    if (shards.size() > 1) {
        nlohmann::ordered_json index;
        index["metadata"] = {{"total_size", total}};
        index["weight_map"] = weightMap;
        writeTextFile(folder / std::string(kIndexFileName), index.dump(2) + "\n");
    }
    return result;
}

} // namespace spark
