#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spark {

/// @brief The draft families Sparkulator knows how vLLM loads (format-spec §5).
enum class DraftArchitecture { LagunaDFlash, Qwen3DFlash, DSpark, Eagle3, Generic };

/// @brief What the product knows of one draft family, in one row: how config.json names it, its preset and
/// vLLM method, and the facts of vLLM's model class that decide what may be quantized (format-spec §5).
/// Every place that differs by family reads its row; nothing else branches on the kind.
struct ArchitectureTraits
{
    DraftArchitecture kind;
    std::string_view id;          ///< "laguna-dflash", "qwen3-dflash", "dspark", "eagle3", "generic"
    std::string_view displayName; ///< "Laguna DFlash"
    std::vector<std::string_view> configArchitectures; ///< architectures[0] values that name it
    std::vector<std::string_view> speculatorsTypes;    ///< speculators_model_type values that name it
    bool targetLayersInDFlashConfig = false; ///< dflash_config.num_target_layers states the target's layers
    std::string_view preset;                 ///< the recipe `--preset auto` picks
    std::string_view vllmMethod;             ///< speculative_config.method
    bool known = true;                       ///< false for generic: no layout vLLM loads is known
    /// DFlash family: a block of positions per step; vLLM reads q/k/v raw and builds lm_head without
    /// quant_config.
    bool blockDraft = false;
    bool quantizableHead = false; ///< vLLM passes quant_config to the draft's own ParallelLMHead (EAGLE-3)
    bool fusedGateUp =
        true; ///< gate/up are one MergedColumnParallelLinear (Laguna: two ColumnParallelLinear)
    bool singleLayerHead = false;        ///< one decoder layer predicts every step (EAGLE-3)
    std::string_view fcQuantizableSince; ///< the vLLM change since which its fc loads quantized
    std::string_view qkvAliasBefore;     ///< the vLLM change before which layer 0's qkv lacked ".self_attn"
};

/// @brief Every family, in detection order (the first row whose names match wins), generic last.
const std::vector<ArchitectureTraits>& architectureTraits();
/// @brief The row of @p kind.
const ArchitectureTraits& traitsOf(DraftArchitecture kind);

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

    const ArchitectureTraits& traits() const { return traitsOf(kind); }
};

/// @brief Detects the draft architecture from config.json (an empty object gives "generic").
ArchitectureInfo detectArchitecture(const nlohmann::json& config);

/// @brief The display group of a module: "layers.3" for anything inside layer 3, else the first
/// component ("fc", "lm_head", "markov_head").
std::string groupOf(const std::string& tensorName);

} // namespace spark
