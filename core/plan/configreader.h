#pragma once

#include "core/plan/configgroups.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace spark {

/// @brief A compressed-tensors quantization_config as vLLM reads it: its groups with the product scheme each
/// one describes, the ignore list, and everything that does not conform (schemes-spec §4, §5.2).
struct ReadQuantConfig
{
    std::vector<ConfigGroup> groups;     ///< in config order; scheme nullptr where unrecognised
    std::vector<std::string> groupNames; ///< "group_0", ...
    std::vector<std::string> ignore;
    std::string format;                ///< top-level format
    std::vector<std::string> problems; ///< one line each, naming the group
};

/// @brief The scheme a config group's `weights`, `input_activations` and `format` describe, nullptr if none.
const WeightScheme* schemeOfGroup(const nlohmann::json& group);

/// @brief The rounding method a group's `weights` object records: observer "memoryless_mse" (or "mse", as
/// llm-compressor writes a recipe's name) with llm-compressor's default (empty) observer_kwargs is mse;
/// "minmax", "memoryless_minmax", "static_minmax" or none is rtn, or the method kRoundingKwarg names in
/// observer_kwargs; nullptr for anything else (another observer, non-default kwargs).
const RoundingMethod* roundingOfWeights(const nlohmann::json& weights);

/// @brief True when a group's `weights.observer_kwargs` mark its codes as solved by GPTQ (kCodesKwarg).
bool gptqCodesOfWeights(const nlohmann::json& weights);

/// @brief Reads @p config's quantization_config (a config.json object). A missing or malformed config is a
/// problem, never an exception.
ReadQuantConfig readQuantizationConfig(const nlohmann::json& config);

} // namespace spark
