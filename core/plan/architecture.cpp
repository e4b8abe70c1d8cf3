#include "core/plan/architecture.h"

#include <algorithm>
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

const std::vector<ArchitectureTraits>& architectureTraits()
{
    // DSpark before Qwen3 DFlash: a DSpark checkpoint of the speculators format may also read as DFlash.
    static const std::vector<ArchitectureTraits> rows = {
        {.kind = DraftArchitecture::LagunaDFlash,
         .id = "laguna-dflash",
         .displayName = "Laguna DFlash",
         .configArchitectures = {"DFlashLagunaForCausalLM"},
         .targetLayersInDFlashConfig = true,
         .preset = "laguna-dflash",
         .vllmMethod = "dflash",
         .blockDraft = true,
         .fusedGateUp = false},
        {.kind = DraftArchitecture::DSpark,
         .id = "dspark",
         .displayName = "DSpark (speculators)",
         .configArchitectures = {"DSparkSpeculator", "Qwen3DSparkModel"},
         .speculatorsTypes = {"dspark"},
         .preset = "glm-dspark",
         .vllmMethod = "dspark",
         .blockDraft = true},
        {.kind = DraftArchitecture::Qwen3DFlash,
         .id = "qwen3-dflash",
         .displayName = "Qwen3 DFlash",
         .configArchitectures = {"DFlashDraftModel"},
         .speculatorsTypes = {"dflash"},
         .targetLayersInDFlashConfig = true,
         .preset = "qwen3-dflash",
         .vllmMethod = "dflash",
         .blockDraft = true},
        {.kind = DraftArchitecture::Eagle3,
         .id = "eagle3",
         .displayName = "EAGLE-3",
         .configArchitectures = {"LlamaForCausalLMEagle3", "Eagle3LlamaForCausalLM"},
         .speculatorsTypes = {"eagle3"},
         .preset = "eagle3",
         .vllmMethod = "eagle3",
         .quantizableHead = true,
         .singleLayerHead = true,
         .fcQuantizableSince = "vllm#28435",
         .qkvAliasBefore = "vllm#48068"},
        {.kind = DraftArchitecture::Generic,
         .id = "generic",
         .displayName = "Generic",
         .preset = "generic",
         .vllmMethod = "eagle3",
         .known = false},
    };
    return rows;
}

const ArchitectureTraits& traitsOf(DraftArchitecture kind)
{
    for (const auto& row : architectureTraits()) {
        if (row.kind == kind) {
            return row;
        }
    }
    return architectureTraits().back();
}

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

    auto named = [](const std::vector<std::string_view>& names, const std::string& value) {
        return !value.empty() && std::find(names.begin(), names.end(), value) != names.end();
    };
    for (const auto& row : architectureTraits()) {
        if (named(row.configArchitectures, arch) || named(row.speculatorsTypes, speculatorsType)) {
            info.kind = row.kind;
            info.id = row.id;
            info.displayName = row.displayName;
            if (row.targetLayersInDFlashConfig) {
                info.targetLayers =
                    intField(config.value("dflash_config", nlohmann::json::object()), "num_target_layers");
                info.targetLayersSource = "dflash_config.num_target_layers";
            }
            break;
        }
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
