#include "core/forward/capturewriter.h"

#include "core/forward/hiddenstatecapture.h"
#include "core/io/safetensorsfilewriter.h"

namespace spark {

void writeCaptureFile(const std::filesystem::path& path, const CaptureContents& c)
{
    const auto n = static_cast<std::uint64_t>(c.tokens.size());
    auto metadata = c.metadata;
    std::string ids = "[";
    for (std::size_t i = 0; i < c.layerIds.size(); ++i) {
        ids += (i ? ", " : "") + std::to_string(c.layerIds[i]);
    }
    metadata["format"] = kCaptureFormat;
    metadata["layer_ids"] = ids + "]";
    metadata["hidden_size"] = std::to_string(c.hiddenSize);
    writeSafetensorsFile(
        path,
        {{{"hidden_states", DType::BF16, {n, c.layerIds.size(), c.hiddenSize}}, bytesOf(c.hiddenStates)},
         {{"token_ids", DType::I32, {n}}, bytesOf(c.tokens)},
         {{"sample_offsets", DType::I64, {c.sampleOffsets.size()}}, bytesOf(c.sampleOffsets)},
         {{"loss_mask", DType::U8, {n}}, bytesOf(c.lossMask)}},
        metadata);
}

} // namespace spark
