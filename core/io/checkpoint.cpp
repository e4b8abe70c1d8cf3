#include "core/io/checkpoint.h"

#include "core/io/ioerror.h"
#include "core/io/strictjson.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

namespace spark {
namespace fs = std::filesystem;

namespace {

bool isPlainFileName(const std::string& name)
{
    return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
           name.find('\\') == std::string::npos && name.find('\0') == std::string::npos;
}

std::vector<std::string> listSafetensorsFiles(const fs::path& folder)
{
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(folder, ec)) {
        const auto name = entry.path().filename().string();
        // is_regular_file follows symlinks, so a Hugging Face cache snapshot (links into blobs/) works.
        if (entry.path().extension() == ".safetensors" && fs::is_regular_file(entry.path(), ec)) {
            names.push_back(name);
        }
    }
    if (ec) {
        throw IoError(IoErrorKind::FileSystem, folder.string(), "cannot list folder: " + ec.message());
    }
    std::sort(names.begin(), names.end());
    return names;
}

std::string readSmallFile(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw IoError(IoErrorKind::MissingFile, path.string(), "cannot open");
    }
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

} // namespace

std::map<std::string, std::string> parseIndexJson(std::string_view text, const std::string& label)
{
    nlohmann::json index;
    try {
        index = parseStrictJson(text);
    } catch (const DuplicateJsonKey& e) {
        throw IoError(IoErrorKind::DuplicateKey, label, "duplicate key '" + e.key() + "'");
    } catch (const nlohmann::json::exception& e) {
        throw IoError(IoErrorKind::InvalidIndex, label, std::string("invalid JSON: ") + e.what());
    }
    if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object()) {
        throw IoError(IoErrorKind::InvalidIndex, label, "no 'weight_map' object");
    }
    std::map<std::string, std::string> weightMap;
    for (const auto& [tensor, file] : index["weight_map"].items()) {
        if (!file.is_string()) {
            throw IoError(IoErrorKind::InvalidIndex, label, "weight_map value is not a string", tensor);
        }
        const auto fileName = file.get<std::string>();
        if (!isPlainFileName(fileName)) {
            throw IoError(IoErrorKind::InvalidIndex, label,
                          "weight_map names '" + fileName + "', which is not a plain file name in the folder",
                          tensor);
        }
        weightMap[tensor] = fileName;
    }
    return weightMap;
}

nlohmann::json readJsonFile(const fs::path& path)
{
    const auto text = readSmallFile(path);
    try {
        return parseStrictJson(text);
    } catch (const DuplicateJsonKey& e) {
        throw IoError(IoErrorKind::DuplicateKey, path.string(), "duplicate key '" + e.key() + "'");
    } catch (const nlohmann::json::exception& e) {
        throw IoError(IoErrorKind::InvalidIndex, path.string(), std::string("invalid JSON: ") + e.what());
    }
}

