#pragma once

#include "core/forward/linearsource.h"
#include "core/io/checkpoint.h"
#include "core/plan/quantplan.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace spark {

/// @brief Where the reference forward reads each weight of a draft: the draft checkpoint (BF16 as stored,
/// or a compressed-tensors checkpoint dequantized bit-exactly), the target checkpoint for what the draft
/// shares with it (embed_tokens, lm_head), and in-memory quantization of chosen modules (a plan applied
/// without writing anything). Copies are cheap: sources are shared.
class DraftWeights
{
  public:
    /// @p target may be null when the draft ships everything it reads.
    DraftWeights(std::shared_ptr<const Checkpoint> draft, std::shared_ptr<const Checkpoint> target);

    /// @brief Every module @p plan quantizes is read through that scheme (encoded and decoded in memory);
    /// NVFP4's global scale comes from the absmax of the module's whole fused set, as the exporter does.
    void applyPlan(const QuantPlan& plan);
    /// @brief Only the modules named in @p modules take their plan scheme (per-unit sensitivity).
    void applyPlan(const QuantPlan& plan, const std::vector<std::string>& modules);
    /// @brief The draft checkpoint is a compressed-tensors export: every quantized module it stores is
    /// dequantized as compressed-tensors does (the audit's decoder). Throws naming a module it cannot decode.
    void decodeQuantizedModules();

    /// @brief The 2-D weight of module @p module ("fc", "layers.0.self_attn.q_proj", "lm_head"): its
    /// in-memory quantization when set, else the stored tensor. Throws ForwardInputError naming the module.
    std::shared_ptr<const LinearSource> linear(const std::string& module) const;
    /// @brief True when the draft (or, for shared tensors, the target) has @p module's weight.
    bool hasLinear(const std::string& module) const;
    /// @brief A 1-D tensor as floats ("norm.weight"). Throws ForwardInputError naming the tensor.
    std::vector<float> vector(const std::string& tensor) const;
    /// @brief An integer tensor (d2t) as int64.
    std::vector<std::int64_t> integers(const std::string& tensor) const;
    /// @brief What reads each module, for messages and the report: "W4A16 in memory", "checkpoint", ...
    const std::map<std::string, std::string>& overrides() const { return m_overrideNames; }
    const Checkpoint& draft() const { return *m_draft; }

  private:
    struct Located
    {
        std::shared_ptr<const Checkpoint> checkpoint;
        const CheckpointTensor* tensor = nullptr;
    };
    Located locate(const std::string& tensor) const;
    /// A quantized weight's source, held dequantized in memory while the budget lasts (tiny drafts, whose
    /// replays call the forward thousands of times), else streamed.
    std::shared_ptr<const LinearSource> keptIfSmall(std::shared_ptr<const LinearSource> source);

    std::shared_ptr<const Checkpoint> m_draft;
    std::shared_ptr<const Checkpoint> m_target;
    std::map<std::string, std::shared_ptr<const LinearSource>> m_overrides;
    std::map<std::string, std::string> m_overrideNames;
    /// FP32 values of quantized weights held in memory at most (64 Mi floats, 256 MiB): every weight of a
    /// tiny draft fits, a large draft keeps its first few and streams the rest.
    std::int64_t m_memoryBudgetFloats = std::int64_t{64} << 20;
};

} // namespace spark
