#include "core/plan/draftinventory.h"

#include <array>

namespace spark {
namespace {

using Shape = std::vector<std::int64_t>;

/// One tensor of the inventory: where it sits, when a draft has it, its shape and, for a Linear, how vLLM
/// builds it. Rows are data: a family differs only in the DraftShape flags the predicates read.
struct InventoryRow
{
    std::string_view path; ///< inside a decoder layer, or at the top; without ".weight"
    DraftTensorRole role;
    bool (*present)(const DraftShape&);
    Shape (*shape)(const DraftShape&);
    DraftLinearKind linear{}; ///< vllmClass empty: not a Linear vLLM builds
    std::string_view leaf = "weight";
    DType dtype = DType::BF16;
};

bool always(const DraftShape&)
{
    return true;
}
std::int64_t layerInput(const DraftShape& s)
{
    return s.chain ? 2 * s.hidden : s.hidden; // EAGLE-3's layer attends over [embedding, hidden]
}
std::int64_t qWidth(const DraftShape& s)
{
    return s.heads * s.headDim;
}
std::int64_t kvWidth(const DraftShape& s)
{
    return s.kvHeads * s.headDim;
}
Shape hiddenVector(const DraftShape& s)
{
    return {s.hidden};
}

const std::array kLayerRows{
    InventoryRow{"self_attn.q_proj",
                 DraftTensorRole::Q,
                 [](const DraftShape& s) { return !s.fusedQkv; },
                 [](const DraftShape& s) {
                     return Shape{qWidth(s), layerInput(s)};
                 },
                 {.vllmClass = "QKVParallelLinear", .fusedLeaf = "qkv_proj", .rawInBlockDrafts = true}},
    InventoryRow{"self_attn.k_proj",
                 DraftTensorRole::K,
                 [](const DraftShape& s) { return !s.fusedQkv; },
                 [](const DraftShape& s) {
                     return Shape{kvWidth(s), layerInput(s)};
                 },
                 {.vllmClass = "QKVParallelLinear", .fusedLeaf = "qkv_proj", .rawInBlockDrafts = true}},
    InventoryRow{"self_attn.v_proj",
                 DraftTensorRole::V,
                 [](const DraftShape& s) { return !s.fusedQkv; },
                 [](const DraftShape& s) {
                     return Shape{kvWidth(s), layerInput(s)};
                 },
                 {.vllmClass = "QKVParallelLinear", .fusedLeaf = "qkv_proj", .rawInBlockDrafts = true}},
    InventoryRow{"self_attn.qkv_proj",
                 DraftTensorRole::Qkv,
                 [](const DraftShape& s) { return s.fusedQkv; },
                 [](const DraftShape& s) {
                     return Shape{qWidth(s) + 2 * kvWidth(s), layerInput(s)};
                 },
                 {.vllmClass = "QKVParallelLinear", .fusedLeaf = "qkv_proj", .rawInBlockDrafts = true}},
    InventoryRow{"self_attn.o_proj",
                 DraftTensorRole::O,
                 always,
                 [](const DraftShape& s) {
                     return Shape{s.hidden, qWidth(s)};
                 },
                 {.vllmClass = "RowParallelLinear"}},
    InventoryRow{"self_attn.g_proj",
                 DraftTensorRole::G,
                 [](const DraftShape& s) { return s.outputGate; },
                 [](const DraftShape& s) {
                     return Shape{s.gatePerHead ? s.heads : qWidth(s), s.hidden};
                 },
                 {.vllmClass = "ColumnParallelLinear"}},
    InventoryRow{"self_attn.q_norm", DraftTensorRole::QNorm, [](const DraftShape& s) { return s.qkNorm; },
                 [](const DraftShape& s) { return Shape{s.headDim}; }},
    InventoryRow{"self_attn.k_norm", DraftTensorRole::KNorm, [](const DraftShape& s) { return s.qkNorm; },
                 [](const DraftShape& s) { return Shape{s.headDim}; }},
    InventoryRow{"mlp.gate_proj",
                 DraftTensorRole::Gate,
                 [](const DraftShape& s) { return !s.fusedGateUp; },
                 [](const DraftShape& s) {
                     return Shape{s.intermediate, s.hidden};
                 },
                 {.vllmClass = "MergedColumnParallelLinear",
                  .fusedLeaf = "gate_up_proj",
                  .fusedByFamily = true,
                  .unfusedClass = "ColumnParallelLinear"}},
    InventoryRow{"mlp.up_proj",
                 DraftTensorRole::Up,
                 [](const DraftShape& s) { return !s.fusedGateUp; },
                 [](const DraftShape& s) {
                     return Shape{s.intermediate, s.hidden};
                 },
                 {.vllmClass = "MergedColumnParallelLinear",
                  .fusedLeaf = "gate_up_proj",
                  .fusedByFamily = true,
                  .unfusedClass = "ColumnParallelLinear"}},
    InventoryRow{"mlp.gate_up_proj",
                 DraftTensorRole::GateUp,
                 [](const DraftShape& s) { return s.fusedGateUp; },
                 [](const DraftShape& s) {
                     return Shape{2 * s.intermediate, s.hidden};
                 },
                 {.vllmClass = "MergedColumnParallelLinear", .fusedLeaf = "gate_up_proj"}},
    InventoryRow{"mlp.down_proj",
                 DraftTensorRole::Down,
                 always,
                 [](const DraftShape& s) {
                     return Shape{s.hidden, s.intermediate};
                 },
                 {.vllmClass = "RowParallelLinear"}},
    InventoryRow{"input_layernorm", DraftTensorRole::InputNorm, always, hiddenVector},
    InventoryRow{"hidden_norm", DraftTensorRole::LayerHiddenNorm, [](const DraftShape& s) { return s.chain; },
                 hiddenVector},
    InventoryRow{"post_attention_layernorm", DraftTensorRole::PostNorm, always, hiddenVector},
};

const std::array kTopRows{
    InventoryRow{"aux_hidden_norms", DraftTensorRole::AuxNorm, [](const DraftShape& s) { return s.auxNorms; },
                 [](const DraftShape& s) { return Shape{s.targetHidden}; }},
    InventoryRow{"fc",
                 DraftTensorRole::Fc,
                 always,
                 [](const DraftShape& s) {
                     return Shape{s.hidden, s.auxLayers * s.targetHidden};
                 },
                 {.vllmClass = "ReplicatedLinear"}},
    InventoryRow{"hidden_norm", DraftTensorRole::HiddenNorm, [](const DraftShape& s) { return !s.chain; },
                 hiddenVector},
    InventoryRow{"norm", DraftTensorRole::Norm, always, hiddenVector},
    InventoryRow{"embed_tokens", DraftTensorRole::Embedding, always,
                 [](const DraftShape& s) {
                     return Shape{s.vocab, s.hidden};
                 }},
    InventoryRow{"lm_head", DraftTensorRole::Head, always,
                 [](const DraftShape& s) {
                     return Shape{s.draftVocab, s.hidden};
                 }},
    InventoryRow{"markov_head.markov_w1", DraftTensorRole::MarkovW1,
                 [](const DraftShape& s) { return s.markovRank > 0; },
                 [](const DraftShape& s) {
                     return Shape{s.vocab, s.markovRank};
                 }},
    InventoryRow{"markov_head.markov_w2", DraftTensorRole::MarkovW2,
                 [](const DraftShape& s) { return s.markovRank > 0; },
                 [](const DraftShape& s) {
                     return Shape{s.draftVocab, s.markovRank};
                 }},
    InventoryRow{"confidence_head.proj",
                 DraftTensorRole::ConfidenceWeight,
                 [](const DraftShape& s) { return s.confidenceHead; },
                 [](const DraftShape& s) {
                     return Shape{1, s.hidden + s.markovRank};
                 },
                 {},
                 "weight",
                 DType::F32},
    InventoryRow{"confidence_head.proj",
                 DraftTensorRole::ConfidenceBias,
                 [](const DraftShape& s) { return s.confidenceHead; },
                 [](const DraftShape&) { return Shape{1}; },
                 {},
                 "bias",
                 DType::F32},
    InventoryRow{"d2t",
                 DraftTensorRole::DraftToTarget,
                 [](const DraftShape& s) { return s.hasD2t; },
                 [](const DraftShape& s) { return Shape{s.draftVocab}; },
                 {},
                 "",
                 DType::I64},
    InventoryRow{"t2d",
                 DraftTensorRole::TargetMask,
                 [](const DraftShape& s) { return s.hasT2d; },
                 [](const DraftShape& s) { return Shape{s.vocab}; },
                 {},
                 "",
                 DType::Bool},
};

InventoryTensor tensorOf(const InventoryRow& row, const DraftShape& shape, const std::string& module,
                         std::int64_t index)
{
    InventoryTensor t{row.leaf.empty() ? module : module + "." + std::string(row.leaf), row.role, index,
                      row.shape(shape), row.dtype};
    t.fromTarget = (row.role == DraftTensorRole::Embedding && !shape.ownEmbedding) ||
                   (row.role == DraftTensorRole::Head && !shape.ownHead);
    return t;
}

} // namespace

std::string DraftShape::layerName(std::int64_t layer) const
{
    return layerPrefix == "midlayer" ? std::string("midlayer") : layerPrefix + std::to_string(layer);
}

std::string InventoryTensor::module() const
{
    for (const std::string_view suffix : {".weight", ".bias"}) {
        if (name.ends_with(suffix)) {
            return name.substr(0, name.size() - suffix.size());
        }
    }
    return name;
}

std::vector<InventoryTensor> draftInventory(const DraftShape& shape)
{
    std::vector<InventoryTensor> out;
    for (std::int64_t layer = 0; layer < shape.layers; ++layer) {
        for (const auto& row : kLayerRows) {
            if (row.present(shape)) {
                out.push_back(
                    tensorOf(row, shape, shape.layerName(layer) + "." + std::string(row.path), layer));
            }
        }
    }
    for (const auto& row : kTopRows) {
        if (!row.present(shape)) {
            continue;
        }
        if (row.role == DraftTensorRole::AuxNorm) { // one RMSNorm per captured slice
            for (std::int64_t slice = 0; slice < shape.auxLayers; ++slice) {
                out.push_back(
                    tensorOf(row, shape, std::string(row.path) + "." + std::to_string(slice), slice));
            }
        } else {
            out.push_back(tensorOf(row, shape, std::string(row.path), -1));
        }
    }
    return out;
}

const DraftLinearKind* draftLinearKind(std::string_view path)
{
    const auto find = [path](const auto& rows) -> const DraftLinearKind* {
        for (const auto& row : rows) {
            if (row.path == path && !row.linear.vllmClass.empty()) {
                return &row.linear;
            }
        }
        return nullptr;
    };
    const auto* inLayer = find(kLayerRows);
    return inLayer ? inLayer : find(kTopRows);
}

} // namespace spark
