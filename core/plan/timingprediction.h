#pragma once

#include "core/plan/sizeestimate.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spark {

/// @brief A device whose memory bandwidth bounds a drafter that streams its weights once per step.
struct DevicePreset
{
    std::string id;           ///< "gb10", "h200"
    std::string name;         ///< "NVIDIA DGX Spark (GB10)"
    double bandwidthGBps = 0; ///< 1e9 bytes per second
};

/// @brief gb10 (DGX Spark, 273 GB/s) and h200 (4800 GB/s).
const std::vector<DevicePreset>& devicePresets();
/// @brief The device called @p id, nullptr when unknown.
const DevicePreset* findDevicePreset(std::string_view id);

/// @brief What the user measured or knows: one of drafterMs / bandwidthGBps makes a prediction.
struct TimingInputs
{
    std::optional<double> drafterMs;     ///< measured time of one step of the unquantized drafter
    std::optional<double> bandwidthGBps; ///< memory bandwidth, when no drafter time was measured
    std::optional<double> cycleMs;       ///< measured time of one decode cycle (drafter + verification)
};

/// @brief The model's prediction. Meaningful only when `available`.
struct TimingPrediction
{
    bool available = false;
    std::string basis; ///< "measured drafter time" or "bandwidth 273 GB/s (a lower bound)"
    double drafterMsBefore = 0;
    double drafterMsAfter = 0;
    double savingMs = 0;
    std::optional<double> speedup; ///< cycle / (cycle - saving), with cycleMs
    /// The assumption, in words, for the UI and the model card.
    std::string assumption;
};

/// @brief The model's assumption, stated once for every front end.
std::string_view timingAssumption();

/// @brief Predicts drafter time after quantization: drafter time scales with the bytes a step streams
/// (sizes.streamedAfter / sizes.streamedBefore); from a bandwidth alone, time = bytes / bandwidth. With a
/// cycle time, speedup = cycle / (cycle - saving), acceptance assumed unchanged.
TimingPrediction predictTiming(const SizeEstimate& sizes, const TimingInputs& inputs);

} // namespace spark
