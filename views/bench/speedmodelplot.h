#pragma once

#include "core/bench/speedmodelresult.h"

#include <string>
#include <vector>

class QCustomPlot;

namespace spark {

/// @brief Draws the speed model (speed-model.md §6) with QCustomPlot: predicted decode tok/s against the
/// number of speculative tokens j for every arm at one prompt length, the measured rate as a point at the
/// measured k, and for the baseline with a quantized prediction the dashed D′(j) curve, which the
/// quantized arm's measured point is read against. Reads the model, owns no data.
class SpeedModelPlot
{
  public:
    /// @brief Replaces @p plot's plottables. @p arms gives the colour order (the report's arms, baseline
    /// first), so an arm has the colour it has in the other benchmark plots.
    static void populate(QCustomPlot& plot, const SpeedModel& model, const std::vector<std::string>& arms,
                         long long promptLen);
};

} // namespace spark
