#include "core/export/quantizationconfig.h"

namespace spark {

nlohmann::json quantizationConfig(const QuantPlan& plan)
{
    const bool channel = plan.scheme.groupSize < 0;
    const nlohmann::json weights = {
        {"actorder", nullptr},
        {"block_structure", nullptr},
        {"dynamic", false},
        {"group_size", channel ? nlohmann::json(nullptr) : nlohmann::json(plan.scheme.groupSize)},
        {"num_bits", plan.scheme.bits},
        {"observer", "minmax"},
        {"observer_kwargs", nlohmann::json::object()},
        {"strategy", channel ? "channel" : "group"},
        {"symmetric", true},
        {"type", "int"},
    };
    return {
        {"config_groups",
         {{"group_0",
           {{"format", "pack-quantized"},
            {"input_activations", nullptr},
            {"output_activations", nullptr},
            {"targets", plan.targets()},
            {"weights", weights}}}}},
        {"format", "pack-quantized"},
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
