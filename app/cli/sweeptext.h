#pragma once

#include "core/plan/sensitivitysweep.h"

#include <nlohmann/json.hpp>
#include <ostream>

namespace spark::cli {

/// @brief Time, bytes and throughput of a measured sweep (`seconds`, `bytes_measured`, `gbps`, `candidates`).
nlohmann::ordered_json sweepSummaryJson(const SweepResult& sweep);

/// @brief The whole sweep for `sweep --json`: the summary plus `units[]` with `name`, `modules[]`,
/// `candidates[]` (`scheme`, `rounding`, `streamed_bytes`, `bytes`, `rel_err`), whether the unit is fixed and
/// why, and the candidates left out.
nlohmann::ordered_json sweepJson(const SweepResult& sweep, const std::string& path);

/// @brief One row per unit and candidate.
void printSweep(const SweepResult& sweep, const std::string& path, std::ostream& out);

} // namespace spark::cli
