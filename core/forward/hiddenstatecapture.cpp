#include "core/forward/hiddenstatecapture.h"

#include "core/forward/draftspec.h"
#include "core/io/checkpoint.h"
#include "core/io/floatconv.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

namespace spark {
namespace {

namespace fs = std::filesystem;

std::string fileName(const fs::path& p)
{
    return p.string();
}

std::int64_t elementBytes(DType dtype)
{
    return dtypeBits(dtype) / 8;
}

/// Integers of a 1-D tensor, rows [begin, begin + count).
std::vector<std::int64_t> readIntegers(const SafetensorsFile& file, const TensorInfo& t, std::int64_t begin,
                                       std::int64_t count)
{
    const auto bytes = file.bytes(t);
    const std::int64_t width = elementBytes(t.dtype);
    std::vector<std::int64_t> out(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i) {
        const std::byte* p = bytes.data() + (begin + i) * width;
        switch (t.dtype) {
        case DType::I64:
            std::memcpy(&out[i], p, 8);
            break;
        case DType::I32: {
            std::int32_t v;
            std::memcpy(&v, p, 4);
            out[i] = v;
            break;
        }
        default:
            out[i] = static_cast<std::int64_t>(static_cast<std::uint8_t>(*p));
        }
    }
    return out;
}

const TensorInfo* requireTensor(const SafetensorsFile& file, const char* name, std::vector<DType> dtypes,
                                std::size_t dims, bool required = true)
{
    const auto* t = file.find(name);
    if (t == nullptr) {
        if (required) {
            throw ForwardInputError(fileName(file.path()), name, "missing");
        }
        return nullptr;
    }
    if (std::find(dtypes.begin(), dtypes.end(), t->dtype) == dtypes.end()) {
        throw ForwardInputError(fileName(file.path()), name,
                                "has dtype " + std::string(dtypeName(t->dtype)) +
                                    ", not one this format allows");
    }
    if (t->shape.size() != dims) {
        throw ForwardInputError(fileName(file.path()), name,
                                "has shape " + t->shapeText() + ", expected " + std::to_string(dims) +
                                    " dimensions");
    }
    return t;
}

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

std::vector<int> parseLayerIds(const std::string& file, const std::string& field, const nlohmann::json& value)
{
    if (!value.is_array() || value.empty()) {
        throw ForwardInputError(file, field, "must be a non-empty JSON list of layer ids");
    }
    std::vector<int> ids;
    for (const auto& v : value) {
        if (!v.is_number_integer() || v.get<int>() < 0) {
            throw ForwardInputError(file, field, "must list non-negative integers");
        }
        ids.push_back(v.get<int>());
    }
    return ids;
}

} // namespace

HiddenStateCapture HiddenStateCapture::open(const fs::path& path)
{
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
        // A folder holding one capture file (what `demo --capture` writes) is that file; a folder of
        // speculators hs_*.safetensors has a capture.json sidecar instead.
        const auto single = path / kCaptureFileName;
        if (!fs::exists(path / kCaptureSidecar, ec) && fs::is_regular_file(single, ec)) {
            return openFile(single);
        }
        return openDirectory(path);
    }
    if (!fs::exists(path, ec)) {
        throw ForwardInputError(fileName(path), "path", "does not exist");
    }
    return openFile(path);
}

