// Fuzz target for the quantization_config reader that `check`, `compare` and the GUI run on configs other
// people wrote: any bytes that parse as JSON must give a config with problems, never an exception or a
// crash (a type-mismatched field, a config_groups that is an array, a regex that does not compile).
#include "core/audit/quantargs.h"
#include "core/plan/configgroups.h"
#include "core/plan/vllmmatching.h"

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const auto config = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
    if (config.is_discarded()) {
        return 0;
    }
    const auto located = spark::locateQuantizationConfig(config);
    if (located.args.size() > located.read.groups.size()) {
        __builtin_trap(); // one QuantArgs per group, never more
    }
    for (const auto& args : located.args) {
        (void)args.describe();
        (void)args.vllmProblem();
    }
    static const std::vector<std::string> names{"model.layers.32.self_attn.qkv_proj",
                                                "model.layers.32.mlp.down_proj", "lm_head", "model.fc"};
    for (const auto& name : names) {
        (void)spark::selectConfigGroup(located.read.groups, name, "QKVParallelLinear",
                                       spark::standardFusedMapping());
    }
    (void)spark::evaluateIgnoreList(located.read.ignore, names, spark::standardFusedMapping());
    return 0;
}
