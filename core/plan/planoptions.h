#pragma once

#include <optional>
#include <string>
#include <vector>

namespace spark {

/// @brief What the user asks of makePlan(); the same options drive `plan`, `quantize` and the GUI editor.
struct PlanOptions
{
    std::string preset = "auto";      ///< a preset name (preset.h) or "auto" (by detected architecture)
    std::vector<std::string> targets; ///< extra target entries, added to the preset's
    std::vector<std::string> ignore;  ///< extra ignore entries, added to the preset's
    /// The target model's layer count, which offsets draft layer indices in vLLM prefixes. Overrides the
    /// config; when neither has it the plan uses 0 and lints "target-layers-unknown".
    std::optional<int> targetLayers;
    int bits = 4;        ///< 4 or 8
    int groupSize = 128; ///< 32, 64, 128, or -1 for one scale per output channel
    int tpDegree = 1;    ///< tensor-parallel degree the draft will be served with (shape gate per rank)
};

} // namespace spark
