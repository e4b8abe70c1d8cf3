#include "core/forward/draftspec.h"

#include "core/io/checkpoint.h"

#include <algorithm>
#include <array>
#include <set>

namespace spark {
namespace {

using nlohmann::json;

/// The object holding the transformer's fields: transformer_layer_config for speculators drafts.
const json& modelFields(const json& config)
{
    const auto it = config.find("transformer_layer_config");
    return it != config.end() && it->is_object() ? *it : config;
}

class FieldReader
{
  public:
    FieldReader(const json& object, std::string prefix, const std::string& file)
        : m_object(&object), m_prefix(std::move(prefix)), m_file(&file)
    {
    }

    std::int64_t positive(const char* key) const
    {
        const auto v = optionalInt(key);
        if (!v || *v <= 0) {
            throw ForwardInputError(*m_file, m_prefix + key, v ? "must be positive" : "missing");
        }
        return *v;
    }
    std::optional<std::int64_t> optionalInt(const char* key) const
    {
        const auto it = m_object->find(key);
        if (it == m_object->end() || it->is_null()) {
            return std::nullopt;
        }
        if (!it->is_number_integer()) {
            throw ForwardInputError(*m_file, m_prefix + key, "must be an integer");
        }
        return it->get<std::int64_t>();
    }
    double number(const char* key, double fallback) const
    {
        const auto it = m_object->find(key);
        if (it == m_object->end() || it->is_null()) {
            return fallback;
        }
        if (!it->is_number()) {
            throw ForwardInputError(*m_file, m_prefix + key, "must be a number");
        }
        return it->get<double>();
    }
    bool flag(const char* key, bool fallback) const
    {
        const auto it = m_object->find(key);
        if (it == m_object->end() || it->is_null()) {
            return fallback;
        }
        if (!it->is_boolean()) {
            throw ForwardInputError(*m_file, m_prefix + key, "must be true or false");
        }
        return it->get<bool>();
    }
    std::string text(const char* key, const std::string& fallback) const
    {
        const auto it = m_object->find(key);
        return it != m_object->end() && it->is_string() ? it->get<std::string>() : fallback;
    }
    std::optional<std::vector<int>> intList(const char* key) const
    {
        const auto it = m_object->find(key);
        if (it == m_object->end() || it->is_null()) {
            return std::nullopt;
        }
        if (!it->is_array() || it->empty()) {
            throw ForwardInputError(*m_file, m_prefix + key, "must be a non-empty list of layer ids");
        }
        std::vector<int> out;
        for (const auto& v : *it) {
            if (!v.is_number_integer() || v.get<int>() < 0) {
                throw ForwardInputError(*m_file, m_prefix + key, "must list non-negative integers");
            }
            out.push_back(v.get<int>());
        }
        return out;
    }
    const json& object() const { return *m_object; }
    FieldReader child(const char* key) const
    {
        static const json empty = json::object();
        const auto it = m_object->find(key);
        return {it != m_object->end() && it->is_object() ? *it : empty, m_prefix + key + ".", *m_file};
    }

