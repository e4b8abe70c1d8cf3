#include "sweeptext.h"

#include "format.h"

#include <cmath>

namespace spark::cli {

nlohmann::ordered_json sweepSummaryJson(const SweepResult& sweep)
{
    nlohmann::ordered_json j;
    j["seconds"] = sweep.seconds;
    j["bytes_measured"] = sweep.bytesMeasured;
    j["gbps"] = sweep.seconds > 0 ? static_cast<double>(sweep.bytesMeasured) / sweep.seconds / 1e9 : 0.0;
    j["candidates"] = nlohmann::ordered_json::array();
    for (const auto* s : sweep.candidates) {
        j["candidates"].push_back(s->name);
    }
    j["roundings"] = nlohmann::ordered_json::array();
    for (const auto* r : sweep.roundings) {
        j["roundings"].push_back(r->name);
    }
    j["device"] = sweep.device;
    return j;
}

nlohmann::ordered_json sweepJson(const SweepResult& sweep, const std::string& path)
{
    nlohmann::ordered_json j;
    j["path"] = path;
    j["preset"] = sweep.plan.preset;
    const auto summary = sweepSummaryJson(sweep);
    for (auto it = summary.begin(); it != summary.end(); ++it) {
        j[it.key()] = it.value();
    }
    j["streamed_fixed"] = sweep.streamedFixed;
    j["bytes_fixed"] = sweep.bytesFixed;
    j["streamed_before"] = sweep.streamedBefore;
    j["units"] = nlohmann::ordered_json::array();
    for (const auto& u : sweep.units) {
        nlohmann::ordered_json candidates = nlohmann::ordered_json::array();
        for (const auto& c : u.candidates) {
            candidates.push_back({{"scheme", c.scheme->name},
                                  {"rounding", c.rounding->name},
                                  {"streamed_bytes", c.streamedBytes},
                                  {"bytes", c.bytes},
                                  {"rel_err", std::isfinite(c.relErr) ? nlohmann::ordered_json(c.relErr)
                                                                      : nlohmann::ordered_json(nullptr)}});
        }
        j["units"].push_back({{"name", u.name},
                              {"modules", u.modules},
                              {"base_scheme", u.baseScheme->name},
                              {"base_rounding", u.baseRounding->name},
                              {"rounding_pinned_by", u.roundingPinnedBy},
                              {"fixed", u.fixed()},
                              {"fixed_reason", u.fixedReason},
                              {"candidates", candidates},
                              {"excluded", u.excluded}});
    }
    return j;
}

void printSweep(const SweepResult& sweep, const std::string& path, std::ostream& out)
{
    out << "checkpoint: " << path << "\n"
        << "preset:     " << sweep.plan.preset << "\n"
        << "candidates: ";
    for (std::size_t i = 0; i < sweep.candidates.size(); ++i) {
        out << (i ? ", " : "") << sweep.candidates[i]->name;
    }
    out << (sweep.device.empty() ? "" : " (kernels on " + sweep.device + ")") << "\n"
        << "roundings:  ";
    for (std::size_t i = 0; i < sweep.roundings.size(); ++i) {
        out << (i ? ", " : "") << sweep.roundings[i]->name;
    }
    out << "\n"
        << "measured:   " << formatBytes(sweep.bytesMeasured) << " in " << formatFixed(sweep.seconds, 2)
        << " s ("
        << formatFixed(
               sweep.seconds > 0 ? static_cast<double>(sweep.bytesMeasured) / sweep.seconds / 1e9 : 0.0, 2)
        << " GB/s)\n\n";
    Table table({"unit", "scheme", "streamed", "bytes", "rel_err", "note"});
    for (const auto& u : sweep.units) {
        for (const auto& c : u.candidates) {
            table.add({u.name, candidateLabel(c), formatBytes(c.streamedBytes), formatBytes(c.bytes),
                       std::isfinite(c.relErr) ? formatFixed(c.relErr, 5) : "inf",
                       c.scheme == u.baseScheme && (!c.scheme->quantizes() || c.rounding == u.baseRounding)
                           ? (u.fixed() ? u.fixedReason : "plan without a budget")
                           : ""});
        }
    }
    table.print(out);
}

} // namespace spark::cli
