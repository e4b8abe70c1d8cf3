// `verify SRC OUT [--json] [--target-layers N] [--threads N] [--backend auto|cpu|cuda]`.
#include "args.h"
#include "command.h"
#include "core/export/verifier.h"
#include "pairargs.h"
#include "progressbar.h"

#include <iostream>
#include <nlohmann/json.hpp>

namespace spark::cli {

int runVerify(const std::vector<std::string>& argv)
{
    const auto pair = checkpointPairFrom(argv);
    const auto& args = pair.args;
    const auto& source = pair.source;
    const auto& output = pair.output;
    VerifyOptions options;
    options.backend = pair.backend.get();
    options.threads = pair.threads;
    options.targetLayers = pair.targetLayers;
    options.progress = stderrProgress("verify");
    const auto report = verifyExport(source, output, options);
    if (args.flag("json")) {
        nlohmann::ordered_json out;
        out["ok"] = report.ok();
        out["bit_exact_modules"] = report.bitExactModules;
        out["gptq_modules"] = report.gptqModules;
        out["captured_scale_modules"] = report.capturedScaleModules;
        out["copied_tensors"] = report.copiedTensors;
        out["problems"] = nlohmann::json::array();
        for (const auto& p : report.problems) {
            out["problems"].push_back({{"subject", p.subject}, {"message", p.message}});
        }
        out["summary"] = report.summary();
        std::cout << out.dump(2) << "\n";
    } else {
        for (const auto& p : report.problems) {
            std::cout << "problem: " << p.subject << ": " << p.message << "\n";
        }
        std::cout << report.summary() << "\n";
    }
    return report.ok() ? kExitOk : kExitFailure;
}

} // namespace spark::cli
