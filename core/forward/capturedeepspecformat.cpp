// DeepSpec's target cache, version 2 (deepseek-ai/DeepSpec, deepspec/data/target_cache_dataset.py): a
// manifest.json, samples.idx of fixed 56-byte records (sample id u64, shard id u32, sequence length u32, then
// the byte offsets u64 of input_ids, attention_mask, loss_mask, target_hidden_states and
// target_last_hidden_states in the shard), and raw shards holding per sample input_ids int32 [T],
// attention_mask and loss_mask uint8 [T], target_hidden_states [T, n_ids · H] and target_last_hidden_states
// [T, H] in the manifest's hidden dtype (bfloat16, or float8 cast without scales).
//
// DeepSpec hooks the *output* of target layer i (-1: the embeddings), so its id i is vLLM's aux id i + 1; its
// last hidden state is the backbone's output after the final norm, which vLLM never hands a draft, so it is
// not read (draft-forward.md §7).

#include "core/forward/capturesource.h"
#include "core/forward/draftspec.h"
#include "core/io/checkpoint.h"
#include "core/io/mappedfile.h"

#include <cstring>
#include <map>

namespace spark {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kRecordBytes = 56;
constexpr int kCacheVersion = 2;

struct Record
{
    std::uint64_t sample = 0;
    std::uint32_t shard = 0, length = 0;
    std::uint64_t tokens = 0, attention = 0, lossMask = 0, hidden = 0, last = 0;
};

Record recordAt(std::span<const std::byte> index, std::size_t i)
{
    const std::byte* p = index.data() + i * kRecordBytes;
    Record r;
    std::memcpy(&r.sample, p, 8);
    std::memcpy(&r.shard, p + 8, 4);
    std::memcpy(&r.length, p + 12, 4);
    std::memcpy(&r.tokens, p + 16, 8);
    std::memcpy(&r.attention, p + 24, 8);
    std::memcpy(&r.lossMask, p + 32, 8);
    std::memcpy(&r.hidden, p + 40, 8);
    std::memcpy(&r.last, p + 48, 8);
    return r;
}

DType hiddenDType(const std::string& manifest, const std::string& name)
{
    static const std::map<std::string, DType> known{
        {"bfloat16", DType::BF16}, {"float8_e4m3fn", DType::F8_E4M3}, {"float8_e5m2", DType::F8_E5M2}};
    const auto it = known.find(name);
    if (it == known.end()) {
        throw ForwardInputError(manifest, "hidden_dtype",
                                "is '" + name + "'; DeepSpec writes bfloat16, float8_e4m3fn or float8_e5m2");
    }
    return it->second;
}

template <typename T> T required(const nlohmann::json& json, const std::string& file, const char* key)
{
    if (!json.contains(key)) {
        throw ForwardInputError(file, key, "missing");
    }
    try {
        return json.at(key).get<T>();
    } catch (const nlohmann::json::exception&) {
        throw ForwardInputError(file, key, "has the wrong type");
    }
}

} // namespace

bool isDeepSpecCache(const fs::path& folder)
{
    std::error_code ec;
    return fs::is_regular_file(folder / "manifest.json", ec) && fs::exists(folder / "samples.idx", ec);
}

