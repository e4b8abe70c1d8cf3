#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace spark {

/// @brief What a capture file holds (draft-forward.md §7), for the writers of synthetic ones (demo, perf).
struct CaptureContents
{
    std::vector<std::uint16_t> hiddenStates; ///< BF16 bits, [tokens, layerIds.size(), hiddenSize]
    std::vector<int> layerIds;
    std::uint64_t hiddenSize = 0;
    std::vector<std::int32_t> tokens;
    std::vector<std::int64_t> sampleOffsets; ///< [samples + 1]
    std::vector<std::uint8_t> lossMask;
    std::map<std::string, std::string> metadata; ///< added to format, layer_ids and hidden_size
};

/// @brief Writes @p contents as one capture file, atomically. Throws IoError naming the file.
void writeCaptureFile(const std::filesystem::path& path, const CaptureContents& contents);

} // namespace spark
