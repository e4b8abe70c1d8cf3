#pragma once

#include "args.h"
#include "core/io/checkpoint.h"
#include "core/quant/quantbackend.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace spark::cli {

/// @brief What `verify` and `compare` share: `SRC OUT [--json] [--target-layers N] [--threads N]` and the
/// backend options, with both checkpoints open.
struct CheckpointPairArgs
{
    Args args;
    Checkpoint source;
    Checkpoint output;
    std::unique_ptr<QuantBackend> backend;
    unsigned threads = 0;
    std::optional<int> targetLayers;
};

/// @brief The options of `verify` and `compare`.
OptionTable checkpointPairOptionTable();

/// @brief Parses @p argv as above (UsageError on bad options) and opens both checkpoints.
CheckpointPairArgs checkpointPairFrom(const std::vector<std::string>& argv);

} // namespace spark::cli
