#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace spark {

/// @brief The budget whose allocation gave a plan's scheme rules, kept with the plan as a record: the rules
/// alone reproduce the plan (makePlan() ignores this), and a reader sees what it was optimised for.
struct PlanBudget
{
    std::string objective;               ///< "streamed_bytes", "checkpoint_bytes" or "drafter_ms"
    std::uint64_t budgetBytes = 0;       ///< the budget, in bytes of the objective's kind
    std::optional<double> budgetMs;      ///< the drafter-time budget (objective "drafter_ms")
    double weightedError = 0;            ///< E = Σ α·rel_err² of the allocation
    std::vector<std::string> alpha;      ///< the --alpha rules ENTRY=X in effect
    std::vector<std::string> candidates; ///< the candidate schemes swept (empty: every legal one)
    /// The rounding methods the allocator could choose besides rtn and the plan's own (empty: none).
    std::vector<std::string> roundingCandidates;
    /// Set when the allocation minimised acceptance instead of weight error: Σ over units of the loss each
    /// choice alone measured on the capture's selection anchors, which loss ("expected-acceptance" or
    /// "kl"), and that capture.
    std::optional<double> acceptanceLoss;
    std::string acceptanceLossKind;
    std::string capture;

    bool operator==(const PlanBudget&) const = default;
};

/// @brief What the user asks of makePlan(); the same options drive `plan`, `quantize` and the GUI editor.
struct PlanOptions
{
    std::string preset = "auto";      ///< a preset name (preset.h) or "auto" (by detected architecture)
    std::vector<std::string> targets; ///< extra target entries, added to the preset's
    std::vector<std::string> ignore;  ///< extra ignore entries, added to the preset's
    /// Scheme rules "ENTRY=SCHEME" (ENTRY with vLLM's target semantics: exact name, re:, or Linear; SCHEME a
    /// WeightScheme name, BF16 to keep), applied in order after the preset's: the last rule matching a
    /// decision unit gives its scheme, even for a module the targets/ignore entries left BF16.
    std::vector<std::string> schemes;
    /// The rounding method of quantized modules no rounding rule names: "rtn", "mse" or "range"
    /// (roundingmethod.h). Orthogonal to the scheme.
    std::string rounding = "rtn";
    /// Rounding rules "ENTRY=METHOD" (ENTRY with vLLM's target semantics, as for @ref schemes): the last
    /// rule matching a quantized decision unit gives its rounding method; BF16 units ignore them.
    std::vector<std::string> roundings;
    /// The target model's layer count, which offsets draft layer indices in vLLM prefixes. Overrides the
    /// config; when neither has it the plan uses 0 and lints "target-layers-unknown".
    std::optional<int> targetLayers;
    int bits = 4;        ///< default scheme: 4 or 8 bits (int symmetric) ...
    int groupSize = 128; ///< ... with 32, 64, 128, or -1 for one scale per output channel
    int tpDegree = 1;    ///< tensor-parallel degree the draft will be served with (shape gate per rank)
    std::optional<PlanBudget> budget; ///< set when the budget allocator chose the scheme rules
};

} // namespace spark