Checkpoint Checkpoint::open(const fs::path& input)
{
    std::error_code ec;
    if (!fs::exists(input, ec)) {
        throw IoError(IoErrorKind::MissingFile, input.string(), "no such file or folder");
    }
    Checkpoint cp;
    std::vector<std::string> shardNames;
    std::map<std::string, std::string> weightMap; // tensor -> shard file, from the index
    fs::path indexPath;

    if (fs::is_directory(input, ec)) {
        cp.m_folder = input;
        if (fs::exists(input / kIndexFileName)) {
            indexPath = input / kIndexFileName;
        }
    } else if (input.filename() == kIndexFileName) {
        cp.m_folder = input.parent_path();
        indexPath = input;
    } else {
        cp.m_folder = input.parent_path().empty() ? fs::path(".") : input.parent_path();
        shardNames.push_back(input.filename().string());
    }

    if (!indexPath.empty()) {
        cp.m_hasIndex = true;
        weightMap = parseIndexJson(readSmallFile(indexPath), indexPath.string());
        for (const auto& [tensor, fileName] : weightMap) {
            if (std::find(shardNames.begin(), shardNames.end(), fileName) == shardNames.end()) {
                shardNames.push_back(fileName);
            }
        }
        const std::string label = indexPath.string();
        std::sort(shardNames.begin(), shardNames.end());
        for (const auto& name : shardNames) {
            if (!fs::exists(cp.m_folder / name)) {
                throw IoError(IoErrorKind::MissingFile, label,
                              "shard '" + name + "' listed in weight_map is missing");
            }
        }
    } else if (shardNames.empty()) {
        // vLLM without an index loads every *.safetensors of the folder.
        shardNames = listSafetensorsFiles(cp.m_folder);
        if (shardNames.empty()) {
            throw IoError(IoErrorKind::MissingFile, cp.m_folder.string(),
                          "no *.safetensors files in the folder");
        }
    }

    std::map<std::string, std::string> seenIn; // tensor -> shard file
    for (std::size_t s = 0; s < shardNames.size(); ++s) {
        const fs::path path = shardNames.size() == 1 && indexPath.empty() && !fs::is_directory(input)
                                  ? input
                                  : cp.m_folder / shardNames[s];
        cp.m_shards.push_back(SafetensorsFile::open(path));
        for (const auto& info : cp.m_shards.back()->tensors()) {
            if (const auto it = seenIn.find(info.name); it != seenIn.end()) {
                throw IoError(IoErrorKind::DuplicateKey, path.string(),
                              "tensor also present in '" + it->second + "' (duplicate across shards)",
                              info.name);
            }
            seenIn[info.name] = shardNames[s];
            if (cp.m_hasIndex) {
                const auto listed = weightMap.find(info.name);
                if (listed == weightMap.end()) {
                    throw IoError(IoErrorKind::InvalidIndex, indexPath.string(),
                                  "tensor found in '" + shardNames[s] + "' is not listed in weight_map",
                                  info.name);
                }
                if (listed->second != shardNames[s]) {
                    throw IoError(IoErrorKind::InvalidIndex, indexPath.string(),
                                  "weight_map lists the tensor in '" + listed->second + "' but it is in '" +
                                      shardNames[s] + "'",
                                  info.name);
                }
            }
            cp.m_tensors.push_back({info, s});
        }
    }
    for (const auto& [tensor, file] : weightMap) {
        if (!seenIn.contains(tensor)) {
            throw IoError(IoErrorKind::InvalidIndex, indexPath.string(),
                          "weight_map lists the tensor in '" + file + "' but that shard does not contain it",
                          tensor);
        }
    }
    std::sort(cp.m_tensors.begin(), cp.m_tensors.end(),
              [](const CheckpointTensor& a, const CheckpointTensor& b) { return a.info.name < b.info.name; });

    const auto configPath = cp.m_folder / "config.json";
    if (fs::exists(configPath)) {
        cp.m_config = readJsonFile(configPath);
        if (!cp.m_config.is_object()) {
            throw IoError(IoErrorKind::InvalidHeaderDeserialization, configPath.string(),
                          "not a JSON object");
        }
    }
    return cp;
}

const CheckpointTensor* Checkpoint::find(std::string_view name) const
{
    const auto it =
        std::lower_bound(m_tensors.begin(), m_tensors.end(), name,
                         [](const CheckpointTensor& t, std::string_view n) { return t.info.name < n; });
    return it != m_tensors.end() && it->info.name == name ? &*it : nullptr;
}

std::string Checkpoint::fileNameOf(const CheckpointTensor& tensor) const
{
    return m_shards[tensor.shard]->path().filename().string();
}

std::uint64_t Checkpoint::totalBytes() const
{
    std::uint64_t sum = 0;
    for (const auto& t : m_tensors) {
        sum += t.info.byteSize();
    }
    return sum;
}

std::uint64_t Checkpoint::totalParams() const
{
    std::uint64_t sum = 0;
    for (const auto& t : m_tensors) {
        sum += t.info.numel();
    }
    return sum;
}

std::vector<TensorInfo> Checkpoint::tensorInfos() const
{
    std::vector<TensorInfo> infos;
    infos.reserve(m_tensors.size());
    for (const auto& t : m_tensors) {
        infos.push_back(t.info);
    }
    return infos;
}

bool sameTensor(const Checkpoint& a, const CheckpointTensor& ta, const Checkpoint& b,
                const CheckpointTensor& tb)
{
    if (ta.info.dtype != tb.info.dtype || ta.info.shape != tb.info.shape ||
        ta.info.byteSize() != tb.info.byteSize()) {
        return false;
    }
    std::vector<std::byte> left(static_cast<std::size_t>(std::min(ta.info.byteSize(), kChunkBytes)));
    std::vector<std::byte> right(left.size());
    for (std::uint64_t offset = 0; offset < ta.info.byteSize(); offset += left.size()) {
        const auto n =
            static_cast<std::size_t>(std::min<std::uint64_t>(left.size(), ta.info.byteSize() - offset));
        a.fileOf(ta).read(ta.info, offset, std::span(left.data(), n));
        b.fileOf(tb).read(tb.info, offset, std::span(right.data(), n));
        if (std::memcmp(left.data(), right.data(), n) != 0) {
            return false;
        }
    }
    return true;
}

} // namespace spark
