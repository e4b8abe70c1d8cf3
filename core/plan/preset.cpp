#include "core/plan/preset.h"

namespace spark {
namespace {

// Entries are written the way format-spec §5.6 recommends: suffix-anchored (`$`), dots escaped, fused and
// unfused names both matched ("(qkv|q|k|v)_proj"), because vLLM matches the prefixed, offset, fused name and
// drafts get no packed_modules_mapping (vllm#53116).
const char* const kQkv = "re:.*\\.(qkv|q|k|v)_proj$";
const char* const kLmHead = "lm_head";
const char* const kLmHeadRe = "re:.*lm_head$";
const char* const kEmbed = "re:.*embed_tokens$";
const char* const kMarkov = "re:.*markov_head\\.markov_w[12]$";
const char* const kConfidence = "re:.*confidence_head\\.proj$";

std::vector<Preset> buildPresets()
{
    return {
        {"laguna-dflash",
         "laguna-dflash",
         "Laguna DFlash seed: int4 mlp.{gate,up,down}_proj, self_attn.o_proj and fc; qkv_proj stays BF16 "
         "(vLLM slices qkv_proj.weight for the context KV, vllm#51581) and so does the per-head gate g_proj "
         "(out = heads, not a multiple of 64).",
         {"re:.*\\.mlp\\.(gate|up|down)_proj$", "re:.*\\.self_attn\\.o_proj$", "re:.*\\.fc$"},
         {kQkv, "re:.*\\.g_proj$"},
         false},
        {"qwen3-dflash",
         "qwen3-dflash",
         "Qwen3 DFlash on stock vLLM: every Linear int4 except the fused q/k/v (vLLM reads qkv_proj.weight "
         "directly, vllm#51581); embeddings and lm_head, when the draft has its own, stay BF16.",
         {"Linear"},
         {kLmHead, kLmHeadRe, kEmbed, kQkv},
         false},
        {"glm-dspark",
         "dspark",
         "DSpark (speculators) on stock vLLM: o_proj, the MLP and fc int4; q/k/v BF16 (vllm#51581); "
         "embed_tokens, lm_head, the Markov head (gathered rows) and the confidence head BF16.",
         {"Linear"},
         {kLmHead, kLmHeadRe, kEmbed, kQkv, kMarkov, kConfidence},
         false},
        {"glm-dspark-patched",
         "dspark",
         "GLM-5.2 DSpark seed for a vLLM with the context-KV path fixed (vllm#51581 and follow-ups): "
         "q/k/v/o, the MLP and fc int4; embed_tokens, lm_head, markov_head and confidence_head BF16. Stock "
         "vLLM cannot load the result.",
         {"re:.*\\.self_attn\\.(qkv|q|k|v|o)_proj$", "re:.*\\.mlp\\.(gate_up|gate|up|down)_proj$",
          "re:.*\\.fc$"},
         {kEmbed, kLmHead, kMarkov, kConfidence},
         true},
        {"eagle3",
         "eagle3",
         "EAGLE-3: every Linear int4 (fused q/k/v, o_proj, gate_up/down, and fc, which vLLM quantizes since "
         "vllm#28435); lm_head and embed_tokens BF16.",
         {"Linear"},
         {kLmHead, kLmHeadRe, kEmbed},
         false},
        {"eagle3-int8",
         "eagle3",
         "EAGLE-3 at 8 bits: every Linear W8A16 (int8, group 128). A one-layer head has no later layers "
         "to wash out int4 rounding error, so 8 bits keeps acceptance; still 2x fewer bytes than BF16. "
         "lm_head and embed_tokens BF16.",
         {"Linear"},
         {kLmHead, kLmHeadRe, kEmbed},
         false,
         {"Linear=W8A16"}},
        {"generic",
         "",
         "Unknown architecture: every eligible 2-D Linear weight int4 except embeddings and heads (lm_head, "
         "*_head.*); modules vLLM reads raw or cannot run quantized stay BF16.",
         {"Linear"},
         {kLmHead, kLmHeadRe, kEmbed, "re:.*_head(\\..+)?$"},
         false},
        {"none", "", "Nothing is quantized (add --target entries to choose).", {}, {}, false},
    };
}

} // namespace

const std::vector<Preset>& presets()
{
    static const std::vector<Preset> all = buildPresets();
    return all;
}

const Preset* findPreset(std::string_view name)
{
    for (const auto& p : presets()) {
        if (p.name == name) {
            return &p;
        }
    }
    return nullptr;
}

std::string autoPresetName(const ArchitectureInfo& arch)
{
    return std::string(arch.traits().preset);
}

bool presetSuits(const Preset& preset, const ArchitectureInfo& arch)
{
    return preset.architecture.empty() || preset.architecture == arch.traits().id;
}

std::string presetNames()
{
    std::string names = "auto";
    for (const auto& p : presets()) {
        names += ", " + p.name;
    }
    return names;
}

} // namespace spark
