#include "core/forward/captureconverter.h"

#include "core/io/filewriter.h"
#include "core/io/floatconv.h"
#include "core/io/ioerror.h"
#include "core/io/safetensorsfilewriter.h"

#include <algorithm>

namespace spark {
namespace {

void writeHiddenStates(const HiddenStateCapture& capture, DType dtype, ByteSink& sink,
                       const ProgressFn& progress, const std::filesystem::path& out)
{
    const auto& info = capture.info();
    std::vector<int> slots(info.layerIds.size());
    for (std::size_t s = 0; s < slots.size(); ++s) {
        slots[s] = static_cast<int>(s);
    }
    for (std::int64_t sample = 0; sample < info.samples; ++sample) {
        if (!reportProgress(progress, static_cast<std::uint64_t>(sample),
                            static_cast<std::uint64_t>(info.samples))) {
            throw IoError(IoErrorKind::Cancelled, out.string(), "conversion cancelled");
        }
        const Activations rows = capture.hidden(sample, slots, capture.sampleLength(sample));
        const auto count = static_cast<std::size_t>(rows.rows * rows.cols);
        const float* values = rows.row(0);
        // Every stored value is exact in FP32, so converting back to a 16-bit source dtype restores its bits.
        if (dtype == DType::F32) {
            sink.write(std::as_bytes(std::span(values, count)));
            continue;
        }
        std::vector<std::uint16_t> bits(count);
        std::transform(values, values + count, bits.begin(), dtype == DType::BF16 ? floatToBf16 : floatToF16);
        sink.write(std::as_bytes(std::span(bits)));
    }
    reportProgress(progress, static_cast<std::uint64_t>(info.samples),
                   static_cast<std::uint64_t>(info.samples));
}

} // namespace

void convertCapture(const HiddenStateCapture& capture, const std::filesystem::path& out,
                    const ProgressFn& progress)
{
    const auto& info = capture.info();
    const DType stored = capture.storedDType();
    const DType dtype = stored == DType::F8_E4M3 ? DType::F32 : stored;
    std::vector<std::int64_t> tokens, offsets{0}, argmax;
    std::vector<std::uint8_t> mask;
    for (std::int64_t s = 0; s < info.samples; ++s) {
        auto seq = capture.sequence(s);
        tokens.insert(tokens.end(), seq.tokens.begin(), seq.tokens.end());
        mask.insert(mask.end(), seq.lossMask.begin(), seq.lossMask.end());
        argmax.insert(argmax.end(), seq.targetArgmax.begin(), seq.targetArgmax.end());
        offsets.push_back(static_cast<std::int64_t>(tokens.size()));
    }
    const auto n = static_cast<std::uint64_t>(tokens.size());
    std::vector<TensorSpec> specs{
        {"hidden_states", dtype, {n, info.layerIds.size(), static_cast<std::uint64_t>(info.hiddenSize)}},
        {"token_ids", DType::I64, {n}},
        {"sample_offsets", DType::I64, {offsets.size()}},
        {"loss_mask", DType::U8, {n}}};
    if (info.hasTargetArgmax) {
        specs.push_back({"target_argmax", DType::I64, {n}});
    }
    std::map<std::string, std::string> metadata{
        {"format", kCaptureFormat},
        {"layer_ids", layerIdList(info.layerIds)},
        {"hidden_size", std::to_string(info.hiddenSize)},
        {"greedy", info.greedy ? "true" : "false"},
        {"last_layer_included", info.lastLayerIncluded ? "true" : "false"},
        {"capture", "converted from a " + info.format + " (" + info.path.filename().string() + ")" +
                        (info.capture.empty() ? "" : "; " + info.capture)},
        {"dtype", dtype == DType::F32   ? "float32"
                  : dtype == DType::F16 ? "float16"
                                        : "bfloat16"}};
    if (info.temperature) {
        metadata["temperature"] = std::to_string(*info.temperature);
    }
    for (const auto& [key, value] : {std::pair{"target_model", info.targetModel},
                                     std::pair{"target_quantization", info.targetQuantization}}) {
        if (!value.empty()) {
            metadata[key] = value;
        }
    }
    writeSafetensorsFile(out, std::move(specs), metadata, [&](const TensorInfo& t, ByteSink& sink) {
        if (t.name == "hidden_states") {
            writeHiddenStates(capture, dtype, sink, progress, out);
        } else if (t.name == "loss_mask") {
            sink.write(std::as_bytes(std::span(mask)));
        } else if (t.name == "sample_offsets") {
            sink.write(std::as_bytes(std::span(offsets)));
        } else {
            sink.write(std::as_bytes(std::span(t.name == "token_ids" ? tokens : argmax)));
        }
    });
}

} // namespace spark