  private:
    // Pointers, not references: a reader is reassigned when a nested object (rope parameters of one
    // layer type) takes over.
    const json* m_object;
    std::string m_prefix;
    const std::string* m_file;
};

/// The RoPE of a layer of @p layerType: rope_parameters (flat, transformers ≥ 4.56, or nested by layer type),
/// for a sliding layer swa_rope_parameters when given, then the legacy top-level keys and rope_scaling.
RopeSpec readRope(const FieldReader& model, std::int64_t headDim, const std::string& layerType)
{
    auto params = model.child("rope_parameters");
    if (params.object().contains(layerType) && params.object()[layerType].is_object()) {
        params = params.child(layerType.c_str());
    }
    if (layerType == "sliding_attention" && model.object().contains("swa_rope_parameters")) {
        params = model.child("swa_rope_parameters");
    }
    RopeSpec rope;
    rope.theta = params.number("rope_theta", model.number("rope_theta", rope.theta));
    const double partial = params.number("partial_rotary_factor", model.number("partial_rotary_factor", 1.0));
    rope.rotaryDims = static_cast<int>(static_cast<double>(headDim) * partial) / 2 * 2;
    rope.neox = model.flag("is_neox_style", true);
    // The scaling type sits in the rope parameters themselves or, in the legacy form, in rope_scaling.
    const auto scaling = params.object().contains("rope_type") ? params : model.child("rope_scaling");
    const auto type = scaling.text("rope_type", scaling.text("type", ""));
    if (type == "llama3") {
        rope.llama3Factor = scaling.number("factor", 8.0);
        rope.llama3LowFreq = scaling.number("low_freq_factor", 1.0);
        rope.llama3HighFreq = scaling.number("high_freq_factor", 4.0);
        rope.llama3OriginalMax = scaling.number("original_max_position_embeddings", 8192.0);
    } else if (!type.empty() && type != "default") {
        throw ForwardInputError("", "rope_type", "'" + type + "' is not supported (default, llama3)");
    }
    return rope;
}

/// Each layer's type from layer_types (in @p top or @p model), or full attention for all.
std::vector<std::string> layerTypes(const FieldReader& top, const FieldReader& model, std::int64_t layers,
                                    const std::string& file)
{
    const auto& owner = top.object().contains("layer_types") ? top : model;
    std::vector<std::string> types(static_cast<std::size_t>(layers), "full_attention");
    if (!owner.object().contains("layer_types")) {
        return types;
    }
    const auto& list = owner.object()["layer_types"];
    if (!list.is_array() || static_cast<std::int64_t>(list.size()) != layers) {
        throw ForwardInputError(file, "layer_types", "must list one type per layer");
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
        if (!list[i].is_string() || (list[i] != "full_attention" && list[i] != "sliding_attention")) {
            throw ForwardInputError(file, "layer_types",
                                    "entry " + std::to_string(i) +
                                        " is not full_attention or sliding_attention");
        }
        types[i] = list[i].get<std::string>();
    }
    return types;
}

std::vector<int> plusOne(std::vector<int> ids)
{
    for (auto& id : ids) {
        ++id;
    }
    return ids;
}

bool ships(const std::set<std::string>& names, const std::string& tensor)
{
    return names.contains(tensor) || names.contains("model." + tensor);
}

/// A Linear module, stored as BF16 or already quantized.
bool shipsModule(const std::set<std::string>& names, const std::string& module)
{
    return ships(names, module + ".weight") || ships(names, module + ".weight_packed");
}

/// What a family's reader sees: the config's top level, the shipped tensor names, the file for errors.
struct FamilyInput
{
    const FieldReader& top;
    const std::set<std::string>& names;
    const std::string& file;
};

std::vector<int> dflashTargetLayers(const FieldReader& dflash, const std::string& file)
{
    const auto ids = dflash.intList("target_layer_ids");
    if (!ids) {
        throw ForwardInputError(file, "dflash_config.target_layer_ids", "missing");
    }
    return plusOne(*ids);
}

void readLagunaDFlash(DraftSpec& spec, const FamilyInput& in)
{
    const auto dflash = in.top.child("dflash_config");
    spec.fusedQkv = true;
    spec.outputGate = true;
    spec.gatePerHead = in.top.text("gating", "per-head") != "per-element";
    spec.auxNorms = true;
    spec.contextInputNorm = true;
    spec.blockCausal = dflash.flag("causal", false);
    spec.auxLayerIds = dflashTargetLayers(dflash, in.file);
    spec.auxLayerIdsSource = "dflash_config.target_layer_ids (+1)";
    spec.maskTokenId = dflash.optionalInt("mask_token_id").value_or(-1);
}

void readQwen3DFlash(DraftSpec& spec, const FamilyInput& in)
{
    const auto dflash = in.top.child("dflash_config");
    spec.blockCausal = dflash.flag("causal", false);
    spec.auxLayerIds = dflashTargetLayers(dflash, in.file);
    spec.auxLayerIdsSource = "dflash_config.target_layer_ids (+1)";
    spec.maskTokenId =
        dflash.optionalInt("mask_token_id").value_or(in.top.optionalInt("mask_token_id").value_or(-1));
    if (dflash.flag("use_swa", false)) {
        for (auto& layer : spec.layerAttention) {
            layer.window = dflash.positive("swa_window_size");
        }
    }
}

void readDSpark(DraftSpec& spec, const FamilyInput& in)
{
    const auto& top = in.top;
    const auto ids = top.intList("aux_hidden_state_layer_ids");
    if (!ids) {
        throw ForwardInputError(in.file, "aux_hidden_state_layer_ids", "missing");
    }
    spec.auxLayerIds = *ids;
    spec.auxLayerIdsSource = "aux_hidden_state_layer_ids";
    spec.maskTokenId = top.optionalInt("mask_token_id").value_or(-1);
    spec.sampleFromAnchor = top.flag("sample_from_anchor", true);
    spec.markovRank = top.optionalInt("markov_rank").value_or(0);
    if (spec.markovRank > 0 && top.text("markov_head_type", "vanilla") != "vanilla") {
        throw ForwardInputError(in.file, "markov_head_type", "only the vanilla Markov head is supported");
    }
    spec.confidenceHead = top.flag("enable_confidence_head", false);
    spec.logitScale = top.number("logit_scale", 1.0);
    // vLLM's speculators translation sets dflash_config.causal = not sliding_window_non_causal, with the
    // key absent meaning a bidirectional block (speculators' own training mask differs: there a
    // sliding window alone also makes the block causal, see docs/spec/draft-forward.md).
    spec.blockCausal = !top.flag("sliding_window_non_causal", true);
}

void readEagle3(DraftSpec& spec, const FamilyInput& in)
{
    const auto& top = in.top;
    spec.chain = true;
    spec.qkNorm = false;
    spec.layerPrefix = ships(in.names, "midlayer.input_layernorm.weight") ? "midlayer" : "layers.";
    spec.normBeforeResidual = top.flag("norm_before_residual", false);
    auto ids = top.child("eagle_config").intList("eagle_aux_hidden_state_layer_ids");
    spec.auxLayerIdsSource = "eagle_config.eagle_aux_hidden_state_layer_ids";
    if (!ids) {
        const auto targetLayers = top.optionalInt("target_num_hidden_layers");
        if (!targetLayers) {
            throw ForwardInputError(in.file, "eagle_config.eagle_aux_hidden_state_layer_ids",
                                    "missing, and target_num_hidden_layers is not given to derive "
                                    "vLLM's default (2, L/2, L-3)");
        }
        const int l = static_cast<int>(*targetLayers);
        ids = std::vector<int>{2, l / 2, l - 3};
        spec.auxLayerIdsSource = "default (2, L/2, L-3) of target_num_hidden_layers";
    }
    spec.auxLayerIds = *ids;
    if (spec.layers != 1) {
        throw ForwardInputError(in.file, "num_hidden_layers", "EAGLE-3 heads have one layer");
    }
}

/// What each family the forward knows adds to the common fields; a family without a row is refused before.
const std::array<std::pair<DraftArchitecture, void (*)(DraftSpec&, const FamilyInput&)>, 4> kFamilyReaders{{
    {DraftArchitecture::LagunaDFlash, readLagunaDFlash},
    {DraftArchitecture::Qwen3DFlash, readQwen3DFlash},
    {DraftArchitecture::DSpark, readDSpark},
    {DraftArchitecture::Eagle3, readEagle3},
}};

} // namespace

DraftSpec readDraftSpec(const nlohmann::json& config, const std::vector<std::string>& tensorNames,
                        const std::string& file)
{
    const auto arch = detectArchitecture(config);
    DraftSpec spec;
    spec.kind = arch.kind;
    spec.archId = arch.id;
    const auto reader = std::find_if(kFamilyReaders.begin(), kFamilyReaders.end(),
                                     [&](const auto& entry) { return entry.first == arch.kind; });
    if (reader == kFamilyReaders.end()) {
        throw ForwardInputError(
            file, "architectures",
            "not a draft the reference forward knows (EAGLE-3, Qwen3 DFlash, Laguna DFlash, "
            "DSpark)");
    }
    const FieldReader top(config, "", file);
    const FieldReader model(modelFields(config),
                            &modelFields(config) == &config ? "" : "transformer_layer_config.", file);
    spec.hidden = model.positive("hidden_size");
    spec.layers = model.positive("num_hidden_layers");
    spec.heads = model.positive("num_attention_heads");
    spec.kvHeads = model.optionalInt("num_key_value_heads").value_or(spec.heads);
    spec.headDim = model.optionalInt("head_dim").value_or(spec.hidden / spec.heads);
    spec.intermediate = model.positive("intermediate_size");
    spec.vocab = model.positive("vocab_size");
    spec.eps = model.number("rms_norm_eps", 1e-6);
    if (spec.kvHeads <= 0 || spec.heads % spec.kvHeads != 0 || spec.headDim <= 0 || spec.headDim % 2 != 0) {
        throw ForwardInputError(file, "num_key_value_heads",
                                "heads, KV heads and head_dim do not form a valid attention");
    }
    if (const auto act = model.text("hidden_act", "silu"); act != "silu") {
        throw ForwardInputError(file, "hidden_act", "'" + act + "' is not supported (silu)");
    }
    const auto types = layerTypes(top, model, spec.layers, file);
    for (const auto& type : types) {
        LayerAttention layer;
        try {
            layer.rope = readRope(model, spec.headDim, type);
        } catch (const ForwardInputError& e) {
            throw ForwardInputError(file, "rope_parameters", e.what());
        }
        if (type == "sliding_attention") {
            layer.window =
                top.optionalInt("sliding_window").value_or(model.optionalInt("sliding_window").value_or(0));
            if (layer.window <= 0) {
                throw ForwardInputError(file, "sliding_window",
                                        "missing or not positive, and layer_types lists sliding layers");
            }
        }
        spec.layerAttention.push_back(layer);
    }
    spec.draftVocab = top.optionalInt("draft_vocab_size").value_or(spec.vocab);
    spec.targetHidden = top.optionalInt("target_hidden_size").value_or(spec.hidden);

    const std::set<std::string> names(tensorNames.begin(), tensorNames.end());
    reader->second(spec, {top, names, file});
    spec.auxLayers = static_cast<std::int64_t>(spec.auxLayerIds.size());
    spec.fusedGateUp = shipsModule(names, spec.layerName(0) + ".mlp.gate_up_proj");
    if (!spec.chain && (spec.maskTokenId < 0 || spec.maskTokenId >= spec.vocab)) {
        throw ForwardInputError(file, "mask_token_id", "missing or outside the vocabulary");
    }
    spec.ownEmbedding = shipsModule(names, "embed_tokens");
    spec.ownHead = shipsModule(names, "lm_head");
    spec.hasD2t = ships(names, "d2t");
    spec.hasT2d = ships(names, "t2d");
    if (spec.draftVocab != spec.vocab && !spec.hasD2t) {
        throw ForwardInputError(file, "draft_vocab_size", "differs from vocab_size but the draft has no d2t");
    }
    if (spec.markovRank > 0 && !ships(names, "markov_head.markov_w1.weight")) {
        throw ForwardInputError(file, "markov_rank", "set, but markov_head.markov_w1.weight is missing");
    }
    spec.confidenceHead = spec.confidenceHead && ships(names, "confidence_head.proj.weight");
    return spec;
}

DraftSpec readDraftSpec(const Checkpoint& checkpoint)
{
    std::vector<std::string> names;
    for (const auto& t : checkpoint.tensors()) {
        names.push_back(t.info.name);
    }
    return readDraftSpec(checkpoint.config(), names, (checkpoint.folder() / "config.json").string());
}

} // namespace spark
