// `capture check PATH [--json]`: what a capture of target hidden states holds and every defect of its
// hidden states, without running a draft (a zero or NaN capture otherwise shows up only as an acceptance
// of 0).
#include "args.h"
#include "command.h"
#include "core/forward/capturehealth.h"
#include "format.h"
#include "progressbar.h"

#include <iostream>
#include <nlohmann/json.hpp>

namespace spark::cli {
namespace {

std::string idsText(const std::vector<int>& ids)
{
    std::string text;
    for (const int id : ids) {
        text += (text.empty() ? "" : ", ") + std::to_string(id);
    }
    return "[" + text + "]";
}

} // namespace

OptionTable captureOptions()
{
    return {kJsonOption};
}

int runCapture(const std::vector<std::string>& argv)
{
    const Args args(argv, captureOptions());
    args.expectPositional(2);
    if (args.positional()[0] != "check") {
        throw UsageError("unknown capture action '" + args.positional()[0] + "' (known: check)");
    }
    const auto capture = HiddenStateCapture::open(args.positional()[1]);
    const auto& info = capture.info();
    const auto health = checkCaptureHealth(capture, stderrProgress("capture check"));
    if (args.flag("json")) {
        nlohmann::ordered_json j;
        j["path"] = info.path.string();
        j["format"] = info.format;
        j["layer_ids"] = info.layerIds;
        j["last_layer_included"] = info.lastLayerIncluded;
        j["hidden_size"] = info.hiddenSize;
        j["samples"] = info.samples;
        j["tokens"] = info.tokens;
        j["greedy"] = info.greedy;
        j["target_argmax"] = info.hasTargetArgmax;
        j["findings"] = nlohmann::ordered_json::array();
        for (const auto& f : health.findings) {
            j["findings"].push_back({{"severity", severityName(f.severity)},
                                     {"check", f.check},
                                     {"file", f.file},
                                     {"sample", f.sample},
                                     {"field", f.field},
                                     {"message", f.message}});
        }
        std::cout << j.dump(2) << "\n";
    } else {
        std::cout << "capture: " << info.path.string() << " (" << info.format << ")\n"
                  << "  layer ids " << idsText(info.layerIds)
                  << (info.lastLayerIncluded ? " (the last is the target's final layer)" : "")
                  << ", hidden size " << info.hiddenSize << "\n"
                  << "  " << info.samples << " samples, " << info.tokens << " tokens; "
                  << (info.greedy ? "greedy" : "not greedy")
                  << (info.hasTargetArgmax ? ", target_argmax stored" : "") << "\n";
        if (health.findings.empty()) {
            std::cout << "  every row of every layer is finite, and none is zero or constant\n";
        }
        for (const auto& f : health.findings) {
            std::cout << "  " << findingLine(f) << "\n";
        }
    }
    return health.hasErrors() ? kExitFailure : kExitOk;
}

} // namespace spark::cli
