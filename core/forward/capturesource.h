#pragma once

// The pieces every capture format is read into (hiddenstatecapture.h is the interface users see): one
// adapter per on-disk layout turns its files into CaptureParts, one per captured sequence.

#include "core/forward/hiddenstatecapture.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace spark {

/// @brief A capture as an adapter read it: what it says of itself and its sequences. The layer ids are
/// the recorded ones (empty when the format records none); HiddenStateCapture::open() settles them.
struct CaptureLayout
{
    CaptureInfo info;
    std::vector<CapturePart> parts;
    std::int64_t layers = 0; ///< captured streams per token
    bool hasLossMask = false;
    /// Nothing says which tokens the target generated (vLLM's files without a sidecar or prompt length).
    bool promptUnknown = false;
};

/// @brief The product's own file (draft-forward.md §7); a prompt length in @p options marks the leading
/// tokens of a file without a loss mask.
CaptureLayout readCaptureFile(const std::filesystem::path& path, const CaptureReadOptions& options);
/// @brief A folder of per-sequence files: speculators' hs_*.safetensors or vLLM's connector output
/// ({request}.safetensors), BF16 or FP8 with per-token scales, with an optional capture.json sidecar.
CaptureLayout readCaptureFolder(const std::filesystem::path& path, const CaptureReadOptions& options);
/// @brief True when @p folder holds DeepSpec's target cache (manifest.json and samples.idx).
bool isDeepSpecCache(const std::filesystem::path& folder);
/// @brief DeepSpec's target cache, version 2: manifest.json, a fixed-record samples.idx, raw shards.
CaptureLayout readDeepSpecCache(const std::filesystem::path& folder);

// Helpers the adapters share.

/// @brief The tensor @p name of @p file, checked for one of @p dtypes and @p dims dimensions; nullptr when
/// it is absent and not @p required. Throws ForwardInputError naming the file and the tensor.
const TensorInfo* captureTensor(const SafetensorsFile& file, const char* name,
                                const std::vector<DType>& dtypes, std::size_t dims, bool required = true);
/// @brief Rows [begin, begin + count) of @p tensor (rows along its first dimension); empty for nullptr.
CaptureColumn columnRows(const SafetensorsFile& file, const TensorInfo* tensor, std::int64_t begin,
                         std::int64_t count);

/// @brief The hidden states of a safetensors capture file, with their FP8 scales when they are FP8.
struct HiddenStateTensors
{
    const TensorInfo* hidden = nullptr;
    const TensorInfo* scales = nullptr; ///< F32, broadcast like torch's against [T, L, 1]
    bool scalePerRow = false, scalePerLayer = false;

    /// @brief Rows [begin, begin + count) of both, into @p part.
    void place(const SafetensorsFile& file, std::int64_t begin, std::int64_t count, CapturePart& part) const;
};
/// @brief hidden_states and, for FP8 ones, hidden_states_scales (draft-forward.md §7). Throws
/// ForwardInputError naming the file and the tensor.
HiddenStateTensors hiddenStateTensors(const SafetensorsFile& file);

/// @brief The first @p count integers of a 1-D integer or byte column.
std::vector<std::int64_t> readIntegers(const CaptureColumn& column, std::int64_t count);
/// @brief A non-empty JSON list of non-negative layer ids; ForwardInputError naming @p file and @p field.
std::vector<int> parseLayerIds(const std::string& file, const std::string& field,
                               const nlohmann::json& value);

} // namespace spark
