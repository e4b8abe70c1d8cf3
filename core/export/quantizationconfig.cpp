#include "core/export/quantizationconfig.h"

#include <set>

namespace spark {

nlohmann::json quantizationConfig(const QuantPlan& plan)
{
    auto groups = plan.groups;
    if (groups.empty()) { // nothing quantized: a well-formed config whose ignore list keeps every Linear
        groups.push_back({plan.defaultScheme->quantizes() ? plan.defaultScheme : intSymmetricScheme(4, 128),
                          {"Linear"},
                          &rtnRounding()});
    }
    nlohmann::json configGroups = nlohmann::json::object();
    std::set<std::string> formats;
    for (std::size_t i = 0; i < groups.size(); ++i) {
        const auto& scheme = *groups[i].scheme;
        const auto& rounding = *groups[i].rounding;
        formats.insert(std::string(scheme.format));
        // vLLM ignores observer and observer_kwargs; they record the rounding for verify/compare/check.
        auto weights = scheme.weightsConfig();
        weights["observer"] = rounding.observer;
        if (!rounding.ctExact) {
            weights["observer_kwargs"][std::string(kRoundingKwarg)] = rounding.name;
        }
        if (groups[i].gptq) {
            weights["observer_kwargs"][std::string(kCodesKwarg)] = "gptq";
        }
        configGroups["group_" + std::to_string(i)] = {
            {"format", scheme.format},
            {"input_activations", scheme.inputActivationsConfig()},
            {"output_activations", nullptr},
            {"targets", groups[i].targets},
            {"weights", weights},
        };
    }
    // One format at the top when all groups share it, else "mixed-precision" (schemes-spec §4.2).
    return {
        {"config_groups", configGroups},
        {"format", formats.size() == 1 ? *formats.begin() : std::string("mixed-precision")},
        {"global_compression_ratio", nullptr},
        {"ignore", plan.ignoreEntries()},
        {"kv_cache_scheme", nullptr},
        {"quant_method", "compressed-tensors"},
        {"quantization_status", "compressed"},
        {"sparsity_config", nlohmann::json::object()},
        {"transform_config", nlohmann::json::object()},
        {"version", kCompressedTensorsSchemaVersion},
    };
}

nlohmann::json exportedConfig(const nlohmann::json& source, const QuantPlan& plan)
{
    nlohmann::json config = source.is_object() ? source : nlohmann::json::object();
    const auto qc = quantizationConfig(plan);
    config["quantization_config"] = qc;
    if (config.contains("speculators_model_type") && config.contains("transformer_layer_config") &&
        config["transformer_layer_config"].is_object()) {
        config["transformer_layer_config"]["quantization_config"] = qc;
    }
    return config;
}

} // namespace spark
