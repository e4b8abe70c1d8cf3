// `verify SRC OUT [--json] [--target-layers N] [--threads N] [--backend auto|cpu|cuda]`.
#include "args.h"
#include "backendargs.h"
#include "command.h"
#include "core/export/verifier.h"
#include "progressbar.h"

#include <iostream>
#include <nlohmann/json.hpp>

namespace spark::cli {

int runVerify(const std::vector<std::string>& argv)
{
    std::vector<std::string> optionNames{"target-layers", "threads"};
    optionNames.insert(optionNames.end(), backendOptionNames().begin(), backendOptionNames().end());
    const Args args(argv, {"json"}, optionNames);
    args.expectPositional(2);
    const auto source = Checkpoint::open(args.positional()[0]);
    const auto output = Checkpoint::open(args.positional()[1]);
    const auto backend = backendFrom(args);
    VerifyOptions options;
    options.backend = backend.get();
    options.threads = static_cast<unsigned>(args.integer("threads", 0, 0, 1024));
    if (args.value("target-layers")) {
        options.targetLayers = static_cast<int>(args.integer("target-layers", 0, 0, 100000));
    }
    options.progress = stderrProgress("verify");
    const auto report = verifyExport(source, output, options);
    if (args.flag("json")) {
        nlohmann::ordered_json out;
        out["ok"] = report.ok();
        out["bit_exact_modules"] = report.bitExactModules;
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
