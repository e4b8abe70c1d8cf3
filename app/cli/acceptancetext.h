#pragma once

#include "core/forward/acceptance.h"
#include "core/forward/acceptancespeed.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>

namespace spark::cli {

/// @brief The text report of `acceptance`.
void printAcceptance(std::ostream& out, const AcceptanceSummary& summary, const std::string& baseName,
                     const std::string& quantName, const std::optional<AcceptanceSpeed>& speed);

/// @brief The JSON report of `acceptance` (fields documented in docs/acceptance.md).
nlohmann::ordered_json acceptanceJson(const AcceptanceSummary& summary, const std::string& baseName,
                                      const std::string& quantName,
                                      const std::optional<AcceptanceSpeed>& speed);

} // namespace spark::cli
