#pragma once

#include "core/io/filewriter.h"
#include "core/io/safetensorslayout.h"
#include "core/progress.h"

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace spark {

/// @brief A tensor to write: its spec, and a producer that writes exactly spec.byteSize() bytes.
/// Producers run one at a time, in file order, so memory stays bounded by what one producer holds.
struct PlannedTensor
{
    TensorSpec spec;
    std::function<void(ByteSink&)> produce;
};

struct ShardedWriteOptions
{
    std::uint64_t maxShardBytes = 0; ///< 0: a single model.safetensors
    ProgressFn progress;             ///< bytes of tensor data written / total
};

struct ShardedWriteResult
{
    std::vector<std::string> files; ///< shard file names, in order
    std::uint64_t totalSize = 0;    ///< sum of tensor data bytes (the index's total_size)
};

/// @brief Writes @p tensors into @p folder (normally a StagingDirectory) as reference-layout safetensors
/// shards, split greedily in name order so no shard exceeds @p options.maxShardBytes of data unless one
/// tensor alone does; writes model.safetensors.index.json when there is more than one shard.
/// Throws IoError (write failure, cancel) or std::logic_error (a producer wrote the wrong size).
ShardedWriteResult writeSafetensorsShards(const std::filesystem::path& folder,
                                          std::vector<PlannedTensor> tensors,
                                          const ShardedWriteOptions& options = {});

/// @brief "model-00001-of-00003.safetensors", or "model.safetensors" when @p count is 1.
std::string shardFileName(std::size_t index, std::size_t count);

} // namespace spark
