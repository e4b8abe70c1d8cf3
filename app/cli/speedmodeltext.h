#pragma once

#include "core/bench/speedmodelresult.h"

#include <ostream>

namespace spark::cli {

/// @brief The speed model as plain-text tables (4 significant digits) with its assumptions.
void printSpeedModel(std::ostream& out, const SpeedModel& model);

} // namespace spark::cli