HiddenStateCapture HiddenStateCapture::openFile(const fs::path& path)
{
    const auto file = SafetensorsFile::open(path);
    const auto name = fileName(path);
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
    HiddenStateCapture capture;
    auto& info = capture.m_info;
    info.path = path;
    info.format = kCaptureFormat;
    const auto ids = field("layer_ids");
    if (!ids) {
        throw ForwardInputError(name, "__metadata__.layer_ids", "missing");
    }
    const auto parsed = nlohmann::json::parse(*ids, nullptr, false);
    info.layerIds = parseLayerIds(name, "__metadata__.layer_ids", parsed);
    info.greedy = parseBool(name, "__metadata__.greedy", field("greedy").value_or("true"));
    info.lastLayerIncluded =
        parseBool(name, "__metadata__.last_layer_included", field("last_layer_included").value_or("false"));
    info.targetModel = field("target_model").value_or("");
    info.targetQuantization = field("target_quantization").value_or("");
    info.capture = field("capture").value_or("");

    const auto* hidden = requireTensor(*file, "hidden_states", {DType::BF16, DType::F16, DType::F32}, 3);
    const auto* tokens = requireTensor(*file, "token_ids", {DType::I32, DType::I64}, 1);
    const auto* offsets = requireTensor(*file, "sample_offsets", {DType::I64}, 1);
    const auto* lossMask = requireTensor(*file, "loss_mask", {DType::U8, DType::Bool}, 1, false);
    const auto* argmax = requireTensor(*file, "target_argmax", {DType::I32, DType::I64}, 1, false);
    const auto rows = static_cast<std::int64_t>(hidden->shape[0]);
    if (hidden->shape[1] != info.layerIds.size()) {
        throw ForwardInputError(name, "hidden_states",
                                "has " + std::to_string(hidden->shape[1]) + " layers, layer_ids lists " +
                                    std::to_string(info.layerIds.size()));
    }
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
    const auto off = readIntegers(*file, *offsets, 0, static_cast<std::int64_t>(offsets->shape[0]));
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
        capture.m_samples.push_back({file, hidden, tokens, lossMask, argmax, off[s], off[s + 1] - off[s], 0});
    }
    info.hasTargetArgmax = argmax != nullptr;
    info.samples = static_cast<std::int64_t>(capture.m_samples.size());
    info.tokens = rows;
    return capture;
}

HiddenStateCapture HiddenStateCapture::openDirectory(const fs::path& path)
{
    const auto sidecar = path / kCaptureSidecar;
    std::error_code ec;
    if (!fs::exists(sidecar, ec)) {
        throw ForwardInputError(
            fileName(sidecar), "file",
            "missing: a directory of hs_*.safetensors needs a capture.json naming its layer_ids");
    }
    const auto json = readJsonFile(sidecar);
    const auto name = fileName(sidecar);
    HiddenStateCapture capture;
    auto& info = capture.m_info;
    info.path = path;
    info.format = "speculators hs directory";
    if (!json.is_object() || !json.contains("layer_ids")) {
        throw ForwardInputError(name, "layer_ids", "missing");
    }
    info.layerIds = parseLayerIds(name, "layer_ids", json["layer_ids"]);
    if (json.contains("greedy") && !json["greedy"].is_boolean()) {
        throw ForwardInputError(name, "greedy", "must be true or false");
    }
    info.greedy = json.value("greedy", true);
    info.lastLayerIncluded = json.value("last_layer_included", false);
    info.targetModel = json.value("target_model", std::string());
    const auto skip = json.value("skip_tokens", std::int64_t{0});
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(path, ec)) {
        const auto file = entry.path().filename().string();
        if (file.starts_with("hs_") && entry.path().extension() == ".safetensors") {
            files.push_back(entry.path());
        }
    }
    if (files.empty()) {
        throw ForwardInputError(fileName(path), "hs_*.safetensors", "no capture files in the directory");
    }
    // hs_2 before hs_10: by the number after "hs_".
    std::sort(files.begin(), files.end(), [](const fs::path& a, const fs::path& b) {
        const auto number = [](const fs::path& p) {
            try {
                return std::stoll(p.stem().string().substr(3));
            } catch (...) {
                return -1ll;
            }
        };
        return std::pair(number(a), a.string()) < std::pair(number(b), b.string());
    });
    for (const auto& p : files) {
        const auto file = SafetensorsFile::open(p);
        const auto* hidden = requireTensor(*file, "hidden_states", {DType::BF16, DType::F16, DType::F32}, 3);
        const auto* tokens = requireTensor(*file, "token_ids", {DType::I32, DType::I64}, 1);
        if (hidden->shape[1] != info.layerIds.size()) {
            throw ForwardInputError(fileName(p), "hidden_states",
                                    "has " + std::to_string(hidden->shape[1]) +
                                        " layers, capture.json layer_ids lists " +
                                        std::to_string(info.layerIds.size()));
        }
        if (info.hiddenSize == 0) {
            info.hiddenSize = static_cast<std::int64_t>(hidden->shape[2]);
        } else if (info.hiddenSize != static_cast<std::int64_t>(hidden->shape[2])) {
            throw ForwardInputError(fileName(p), "hidden_states", "hidden size differs from the other files");
        }
        if (tokens->shape[0] != hidden->shape[0]) {
            throw ForwardInputError(fileName(p), "token_ids", "length differs from hidden_states");
        }
        const auto length = static_cast<std::int64_t>(hidden->shape[0]);
        capture.m_samples.push_back(
            {file, hidden, tokens, nullptr, nullptr, 0, length, std::min(skip, length)});
        info.tokens += length;
    }
    info.samples = static_cast<std::int64_t>(capture.m_samples.size());
    return capture;
}

