// `check PATH [--vllm-version V] [--target-layers N] [--modules] [--json]`: the rules an exporter must
// respect, applied to any compressed-tensors checkpoint, without its source.
#include "args.h"
#include "command.h"
#include "core/audit/checker.h"
#include "format.h"

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

namespace spark::cli {
namespace {

std::string vllmView(const AuditedModule& m, const QuantizedCheckpoint& view)
{
    if (!m.evaluated) {
        return "-";
    }
    if (m.ignored) {
        return "BF16 (ignored)";
    }
    if (m.group < 0) {
        return "BF16 (no target)";
    }
    return view.config.read.groupNames[static_cast<std::size_t>(m.group)];
}

std::string bitsText(double bits)
{
    if (bits <= 0) {
        return "-";
    }
    char text[32];
    std::snprintf(text, sizeof text, "%.3f", bits);
    return text;
}

} // namespace

OptionTable checkOptions()
{
    return {
        {"vllm-version", "V", "newest", "judge by the rules of this vLLM release (e.g. 0.11.2), or newest"},
        kTargetLayersOption,
        {"modules", "", "",
         "also list every module: stored scheme, bits per weight, bytes and what vLLM loads"},
        kJsonOption,
    };
}

int runCheck(const std::vector<std::string>& argv)
{
    const Args args(argv, checkOptions());
    args.expectPositional(1);
    CheckOptions options;
    if (const auto version = args.value("vllm-version")) {
        const auto parsed = VllmVersion::parse(*version);
        if (!parsed) {
            throw UsageError("--vllm-version '" + *version + "' is not a release (0.11.2) or 'newest'");
        }
        options.vllm = *parsed;
    }
    if (args.value("target-layers")) {
        options.targetLayers = static_cast<int>(args.integer("target-layers", 0, 0, 100000));
    }
    const auto checkpoint = Checkpoint::open(args.positional()[0]);
    const auto report = checkCheckpoint(checkpoint, options);
    const auto& view = report.view;

    if (args.flag("json")) {
        nlohmann::ordered_json out;
        out["ok"] = report.ok();
        out["path"] = checkpoint.folder().string();
        out["architecture"] = view.architecture.id;
        out["target_layers"] = view.targetLayers;
        out["target_layers_known"] = view.targetLayersKnown;
        out["vllm_version"] = options.vllm.text;
        out["config_location"] = view.config.present ? view.config.location : "";
        out["groups"] = nlohmann::json::array();
        for (std::size_t g = 0; g < view.config.args.size(); ++g) {
            out["groups"].push_back({{"name", view.config.read.groupNames[g]},
                                     {"scheme", view.config.args[g].describe()},
                                     {"format", view.config.args[g].format},
                                     {"targets", view.config.read.groups[g].targets}});
        }
        out["modules"] = nlohmann::json::array();
        for (const auto& m : view.modules) {
            if (!m.quantizedOnDisk && !m.evaluated) {
                continue;
            }
            nlohmann::ordered_json row;
            row["module"] = m.module.name;
            row["vllm_name"] = m.module.vllmName;
            row["vllm_class"] = m.module.vllmClass;
            row["quantized"] = m.quantizedOnDisk;
            row["scheme"] = m.scheme;
            row["shape"] = {m.module.outFeatures, m.module.inFeatures};
            row["bytes"] = m.weightBytes;
            row["bits_per_weight"] = m.bitsPerWeight;
            row["vllm_group"] =
                m.group >= 0 ? nlohmann::json(view.config.read.groupNames[static_cast<std::size_t>(m.group)])
                             : nlohmann::json();
            row["vllm_ignored"] = m.ignored;
            out["modules"].push_back(row);
        }
        out["findings"] = nlohmann::json::array();
        for (const auto& f : report.findings) {
            out["findings"].push_back({{"rule", f.id},
                                       {"severity", severityName(f.severity)},
                                       {"modules", f.modules},
                                       {"message", f.message},
                                       {"citation", f.citation}});
        }
        out["summary"] = report.summary();
        std::cout << out.dump(2) << "\n";
        return report.ok() ? kExitOk : kExitFailure;
    }
    if (args.flag("modules")) {
        Table table({"module", "stored", "bits/w", "bytes", "vLLM"});
        for (const auto& m : view.modules) {
            if (m.quantizedOnDisk || m.evaluated) {
                table.add({m.module.name, m.scheme, bitsText(m.bitsPerWeight), formatBytes(m.weightBytes),
                           vllmView(m, view)});
            }
        }
        table.print(std::cout);
        std::cout << "\n";
    }
    // One line per finding: severity[rule] module: why (source).
    for (const auto& f : report.findings) {
        std::string modules;
        for (const auto& m : f.modules) {
            modules += (modules.empty() ? "" : ",") + m;
        }
        std::cout << severityName(f.severity) << "[" << f.id << "] " << (modules.empty() ? "-" : modules)
                  << ": " << f.message << (f.citation.empty() ? "" : " (" + f.citation + ")") << "\n";
    }
    std::cout << report.summary() << "\n";
    return report.ok() ? kExitOk : kExitFailure;
}

} // namespace spark::cli
