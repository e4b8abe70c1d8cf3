#include "core/plan/timingprediction.h"

#include <cstdio>

namespace spark {

const std::vector<DevicePreset>& devicePresets()
{
    static const std::vector<DevicePreset> all{{"gb10", "NVIDIA DGX Spark (GB10)", 273.0},
                                               {"h200", "NVIDIA H200", 4800.0}};
    return all;
}

const DevicePreset* findDevicePreset(std::string_view id)
{
    for (const auto& d : devicePresets()) {
        if (d.id == id) {
            return &d;
        }
    }
    return nullptr;
}

std::string_view timingAssumption()
{
    return "Drafter time scales with the bytes a draft step streams from memory: each weight is read once "
           "per "
           "step, embedding and Markov-row gathers are excluded, and activations, KV cache, kernel launches "
           "and dequantization cost are ignored; acceptance is assumed unchanged.";
}

TimingPrediction predictTiming(const SizeEstimate& sizes, const TimingInputs& inputs)
{
    TimingPrediction p;
    p.assumption = std::string(timingAssumption());
    if (sizes.streamedBefore == 0) {
        return p;
    }
    const double ratio = static_cast<double>(sizes.streamedAfter) / static_cast<double>(sizes.streamedBefore);
    if (inputs.drafterMs && *inputs.drafterMs > 0) {
        p.basis = "measured drafter time";
        p.drafterMsBefore = *inputs.drafterMs;
    } else if (inputs.bandwidthGBps && *inputs.bandwidthGBps > 0) {
        char text[64];
        std::snprintf(text, sizeof text, "bandwidth %g GB/s (a lower bound)", *inputs.bandwidthGBps);
        p.basis = text;
        p.drafterMsBefore = static_cast<double>(sizes.streamedBefore) / (*inputs.bandwidthGBps * 1e9) * 1e3;
    } else {
        return p;
    }
    p.available = true;
    p.drafterMsAfter = p.drafterMsBefore * ratio;
    p.savingMs = p.drafterMsBefore - p.drafterMsAfter;
    if (inputs.cycleMs && *inputs.cycleMs > p.savingMs) {
        p.speedup = *inputs.cycleMs / (*inputs.cycleMs - p.savingMs);
    }
    return p;
}

} // namespace spark
