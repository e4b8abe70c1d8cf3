#pragma once

#include "core/plan/architecture.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace spark {

/// @brief A draft config or capture that the reference forward cannot run, with the file and the field at
/// fault: what() reads "<file>: <field>: <problem>".
class ForwardInputError : public std::runtime_error
{
  public:
    ForwardInputError(const std::string& file, const std::string& field, const std::string& problem)
        : std::runtime_error(file + ": " + field + ": " + problem)
    {
    }
};

/// @brief How a draft turns a verify cycle into proposals (draft-forward.md §2–§4).
enum class ProposalKind {
    Block, ///< DFlash / DSpark: one non-causal pass over a query block
    Chain, ///< EAGLE-3: k sequential steps of one layer on its own tokens and hidden state
};

/// @brief RoPE as vLLM applies it: neox pairs (j, j + rot/2) over the first rotaryDims of a head.
struct RopeSpec
{
    double theta = 1e6;
    int rotaryDims = 0; ///< hd · partial_rotary_factor
    bool neox = true;
    // Llama-3 frequency scaling (rope_scaling.rope_type == "llama3"); factor 0 = none.
    double llama3Factor = 0, llama3LowFreq = 1, llama3HighFreq = 4, llama3OriginalMax = 8192;
};

/// @brief One layer's attention: its RoPE and, for a sliding layer, how far back it sees the context.
struct LayerAttention
{
    RopeSpec rope;
    std::int64_t window = 0; ///< context keys within this distance of the anchor; 0 = all
};

/// @brief Everything the reference forward needs to know about a draft, read once from config.json: the
/// graph is one forward built from shared blocks, and this struct is its per-architecture description.
struct DraftSpec
{
    DraftArchitecture kind = DraftArchitecture::Generic;
    std::string archId; ///< "laguna-dflash", "qwen3-dflash", "dspark", "eagle3"
    ProposalKind proposal = ProposalKind::Block;

    std::int64_t hidden = 0, layers = 0, heads = 0, kvHeads = 0, headDim = 0, intermediate = 0;
    std::int64_t vocab = 0;      ///< the target's vocabulary (token ids)
    std::int64_t draftVocab = 0; ///< rows of the draft's lm_head (< vocab when d2t maps them)
    std::int64_t targetHidden = 0;
    double eps = 1e-6;
    /// Per layer (layer_types may mix full and sliding layers, each with its own RoPE).
    std::vector<LayerAttention> layerAttention;

    /// Captured target layers the draft reads, in vLLM's aux semantics (draft-forward.md §1), in the order
    /// fc concatenates them.
    std::vector<int> auxLayerIds;
    std::string auxLayerIdsSource; ///< the config key they came from

    bool qkNorm = true;            ///< per-head q_norm/k_norm before RoPE (Qwen3; not Llama EAGLE-3)
    bool fusedQkv = false;         ///< qkv_proj on disk (Laguna)
    bool outputGate = false;       ///< Laguna: attn ⊙ softplus(g_proj(x)) before o_proj
    bool gatePerHead = true;       ///< g_proj has one output per head (else one per element)
    bool auxNorms = false;         ///< Laguna: aux_hidden_norms[k] on each captured slice before fc
    bool contextInputNorm = false; ///< Laguna: input_layernorm on the context stream before K/V
    bool blockCausal = false;      ///< the query block attends causally to itself
    bool sampleFromAnchor = false; ///< DSpark: Q = k rows [anchor, mask×(k−1)], each predicting the next
    std::int64_t maskTokenId = -1;
    bool normBeforeResidual = false; ///< EAGLE-3: the residual is hidden_norm(g), not g
    std::int64_t markovRank = 0;     ///< DSpark vanilla Markov head; 0 = none
    bool confidenceHead = false;
    double logitScale = 1.0;

    // Tensor names (without a "model." prefix; the loader tries both).
    std::string layerPrefix = "layers."; ///< "layers." or "midlayer" (EAGLE-3's single layer)
    bool ownEmbedding = false;           ///< the draft ships embed_tokens
    bool ownHead = false;                ///< the draft ships lm_head
    bool hasD2t = false;

    /// "layers.3" or "midlayer".
    std::string layerName(std::int64_t layer) const;
    /// Rows of the query block for @p k proposals.
    std::int64_t queryRows(int k) const { return sampleFromAnchor ? k : k + 1; }
};

/// @brief Reads the forward's description from @p config (the draft's config.json) and the names of the
/// tensors the draft ships. Throws ForwardInputError naming @p file and the field that is missing or
/// unsupported (a generic draft, a non-silu MLP, mixed layer types, ...).
DraftSpec readDraftSpec(const nlohmann::json& config, const std::vector<std::string>& tensorNames,
                        const std::string& file);

} // namespace spark
