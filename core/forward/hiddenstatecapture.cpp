#include "core/forward/hiddenstatecapture.h"

#include "core/forward/capturesource.h"
#include "core/forward/draftspec.h"
#include "core/io/checkpoint.h"
#include "core/io/floatconv.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>

namespace spark {
namespace {

namespace fs = std::filesystem;

/// The ids of the layout's slots: the user's, the recorded ones, or the draft's (draft-forward.md §7).
void settleLayerIds(CaptureLayout& layout, const CaptureReadOptions& options)
{
    auto& info = layout.info;
    const auto slots = static_cast<std::size_t>(layout.layers);
    const auto name = info.path.string();
    if (!options.layerIds.empty()) {
        if (options.layerIds.size() != slots) {
            throw ForwardInputError(name, "layer_ids",
                                    "the ids given " + layerIdList(options.layerIds) + " name " +
                                        std::to_string(options.layerIds.size()) +
                                        " layers, the capture holds " + std::to_string(slots));
        }
        info.layerIds = options.layerIds;
        info.layerIdsSource = "given (--layer-ids)";
        if (options.targetLayers > 0 && info.layerIds.back() == options.targetLayers) {
            info.lastLayerIncluded = true;
        }
        return;
    }
    if (!info.layerIds.empty()) {
        if (info.layerIds.size() != slots) {
            throw ForwardInputError(name, info.layerIdsSource,
                                    "lists " + std::to_string(info.layerIds.size()) +
                                        " ids, hidden_states has " + std::to_string(slots) + " layers");
        }
        return;
    }
    const auto& draft = options.draftLayerIds;
    if (!draft.empty() && (slots == draft.size() || slots == draft.size() + 1)) {
        info.layerIds = draft;
        info.layerIdsSource = "assumed: the draft's " + options.draftLayerIdsSource;
        if (slots > draft.size()) {
            // vLLM's extraction appends the target's last layer, id num_hidden_layers.
            const int last = options.targetLayers > 0 ? options.targetLayers
                                                      : *std::max_element(draft.begin(), draft.end()) + 1;
            info.layerIds.push_back(last);
            info.lastLayerIncluded = true;
            info.layerIdsSource += " and the last layer";
        }
        return;
    }
    throw ForwardInputError(
        name, "layer_ids",
        "not recorded (vLLM's and speculators' files store none) and the capture's " + std::to_string(slots) +
            " layers are not the draft's ids (plus the last layer): give them with "
            "--layer-ids in the CLI, Layer ids in the app, or a capture.json beside the files");
}

} // namespace

std::string layerIdList(const std::vector<int>& ids)
{
    std::string out;
    for (const int v : ids) {
        out += (out.empty() ? "" : ", ") + std::to_string(v);
    }
    return "[" + out + "]";
}

HiddenStateCapture HiddenStateCapture::open(const fs::path& path, const CaptureReadOptions& options)
{
    std::error_code ec;
    CaptureLayout layout;
    if (fs::is_directory(path, ec)) {
        // A folder holding one capture file (what `demo --capture` writes) is that file; other folders hold
        // one file per sequence.
        const auto single = path / kCaptureFileName;
        if (!fs::exists(path / kCaptureSidecar, ec) && fs::is_regular_file(single, ec)) {
            layout = readCaptureFile(single, options);
        } else if (isDeepSpecCache(path)) {
            layout = readDeepSpecCache(path);
        } else {
            layout = readCaptureFolder(path, options);
        }
    } else if (!fs::exists(path, ec)) {
        throw ForwardInputError(path.string(), "path", "does not exist");
    } else {
        layout = readCaptureFile(path, options);
    }
    if (options.promptTokens && layout.hasLossMask) {
        throw ForwardInputError(layout.info.path.string(), "loss_mask",
                                "present: the capture says which tokens were generated, so a prompt length "
                                "(--prompt-tokens) does not apply");
    }
    settleLayerIds(layout, options);
    if (layout.promptUnknown) {
        // With the last layer and the target, the target's own tokens are recomputed at every position
        // (TargetHead), so which ones it generated no longer matters.
        if (!layout.info.lastLayerIncluded || options.targetLayers == 0) {
            throw ForwardInputError(
                layout.info.path.string(), "prompt tokens",
                "unknown: these files do not say which tokens the target generated. Give the prompt length "
                "(--prompt-tokens N in the CLI, Prompt tokens in the app, or \"skip_tokens\": N in a "
                "capture.json beside the files) when each holds the target's greedy continuation after N "
                "prompt "
                "tokens; or give the target model with a capture holding its last layer, so that its tokens "
                "are "
                "recomputed at every position");
        }
        layout.info.greedy = false;
        layout.info.promptUnknown = true;
    }
    HiddenStateCapture capture;
    capture.m_info = std::move(layout.info);
    capture.m_samples = std::move(layout.parts);
    capture.m_info.samples = static_cast<std::int64_t>(capture.m_samples.size());
    return capture;
}

std::int64_t HiddenStateCapture::sampleLength(std::int64_t sample) const
{
    return m_samples.at(static_cast<std::size_t>(sample)).length;
}

const std::filesystem::path& HiddenStateCapture::sampleFile(std::int64_t sample) const
{
    return m_samples.at(static_cast<std::size_t>(sample)).file;
}

DType HiddenStateCapture::storedDType() const
{
    return m_samples.front().hidden.dtype;
}

CapturedSequence HiddenStateCapture::sequence(std::int64_t sample) const
{
    const auto& part = m_samples.at(static_cast<std::size_t>(sample));
    CapturedSequence out;
    out.tokens = readIntegers(part.tokens, part.length);
    if (!part.lossMask.bytes.empty()) {
        const auto mask = readIntegers(part.lossMask, part.length);
        out.lossMask.assign(mask.begin(), mask.end());
    } else {
        out.lossMask.assign(static_cast<std::size_t>(part.length), 1);
        std::fill_n(out.lossMask.begin(), part.skip, 0);
    }
    if (!part.targetArgmax.bytes.empty()) {
        out.targetArgmax = readIntegers(part.targetArgmax, part.length);
    }
    return out;
}

std::vector<int> HiddenStateCapture::slotsOf(const std::vector<int>& layerIds, const std::string& what) const
{
    std::vector<int> slots;
    for (const int id : layerIds) {
        const auto it = std::find(m_info.layerIds.begin(), m_info.layerIds.end(), id);
        if (it == m_info.layerIds.end()) {
            throw ForwardInputError(m_info.path.string(), "layer_ids",
                                    "has no layer " + std::to_string(id) + " that the draft reads (" + what +
                                        "); the capture has " + layerIdList(m_info.layerIds) + " (" +
                                        m_info.layerIdsSource + ")");
        }
        slots.push_back(static_cast<int>(it - m_info.layerIds.begin()));
    }
    return slots;
}

Activations HiddenStateCapture::hidden(std::int64_t sample, const std::vector<int>& slots,
                                       std::int64_t length) const
{
    std::vector<std::int64_t> rows(static_cast<std::size_t>(std::max<std::int64_t>(length, 0)));
    std::iota(rows.begin(), rows.end(), std::int64_t{0});
    return hiddenRows(sample, slots, rows);
}

Activations HiddenStateCapture::hiddenRows(std::int64_t sample, const std::vector<int>& slots,
                                           const std::vector<std::int64_t>& rows) const
{
    const auto& part = m_samples.at(static_cast<std::size_t>(sample));
    const std::int64_t h = m_info.hiddenSize;
    const std::int64_t width = dtypeBits(part.hidden.dtype) / 8;
    const std::byte* scales = part.scales.bytes.empty() ? nullptr : part.scales.bytes.data();
    Activations out(static_cast<std::int64_t>(rows.size()), static_cast<std::int64_t>(slots.size()) * h);
    std::int64_t length = 0;
    for (std::size_t r = 0; r < rows.size(); ++r) {
        const std::int64_t t = rows[r];
        if (t < 0 || t >= part.length) {
            throw std::out_of_range("row " + std::to_string(t) + " outside sample " + std::to_string(sample) +
                                    " of " + std::to_string(part.length) + " rows");
        }
        length = std::max(length, t + 1);
        for (std::size_t s = 0; s < slots.size(); ++s) {
            const std::byte* src = part.hidden.bytes.data() + ((t * part.layers + slots[s]) * h) * width;
            float* dst = out.row(static_cast<std::int64_t>(r)) + static_cast<std::int64_t>(s) * h;
            toFloat(part.hidden.dtype, src, static_cast<std::size_t>(h), dst);
            if (scales != nullptr) {
                // FP8 states: code · scale in FP32, the scale of the row and layer, broadcast as torch does.
                const auto index = (part.scalePerRow ? t : 0) * (part.scalePerLayer ? part.layers : 1) +
                                   (part.scalePerLayer ? slots[s] : 0);
                float scale;
                std::memcpy(&scale, scales + index * 4, 4);
                std::for_each(dst, dst + h, [scale](float& v) { v *= scale; });
            }
        }
    }
    // The rows are copied: their pages leave this process's resident set, so reading a capture far larger
    // than memory keeps it bounded by the sample in hand (the page cache still holds them).
    const auto read = part.hidden.bytes.first(static_cast<std::size_t>(length * part.layers * h * width));
    part.mapping->release(static_cast<std::uint64_t>(read.data() - part.mapping->bytes().data()),
                          read.size());
    return out;
}

fs::path targetBesideCapture(const fs::path& capture)
{
    std::error_code ec;
    const auto folder = fs::is_directory(capture, ec) ? capture : capture.parent_path();
    const auto target = folder / "target";
    return fs::is_regular_file(target / "config.json", ec) ? target : fs::path();
}

CaptureReadOptions captureOptionsFor(CaptureReadOptions options, const Checkpoint& draft,
                                     const Checkpoint* target)
{
    const auto spec = readDraftSpec(draft);
    options.draftLayerIds = spec.auxLayerIds;
    options.draftLayerIdsSource = spec.auxLayerIdsSource;
    if (target != nullptr) {
        const auto config = target->config();
        const auto& text = config.contains("text_config") ? config["text_config"] : config;
        options.targetLayers = text.value("num_hidden_layers", 0);
    }
    return options;
}

HiddenStateCapture openCaptureFor(const fs::path& path, const CaptureReadOptions& options,
                                  const Checkpoint& draft, const Checkpoint* target)
{
    return HiddenStateCapture::open(path, captureOptionsFor(options, draft, target));
}

} // namespace spark
