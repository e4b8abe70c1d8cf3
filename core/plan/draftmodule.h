#pragma once

#include "core/io/dtype.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace spark {

/// @brief What a module is to vLLM's loader: only Linear modules can take a compressed-tensors scheme.
enum class ModuleRole {
    Linear,    ///< a vLLM *Linear* class (QKVParallelLinear, RowParallelLinear, ReplicatedLinear, ...)
    Norm,      ///< RMSNorm and other 1-D scales
    Embedding, ///< VocabParallelEmbedding / nn.Embedding: read by row gather
    Head,      ///< ParallelLMHead (lm_head, markov_w2): not selected by the "Linear" class target
    Buffer,    ///< d2t, t2d, mask_hidden and other non-parameter tensors
};

/// @brief "linear", "norm", "embedding", "head", "buffer".
std::string_view roleName(ModuleRole role);

/// @brief One checkpoint module (tensors sharing a prefix, e.g. "layers.0.mlp.gate_proj") as vLLM loads it
/// (format-spec §5). Built by describeModules(); the planner adds a decision on top.
struct DraftModule
{
    std::string name;                 ///< checkpoint module: "layers.0.mlp.gate_proj", "fc", "d2t"
    std::string weightTensor;         ///< "layers.0.mlp.gate_proj.weight"; empty for buffers without one
    std::vector<std::string> tensors; ///< every checkpoint tensor of the module (weight, bias, ...)
    ModuleRole role = ModuleRole::Buffer;
    /// vLLM module prefix, the name quantization entries are matched against: "model." prefix, layer
    /// index offset by the target's layer count, fused name ("model.layers.36.mlp.gate_up_proj").
    std::string vllmName;
    /// The name this shard has when vLLM expands a fused module through packed_modules_mapping
    /// ("model.layers.36.mlp.gate_proj"); equals vllmName for unfused modules.
    std::string vllmShardName;
    /// Other prefixes older vLLM versions used for the same module (EAGLE3 before vllm#48068:
    /// "model.layers.32.qkv_proj"). Generated ignore entries must cover them too.
    std::vector<std::string> vllmAliases;
    std::string vllmClass;       ///< "QKVParallelLinear", "ParallelLMHead", "RMSNorm", ... ("" for buffers)
    std::string fusedGroup;      ///< vLLM fused leaf ("qkv_proj", "gate_up_proj"); empty when not fused
    bool readsRawWeight = false; ///< vLLM reads `.weight` directly (DFlash/DSpark qkv_proj, markov_w2)
    /// Empty when vLLM can run the module quantized; otherwise why not (no quant_config, wrong class).
    std::string vllmLimit;
    bool gathered = false;     ///< read by index (embeddings, Markov rows): a draft step does not stream it
    DType dtype = DType::BF16; ///< dtype of the weight (or first tensor)
    std::uint64_t outFeatures = 0; ///< rows of a 2-D weight
    std::uint64_t inFeatures = 0;  ///< columns of a 2-D weight
    std::uint64_t weightBytes = 0; ///< bytes of the weight tensor
    std::uint64_t bytes = 0;       ///< bytes of every tensor of the module

    /// @brief True for a 2-D weight of a vLLM Linear class: the only thing the exporter may quantize.
    bool isLinear() const { return role == ModuleRole::Linear && !weightTensor.empty(); }
};

} // namespace spark
