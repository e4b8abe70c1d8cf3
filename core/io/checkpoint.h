#pragma once

#include "core/io/safetensorsfile.h"

#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

namespace spark {

/// Bytes of a tensor read per step by the exporter, verifier, comparer and sweep: large enough for
/// full-speed pread and SIMD work, small enough that memory stays flat whatever the checkpoint size.
inline constexpr std::uint64_t kChunkBytes = 8u << 20;

/// @brief A tensor of a checkpoint and the shard that holds it.
struct CheckpointTensor
{
    TensorInfo info;
    std::size_t shard = 0; ///< index into Checkpoint::shards()
};

/// @brief A checkpoint as vLLM would load it: one .safetensors file, a folder of them, or a folder with
/// model.safetensors.index.json. Only headers are read when opening.
class Checkpoint
{
  public:
    /// @brief Opens a folder, a .safetensors file or an index file. Throws IoError naming the file.
    static Checkpoint open(const std::filesystem::path& path);

    /// The folder that holds the checkpoint (and config.json, tokenizer files, ...).
    const std::filesystem::path& folder() const { return m_folder; }
    /// True when the tensors come through model.safetensors.index.json.
    bool hasIndex() const { return m_hasIndex; }
    /// config.json of the folder, or an empty object when absent.
    const nlohmann::json& config() const { return m_config; }

    const std::vector<std::shared_ptr<const SafetensorsFile>>& shards() const { return m_shards; }
    /// Every tensor, sorted by name.
    const std::vector<CheckpointTensor>& tensors() const { return m_tensors; }
    /// The tensors' descriptions alone, in the same order: what planning and the sweep read.
    std::vector<TensorInfo> tensorInfos() const;
    const CheckpointTensor* find(std::string_view name) const;
    const SafetensorsFile& fileOf(const CheckpointTensor& tensor) const { return *m_shards[tensor.shard]; }
    /// The tensor's bytes (a view into the mapping; no copy).
    std::span<const std::byte> bytes(const CheckpointTensor& tensor) const
    {
        return fileOf(tensor).bytes(tensor.info);
    }
    /// Shard file name of a tensor, e.g. "model-00001-of-00002.safetensors".
    std::string fileNameOf(const CheckpointTensor& tensor) const;

    std::uint64_t totalBytes() const; ///< sum of tensor data bytes
    std::uint64_t totalParams() const;

  private:
    std::filesystem::path m_folder;
    bool m_hasIndex = false;
    nlohmann::json m_config = nlohmann::json::object();
    std::vector<std::shared_ptr<const SafetensorsFile>> m_shards;
    std::vector<CheckpointTensor> m_tensors;
};

/// The index file name that transformers and vLLM use.
inline constexpr std::string_view kIndexFileName = "model.safetensors.index.json";

/// @brief Parses the text of model.safetensors.index.json into its weight_map (tensor → shard file).
/// Rejects malformed JSON, duplicate keys, a missing weight_map and entries that are not plain file names
/// in the folder ("../x", absolute paths). Throws IoError naming @p label.
std::map<std::string, std::string> parseIndexJson(std::string_view text, const std::string& label);

/// @brief Reads a JSON file strictly (duplicate keys rejected). Throws IoError naming the file.
nlohmann::json readJsonFile(const std::filesystem::path& path);

/// @brief True when tensor @p ta of @p a and tensor @p tb of @p b have the same dtype, shape and bytes; read
/// in chunks, so memory stays bounded whatever their size (verify and compare check copied tensors by it).
bool sameTensor(const Checkpoint& a, const CheckpointTensor& ta, const Checkpoint& b,
                const CheckpointTensor& tb);

} // namespace spark
