#pragma once

#include "core/io/tensorinfo.h"
#include "core/plan/architecture.h"
#include "core/plan/draftmodule.h"

#include <string>
#include <vector>

namespace spark {

/// @brief Groups a checkpoint's tensors into modules and describes each the way vLLM loads it for
/// @p arch (format-spec §5): role, vLLM class and prefix (layer index offset by @p targetLayers), fused
/// group, raw `.weight` reads, gathers and anything that keeps vLLM from running it quantized.
/// Sorted by checkpoint module name. Generic drafts get the common Llama/Qwen conventions.
std::vector<DraftModule> describeModules(const ArchitectureInfo& arch, const std::vector<TensorInfo>& tensors,
                                         int targetLayers);

/// @brief The checkpoint module of a tensor: the name without a trailing parameter suffix (weight, bias,
/// weight_packed, weight_scale, ...); a tensor without one ("d2t", "mask_hidden") is its own module.
std::string moduleOfTensor(const std::string& tensorName);

} // namespace spark
