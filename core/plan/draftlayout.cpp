#include "core/plan/draftlayout.h"

#include "core/plan/draftinventory.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <optional>

namespace spark {
namespace {

constexpr std::array<std::string_view, 8> kParameterSuffixes{"weight",        "bias",
                                                             "weight_packed", "weight_scale",
                                                             "weight_shape",  "weight_zero_point",
                                                             "weight_g_idx",  "weight_global_scale"};

std::string leafOf(std::string_view path)
{
    const auto dot = path.rfind('.');
    return std::string(dot == std::string_view::npos ? path : path.substr(dot + 1));
}

std::string parentOf(std::string_view path)
{
    const auto dot = path.rfind('.');
    return dot == std::string_view::npos ? std::string() : std::string(path.substr(0, dot));
}

/// The module path vLLM's loader sees: "model." stripped, hf_to_vllm_mapper aliases applied (format-spec
/// §5.2).
std::string canonicalPath(std::string path)
{
    if (path.starts_with("model.")) {
        path.erase(0, 6);
    }
    static const std::array<std::pair<std::string_view, std::string_view>, 3> aliases{
        {{"midlayer", "layers.0"}, {"encoder.fc", "fc"}, {"encoder.output_norm_enc", "hidden_norm"}}};
    for (const auto& [from, to] : aliases) {
        if (path == from || (path.starts_with(from) && path[from.size()] == '.')) {
            path = std::string(to) + path.substr(from.size());
        }
    }
    return path;
}

/// "layers.3.mlp.x" → "layers.{3+offset}.mlp.x", then the "model." prefix every non-lm_head name gets.
std::string vllmPrefixOf(const std::string& canonical, int offset)
{
    if (canonical == "lm_head") {
        return canonical;
    }
    std::string path = canonical;
    if (path.starts_with("layers.")) {
        const auto end = path.find('.', 7);
        const auto digits = path.substr(7, end == std::string::npos ? std::string::npos : end - 7);
        int index = 0;
        const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
        if (ec == std::errc() && ptr == digits.data() + digits.size() && !digits.empty()) {
            path = "layers." + std::to_string(index + offset) +
                   (end == std::string::npos ? "" : path.substr(end));
        }
    }
    return "model." + path;
}

struct Classification
{
    ModuleRole role = ModuleRole::Buffer;
    std::string vllmClass;
    std::string fusedLeaf; // vLLM leaf when this module is a shard of a fused vLLM module
    bool readsRaw = false;
    bool gathered = false;
    std::string limit;
};

/// A module that is not a Linear of a draft layer: a buffer, norm, embedding or head, or a Linear vLLM never
/// quantizes; nullopt for the others.
std::optional<Classification> classifySpecial(const std::string& canonical, const TensorInfo* weight,
                                              bool isBufferOnly)
{
    Classification c;
    const auto leaf = leafOf(canonical);
    const auto parentLeaf = leafOf(parentOf(canonical));

    if (isBufferOnly || !weight) {
        c.role = ModuleRole::Buffer;
        c.gathered = true; // d2t/t2d/mask_hidden: looked up, not streamed through a matmul
        return c;
    }
    if (weight->shape.size() == 1) {
        c.role = ModuleRole::Norm;
        c.vllmClass = "RMSNorm";
        return c;
    }
    if (weight->shape.size() != 2 || !isFloatingPoint(weight->dtype)) {
        c.role = ModuleRole::Buffer;
        c.limit = "not a 2-D floating-point weight";
        return c;
    }
    if (leaf == "embed_tokens" || leaf.find("embedding") != std::string::npos) {
        c.role = ModuleRole::Embedding;
        c.vllmClass = "VocabParallelEmbedding";
        c.gathered = true;
        c.limit = "an embedding is a row gather, not a Linear";
        return c;
    }
    if (canonical == "markov_head.markov_w1") {
        c.role = ModuleRole::Embedding;
        c.vllmClass = "Embedding";
        c.gathered = true;
        c.limit = "nn.Embedding in vLLM's DSparkMarkovHead: a row gather, not a Linear";
        return c;
    }
    if (canonical == "markov_head.markov_w2") {
        c.role = ModuleRole::Head;
        c.vllmClass = "ParallelLMHead";
        c.readsRaw = true;
        c.gathered = true;
        c.limit = "apply_bias_gathered reads markov_w2.weight[index] (\"Gathered Markov projection requires "
                  "unquantized weights\")";
        return c;
    }
    if (canonical == "lm_head") {
        c.role = ModuleRole::Head;
        c.vllmClass = "ParallelLMHead";
        c.limit = "a ParallelLMHead: the \"Linear\" class target never selects it";
        return c;
    }
    if (canonical.starts_with("confidence_head.")) {
        c.role = ModuleRole::Linear;
        c.vllmClass = "ReplicatedLinear";
        c.limit = "built without quant_config (params_dtype float32): vLLM never quantizes it";
        return c;
    }
    if (leaf.ends_with("_head") || parentLeaf.ends_with("_head")) {
        c.role = ModuleRole::Head;
        c.vllmClass = "ParallelLMHead";
        c.limit = "a head: vLLM builds heads as ParallelLMHead or without quant_config";
        return c;
    }
    return std::nullopt;
}

/// A Linear of a draft: its vLLM class, and the fused vLLM layer it is a shard of (draftLinearKind).
Classification classifyLinear(const ArchitectureInfo& arch, const std::string& canonical)
{
    Classification c;
    c.role = ModuleRole::Linear;
    const auto& traits = arch.traits();
    const auto parent = parentOf(canonical);
    const auto* kind = draftLinearKind(parent.empty() ? canonical : leafOf(parent) + "." + leafOf(canonical));
    if (kind) {
        const bool fused = !kind->fusedLeaf.empty() && (!kind->fusedByFamily || traits.fusedGateUp);
        c.vllmClass = fused || kind->unfusedClass.empty() ? kind->vllmClass : kind->unfusedClass;
        c.fusedLeaf = fused ? kind->fusedLeaf : "";
        c.readsRaw = kind->rawInBlockDrafts && traits.blockDraft;
    } else if (traits.known) {
        c.vllmClass = "Linear";
        c.limit =
            "not part of the " + arch.displayName + " layout vLLM loads (format-spec §5): unknown class";
    } else {
        c.vllmClass =
            "Linear"; // generic draft: assume a vLLM Linear, as llm-compressor's "Linear" target would
    }
    return c;
}

Classification classify(const ArchitectureInfo& arch, const std::string& canonical, const TensorInfo* weight,
                        bool isBufferOnly)
{
    if (auto special = classifySpecial(canonical, weight, isBufferOnly)) {
        return *special;
    }
    return classifyLinear(arch, canonical);
}

} // namespace

std::string moduleOfTensor(const std::string& tensorName)
{
    const auto dot = tensorName.rfind('.');
    if (dot == std::string::npos) {
        return tensorName;
    }
    const std::string_view last = std::string_view(tensorName).substr(dot + 1);
    const bool parameter =
        std::find(kParameterSuffixes.begin(), kParameterSuffixes.end(), last) != kParameterSuffixes.end();
    return parameter ? tensorName.substr(0, dot) : tensorName;
}

std::vector<DraftModule> describeModules(const ArchitectureInfo& arch, const std::vector<TensorInfo>& tensors,
                                         int targetLayers)
{
    std::map<std::string, std::vector<const TensorInfo*>> byModule;
    for (const auto& t : tensors) {
        byModule[moduleOfTensor(t.name)].push_back(&t);
    }
    std::vector<DraftModule> modules;
    modules.reserve(byModule.size());
    for (const auto& [name, members] : byModule) {
        DraftModule m;
        m.name = name;
        const TensorInfo* weight = nullptr;
        bool alreadyQuantized = false;
        for (const auto* t : members) {
            m.tensors.push_back(t->name);
            m.bytes += t->byteSize();
            if (t->name == name + ".weight") {
                weight = t;
            }
            alreadyQuantized = alreadyQuantized || t->name == name + ".weight_packed";
        }
        const bool bufferOnly = members.size() == 1 && members.front()->name == name;
        const TensorInfo* first = members.front();
        const auto canonical = canonicalPath(name);
        const auto c = classify(arch, canonical, weight, bufferOnly);
        m.role = c.role;
        m.vllmClass = c.vllmClass;
        m.readsRawWeight = c.readsRaw;
        m.gathered = c.gathered;
        m.vllmLimit = c.limit;
        if (alreadyQuantized) {
            m.role = ModuleRole::Linear;
            m.vllmLimit = "already quantized (weight_packed present)";
        }
        m.dtype = (weight ? weight : first)->dtype;
        if (weight) {
            m.weightTensor = weight->name;
            m.weightBytes = weight->byteSize();
            if (weight->shape.size() == 2) {
                m.outFeatures = weight->shape[0];
                m.inFeatures = weight->shape[1];
            }
        }
        m.vllmShardName = vllmPrefixOf(canonical, targetLayers);
        m.vllmName = m.vllmShardName;
        if (!c.fusedLeaf.empty()) {
            m.fusedGroup = c.fusedLeaf;
            m.vllmName = parentOf(m.vllmShardName) + "." + c.fusedLeaf;
        }
        // EAGLE3 before vllm#48068 (merged 2026-07-16) named layer 0's fused attention without ".self_attn".
        if (!arch.traits().qkvAliasBefore.empty() && c.fusedLeaf == "qkv_proj") {
            const auto attn = parentOf(m.vllmName);
            m.vllmAliases.push_back(parentOf(attn) + ".qkv_proj");
        }
        modules.push_back(std::move(m));
    }
    return modules;
}

} // namespace spark
