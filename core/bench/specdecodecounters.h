#pragma once

#include <optional>
#include <string>
#include <vector>

namespace spark {

/// @brief vLLM's spec-decode counters over one interval (a run, or after − before of two scrapes),
/// summed over engines. Derived values follow vLLM's own definitions (bench-formats.md §0).
struct SpecDecodeCounters
{
    double numDrafts = 0;      ///< Δ vllm:spec_decode_num_drafts_total (verify steps with a draft)
    double draftTokens = 0;    ///< Δ vllm:spec_decode_num_draft_tokens_total
    double acceptedTokens = 0; ///< Δ vllm:spec_decode_num_accepted_tokens_total
    /// Δ vllm:spec_decode_num_accepted_tokens_per_pos_total by position 0..k-1 (missing = 0).
    std::vector<double> acceptedPerPosition;
    /// False for early V1 servers that export no num_drafts counter (then AL is unknown).
    bool hasNumDrafts = true;

    /// @brief Totals as result files state them; @p drafts is absent where the server exported none.
    static SpecDecodeCounters fromTotals(std::optional<double> drafts, double draftTokens,
                                         double acceptedTokens);

    /// @brief accepted / draft tokens as a fraction (vLLM prints it ×100); NaN when no draft tokens.
    double acceptanceRate() const;
    /// @brief 1 + accepted / drafts: tokens per verify step, bonus token included; NaN without drafts.
    double meanAcceptanceLength() const;
    /// @brief accepted_per_pos[i] / drafts: unconditional acceptance of position i (fractions).
    std::vector<double> perPositionRates() const;
    /// @brief Element-wise sum (positions are padded with zeros), for pooling repeats.
    SpecDecodeCounters& operator+=(const SpecDecodeCounters& other);
    /// @brief Messages for every violated invariant of bench-formats.md §2.2 (empty when consistent):
    /// Σ per-position = accepted, per-position non-increasing, accepted ≤ draft tokens ≤ k·drafts.
    /// Counts derived from rounded rates may be off by one, so equality allows ±1 per position.
    std::vector<std::string> invariantViolations() const;
};

} // namespace spark
