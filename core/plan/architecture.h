#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace spark {

/// @brief The draft families Sparkulator knows how vLLM loads (format-spec §5).
enum class DraftArchitecture { LagunaDFlash, Qwen3DFlash, DSpark, Eagle3, Generic };

/// @brief What config.json says about the draft.
struct ArchitectureInfo
{
    DraftArchitecture kind = DraftArchitecture::Generic;
    std::string id;                 ///< "laguna-dflash", "qwen3-dflash", "dspark", "eagle3", "generic"
    std::string displayName;        ///< "Laguna DFlash"
    std::string configArchitecture; ///< architectures[0] or speculators_model_type, as written
    bool speculatorsFormat =
        false; ///< speculators_model_type present (transformer_layer_config holds the model)
    std::optional<int> targetLayers; ///< the target's layer count when the config states it
    std::string targetLayersSource;  ///< the config key it came from ("dflash_config.num_target_layers")
    /// The verifier (target) the draft was trained against, when the config names it
    /// (speculators_config.verifier.name_or_path); recorded for the model card's pairing note.
    std::string verifier;
};

/// @brief Detects the draft architecture from config.json (an empty object gives "generic").
ArchitectureInfo detectArchitecture(const nlohmann::json& config);

/// @brief The display group of a module: "layers.3" for anything inside layer 3, else the first
/// component ("fc", "lm_head", "markov_head").
std::string groupOf(const std::string& tensorName);

} // namespace spark
