// `capture check PATH`: what a capture of target hidden states holds and every defect of its hidden
// states, without running a draft (a zero or NaN capture otherwise shows up only as an acceptance of 0).
// `capture convert PATH --out FILE`: any capture the product reads, written as its own capture file.
#include "args.h"
#include "captureargs.h"
#include "command.h"
#include "core/forward/captureconverter.h"
#include "core/forward/capturehealth.h"
#include "core/io/checkpoint.h"
#include "format.h"
#include "progressbar.h"

#include <iostream>
#include <nlohmann/json.hpp>

namespace spark::cli {
namespace {

HiddenStateCapture openCapture(const Args& args)
{
    const auto path = args.positional()[1];
    const auto options = captureReadOptionsFrom(args);
    const auto draft = args.value("draft");
    if (!draft) {
        if (args.value("target-model")) {
            throw UsageError("--target-model names the last layer's id only with --draft");
        }
        return HiddenStateCapture::open(path, options);
    }
    const auto checkpoint = Checkpoint::open(*draft);
    if (const auto target = args.value("target-model")) {
        const auto targetCheckpoint = Checkpoint::open(*target);
        return openCaptureFor(path, options, checkpoint, &targetCheckpoint);
    }
    return openCaptureFor(path, options, checkpoint, nullptr);
}

void printInfo(const CaptureInfo& info)
{
    std::cout << "capture: " << info.path.string() << " (" << info.format << ")\n"
              << "  layer ids " << layerIdList(info.layerIds)
              << (info.lastLayerIncluded ? " (the last is the target's final layer)" : "") << ", "
              << info.layerIdsSource << "; hidden size " << info.hiddenSize << "\n"
              << "  " << info.samples << " samples, " << info.tokens << " tokens; "
              << (info.greedy ? "greedy" : "not greedy")
              << (info.hasTargetArgmax ? ", target_argmax stored" : "") << "\n";
}

int check(const Args& args)
{
    const auto capture = openCapture(args);
    const auto& info = capture.info();
    const auto health = checkCaptureHealth(capture, stderrProgress("capture check"));
    if (args.flag("json")) {
        nlohmann::ordered_json j;
        j["path"] = info.path.string();
        j["format"] = info.format;
        j["layer_ids"] = info.layerIds;
        j["layer_ids_source"] = info.layerIdsSource;
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
        printInfo(info);
        if (health.findings.empty()) {
            std::cout << "  every row of every layer is finite, and none is zero or constant\n";
        }
        for (const auto& f : health.findings) {
            std::cout << "  " << findingLine(f) << "\n";
        }
    }
    return health.hasErrors() ? kExitFailure : kExitOk;
}

int convert(const Args& args)
{
    const auto out = args.value("out");
    if (!out) {
        throw UsageError("capture convert needs --out FILE");
    }
    const auto capture = openCapture(args);
    convertCapture(capture, *out, stderrProgress("capture convert"));
    if (args.flag("json")) {
        const auto& info = capture.info();
        std::cout << nlohmann::ordered_json{{"path", info.path.string()},
                                            {"format", info.format},
                                            {"layer_ids", info.layerIds},
                                            {"samples", info.samples},
                                            {"written", *out}}
                         .dump(2)
                  << "\n";
    } else {
        printInfo(capture.info());
        std::cout << "written: " << *out << "\n";
    }
    return kExitOk;
}

} // namespace

OptionTable captureOptions()
{
    return joinTables({{
                           {"out", "FILE", "", "the product's capture file to write (convert)"},
                           {"draft", "DIR", "",
                            "the draft the capture is for: its layer ids are assumed where the capture "
                            "records none"},
                           {"target-model", "DIR", "",
                            "the target model: its layer count names a captured last layer (with --draft)"},
                       },
                       captureReadOptionTable(),
                       {kJsonOption}});
}

int runCapture(const std::vector<std::string>& argv)
{
    const Args args(argv, captureOptions());
    args.expectPositional(2);
    const auto& action = args.positional()[0];
    if (action == "check") {
        return check(args);
    }
    if (action == "convert") {
        return convert(args);
    }
    throw UsageError("unknown capture action '" + action + "' (known: check, convert)");
}

} // namespace spark::cli
