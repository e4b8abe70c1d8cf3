// A folder of per-sequence capture files, as vLLM's hidden-states connector writes them
// ({request id}.safetensors: hidden_states [T, n_ids, H] and token_ids [T], no metadata) and speculators
// renames them (hs_{i}.safetensors), BF16 or FP8 with per-token scales (draft-forward.md §7). Neither
// records the layer ids nor which tokens the target generated: a capture.json sidecar or the reader's
// options say so.

#include "core/forward/capturesource.h"
#include "core/forward/draftspec.h"
#include "core/io/checkpoint.h"

#include <algorithm>

namespace spark {
namespace {

namespace fs = std::filesystem;

/// hs_2 before hs_10 (by the number after "hs_"); other names in byte order.
std::vector<fs::path> sequenceFiles(const fs::path& folder, bool& speculatorsNames)
{
    std::vector<fs::path> hs, other;
    bool compressed = false;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(folder, ec)) {
        const auto name = entry.path().filename().string();
        if (name.ends_with(".safetensors.zst")) {
            compressed = true;
        } else if (entry.path().extension() == ".safetensors" && !name.starts_with(".")) {
            (name.starts_with("hs_") ? hs : other).push_back(entry.path());
        }
    }
    speculatorsNames = !hs.empty();
    auto files = speculatorsNames ? hs : other;
    if (files.empty()) {
        throw ForwardInputError(folder.string(), "*.safetensors",
                                compressed ? "only zstd-compressed files (vLLM's OnlineHiddenStatesConnector "
                                             "with use_compression): decompress them with `zstd -d` first"
                                           : "no capture files in the folder");
    }
    const auto number = [](const fs::path& p) {
        try {
            return std::stoll(p.stem().string().substr(3));
        } catch (...) {
            return -1ll;
        }
    };
    std::sort(files.begin(), files.end(), [&](const fs::path& a, const fs::path& b) {
        return speculatorsNames ? std::pair(number(a), a.string()) < std::pair(number(b), b.string())
                                : a.filename().string() < b.filename().string();
    });
    return files;
}

/// The sidecar's settings, when there is one.
void readSidecar(const fs::path& sidecar, CaptureInfo& info, std::int64_t& skip, bool& skipKnown)
{
    const auto json = readJsonFile(sidecar);
    const auto name = sidecar.string();
    if (!json.is_object()) {
        throw ForwardInputError(name, "file", "must be a JSON object");
    }
    if (json.contains("layer_ids")) {
        info.layerIds = parseLayerIds(name, "layer_ids", json["layer_ids"]);
        info.layerIdsSource = "capture.json layer_ids";
    }
    for (const char* key : {"greedy", "last_layer_included"}) {
        if (json.contains(key) && !json[key].is_boolean()) {
            throw ForwardInputError(name, key, "must be true or false");
        }
    }
    info.greedy = json.value("greedy", true);
    info.lastLayerIncluded = json.value("last_layer_included", false);
    info.targetModel = json.value("target_model", std::string());
    if (json.contains("skip_tokens")) {
        if (!json["skip_tokens"].is_number_integer() || json["skip_tokens"].get<std::int64_t>() < 0) {
            throw ForwardInputError(name, "skip_tokens", "must be a non-negative integer");
        }
        skip = json["skip_tokens"].get<std::int64_t>();
        skipKnown = true;
    }
}

} // namespace

CaptureLayout readCaptureFolder(const fs::path& path, const CaptureReadOptions& options)
{
    CaptureLayout layout;
    auto& info = layout.info;
    info.path = path;
    std::int64_t skip = 0;
    bool skipKnown = false;
    std::error_code ec;
    if (fs::exists(path / kCaptureSidecar, ec)) {
        readSidecar(path / kCaptureSidecar, info, skip, skipKnown);
    }
    if (options.promptTokens) {
        skip = *options.promptTokens;
        skipKnown = true;
    }
    bool speculatorsNames = false;
    const auto files = sequenceFiles(path, speculatorsNames);
    info.format = speculatorsNames ? "speculators hs directory" : "vLLM hidden-states connector folder";
    layout.promptUnknown = !skipKnown && info.greedy;
    for (const auto& p : files) {
        const auto file = SafetensorsFile::open(p);
        const auto states = hiddenStateTensors(*file);
        const auto* hidden = states.hidden;
        const auto* tokens = captureTensor(*file, "token_ids", {DType::I32, DType::I64}, 1);
        const auto layers = static_cast<std::int64_t>(hidden->shape[1]);
        const auto width = static_cast<std::int64_t>(hidden->shape[2]);
        if (layout.parts.empty()) {
            layout.layers = layers;
            info.hiddenSize = width;
            if (states.scales != nullptr) {
                info.format += ", FP8 hidden states with their scales";
            }
        } else if (layers != layout.layers || width != info.hiddenSize) {
            throw ForwardInputError(p.string(), "hidden_states",
                                    "has shape " + hidden->shapeText() + ", the folder's first file [*, " +
                                        std::to_string(layout.layers) + ", " +
                                        std::to_string(info.hiddenSize) + "]");
        }
        if (tokens->shape[0] != hidden->shape[0]) {
            throw ForwardInputError(p.string(), "token_ids",
                                    "has " + std::to_string(tokens->shape[0]) + " entries, hidden_states " +
                                        std::to_string(hidden->shape[0]) + " rows");
        }
        const auto length = static_cast<std::int64_t>(hidden->shape[0]);
        CapturePart part;
        part.mapping = file->mapping();
        part.file = p;
        part.length = length;
        states.place(*file, 0, length, part);
        part.tokens = columnRows(*file, tokens, 0, length);
        part.skip = std::min(skip, length);
        layout.parts.push_back(part);
        info.tokens += length;
    }
    return layout;
}

} // namespace spark
