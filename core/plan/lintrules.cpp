#include "core/plan/lintrules.h"

#include <algorithm>

namespace spark {

namespace {

// Every lint id with its one-line explanation, in the order `plan` lists them.
const std::vector<LintRule> kRules{
    {"raw-weight-read", "vLLM reads some weights (DFlash/DSpark qkv_proj) directly instead of through the "
                        "quant method, so stock vLLM cannot load them quantized."},
    {"kernel-shape", "Marlin/Machete kernels need in % 128 == 0, out % 64 == 0 and in % group == 0 on each "
                     "tensor-parallel rank's part; other shapes stay BF16."},
    {"kernel-group-size",
     "Not every vLLM kernel supports every group size; the finding names which ones do."},
    {"fused-group", "The shards of a fused layer (q/k/v, gate/up) must share one decision, or vLLM raises "
                    "when it loads the checkpoint."},
    {"fused-entry-mismatch",
     "An ignore entry selects a fused layer by one of its names but not the other; vLLM "
     "versions disagree on which name they check."},
    {"invalid-entry", "A `re:` entry does not compile as a regular expression."},
    {"keep-overridden",
     "An ignore entry you added keeps a module BF16 that a scheme rule quantizes; scheme rules decide "
     "first, so the module is quantized."},
    {"target-unmatched", "A target entry you added matches no vLLM module name (names are exact unless they "
                         "start with re:)."},
    {"ignore-unmatched", "An ignore entry you added matches no vLLM module name (names are exact unless they "
                         "start with re:)."},
    {"entry-pattern", "A regex that probably does not mean what it says: an unescaped '.', or no end anchor "
                      "although a longer name matches too."},
    {"target-layers-unknown",
     "vLLM offsets draft layer indices by the target's layer count; without it the vLLM "
     "names shown assume 0."},
    {"target-layers", "The target layer count is not valid."},
    {"lm-head", "The draft's head emits its logits and is never selected by the \"Linear\" target, so "
                "it stays BF16."},
    {"embedding-gather", "Embeddings are read a few rows per token; quantizing them buys no speed."},
    {"tiny-or-low-rank", "Tiny or low-rank modules save few bytes and their rounding error is not averaged "
                         "out."},
    {"target-pairing", "A draft predicts from the target's hidden states: pair it with the target precision "
                       "it was calibrated for."},
    {"eagle3-fc", "Older vLLM cannot load a quantized EAGLE-3 fc."},
    {"eagle3-shallow-int4",
     "A one-layer EAGLE-3 head at 4 bits: data-free rounding error has no later layers to average it "
     "out, which costs acceptance; use the eagle3-int8 preset or check acceptance offline "
     "(sparkulator-cli acceptance)."},
    {"compile-cache", "Before vllm#47911 the compile cache key left out the draft model's config, so a "
                      "BF16 and a quantized draft of one architecture could share compiled graphs."},
    {"nothing-quantized", "The plan quantizes no module."},
    {"ignore-selfcheck",
     "The generated ignore list does not select exactly the Linears kept BF16 (an internal "
     "error)."},
    {"scheme", "vLLM cannot serve the chosen default bits and group size."},
    {"unknown-preset", "The preset name is not known."},
    {"preset-architecture",
     "The preset is written for drafts of another architecture: its entries name modules "
     "this draft may not have."},
    {"invalid-scheme-rule", "A scheme rule is not ENTRY=SCHEME with a known scheme name."},
    {"scheme-unmatched",
     "A scheme rule you added matches no vLLM module name (names are exact unless they start with re:)."},
    {"invalid-rounding", "The default --rounding is not a known rounding method (rtn, mse, range, codes)."},
    {"invalid-rounding-rule", "A rounding rule is not ENTRY=METHOD with a known rounding method."},
    {"rounding-unmatched", "A rounding rule you added matches no vLLM module name (names are exact "
                           "unless they start with re:)."},
    {"rounding-not-applicable", "A rounding method the module's scheme has no use for (codes searches the "
                                "block-scale codes only NVFP4A16 stores, hessian needs a symmetric integer "
                                "scheme) leaves the module rtn."},
    {"rounding-needs-capture", "The hessian rounding chooses scales by the input Hessians of a capture: only "
                               "an export with a capture (quantize --hidden-states, the Export dialog) can "
                               "apply it."},
    {"lm-head-quantized", "A quantized lm_head needs a vLLM that passes quant_config to the draft's "
                          "ParallelLMHead (EAGLE-3 since "
                          "vllm#37280) and handles it in compressed-tensors (vllm#37291); packed schemes "
                          "also need the V1 model runner (vllm#53104)."},
    {"fp8-activations",
     "FP8_DYNAMIC quantizes activations per token at run time; FP8 weight-only has no usable kernel on "
     "recent GPUs."},
    {"nvfp4-global-scale", "NVFP4 fused sets share one global scale, because vLLM uses the largest one."},
    {"kernels", "Which vLLM kernel serves each scheme on sm_90 (H100/H200) and sm_121 (GB10, DGX Spark)."},
    {"sglang-multi-group", "SGLang may load a checkpoint with several config groups unquantized."},
    {"config-groups-selfcheck",
     "The generated config groups do not give every quantized module its scheme under vLLM's group "
     "selection (an internal error)."},
};

} // namespace

const std::vector<LintRule>& lintRules()
{
    return kRules;
}

std::string_view lintRuleDescription(std::string_view id)
{
    const auto& rules = lintRules();
    const auto it = std::find_if(rules.begin(), rules.end(), [id](const LintRule& r) { return r.id == id; });
    return it == rules.end() ? std::string_view() : it->description;
}

} // namespace spark
