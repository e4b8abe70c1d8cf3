#include "core/demo/demodraft.h"

#include "core/io/floatconv.h"
#include "core/io/stagingdirectory.h"
#include "core/plan/draftinventory.h"
#include "core/util/parallel.h"
#include "core/util/splitmix.h"

#include <array>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace spark {
namespace {

using nlohmann::ordered_json;

enum class Role { Linear, Embedding, Norm, Bias, F32Linear, DraftToTarget, TargetMask };

std::uint64_t hashName(std::uint64_t seed, const std::string& name)
{
    std::uint64_t h = 1469598103934665603ull ^ seed;
    for (unsigned char c : name) {
        h = (h ^ c) * 1099511628211ull;
    }
    return h;
}

/// Irwin–Hall sum of four 16-bit uniforms: near-Gaussian, one generator call per value.
float nearGaussian(std::uint64_t bits)
{
    const float sum = static_cast<float>((bits & 0xFFFF) + ((bits >> 16) & 0xFFFF) + ((bits >> 32) & 0xFFFF) +
                                         (bits >> 48)) /
                      65535.0f;
    return (sum - 2.0f) * 1.7320508f;
}

Role roleOf(const TensorSpec& t)
{
    const auto& n = t.name;
    if (n == "d2t") {
        return Role::DraftToTarget;
    }
    if (n == "t2d") {
        return Role::TargetMask;
    }
    if (t.dtype == DType::F32) {
        return Role::F32Linear;
    }
    if (n.ends_with(".bias")) {
        return Role::Bias;
    }
    if (t.shape.size() == 1) {
        return Role::Norm;
    }
    if (n.find("embed_tokens") != std::string::npos || n.find("lm_head") != std::string::npos ||
        n.find("markov_w") != std::string::npos) {
        return Role::Embedding;
    }
    return Role::Linear;
}

/// Value of element @p index of a float tensor: per-row scale spread, rare outliers, heavier tails in
/// embeddings and heads, norms around 1.
float sampleValue(Role role, std::uint64_t tensorSeed, std::uint64_t row, std::uint64_t index, float rowScale)
{
    std::uint64_t state = tensorSeed ^ (index * 0xD1B54A32D192ED03ull);
    const auto bits = splitmix64(state);
    const float z = nearGaussian(bits);
    switch (role) {
    case Role::Norm:
        return 1.0f + 0.08f * z;
    case Role::Bias:
        return 0.01f * z;
    case Role::Embedding: {
        const float u = static_cast<float>(splitmix64(state) >> 40) / 16777216.0f;
        return rowScale * z * (1.0f + 4.0f * u * u * u * u * u * u * u * u);
    }
    default: {
        float v = rowScale * z;
        if ((splitmix64(state) & 2047u) == 0) { // about 1 in 2048: an outlier of 8–20x
            v *= 8.0f + static_cast<float>(row % 13);
        }
        return v;
    }
    }
}

float rowScaleOf(std::uint64_t tensorSeed, std::uint64_t row, Role role)
{
    std::uint64_t state = tensorSeed ^ (row * 0x9E3779B97F4A7C15ull) ^ 0x5851F42D4C957F2Dull;
    const float base = role == Role::Embedding ? 0.015f : 0.02f;
    return base * std::exp(0.35f * nearGaussian(splitmix64(state)));
}

/// The real dimensions, or small ones for tests: hidden, layers, heads, KV heads, head_dim, intermediate,
/// vocabulary and the draft's own vocabulary.
DraftShape dimensions(const std::array<std::int64_t, 8>& d)
{
    DraftShape s;
    s.hidden = d[0];
    s.layers = d[1];
    s.heads = d[2];
    s.kvHeads = d[3];
    s.headDim = d[4];
    s.intermediate = d[5];
    s.vocab = d[6];
    s.draftVocab = d[7];
    s.targetHidden = s.hidden;
    return s;
}

/// The tensors the draft ships: its inventory less what it reads from the target.
std::vector<TensorSpec> shippedTensors(const DraftShape& shape)
{
    std::vector<TensorSpec> out;
    for (const auto& t : draftInventory(shape)) {
        if (!t.fromTarget) {
            out.push_back({t.name, t.dtype, std::vector<std::uint64_t>(t.shape.begin(), t.shape.end())});
        }
    }
    return out;
}

ordered_json qwen3Fields(const DraftShape& d)
{
    return {{"hidden_size", d.hidden},        {"num_hidden_layers", d.layers},
            {"num_attention_heads", d.heads}, {"num_key_value_heads", d.kvHeads},
            {"head_dim", d.headDim},          {"intermediate_size", d.intermediate},
            {"vocab_size", d.vocab},          {"hidden_act", "silu"},
            {"rms_norm_eps", 1e-6},           {"max_position_embeddings", 131072},
            {"rope_theta", 1000000.0},        {"torch_dtype", "bfloat16"}};
}

DemoDraft lagunaDFlash(bool full)
{
    auto d = full ? dimensions({3072, 6, 72, 8, 128, 12288, 100352, 100352})
                  : dimensions({256, 6, 4, 2, 64, 512, 1024, 1024});
    const std::vector<int> targetLayerIds{1, 10, 19, 29, 38, 47};
    // Laguna fuses q/k/v on disk, keeps gate/up separate, has a per-head output gate and a norm per
    // captured slice.
    d.auxLayers = static_cast<std::int64_t>(targetLayerIds.size());
    d.fusedQkv = d.outputGate = d.auxNorms = true;
    DemoDraft draft{"laguna-dflash", {}, shippedTensors(d)};

    auto& c = draft.config;
    c["architectures"] = {"DFlashLagunaForCausalLM"};
    c["model_type"] = "laguna";
    c.update(qwen3Fields(d));
    c["draft_vocab_size"] = d.vocab;
    c["layer_types"] = std::vector<std::string>(static_cast<std::size_t>(d.layers), "sliding_attention");
    c["sliding_window"] = 512;
    c["gating"] = "per-head";
    c["attention_bias"] = false;
    c["dflash_config"] = {{"block_size", 16},
                          {"mask_token_id", 12},
                          {"num_target_layers", 48},
                          {"target_layer_ids", targetLayerIds},
                          {"causal", false}};
    return draft;
}

DemoDraft glmDSpark(bool full)
{
    // The real GLM-5.2 DSpark layout (draft-forward.md §4): 64 heads, 64 KV heads of 64 (q/kv width 4096 <
    // H), eps 1e-5, θ 8e6, aux ids [8, 23, 39, 55, 70]; tiny keeps nh = nkv and nh·hd ≠ H.
    auto d = full ? dimensions({6144, 5, 64, 64, 64, 12288, 154880, 154880})
                  : dimensions({256, 5, 4, 4, 32, 512, 2048, 2048});
    const std::vector<int> auxLayers{8, 23, 39, 55, 70};
    d.auxLayers = static_cast<std::int64_t>(auxLayers.size());
    d.markovRank = full ? 256 : 128;
    d.ownEmbedding = d.ownHead = d.confidenceHead = true;
    DemoDraft draft{"glm-dspark", {}, shippedTensors(d)};

    auto& c = draft.config;
    c["architectures"] = {"DSparkSpeculator"};
    c["speculators_model_type"] = "dspark";
    ordered_json layer = {{"architectures", {"Qwen3ForCausalLM"}}, {"model_type", "qwen3"}};
    layer.update(qwen3Fields(d));
    layer["rms_norm_eps"] = 1e-5;
    layer["rope_theta"] = 8000000.0;
    layer["max_position_embeddings"] = 1048576;
    c["transformer_layer_config"] = layer;
    c["draft_vocab_size"] = d.draftVocab;
    c["block_size"] = 16;
    c["target_hidden_size"] = d.hidden;
    c["aux_hidden_state_layer_ids"] = auxLayers;
    c["mask_token_id"] = full ? 154856 : 2000;
    c["sliding_window_non_causal"] = false;
    c["sample_from_anchor"] = true;
    c["markov_rank"] = d.markovRank;
    c["markov_head_type"] = "vanilla";
    c["enable_confidence_head"] = true;
    c["confidence_head_with_markov"] = true;
    c["speculators_config"] = {
        {"algorithm", "dspark"},
        {"proposal_methods", {{{"proposal_type", "greedy"}, {"speculative_tokens", 15}}}},
        {"default_proposal_method", "greedy"},
        {"verifier", {{"name_or_path", "zai-org/GLM-5.2"}, {"architectures", {"GlmMoeDsaForCausalLM"}}}}};
    c["speculators_version"] = "0.3.0";
    c["torch_dtype"] = "bfloat16";
    return draft;
}

DemoDraft qwen3DFlash(bool full)
{
    auto d = full ? dimensions({4096, 5, 32, 8, 128, 12288, 151936, 151936})
                  : dimensions({256, 5, 4, 2, 64, 512, 1024, 1024});
    const std::vector<int> targetLayerIds{1, 9, 17, 25, 33};
    d.auxLayers = static_cast<std::int64_t>(targetLayerIds.size());
    DemoDraft draft{"qwen3-dflash", {}, shippedTensors(d)};

    auto& c = draft.config;
    c["architectures"] = {"DFlashDraftModel"};
    c["model_type"] = "qwen3";
    c.update(qwen3Fields(d));
    c["block_size"] = 16;
    c["dflash_config"] = {{"mask_token_id", full ? 151669 : 1000},
                          {"target_layer_ids", targetLayerIds},
                          {"num_target_layers", 36}};
    return draft;
}

DemoDraft llamaEagle3(bool full)
{
    auto d = full ? dimensions({4096, 1, 32, 8, 128, 14336, 128256, 32000})
                  : dimensions({256, 1, 4, 2, 64, 512, 1024, 512});
    // One "midlayer" attending over [embedding, hidden], Llama's attention (no q/k norms), its own head over
    // a smaller vocabulary mapped to the target's by d2t/t2d.
    d.auxLayers = 3;
    d.layerPrefix = "midlayer";
    d.chain = d.ownHead = d.hasD2t = d.hasT2d = true;
    d.qkNorm = false;
    DemoDraft draft{"llama-eagle3", {}, shippedTensors(d)};

    auto& c = draft.config;
    c["architectures"] = {"LlamaForCausalLMEagle3"};
    c["model_type"] = "llama";
    c.update(qwen3Fields(d));
    c["draft_vocab_size"] = d.draftVocab;
    c["target_hidden_size"] = d.hidden;
    c["eagle_config"] = {{"use_aux_hidden_state", true}, {"eagle_aux_hidden_state_layer_ids", {1, 15, 29}}};
    c["norm_before_residual"] = false;
    c["target_num_hidden_layers"] = 32;
    return draft;
}

/// d2t[i] = target_id(i) - i with target ids spread evenly over the target vocabulary; t2d marks them.
std::uint64_t draftToTargetId(std::uint64_t draftId, std::uint64_t draftVocab, std::uint64_t vocab)
{
    return draftId * vocab / draftVocab;
}

void produceTensor(const TensorSpec& spec, const DemoDraft& draft, std::uint64_t seed, unsigned threads,
                   ByteSink& sink)
{
    const Role role = roleOf(spec);
    const std::uint64_t numel = spec.byteSize() * 8 / static_cast<std::uint64_t>(dtypeBits(spec.dtype));
    const std::uint64_t tensorSeed = hashName(seed, spec.name);
    const std::uint64_t cols = spec.shape.empty() ? 1 : spec.shape.back();
    const std::uint64_t elementBytes = static_cast<std::uint64_t>(dtypeBits(spec.dtype)) / 8;

    if (role == Role::DraftToTarget || role == Role::TargetMask) {
        const std::uint64_t draftVocab = draft.config.value("draft_vocab_size", std::uint64_t{1});
        const std::uint64_t vocab = draft.config.value("vocab_size", std::uint64_t{1});
        std::vector<std::byte> bytes(spec.byteSize());
        if (role == Role::DraftToTarget) {
            for (std::uint64_t i = 0; i < numel; ++i) {
                const auto delta = static_cast<std::int64_t>(draftToTargetId(i, draftVocab, vocab) - i);
                std::memcpy(bytes.data() + 8 * i, &delta, 8);
            }
        } else {
            for (std::uint64_t i = 0; i < draftVocab; ++i) {
                bytes[draftToTargetId(i, draftVocab, vocab)] = std::byte{1};
            }
        }
        sink.write(bytes);
        return;
    }

    constexpr std::uint64_t kChunk = 8u << 20; // elements per write
    std::vector<std::byte> buffer(std::min(numel, kChunk) * elementBytes);
    for (std::uint64_t start = 0; start < numel; start += kChunk) {
        const std::uint64_t count = std::min(kChunk, numel - start);
        parallelFor(count, 1u << 16, threads, [&](std::size_t begin, std::size_t end) {
            std::uint64_t currentRow = ~0ull;
            float rowScale = 0;
            for (std::size_t i = begin; i < end; ++i) {
                const std::uint64_t index = start + i;
                const std::uint64_t row = index / cols;
                if (row != currentRow) {
                    currentRow = row;
                    rowScale = rowScaleOf(tensorSeed, row, role);
                }
                const float v = sampleValue(role, tensorSeed, row, index, rowScale);
                if (spec.dtype == DType::BF16) {
                    const std::uint16_t b = floatToBf16(v);
                    std::memcpy(buffer.data() + 2 * i, &b, 2);
                } else {
                    std::memcpy(buffer.data() + 4 * i, &v, 4);
                }
            }
        });
        sink.write(std::span<const std::byte>(buffer.data(), count * elementBytes));
    }
}

} // namespace

