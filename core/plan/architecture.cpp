#include "core/plan/architecture.h"

#include <string_view>

namespace spark {
namespace {

std::string firstArchitecture(const nlohmann::json& config)
{
    const auto it = config.find("architectures");
    if (it != config.end() && it->is_array() && !it->empty() && it->front().is_string()) {
        return it->front().get<std::string>();
    }
    return {};
}

std::optional<int> intField(const nlohmann::json& object, const char* key)
{
    if (!object.is_object()) {
        return std::nullopt;
    }
    const auto it = object.find(key);
    if (it != object.end() && it->is_number_integer()) {
        return it->get<int>();
    }
    return std::nullopt;
}

std::string verifierName(const nlohmann::json& config)
{
    // speculators_config.verifier.name_or_path (speculators format); absent for native drafts.
    const auto spec = config.find("speculators_config");
    if (spec == config.end() || !spec->is_object()) {
        return {};
    }
    const auto verifier = spec->find("verifier");
    if (verifier == spec->end() || !verifier->is_object()) {
        return {};
    }
    const auto name = verifier->find("name_or_path");
    return name != verifier->end() && name->is_string() ? name->get<std::string>() : std::string();
}

} // namespace

ArchitectureInfo detectArchitecture(const nlohmann::json& config)
{
    ArchitectureInfo info;
    info.id = "generic";
    info.displayName = "Generic";
    if (!config.is_object()) {
        return info;
    }
    const auto arch = firstArchitecture(config);
    const auto speculatorsType = config.value("speculators_model_type", std::string());
    info.speculatorsFormat = !speculatorsType.empty();
    info.configArchitecture = info.speculatorsFormat ? speculatorsType : arch;

    if (arch == "DFlashLagunaForCausalLM") {
        info.kind = DraftArchitecture::LagunaDFlash;
        info.id = "laguna-dflash";
        info.displayName = "Laguna DFlash";
        info.targetLayers =
            intField(config.value("dflash_config", nlohmann::json::object()), "num_target_layers");
        info.targetLayersSource = "dflash_config.num_target_layers";
    } else if (speculatorsType == "dspark" || arch == "DSparkSpeculator" || arch == "Qwen3DSparkModel") {
        info.kind = DraftArchitecture::DSpark;
        info.id = "dspark";
        info.displayName = "DSpark (speculators)";
    } else if (arch == "DFlashDraftModel" || speculatorsType == "dflash") {
        info.kind = DraftArchitecture::Qwen3DFlash;
        info.id = "qwen3-dflash";
        info.displayName = "Qwen3 DFlash";
        info.targetLayers =
            intField(config.value("dflash_config", nlohmann::json::object()), "num_target_layers");
        info.targetLayersSource = "dflash_config.num_target_layers";
    } else if (arch == "LlamaForCausalLMEagle3" || arch == "Eagle3LlamaForCausalLM" ||
               speculatorsType == "eagle3") {
        info.kind = DraftArchitecture::Eagle3;
        info.id = "eagle3";
        info.displayName = "EAGLE-3";
    }
    if (!info.targetLayers) {
        info.targetLayers = intField(config, "target_num_hidden_layers");
        info.targetLayersSource = info.targetLayers ? "target_num_hidden_layers" : "";
    }
    info.verifier = verifierName(config);
    return info;
}

std::string groupOf(const std::string& tensorName)
{
    std::string_view name = tensorName;
    if (name.starts_with("model.")) {
        name.remove_prefix(6);
    }
    if (name.starts_with("layers.")) {
        return std::string(name.substr(0, name.find('.', 7)));
    }
    return std::string(name.substr(0, name.find('.')));
}

} // namespace spark