CaptureLayout readDeepSpecCache(const fs::path& folder)
{
    const auto manifestPath = folder / "manifest.json";
    const auto name = manifestPath.string();
    const auto manifest = readJsonFile(manifestPath);
    if (!manifest.is_object()) {
        throw ForwardInputError(name, "file", "must be a JSON object");
    }
    if (required<int>(manifest, name, "version") != kCacheVersion) {
        throw ForwardInputError(name, "version",
                                "is " + manifest["version"].dump() +
                                    "; DeepSpec's target cache version 2 is read");
    }
    if (required<std::uint64_t>(manifest, name, "index_record_size") != kRecordBytes) {
        throw ForwardInputError(name, "index_record_size", "is not " + std::to_string(kRecordBytes));
    }
    if (required<std::string>(manifest, name, "token_dtype") != "int32" ||
        required<std::string>(manifest, name, "mask_dtype") != "uint8") {
        throw ForwardInputError(name, "token_dtype", "must be int32 (and mask_dtype uint8)");
    }
    const DType dtype = hiddenDType(name, required<std::string>(manifest, name, "hidden_dtype"));
    const auto hiddenSize = required<std::int64_t>(manifest, name, "hidden_size");
    const auto samples = required<std::uint64_t>(manifest, name, "num_samples");
    const auto deepspecIds = parseLayerIds(name, "target_layer_ids", [&] {
        // DeepSpec's -1 (the embeddings) is vLLM's 0: shift before the non-negative check.
        auto ids = required<std::vector<int>>(manifest, name, "target_layer_ids");
        nlohmann::json shifted = nlohmann::json::array();
        for (const int id : ids) {
            shifted.push_back(id + 1);
        }
        return shifted;
    }());
    if (hiddenSize <= 0) {
        throw ForwardInputError(name, "hidden_size", "must be positive");
    }

    CaptureLayout layout;
    auto& info = layout.info;
    info.path = folder;
    info.format = std::string("DeepSpec target cache") +
                  (dtype == DType::BF16 ? "" : ", FP8 hidden states without scales");
    info.layerIds = deepspecIds;
    info.layerIdsSource = "manifest.json target_layer_ids + 1 (DeepSpec numbers a layer's output)";
    info.hiddenSize = hiddenSize;
    info.targetModel = manifest.value("target_model_name_or_path", std::string());
    layout.layers = static_cast<std::int64_t>(info.layerIds.size());
    layout.hasLossMask = true;

    std::vector<std::shared_ptr<const MappedFile>> shards;
    const auto shardList = required<nlohmann::json>(manifest, name, "shards");
    for (std::size_t i = 0; i < shardList.size(); ++i) {
        const auto& shard = shardList[i];
        if (!shard.is_object() || shard.value("shard_id", -1) != static_cast<int>(i) ||
            !shard.contains("file_name") || !shard["file_name"].is_string()) {
            throw ForwardInputError(name, "shards[" + std::to_string(i) + "]",
                                    "must be {\"shard_id\": " + std::to_string(i) + ", \"file_name\": ...}");
        }
        shards.push_back(MappedFile::open(folder / shard["file_name"].get<std::string>()));
    }
    const auto indexFile = MappedFile::open(folder / "samples.idx");
    const auto index = indexFile->bytes();
    if (index.size() != samples * kRecordBytes) {
        throw ForwardInputError(indexFile->path().string(), "size",
                                "is " + std::to_string(index.size()) + " bytes; num_samples " +
                                    std::to_string(samples) + " needs " +
                                    std::to_string(samples * kRecordBytes));
    }
    const auto width = static_cast<std::uint64_t>(dtypeBits(dtype) / 8);
    for (std::size_t i = 0; i < samples; ++i) {
        const auto r = recordAt(index, i);
        const auto where = indexFile->path().string();
        const auto field = "record " + std::to_string(i);
        if (r.sample != i || r.shard >= shards.size() || r.length == 0) {
            throw ForwardInputError(where, field,
                                    "has sample id " + std::to_string(r.sample) + ", shard " +
                                        std::to_string(r.shard) + ", length " + std::to_string(r.length));
        }
        const auto& shard = shards[r.shard];
        const std::uint64_t t = r.length;
        const auto column = [&](std::uint64_t offset, std::uint64_t bytes, DType type, const char* what) {
            if (offset > shard->size() || bytes > shard->size() - offset) {
                throw ForwardInputError(where, field + " " + what,
                                        "lies past the end of " + shard->path().filename().string());
            }
            return CaptureColumn{shard->bytes().subspan(offset, bytes), type};
        };
        CapturePart part;
        part.mapping = shard;
        part.file = shard->path();
        part.length = static_cast<std::int64_t>(t);
        part.layers = layout.layers;
        part.tokens = column(r.tokens, t * 4, DType::I32, "input_ids");
        part.lossMask = column(r.lossMask, t, DType::U8, "loss_mask");
        part.hidden = column(r.hidden, t * static_cast<std::uint64_t>(layout.layers * hiddenSize) * width,
                             dtype, "target_hidden_states");
        layout.parts.push_back(part);
        info.tokens += part.length;
    }
    if (layout.parts.empty()) {
        throw ForwardInputError(name, "num_samples", "is 0");
    }
    return layout;
}

} // namespace spark
