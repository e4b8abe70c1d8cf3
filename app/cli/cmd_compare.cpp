// `compare SRC OUT [--json] [--target-layers N] [--threads N] [--backend ...]`: a BF16 source against any
// quantized output of it, module by module.
#include "args.h"
#include "command.h"
#include "core/audit/comparer.h"
#include "format.h"
#include "pairargs.h"
#include "progressbar.h"

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

namespace spark::cli {
namespace {

std::string errorText(const std::optional<double>& value, std::uint64_t nonFinite)
{
    if (!value) {
        return nonFinite ? "inf" : "-";
    }
    char text[32];
    std::snprintf(text, sizeof text, "%.3e", *value);
    return text;
}

/// JSON readers expect a boolean: true/false, and null where bit-exactness was not checked (copies,
/// schemes the product cannot encode). The text table keeps the words yes/no/n/a.
nlohmann::json bitExactJson(BitExactness value)
{
    switch (value) {
    case BitExactness::Yes:
        return true;
    case BitExactness::No:
        return false;
    case BitExactness::NotChecked:
        break;
    }
    return nullptr;
}

} // namespace

int runCompare(const std::vector<std::string>& argv)
{
    const auto pair = checkpointPairFrom(argv);
    const auto& args = pair.args;
    const auto& source = pair.source;
    const auto& output = pair.output;
    CompareOptions options;
    options.backend = pair.backend.get();
    options.threads = pair.threads;
    options.targetLayers = pair.targetLayers;
    options.progress = stderrProgress("compare");
    const auto report = compareCheckpoints(source, output, options);

    if (args.flag("json")) {
        nlohmann::ordered_json out;
        out["ok"] = report.ok();
        out["modules"] = nlohmann::json::array();
        for (const auto& m : report.modules) {
            nlohmann::ordered_json row;
            row["module"] = m.module;
            row["source_scheme"] = m.sourceScheme;
            row["output_scheme"] = m.outputScheme;
            row["quantized_in_source"] = m.quantizedInSource;
            row["quantized_in_output"] = m.quantizedInOutput;
            row["source_bytes"] = m.sourceBytes;
            row["output_bytes"] = m.outputBytes;
            row["bits_per_weight"] = m.outputBitsPerWeight;
            row["rel_err"] = m.relErr ? nlohmann::json(*m.relErr) : nlohmann::json();
            row["max_abs_err"] = m.maxAbsErr ? nlohmann::json(*m.maxAbsErr) : nlohmann::json();
            row["bit_exact"] = bitExactJson(m.bitExact);
            row["detail"] = m.detail;
            row["in_source"] = m.inSource;
            row["differing_copies"] = m.differingCopies;
            out["modules"].push_back(row);
        }
        out["differing_tensors"] = report.differingTensors;
        out["missing_tensors"] = report.missingTensors;
        out["unexpected_tensors"] = report.extraTensors;
        out["quantized_only_in_source"] = report.quantizedOnlyInSource;
        out["quantized_only_in_output"] = report.quantizedOnlyInOutput;
        out["summary"] = report.summary();
        std::cout << out.dump(2) << "\n";
        return report.ok() ? kExitOk : kExitFailure;
    }
    Table table({"module", "source", "output", "bytes", "bits/w", "rel_err", "bit-exact"});
    for (const auto& m : report.modules) {
        char bits[32];
        std::snprintf(bits, sizeof bits, "%.3f", m.outputBitsPerWeight);
        table.add({m.module, m.sourceScheme.empty() ? "-" : m.sourceScheme, m.outputScheme,
                   formatBytes(m.sourceBytes) + " -> " + formatBytes(m.outputBytes), bits,
                   errorText(m.relErr, m.nonFinite),
                   !m.inSource           ? "missing in source"
                   : m.quantizedInOutput ? std::string(bitExactnessName(m.bitExact))
                                         : "copy"});
    }
    table.print(std::cout);
    for (const auto& m : report.modules) {
        if (!m.inSource) {
            std::cout << "missing in source: " << m.module << "\n";
        } else if (m.bitExact == BitExactness::No || (!m.detail.empty() && m.quantizedInOutput)) {
            std::cout << (m.bitExact == BitExactness::No ? "differs: " : "note: ") << m.module << ": "
                      << m.detail << "\n";
        }
    }
    for (const auto& t : report.differingTensors) {
        std::cout << "differs: " << t << ": should be a byte-identical copy of the source\n";
    }
    for (const auto& t : report.missingTensors) {
        std::cout << "missing: " << t << "\n";
    }
    for (const auto& t : report.extraTensors) {
        std::cout << "unexpected: " << t << "\n";
    }
    for (const auto& m : report.quantizedOnlyInSource) {
        std::cout << "quantized only in the source: " << m << "\n";
    }
    std::cout << report.summary() << "\n";
    return report.ok() ? kExitOk : kExitFailure;
}

} // namespace spark::cli
