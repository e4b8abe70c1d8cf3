// The product's own capture file (draft-forward.md §7): all sequences in one safetensors file, with
// sample_offsets, an optional loss mask and target argmax, and string metadata naming the layer ids.

#include "core/forward/capturesource.h"
#include "core/forward/draftspec.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace spark {
namespace {

bool parseBool(const std::string& file, const std::string& field, const std::string& text)
{
    if (text == "true" || text == "True" || text == "1") {
        return true;
    }
    if (text == "false" || text == "False" || text == "0") {
        return false;
    }
    throw ForwardInputError(file, field, "must be true or false, not '" + text + "'");
}

double parseTemperature(const std::string& file, const std::string& text)
{
    std::size_t used = 0;
    double value = -1;
    try {
        value = std::stod(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != text.size() || !(value >= 0) || !std::isfinite(value)) {
        throw ForwardInputError(file, "__metadata__.temperature",
                                "must be a number ≥ 0 (the sampling temperature), not '" + text + "'");
    }
    return value;
}

} // namespace

CaptureLayout readCaptureFile(const std::filesystem::path& path, const CaptureReadOptions& options)
{
    const auto file = SafetensorsFile::open(path);
    const auto name = path.string();
    const auto& meta = file->header().metadata;
    const auto field = [&](const char* key) -> std::optional<std::string> {
        const auto it = meta.find(key);
        return it == meta.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
    const auto format = field("format");
    if (format != std::string(kCaptureFormat)) {
        throw ForwardInputError(name, "__metadata__.format",
                                format ? "is '" + *format + "', expected '" + kCaptureFormat + "'"
                                       : std::string("missing (expected '") + kCaptureFormat + "')");
    }
    CaptureLayout layout;
    auto& info = layout.info;
    info.path = path;
    info.format = kCaptureFormat;
    const auto ids = field("layer_ids");
    if (!ids) {
        throw ForwardInputError(name, "__metadata__.layer_ids", "missing");
    }
    info.layerIds =
        parseLayerIds(name, "__metadata__.layer_ids", nlohmann::json::parse(*ids, nullptr, false));
    info.layerIdsSource = "__metadata__.layer_ids";
    info.greedy = parseBool(name, "__metadata__.greedy", field("greedy").value_or("true"));
    if (const auto t = field("temperature")) {
        info.temperature = parseTemperature(name, *t);
    }
    info.lastLayerIncluded =
        parseBool(name, "__metadata__.last_layer_included", field("last_layer_included").value_or("false"));
    info.targetModel = field("target_model").value_or("");
    info.targetQuantization = field("target_quantization").value_or("");
    info.capture = field("capture").value_or("");

    const auto states = hiddenStateTensors(*file);
    const auto* hidden = states.hidden;
    const auto* tokens = captureTensor(*file, "token_ids", {DType::I32, DType::I64}, 1);
    const auto* offsets = captureTensor(*file, "sample_offsets", {DType::I64}, 1);
    const auto* lossMask = captureTensor(*file, "loss_mask", {DType::U8, DType::Bool}, 1, false);
    const auto* argmax = captureTensor(*file, "target_argmax", {DType::I32, DType::I64}, 1, false);
    const auto rows = static_cast<std::int64_t>(hidden->shape[0]);
    layout.layers = static_cast<std::int64_t>(hidden->shape[1]);
    info.hiddenSize = static_cast<std::int64_t>(hidden->shape[2]);
    if (const auto declared = field("hidden_size");
        declared && *declared != std::to_string(info.hiddenSize)) {
        throw ForwardInputError(name, "__metadata__.hidden_size",
                                "says " + *declared + ", hidden_states has " +
                                    std::to_string(info.hiddenSize));
    }
    for (const auto* t : {tokens, lossMask, argmax}) {
        if (t != nullptr && static_cast<std::int64_t>(t->shape[0]) != rows) {
            throw ForwardInputError(name, t->name,
                                    "has " + std::to_string(t->shape[0]) + " entries, hidden_states has " +
                                        std::to_string(rows) + " tokens");
        }
    }
    if (offsets->shape[0] < 2) {
        throw ForwardInputError(name, "sample_offsets", "needs at least two entries (one sample)");
    }
    const auto off = readIntegers(columnRows(*file, offsets, 0, static_cast<std::int64_t>(offsets->shape[0])),
                                  static_cast<std::int64_t>(offsets->shape[0]));
    if (off.front() != 0 || off.back() != rows) {
        throw ForwardInputError(name, "sample_offsets",
                                "must start at 0 and end at the token count " + std::to_string(rows) +
                                    " (ends at " + std::to_string(off.back()) + ")");
    }
    for (std::size_t s = 0; s + 1 < off.size(); ++s) {
        if (off[s + 1] <= off[s]) {
            throw ForwardInputError(name, "sample_offsets",
                                    "must increase strictly (entry " + std::to_string(s + 1) + ")");
        }
        const auto length = off[s + 1] - off[s];
        CapturePart part;
        part.mapping = file->mapping();
        part.file = path;
        part.length = length;
        states.place(*file, off[s], length, part);
        part.tokens = columnRows(*file, tokens, off[s], length);
        part.lossMask = columnRows(*file, lossMask, off[s], length);
        part.targetArgmax = columnRows(*file, argmax, off[s], length);
        part.skip = lossMask == nullptr && options.promptTokens ? std::min(*options.promptTokens, length) : 0;
        layout.parts.push_back(part);
    }
    layout.hasLossMask = lossMask != nullptr;
    info.hasTargetArgmax = argmax != nullptr;
    info.tokens = rows;
    return layout;
}

} // namespace spark
