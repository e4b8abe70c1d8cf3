#include "core/audit/quantargs.h"

namespace spark {
namespace {

/// nlohmann's value() throws on a type mismatch; a hostile config must give a problem, not an exception.
template <typename T> bool readField(const nlohmann::json& object, const char* key, T& out)
{
    if (!object.is_object()) {
        return false;
    }
    const auto it = object.find(key);
    if (it == object.end()) {
        return false;
    }
    if constexpr (std::is_same_v<T, std::string>) {
        if (!it->is_string()) {
            return false;
        }
    } else if constexpr (std::is_same_v<T, bool>) {
        if (!it->is_boolean()) {
            return false;
        }
    } else {
        if (!it->is_number_integer()) {
            return false;
        }
    }
    out = it->get<T>();
    return true;
}

bool isSpeculators(const nlohmann::json& config)
{
    return config.is_object() && config.contains("speculators_model_type");
}

} // namespace

std::string QuantArgs::describe() const
{
    if (scheme) {
        return std::string(scheme->name);
    }
    if (bits == 0) {
        return "unreadable scheme";
    }
    std::string text = type + std::to_string(bits) + (symmetric ? " sym " : " asym ") + strategy;
    if (groupSize > 0) {
        text += " " + std::to_string(groupSize);
    }
    if (inputActivations) {
        text += dynamicActivations ? " + dynamic activations" : " + static activations";
    }
    return text + " (" + (format.empty() ? "no format" : format) + ")";
}

std::string QuantArgs::vllmProblem() const
{
    if (bits == 0) {
        return "weights cannot be read";
    }
    if (format.empty()) {
        return "neither the group nor the top level has a format";
    }
    if (format == "mixed-precision") {
        return "the group has no format of its own and the top-level one is mixed-precision: vLLM raises "
               "NotImplementedError (\"No compressed-tensors compatible scheme\")";
    }
    if (format == "int-quantized" && !inputActivations) {
        return "int-quantized is an activation format: without input_activations vLLM asserts weights.type "
               "== "
               "FLOAT when it parses the config (write int weight-only as pack-quantized, schemes-spec "
               "§5.2.5)";
    }
    if ((format == "naive-quantized" || format == "float-quantized") && type == "float" && bits == 8 &&
        !inputActivations) {
        return "FP8 weight-only: its only CUDA kernel is Marlin FP8, which refuses compute capability >= 8.9 "
               "unless forced (VLLM_TEST_FORCE_FP8_MARLIN=1); use FP8_DYNAMIC (schemes-spec §5.2.6)";
    }
    if (format == "pack-quantized") {
        if (type != "int") {
            return "pack-quantized holds int weights, the group says " + type;
        }
        if (bits != 4 && bits != 8) {
            return "vLLM's WNA16 serves 4 and 8 bits only, not " + std::to_string(bits);
        }
        if (inputActivations) {
            return "pack-quantized with input_activations: vLLM's WNA16 requires none";
        }
        if (strategy != "group" && strategy != "channel") {
            return "WNA16 needs strategy group or channel, not '" + strategy + "'";
        }
        if (strategy == "group" && groupSize != 32 && groupSize != 64 && groupSize != 128) {
            return "no Marlin/Machete kernel for group size " + std::to_string(groupSize);
        }
        return {};
    }
    if (format == "nvfp4-pack-quantized") {
        if (type != "float" || bits != 4 || groupSize != 16) {
            return "nvfp4-pack-quantized needs float 4-bit weights in groups of 16";
        }
        return {};
    }
    if (format == "float-quantized" || format == "naive-quantized" || format == "int-quantized") {
        return {};
    }
    return "format '" + format +
           "' is not one the audit reads (pack-quantized, float-quantized, "
           "naive-quantized, int-quantized, nvfp4-pack-quantized)";
}

QuantArgs parseQuantArgs(const nlohmann::json& group, const std::string& topFormat,
                         const std::string& groupName, std::vector<std::string>& problems)
{
    QuantArgs args;
    args.formatFromGroup = readField(group, "format", args.format);
    if (!args.formatFromGroup) {
        args.format = topFormat;
    }
    const nlohmann::json weights =
        group.is_object() && group.contains("weights") ? group["weights"] : nlohmann::json();
    if (!weights.is_object()) {
        problems.push_back(groupName + ": no weights object");
        return args;
    }
    int bits = 0;
    if (!readField(weights, "num_bits", bits) || bits < 1 || bits > 8) {
        problems.push_back(groupName + ": weights.num_bits must be an integer from 1 to 8");
        return args;
    }
    if (!readField(weights, "type", args.type) || (args.type != "int" && args.type != "float")) {
        problems.push_back(groupName + ": weights.type must be \"int\" or \"float\"");
        return args;
    }
    if (weights.contains("symmetric") && !readField(weights, "symmetric", args.symmetric)) {
        problems.push_back(groupName + ": weights.symmetric is not a boolean");
        return args;
    }
    readField(weights, "strategy", args.strategy);
    int groupSize = -1;
    if (readField(weights, "group_size", groupSize) && groupSize > 0) {
        args.groupSize = groupSize;
        if (args.strategy.empty()) {
            args.strategy = "group"; // CT infers the strategy from a group size
        }
    } else if (weights.contains("group_size") && !weights["group_size"].is_null() && groupSize != -1) {
        problems.push_back(groupName + ": weights.group_size must be a positive integer, -1 or null");
        return args;
    }
    if (args.strategy.empty()) {
        args.strategy = "tensor"; // CT's default without a group size
    }
    if ((args.strategy == "group" || args.strategy == "tensor_group") && args.groupSize <= 0) {
        problems.push_back(groupName + ": strategy " + args.strategy + " without a group_size");
        return args;
    }
    std::string actorder;
    args.actorderGroup = readField(weights, "actorder", actorder) && actorder == "group";
    const auto activations = group.is_object() && group.contains("input_activations")
                                 ? group["input_activations"]
                                 : nlohmann::json();
    args.inputActivations = activations.is_object();
    if (args.inputActivations) {
        readField(activations, "dynamic", args.dynamicActivations);
    }
    args.bits = bits;
    args.scheme = schemeOfGroup(group);
    if (args.scheme && args.formatFromGroup && args.format != args.scheme->format) {
        args.scheme = nullptr; // e.g. W8A16 weights written as int-quantized: not the product scheme
    }
    return args;
}

LocatedQuantConfig locateQuantizationConfig(const nlohmann::json& config)
{
    LocatedQuantConfig located;
    if (!config.is_object()) {
        return located;
    }
    const nlohmann::json* nested = nullptr;
    if (const auto layer = config.find("transformer_layer_config");
        layer != config.end() && layer->is_object()) {
        if (const auto it = layer->find("quantization_config"); it != layer->end()) {
            nested = &*it;
        }
    }
    const nlohmann::json* top = nullptr;
    for (const char* key : {"quantization_config", "compression_config"}) {
        if (const auto it = config.find(key); it != config.end()) {
            top = &*it;
            located.location = key;
            break;
        }
    }
    if (!top && nested) {
        top = nested;
        located.location = "transformer_layer_config.quantization_config";
    }
    if (!top) {
        return located;
    }
    located.present = true;
    located.raw = *top;
    if (isSpeculators(config)) {
        // vLLM rebuilds a speculators draft's hf_config from transformer_layer_config, so a top-level
        // config alone may be dropped (format-spec §3, not verified); llm-compressor writes both.
        if (!nested) {
            located.placementProblems.push_back(
                "speculators-format config with quantization_config only at the top level: vLLM builds the "
                "draft from transformer_layer_config and may not see it");
        } else if (top != nested && *top != *nested) {
            located.placementProblems.push_back("the quantization_config at the top level and the one inside "
                                                "transformer_layer_config differ");
        }
    }
    const nlohmann::json wrapper = {{"quantization_config", *top}};
    try {
        located.read = readQuantizationConfig(wrapper);
    } catch (const nlohmann::json::exception& e) {
        // readQuantizationConfig is meant not to throw; a field of an unexpected type must still not crash.
        located.read = {};
        located.read.problems.push_back(std::string("quantization_config has a field of the wrong type: ") +
                                        e.what());
        return located;
    }
    const auto groups =
        top->is_object() && top->contains("config_groups") ? (*top)["config_groups"] : nlohmann::json();
    if (groups.is_object()) {
        for (const auto& name : located.read.groupNames) {
            located.args.push_back(
                parseQuantArgs(groups[name], located.read.format, name, located.argProblems));
        }
    }
    return located;
}

} // namespace spark
