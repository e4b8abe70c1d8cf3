#pragma once

#include "core/allocate/acceptanceobjective.h"
#include "core/forward/acceptancespeed.h"

#include <cstdint>
#include <vector>

namespace spark {

/// @brief One frontier point as the speed model sees it: its τ measured on the selection anchors and the
/// decode speed change it predicts.
struct SpeedPoint
{
    std::size_t index = 0; ///< into the allocator's frontier
    std::uint64_t streamedBytes = 0;
    double tauBase = 0, tau = 0;
    double change = 0; ///< predicted D′/D − 1 (the speed model with the measured τ′/τ)
};

/// @brief The frontier points within @p budget worth timing: at most @p maxPoints, spread evenly over the
/// streamed bytes from the cheapest to the budget's own point (which is always among them), each planned,
/// measured on @p objective's confirm anchors and passed through the speed model with @p timing (the BF16
/// drafter and cycle times; the saving follows each point's streamed bytes). Sorted by predicted change,
/// best first. Throws std::invalid_argument when no point fits the budget or @p timing cannot give a speed.
std::vector<SpeedPoint> speedAlongFrontier(const AcceptanceObjective& objective,
                                           const BudgetAllocator& allocator, const nlohmann::json& config,
                                           const std::vector<TensorInfo>& tensors, std::uint64_t budget,
                                           const AcceptanceSpeedInputs& timing, int maxPoints,
                                           const ProgressFn& progress = {});

} // namespace spark
