#pragma once

#include "core/plan/architecture.h"

#include <string>
#include <string_view>
#include <vector>

namespace spark {

/// @brief A named, documented set of quantization entries (vLLM semantics, matched against vLLM prefixes).
/// A Linear is quantized when a target selects it and no ignore entry does; the planner then applies the
/// hard limits (shape, raw `.weight` reads, non-Linear classes) on top.
struct Preset
{
    std::string name;
    /// The architecture (ArchitectureTraits::id) whose modules its entries name; empty for any draft.
    std::string architecture;
    std::string description;          ///< one paragraph: what it quantizes, what it keeps and why
    std::vector<std::string> targets; ///< entries that select modules ("Linear", "re:...")
    std::vector<std::string> ignore;  ///< entries that keep modules BF16
    /// Quantizes modules stock vLLM reads raw (DFlash/DSpark q/k/v): needs a vLLM with vllm#51581 fixed.
    /// The planner then warns instead of keeping them BF16.
    bool patchedVllm = false;
    /// Scheme rules "ENTRY=SCHEME" applied before the user's --scheme rules (later rules win).
    std::vector<std::string> schemes;
};

/// @brief Every preset except "auto": laguna-dflash, qwen3-dflash, glm-dspark, glm-dspark-patched, eagle3,
/// generic, none.
const std::vector<Preset>& presets();

/// @brief The preset called @p name ("auto" is not one: resolve it with autoPresetName first); nullptr
/// when unknown.
const Preset* findPreset(std::string_view name);

/// @brief What "auto" means for @p arch: laguna-dflash, qwen3-dflash, glm-dspark (any DSpark), eagle3, or
/// generic for an unknown architecture.
std::string autoPresetName(const ArchitectureInfo& arch);

/// @brief Whether @p preset is written for drafts of @p arch (or for any draft).
bool presetSuits(const Preset& preset, const ArchitectureInfo& arch);
/// @brief "auto, laguna-dflash, ..., none" for usage and error messages.
std::string presetNames();

} // namespace spark
