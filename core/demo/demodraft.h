#pragma once

#include "core/io/shardedwriter.h"
#include "core/progress.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace spark {

/// @brief Size of a demo draft: the real dimensions, or small ones (multiples of 128) for tests.
enum class DemoScale { Tiny, Full };

/// @brief A synthetic draft: the tensor names, shapes, dtypes and config.json of a real architecture
/// (format-spec §5), with deterministic weights of realistic bf16 statistics. Not a trained model.
struct DemoDraft
{
    std::string arch;
    nlohmann::ordered_json config;
    std::vector<TensorSpec> tensors;

    std::uint64_t totalBytes() const;
};

/// @brief The architectures `demo` knows: laguna-dflash, glm-dspark, qwen3-dflash, llama-eagle3.
const std::vector<std::string>& demoArchitectures();

/// @brief The layout of a demo draft. Throws std::invalid_argument for an unknown architecture.
DemoDraft describeDemoDraft(const std::string& arch, DemoScale scale);

struct DemoWriteOptions
{
    std::uint64_t seed = 0;
    std::uint64_t maxShardBytes = 0; ///< 0: one file
    unsigned threads = 0;            ///< 0: all cores
    ProgressFn progress;
};

/// @brief Writes the demo draft into @p out atomically (staging folder + rename). Streams one tensor
/// at a time through a fixed buffer. Throws IoError.
void writeDemoDraft(const DemoDraft& draft, const std::filesystem::path& out,
                    const DemoWriteOptions& options);

} // namespace spark
