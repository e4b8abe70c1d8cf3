#pragma once

// The target-aware objective a plan is chosen by (draft-forward.md §13): the expected accepted length of the
// draft sampled at a small draft temperature t against the target's greedy tokens. Unlike KL to the BF16
// draft it rewards a change that moves probability onto the target's token and charges one that moves it
// away, and unlike the count of accepted proposals it moves with every change of the logits, so that a
// few hundred anchors rank candidates.

#include "core/forward/draftforward.h"

#include <cstdint>
#include <span>
#include <vector>

namespace spark {

/// @brief The draft temperature the allocator's objective is taken at. Lower temperatures tend to the exact
/// count and carry its noise; higher ones drift from acceptance. Which t orders whole plans best by their
/// held-out acceptance differs between drafts (0.2 to 2 on the trained ones); 0.5 is the one whose worst
/// case over them is best (docs/acceptance-allocation.md).
inline constexpr double kObjectiveTemperature = 0.5;

/// @brief q_t(y_j) for every t of @p temperatures and every position j of anchor row @p index of
/// @p proposals: the draft's softmax at temperature t of its logits, at the draft-vocabulary entry of the
/// target's token @p targets[j] (0 when the draft's vocabulary lacks it). Indexed [t][j].
std::vector<std::vector<double>> targetProbabilities(const DraftForward& draft, const Proposals& proposals,
                                                     std::int64_t index,
                                                     const std::vector<std::int64_t>& targets,
                                                     std::span<const double> temperatures);

/// @brief Σ_i ∏_{j≤i} q_t(y_j) of one anchor's row [j] of targetProbabilities(): the accepted length
/// expected of the draft sampled at t, each proposal fed the target's tokens before it.
double expectedAccepted(std::span<const double> probabilities);

} // namespace spark
