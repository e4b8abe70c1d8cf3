#include "core/plan/sensitivityalpha.h"

#include "core/plan/entrypreview.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace spark {
namespace {

[[noreturn]] void failField(const std::string& file, const std::string& field, const std::string& message)
{
    throw std::invalid_argument(file + ": field '" + field + "': " + message);
}

/// The shortest text that reads back as the same double: a rule written from the GUI and one written by the
/// CLI from the same file give bit-identical α.
std::string shortest(double value)
{
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    return std::string(buffer, result.ptr);
}

} // namespace

std::vector<double> alphasFromTauDeltas(const std::vector<double>& tauDeltas)
{
    double lossSum = 0;
    std::size_t losing = 0;
    for (const double d : tauDeltas) {
        if (d < 0) {
            lossSum += -d;
            ++losing;
        }
    }
    std::vector<double> alphas(tauDeltas.size(), 1.0);
    if (losing == 0) {
        return alphas;
    }
    const double meanLoss = lossSum / static_cast<double>(losing);
    for (std::size_t i = 0; i < tauDeltas.size(); ++i) {
        alphas[i] = std::max(kMinSensitivityAlpha, -tauDeltas[i] / meanLoss);
    }
    return alphas;
}

std::vector<std::string> alphaRulesFromSensitivity(const std::vector<UnitAcceptanceLoss>& units)
{
    std::vector<double> deltas;
    deltas.reserve(units.size());
    for (const auto& u : units) {
        deltas.push_back(u.tauDelta);
    }
    const auto alphas = alphasFromTauDeltas(deltas);
    std::vector<std::string> rules;
    rules.reserve(units.size());
    for (std::size_t i = 0; i < units.size(); ++i) {
        rules.push_back("re:^" + escapeRegex(units[i].unit) + "$=" + shortest(alphas[i]));
    }
    return rules;
}

std::vector<UnitAcceptanceLoss> parseSensitivityFile(const std::string& text, const std::string& fileName)
{
    nlohmann::json root;
    try {
        root = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        throw std::invalid_argument(fileName + ": not JSON: " + e.what());
    }
    if (!root.is_object()) {
        throw std::invalid_argument(fileName + ": not a sensitivity file (expected a JSON object)");
    }
    if (!root.contains("format") || root.at("format") != "sparkulator-sensitivity") {
        failField(fileName, "format",
                  "expected \"sparkulator-sensitivity\" (written by `acceptance --per-unit "
                  "--sensitivity-out FILE`)");
    }
    if (!root.contains("version") || !root.at("version").is_number_integer() || root.at("version") != 1) {
        failField(fileName, "version", "expected 1");
    }
    if (!root.contains("units") || !root.at("units").is_array()) {
        failField(fileName, "units", "expected an array");
    }
    const auto& items = root.at("units");
    if (items.empty()) {
        failField(fileName, "units", "no unit was measured");
    }
    std::vector<UnitAcceptanceLoss> units;
    for (std::size_t i = 0; i < items.size(); ++i) {
        const std::string at = "units[" + std::to_string(i) + "]";
        const auto& item = items[i];
        if (!item.is_object()) {
            failField(fileName, at, "expected an object");
        }
        if (!item.contains("unit") || !item.at("unit").is_string() ||
            item.at("unit").get<std::string>().empty()) {
            failField(fileName, at + ".unit", "expected the unit's vLLM name");
        }
        if (!item.contains("tau_delta") || !item.at("tau_delta").is_number() ||
            !std::isfinite(item.at("tau_delta").get<double>())) {
            failField(fileName, at + ".tau_delta", "expected a finite number");
        }
        units.push_back({item.at("unit").get<std::string>(), item.at("tau_delta").get<double>()});
    }
    return units;
}

std::vector<UnitAcceptanceLoss> readSensitivityFile(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw std::invalid_argument(path.string() + ": cannot read the sensitivity file");
    }
    std::ostringstream text;
    text << in.rdbuf();
    return parseSensitivityFile(text.str(), path.string());
}

} // namespace spark
