#include "acceptancetext.h"

#include <cstdio>

namespace spark::cli {
namespace {

std::string fixed(double v, int digits = 4)
{
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", digits, v);
    return buffer;
}

std::string signedFixed(double v, int digits = 4)
{
    return (v >= 0 ? "+" : "") + fixed(v, digits);
}

std::string percent(double v)
{
    return signedFixed(100 * v, 2) + "%";
}

} // namespace

void printAcceptance(std::ostream& out, const AcceptanceSummary& s, const std::string& baseName,
                     const std::string& quantName, const std::optional<AcceptanceSpeed>& speed)
{
    out << "anchors: " << s.anchors << ", k = " << s.k << "\n";
    out << "position  a_i " << baseName << " [95% CI]";
    if (s.paired) {
        out << "  |  a_i " << quantName << " [95% CI]  |  delta [95% CI]  |  flips  |  "
            << (s.sampled ? "" : "bound  |  ") << "KL(B||Q)";
    }
    out << "  |  margin p10/p50/p90\n";
    for (std::size_t i = 0; i < s.positions.size(); ++i) {
        const auto& p = s.positions[i];
        out << "  " << i << "       " << fixed(p.acceptBase) << " [" << fixed(p.acceptBaseLow) << ", "
            << fixed(p.acceptBaseHigh) << "]";
        if (s.paired) {
            out << "  |  " << fixed(p.acceptQuant) << " [" << fixed(p.acceptQuantLow) << ", "
                << fixed(p.acceptQuantHigh) << "]  |  " << signedFixed(p.delta) << " ["
                << signedFixed(p.deltaLow) << ", " << signedFixed(p.deltaHigh) << "]  |  "
                << fixed(100 * p.flipRate, 2) << "%  |  " << (s.sampled ? "" : fixed(p.lowerBound) + "  |  ")
                << fixed(p.meanKl, 6);
        }
        out << "  |  " << fixed(p.marginP10, 3) << "/" << fixed(p.marginP50, 3) << "/"
            << fixed(p.marginP90, 3);
        if (p.confidenceBase > 0) {
            out << "  |  confidence " << fixed(p.confidenceBase, 3);
            if (s.paired) {
                out << " -> " << fixed(p.confidenceQuant, 3);
            }
        }
        out << "\n";
    }
    out << "tau(" << s.k << ") " << baseName << ": " << fixed(s.tauBase);
    if (s.paired) {
        out << ", " << quantName << ": " << fixed(s.tauQuant) << ", paired change " << signedFixed(s.tauDelta)
            << " [" << signedFixed(s.tauDeltaLow) << ", " << signedFixed(s.tauDeltaHigh) << "]";
    }
    out << "\n";
    if (speed) {
        out << "speed model (drafter " << fixed(speed->drafterMs, 2) << " ms, cycle "
            << fixed(speed->cycleMs, 2) << " ms, saving " << fixed(speed->savingMs, 2)
            << " ms): decode tok/s " << percent(speed->changeUnchanged) << " with acceptance unchanged, "
            << percent(speed->changeMeasured) << " with the measured tau [" << percent(speed->changeLow)
            << ", " << percent(speed->changeHigh) << "]\n";
    }
}

nlohmann::ordered_json acceptanceJson(const AcceptanceSummary& s, const std::string& baseName,
                                      const std::string& quantName,
                                      const std::optional<AcceptanceSpeed>& speed)
{
    nlohmann::ordered_json j;
    j["anchors"] = s.anchors;
    j["k"] = s.k;
    j["paired"] = s.paired;
    j["base"] = baseName;
    j["quantized"] = s.paired ? nlohmann::ordered_json(quantName) : nlohmann::ordered_json(nullptr);
    j["positions"] = nlohmann::ordered_json::array();
    for (const auto& p : s.positions) {
        nlohmann::ordered_json e;
        e["accept_base"] = p.acceptBase;
        e["accept_base_ci"] = {p.acceptBaseLow, p.acceptBaseHigh};
        if (s.sampled) { // the share of anchors whose proposals equal the captured tokens
            e["accept_base_counted"] = p.countedBase;
        }
        e["base_accepted_anchors"] = p.baseAccepted;
        e["margin_base_p10_p50_p90"] = {p.marginP10, p.marginP50, p.marginP90};
        if (s.paired) {
            e["accept_quantized"] = p.acceptQuant;
            e["accept_quantized_ci"] = {p.acceptQuantLow, p.acceptQuantHigh};
            if (s.sampled) {
                e["accept_quantized_counted"] = p.countedQuant;
            }
            e["delta"] = p.delta;
            e["delta_ci"] = {p.deltaLow, p.deltaHigh};
            e["flip_rate"] = p.flipRate;
            if (!s.sampled) {
                e["lower_bound"] = p.lowerBound;
            }
            e["mean_kl"] = p.meanKl;
            e["kl_anchors"] = p.klAnchors;
        }
        if (p.confidenceBase > 0) {
            e["confidence_base"] = p.confidenceBase;
            if (s.paired) {
                e["confidence_quantized"] = p.confidenceQuant;
            }
        }
        j["positions"].push_back(e);
    }
    j["tau_base"] = s.tauBase;
    if (s.paired) {
        j["tau_quantized"] = s.tauQuant;
        j["tau_delta"] = s.tauDelta;
        j["tau_delta_ci"] = {s.tauDeltaLow, s.tauDeltaHigh};
    }
    if (speed) {
        j["speed"] = {{"drafter_ms", speed->drafterMs},
                      {"cycle_ms", speed->cycleMs},
                      {"saving_ms", speed->savingMs},
                      {"change_acceptance_unchanged", speed->changeUnchanged},
                      {"change_measured_acceptance", speed->changeMeasured},
                      {"change_ci", {speed->changeLow, speed->changeHigh}}};
    }
    return j;
}

} // namespace spark::cli
