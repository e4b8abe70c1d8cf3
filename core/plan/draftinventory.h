#pragma once

#include "core/io/dtype.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace spark {

/// @brief What a draft's config.json says about its shape, in the terms that decide which tensors it has:
/// enough to list every one of them (draftInventory). The forward derives it from its DraftSpec, the demo
/// writer from the dimensions it writes into config.json.
struct DraftShape
{
    std::int64_t hidden = 0, layers = 0, heads = 0, kvHeads = 0, headDim = 0, intermediate = 0;
    std::int64_t vocab = 0;      ///< the target's vocabulary (token ids)
    std::int64_t draftVocab = 0; ///< rows of the draft's lm_head (< vocab when d2t maps them)
    std::int64_t targetHidden = 0;
    std::int64_t auxLayers = 0;          ///< captured target layers fc concatenates
    std::int64_t markovRank = 0;         ///< DSpark's vanilla Markov head; 0 = none
    std::string layerPrefix = "layers."; ///< "layers." or "midlayer" (EAGLE-3's single layer)
    /// How a verify cycle becomes proposals (draft-forward.md §2–§4): false for DFlash/DSpark, one non-causal
    /// pass over a query block; true for EAGLE-3, k sequential steps of one layer on its own tokens and
    /// hidden state, whose layer takes [embedding, hidden] (2H inputs) and owns hidden_norm.
    bool chain = false;
    bool qkNorm = true;       ///< per-head q_norm/k_norm before RoPE (Qwen3; not Llama EAGLE-3)
    bool fusedQkv = false;    ///< qkv_proj on disk (Laguna)
    bool fusedGateUp = false; ///< gate_up_proj on disk
    bool outputGate = false;  ///< Laguna: attn ⊙ softplus(g_proj(x)) before o_proj
    bool gatePerHead = true;  ///< g_proj has one output per head (else one per element)
    bool auxNorms = false;    ///< Laguna: aux_hidden_norms[k] on each captured slice before fc
    bool ownEmbedding = false,
         ownHead = false;                ///< the draft ships embed_tokens / lm_head (else the target's)
    bool hasD2t = false, hasT2d = false; ///< EAGLE-3's draft↔target vocabulary maps
    bool confidenceHead = false;

    /// "layers.3" or "midlayer".
    std::string layerName(std::int64_t layer) const;
};

/// @brief The part a tensor plays in the draft graph (draft-forward.md §2–§4): the forward binds by it,
/// the demo writer and the layout never need to know a name.
enum class DraftTensorRole {
    Q,
    K,
    V,
    Qkv,
    O,
    G,
    QNorm,
    KNorm,
    Gate,
    Up,
    GateUp,
    Down,
    InputNorm,
    LayerHiddenNorm,
    PostNorm, // layer
    AuxNorm,
    Fc,
    HiddenNorm,
    Norm,
    Embedding,
    Head,
    MarkovW1,
    MarkovW2,
    ConfidenceWeight,
    ConfidenceBias,
    DraftToTarget,
    TargetMask
};

/// @brief One tensor of a draft: its name (without "model."), shape and the dtype a BF16 checkpoint stores.
struct InventoryTensor
{
    std::string name;
    DraftTensorRole role;
    std::int64_t index = -1; ///< the layer of a per-layer tensor, the slice of an aux norm; -1 otherwise
    std::vector<std::int64_t> shape;
    DType dtype = DType::BF16;
    bool fromTarget = false; ///< read from the target because the draft does not ship it (embedding, head)

    /// The module: the name without ".weight" / ".bias".
    std::string module() const;
};

/// @brief Every tensor a draft of @p shape uses, in a fixed order (the layers, then the rest).
std::vector<InventoryTensor> draftInventory(const DraftShape& shape);

/// @brief How vLLM builds a Linear of a draft (format-spec §5), by its path inside a decoder layer
/// ("self_attn.q_proj") or at the top ("fc").
struct DraftLinearKind
{
    std::string_view vllmClass;
    std::string_view fusedLeaf;    ///< the fused vLLM module it is a shard of; empty if none
    bool rawInBlockDrafts = false; ///< DFlash-family vLLM reads its .weight directly
    bool fusedByFamily = false;    ///< fused only where the family fuses gate/up (traits.fusedGateUp)
    std::string_view unfusedClass; ///< the class where that family keeps it apart
};

/// @brief The kind of the Linear at @p pathInLayer ("self_attn.q_proj", "mlp.gate_up_proj") or top-level
/// @p path ("fc"); nullptr for any other.
const DraftLinearKind* draftLinearKind(std::string_view path);

} // namespace spark