std::uint64_t DemoDraft::totalBytes() const
{
    std::uint64_t sum = 0;
    for (const auto& t : tensors) {
        sum += t.byteSize();
    }
    return sum;
}

const std::vector<std::string>& demoArchitectures()
{
    static const std::vector<std::string> all{"laguna-dflash", "glm-dspark", "qwen3-dflash", "llama-eagle3"};
    return all;
}

DemoDraft describeDemoDraft(const std::string& arch, DemoScale scale)
{
    const bool full = scale == DemoScale::Full;
    if (arch == "laguna-dflash") {
        return lagunaDFlash(full);
    }
    if (arch == "glm-dspark") {
        return glmDSpark(full);
    }
    if (arch == "qwen3-dflash") {
        return qwen3DFlash(full);
    }
    if (arch == "llama-eagle3") {
        return llamaEagle3(full);
    }
    throw std::invalid_argument("unknown demo architecture '" + arch +
                                "' (known: laguna-dflash, glm-dspark, qwen3-dflash, llama-eagle3)");
}

void writeDemoDraft(const DemoDraft& draft, const std::filesystem::path& out, const DemoWriteOptions& options)
{
    StagingDirectory staging(out, {});
    const unsigned threads = resolveThreads(static_cast<int>(options.threads));
    std::vector<PlannedTensor> planned;
    for (const auto& spec : draft.tensors) {
        planned.push_back({spec, [&draft, spec, &options, threads](ByteSink& sink) {
                               produceTensor(spec, draft, options.seed, threads, sink);
                           }});
    }
    const auto written =
        writeSafetensorsShards(staging.path(), std::move(planned), {options.maxShardBytes, options.progress});
    writeTextFile(staging.path() / "config.json", draft.config.dump(2) + "\n");
    const std::string readme =
        "# Synthetic " + draft.arch +
        " draft (Sparkulator demo)\n\n"
        "Generated by `sparkulator-cli demo`. The tensor names, shapes, dtypes and config\n"
        "follow the real architecture, but the weights are random numbers with realistic\n"
        "statistics: this is not a trained model and must not be served.\n";
    writeTextFile(staging.path() / "README.md", readme);
    staging.commit([&] { return reportProgress(options.progress, written.totalSize, written.totalSize); });
}

} // namespace spark
