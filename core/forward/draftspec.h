#pragma once

#include "core/plan/architecture.h"
#include "core/plan/draftinventory.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace spark {

class Checkpoint;

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
/// graph is one forward built from shared blocks, and this struct is its per-architecture description. The
/// DraftShape part names its tensors (draftInventory); the rest is how the graph computes.
struct DraftSpec : DraftShape
{
    DraftArchitecture kind = DraftArchitecture::Generic;
    std::string archId; ///< "laguna-dflash", "qwen3-dflash", "dspark", "eagle3"

    double eps = 1e-6;
    /// Per layer (layer_types may mix full and sliding layers, each with its own RoPE).
    std::vector<LayerAttention> layerAttention;

    /// Captured target layers the draft reads, in vLLM's aux semantics (draft-forward.md §1), in the order
    /// fc concatenates them (DraftShape::auxLayers counts them).
    std::vector<int> auxLayerIds;
    std::string auxLayerIdsSource; ///< the config key they came from

    bool contextInputNorm = false; ///< Laguna: input_layernorm on the context stream before K/V
    bool blockCausal = false;      ///< the query block attends causally to itself
    bool sampleFromAnchor = false; ///< DSpark: Q = k rows [anchor, mask×(k−1)], each predicting the next
    std::int64_t maskTokenId = -1;
    bool normBeforeResidual = false; ///< EAGLE-3: the residual is hidden_norm(g), not g
    double logitScale = 1.0;

    /// Rows of the query block for @p k proposals.
    std::int64_t queryRows(int k) const { return sampleFromAnchor ? k : k + 1; }
};

/// @brief Reads the forward's description from @p config (the draft's config.json) and the names of the
/// tensors the draft ships. Throws ForwardInputError naming @p file and the field that is missing or
/// unsupported (a generic draft, a non-silu MLP, mixed layer types, ...).
DraftSpec readDraftSpec(const nlohmann::json& config, const std::vector<std::string>& tensorNames,
                        const std::string& file);

/// @brief readDraftSpec() of @p checkpoint: its config.json and the names of its tensors.
DraftSpec readDraftSpec(const Checkpoint& checkpoint);

} // namespace spark
