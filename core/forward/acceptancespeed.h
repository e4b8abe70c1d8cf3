#pragma once

#include "core/forward/acceptance.h"

#include <cstdint>
#include <optional>

namespace spark {

/// @brief What the speed model needs besides a paired acceptance run: the BF16 draft's measured time per
/// verify cycle and the cycle itself, and the drafter time the quantized draft saves.
struct AcceptanceSpeedInputs
{
    double drafterMs = 0; ///< BF16 drafter time per verify cycle
    double cycleMs = 0;   ///< the whole BF16 verify cycle (drafter + verify)
    /// The drafter time the quantized draft saves; unset: drafterMs scaled by the plan's streamed bytes.
    std::optional<double> savingMs;
    std::uint64_t streamedBefore = 0, streamedAfter = 0; ///< bytes per draft step (an in-memory plan)
};

/// @brief The speed model's verdict on a paired acceptance run (speed-model.md §4 with the measured τ′).
struct AcceptanceSpeed
{
    double drafterMs = 0, cycleMs = 0, savingMs = 0;
    double changeUnchanged = 0;           ///< D′/D − 1 with acceptance unchanged
    double changeMeasured = 0;            ///< with τ′/τ from this run
    double changeLow = 0, changeHigh = 0; ///< the same at the ends of Δτ's interval
};

/// @brief D′/D − 1 for the quantized draft of a paired run: the cycle shrinks by the saving (T′ = T − Δ)
/// and the tokens per cycle change by τ′/τ. The CLI's `acceptance --drafter-ms` and the GUI's Acceptance tab
/// share it so that both print the same numbers. Throws std::invalid_argument, naming the input, when the
/// run is not paired, drafterMs ≤ 0, cycleMs ≤ drafterMs, no saving is given and no streamed bytes give one,
/// or the saving is outside [0, drafterMs).
AcceptanceSpeed predictAcceptanceSpeed(const AcceptanceSummary& summary, const AcceptanceSpeedInputs& inputs);

} // namespace spark
