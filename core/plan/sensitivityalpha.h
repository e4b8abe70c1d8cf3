#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace spark {

/// @brief One decision unit's measured acceptance cost, as `acceptance --per-unit` writes it.
struct UnitAcceptanceLoss
{
    std::string unit;    ///< vLLM name of the unit (fused set)
    double tauDelta = 0; ///< τ change when this unit alone is quantized (negative: a loss)
};

/// @brief The smallest α a unit gets: one without a measured loss still costs a little weight error, so the
/// allocator does not spend every byte elsewhere before touching it.
inline constexpr double kMinSensitivityAlpha = 0.05;

/// @brief α per unit from measured τ changes: α_u = max(0.05, −Δτ_u / mean(−Δτ over units with a loss)),
/// so the units that lose acceptance have mean α 1 and a unit losing twice the average weighs twice as much.
/// When no unit loses anything there is nothing to rank: every α is 1.
std::vector<double> alphasFromTauDeltas(const std::vector<double>& tauDeltas);

/// @brief The α of alphasFromTauDeltas() as budget-allocator rules "re:^<escaped vLLM name>$=X" (anchored
/// on the exact unit name; resolveAlphas() also tries the fused members' names), in the order of @p units.
std::vector<std::string> alphaRulesFromSensitivity(const std::vector<UnitAcceptanceLoss>& units);

/// @brief Parses the JSON text of a sensitivity file (`format` "sparkulator-sensitivity", `version` 1,
/// `units[]` with `unit` and `tau_delta`; other fields are ignored). @p fileName only names the file in
/// errors. Throws std::invalid_argument "FILE: field 'units[3].tau_delta': ..." on anything malformed.
std::vector<UnitAcceptanceLoss> parseSensitivityFile(const std::string& text, const std::string& fileName);

/// @brief Reads and parses the sensitivity file @p path (std::invalid_argument naming it when unreadable).
std::vector<UnitAcceptanceLoss> readSensitivityFile(const std::filesystem::path& path);

} // namespace spark
