#pragma once

#include "core/bench/benchrecord.h"

#include <optional>
#include <string>
#include <vector>

namespace spark {

/// @brief What the repeats of one cell say about speculation, pooled as speed-model.md §1 defines it.
struct CellAcceptance
{
    /// a_i, position 0 first: Σ_r accepted_per_pos_r[i] / Σ_r drafts_r when every repeat with per-position
    /// values counted its drafts (a fraction without a count is weighted by the repeat's drafts), else the
    /// plain mean of the repeats' fractions.
    std::vector<double> perPosition;
    /// True when the rates were weighted by drafts (false: a plain mean, e.g. num_drafts absent).
    bool weightedByDrafts = false;
    /// True when any repeat drafted tokens (drafts, draft tokens, an acceptance rate or length above 1).
    bool drafted = false;
    /// num_speculative_tokens as the repeats declare it (bench metadata or a CSV column); 0 when none does.
    int declaredK = 0;
    /// Why the repeats cannot be pooled (they disagree on k); empty when they can.
    std::string problem;

    /// @brief k: the number of per-position values (0 for a cell without speculation).
    int k() const { return static_cast<int>(perPosition.size()); }
};

/// @brief The k a record declares: vLLM's --metadata num_speculative_tokens=K (a string) or a CSV column.
std::optional<int> declaredSpeculativeTokens(const BenchRecord& record);

/// @brief Pools the per-position acceptance of one cell's repeats (speed-model.md §1).
CellAcceptance poolCellAcceptance(const std::vector<const BenchRecord*>& records);

} // namespace spark
