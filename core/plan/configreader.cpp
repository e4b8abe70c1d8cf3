#include "core/plan/configreader.h"

#include <set>

namespace spark {
namespace {

/// The fields of `weights` that tell schemes apart (observer and the like may differ between tools).
bool sameWeights(const nlohmann::json& written, const nlohmann::json& expected)
{
    for (const char* key : {"num_bits", "type", "symmetric", "strategy", "group_size"}) {
        if (!written.contains(key) || written[key] != expected[key]) {
            return false;
        }
    }
    return true;
}

} // namespace

const WeightScheme* schemeOfGroup(const nlohmann::json& group)
{
    if (!group.is_object() || !group.contains("weights") || !group["weights"].is_object()) {
        return nullptr;
    }
    const auto activations = group.value("input_activations", nlohmann::json());
    for (const auto& s : weightSchemes()) {
        if (!s.quantizes() || !sameWeights(group["weights"], s.weightsConfig())) {
            continue;
        }
        const auto expected = s.inputActivationsConfig();
        // Compared as JSON values: value("dynamic", false) would throw on a hostile non-boolean field.
        const bool activationsMatch =
            expected.is_null() ? activations.is_null()
                               : activations.is_object() && activations.contains("dynamic") &&
                                     activations["dynamic"] == true && activations.contains("strategy") &&
                                     activations["strategy"] == expected["strategy"] &&
                                     activations.contains("type") && activations["type"] == expected["type"];
        if (activationsMatch) {
            return &s;
        }
    }
    return nullptr;
}

bool gptqCodesOfWeights(const nlohmann::json& weights)
{
    if (!weights.is_object() || !weights.contains("observer_kwargs") ||
        !weights["observer_kwargs"].is_object()) {
        return false;
    }
    const auto& kwargs = weights["observer_kwargs"];
    const std::string key(kCodesKwarg);
    return kwargs.contains(key) && kwargs[key] == "gptq";
}

const RoundingMethod* roundingOfWeights(const nlohmann::json& weights)
{
    if (!weights.is_object()) {
        return nullptr;
    }
    const auto observer = weights.value("observer", nlohmann::json());
    auto kwargs = weights.value("observer_kwargs", nlohmann::json::object());
    if (kwargs.is_object()) {
        kwargs.erase(std::string(kCodesKwarg)); // how the codes were solved, not how the range was chosen
    }
    if (!kwargs.is_object() || (!observer.is_null() && !observer.is_string())) {
        return nullptr;
    }
    const std::string name = observer.is_string() ? observer.get<std::string>() : "minmax";
    if (name == "memoryless_mse" || name == "mse") {
        const auto* mse = findRoundingMethod("mse");
        return kwargs.empty() ? mse : nullptr;
    }
    if (name != "minmax" && name != "memoryless_minmax" && name != "static_minmax") {
        return nullptr;
    }
    if (kwargs.empty()) {
        return &rtnRounding();
    }
    const std::string key(kRoundingKwarg);
    if (kwargs.size() != 1 || !kwargs.contains(key) || !kwargs[key].is_string()) {
        return nullptr;
    }
    const auto* method = findRoundingMethod(kwargs[key].get<std::string>());
    // Only a method no llm-compressor observer computes is recorded by the marker.
    return method && !method->ctExact && method->observer == name ? method : nullptr;
}

ReadQuantConfig readQuantizationConfig(const nlohmann::json& config)
{
    ReadQuantConfig read;
    if (!config.is_object() || !config.contains("quantization_config") ||
        !config["quantization_config"].is_object()) {
        read.problems.push_back("no quantization_config");
        return read;
    }
    const auto& qc = config["quantization_config"];
    if (!qc.contains("quant_method") || qc["quant_method"] != "compressed-tensors") {
        read.problems.push_back("quant_method is not compressed-tensors");
    }
    read.format = qc.contains("format") && qc["format"].is_string() ? qc["format"].get<std::string>() : "";
    if (qc.contains("ignore") && qc["ignore"].is_array()) {
        for (const auto& e : qc["ignore"]) {
            if (e.is_string()) {
                read.ignore.push_back(e.get<std::string>());
            } else {
                read.problems.push_back("ignore holds a non-string entry");
            }
        }
    }
    const auto groups = qc.value("config_groups", nlohmann::json::object());
    if (!groups.is_object() || groups.empty()) {
        read.problems.push_back("config_groups is missing or empty");
        return read;
    }
    std::set<std::string> formats;
    for (const auto& [name, group] : groups.items()) {
        ConfigGroup parsed;
        parsed.scheme = schemeOfGroup(group);
        if (!parsed.scheme) {
            read.problems.push_back(name + ": weights/input_activations describe no supported scheme");
        }
        const auto weights =
            group.is_object() ? group.value("weights", nlohmann::json::object()) : nlohmann::json();
        parsed.rounding = roundingOfWeights(weights);
        parsed.gptq = gptqCodesOfWeights(weights);
        for (const char* forbidden : {"scale_dtype", "zp_dtype"}) {
            if (weights.is_object() && weights.contains(forbidden)) {
                read.problems.push_back(name + ": weights has '" + forbidden +
                                        "', which vLLM builds bundling compressed-tensors <= 0.12 reject");
            }
        }
        const auto format = group.is_object() ? group.value("format", nlohmann::json()) : nlohmann::json();
        if (!format.is_string()) {
            read.problems.push_back(name +
                                    ": no per-group format (vLLM then falls back to the top-level one)");
        } else {
            formats.insert(format.get<std::string>());
            if (parsed.scheme && format.get<std::string>() != parsed.scheme->format) {
                read.problems.push_back(name + ": format " + format.get<std::string>() + " does not fit " +
                                        std::string(parsed.scheme->name) + " (" +
                                        std::string(parsed.scheme->format) + ")");
            }
        }
        if (group.is_object() && group.contains("targets") && group["targets"].is_array()) {
            for (const auto& t : group["targets"]) {
                if (t.is_string()) {
                    parsed.targets.push_back(t.get<std::string>());
                }
            }
        } else {
            read.problems.push_back(name + ": no targets list");
        }
        read.groups.push_back(std::move(parsed));
        read.groupNames.push_back(name);
    }
    const std::string expectedTop = formats.size() > 1 ? "mixed-precision"
                                    : formats.empty()  ? ""
                                                       : *formats.begin();
    if (!expectedTop.empty() && read.format != expectedTop) {
        read.problems.push_back("top-level format is '" + read.format + "', expected '" + expectedTop + "'" +
                                (formats.size() > 1 ? " (several group formats)" : ""));
    }
    return read;
}

} // namespace spark
