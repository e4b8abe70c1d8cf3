#include "core/forward/acceptancespeed.h"

#include <stdexcept>

namespace spark {

AcceptanceSpeed predictAcceptanceSpeed(const AcceptanceSummary& summary, const AcceptanceSpeedInputs& inputs)
{
    if (!summary.paired) {
        throw std::invalid_argument("the speed model needs a quantized draft to compare (a paired run)");
    }
    AcceptanceSpeed s;
    s.drafterMs = inputs.drafterMs;
    s.cycleMs = inputs.cycleMs;
    if (!(s.drafterMs > 0) || !(s.cycleMs > s.drafterMs)) {
        throw std::invalid_argument(
            "the drafter time must be positive and the BF16 verify cycle longer than it");
    }
    if (inputs.savingMs) {
        s.savingMs = *inputs.savingMs;
    } else if (inputs.streamedBefore > 0) {
        // Drafter time scales with the bytes a draft step streams (the plan's timing model).
        s.savingMs = s.drafterMs * (1.0 - static_cast<double>(inputs.streamedAfter) /
                                              static_cast<double>(inputs.streamedBefore));
    } else {
        throw std::invalid_argument(
            "the drafter time saving is required for a quantized checkpoint (a plan's streamed bytes give it "
            "otherwise)");
    }
    if (!(s.savingMs >= 0) || !(s.savingMs < s.drafterMs)) {
        throw std::invalid_argument("the drafter time saving must be between 0 and the drafter time");
    }
    const double cycleRatio = s.cycleMs / (s.cycleMs - s.savingMs);
    s.changeUnchanged = cycleRatio - 1;
    s.changeMeasured = summary.tauQuant / summary.tauBase * cycleRatio - 1;
    s.changeLow = (summary.tauBase + summary.tauDeltaLow) / summary.tauBase * cycleRatio - 1;
    s.changeHigh = (summary.tauBase + summary.tauDeltaHigh) / summary.tauBase * cycleRatio - 1;
    return s;
}

} // namespace spark