std::int64_t HiddenStateCapture::sampleLength(std::int64_t sample) const
{
    return m_samples.at(static_cast<std::size_t>(sample)).length;
}

const std::filesystem::path& HiddenStateCapture::sampleFile(std::int64_t sample) const
{
    return m_samples.at(static_cast<std::size_t>(sample)).file->path();
}

CapturedSequence HiddenStateCapture::sequence(std::int64_t sample) const
{
    const auto& part = m_samples.at(static_cast<std::size_t>(sample));
    CapturedSequence out;
    out.tokens = readIntegers(*part.file, *part.tokens, part.begin, part.length);
    if (part.lossMask) {
        const auto mask = readIntegers(*part.file, *part.lossMask, part.begin, part.length);
        out.lossMask.assign(mask.begin(), mask.end());
    } else {
        out.lossMask.assign(static_cast<std::size_t>(part.length), 1);
        std::fill_n(out.lossMask.begin(), part.skip, 0);
    }
    if (part.targetArgmax) {
        out.targetArgmax = readIntegers(*part.file, *part.targetArgmax, part.begin, part.length);
    }
    return out;
}

std::vector<int> HiddenStateCapture::slotsOf(const std::vector<int>& layerIds, const std::string& what) const
{
    std::vector<int> slots;
    for (const int id : layerIds) {
        const auto it = std::find(m_info.layerIds.begin(), m_info.layerIds.end(), id);
        if (it == m_info.layerIds.end()) {
            std::string have;
            for (const int v : m_info.layerIds) {
                have += (have.empty() ? "" : ", ") + std::to_string(v);
            }
            throw ForwardInputError(fileName(m_info.path), "layer_ids",
                                    "has no layer " + std::to_string(id) + " that the draft reads (" + what +
                                        "); the capture has [" + have + "]");
        }
        slots.push_back(static_cast<int>(it - m_info.layerIds.begin()));
    }
    return slots;
}

Activations HiddenStateCapture::hidden(std::int64_t sample, const std::vector<int>& slots,
                                       std::int64_t length) const
{
    const auto& part = m_samples.at(static_cast<std::size_t>(sample));
    const std::int64_t h = m_info.hiddenSize;
    const auto layers = static_cast<std::int64_t>(part.hidden->shape[1]);
    const std::int64_t width = elementBytes(part.hidden->dtype);
    const auto bytes = part.file->bytes(*part.hidden);
    Activations out(length, static_cast<std::int64_t>(slots.size()) * h);
    for (std::int64_t t = 0; t < length; ++t) {
        for (std::size_t s = 0; s < slots.size(); ++s) {
            const std::byte* src = bytes.data() + (((part.begin + t) * layers + slots[s]) * h) * width;
            toFloat(part.hidden->dtype, src, static_cast<std::size_t>(h),
                    out.row(t) + static_cast<std::int64_t>(s) * h);
        }
    }
    return out;
}

} // namespace spark
