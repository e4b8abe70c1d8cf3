// `quantize PATH --out DIR [plan options] [card options] [--max-shard-size SIZE] [--threads N]
// [--no-verify]`: export, model card (README.md of the output), then verify.
#include "args.h"
#include "backendargs.h"
#include "cardargs.h"
#include "command.h"
#include "core/bench/modelcard.h"
#include "core/export/exporter.h"
#include "core/export/verifier.h"
#include "format.h"
#include "planargs.h"
#include "progressbar.h"

#include <iostream>

namespace spark::cli {

int runQuantize(const std::vector<std::string>& argv)
{
    auto optionNames = planOptionNames();
    optionNames.insert(optionNames.end(), {"out", "max-shard-size", "threads"});
    optionNames.insert(optionNames.end(), backendOptionNames().begin(), backendOptionNames().end());
    optionNames.insert(optionNames.end(), cardOptionNames().begin(), cardOptionNames().end());
    const Args args(argv, {"no-verify"}, optionNames);
    args.expectPositional(1);
    const auto out = args.value("out");
    if (!out) {
        throw UsageError("--out DIR is required");
    }
    const auto planOptions = planOptionsFrom(args);
    const auto cardOptions = cardOptionsFrom(args);
    const auto source = Checkpoint::open(args.positional()[0]);
    std::vector<TensorInfo> infos;
    for (const auto& t : source.tensors()) {
        infos.push_back(t.info);
    }
    const auto plan = makePlan(source.config(), infos, planOptions);
    if (!plan.errors.empty()) {
        for (const auto& e : plan.errors) {
            std::cerr << "sparkulator-cli quantize: plan error: " << e << "\n";
        }
        return kExitError;
    }

    const auto backend = backendFrom(args);
    checkBackendServes(args, *backend, plan.schemesUsed());
    ExportOptions options;
    options.backend = backend.get();
    options.output = *out;
    options.threads = static_cast<unsigned>(args.integer("threads", 0, 0, 1024));
    if (const auto size = args.value("max-shard-size")) {
        options.maxShardBytes = parseByteSize(*size);
    }
    options.progress = stderrProgress("quantize");
    options.modelCard = renderModelCard(modelCardInputs(source, plan, *out, cardOptions));
    const auto result = exportCheckpoint(source, plan, options);
    std::string roundings;
    for (const auto* method : plan.roundingsUsed()) {
        roundings += (roundings.empty() ? "" : " + ") + std::string(method->name);
    }
    std::cout << "quantized " << result.quantizedModules << " modules (" << plan.schemeSummary() << ", "
              << (roundings.empty() ? std::string("rtn") : roundings) << " rounding, "
              << backend->description() << "), copied " << result.copiedTensors << " tensors and "
              << result.otherFiles.size() << " other files\n"
              << "size: " << formatBytes(result.bytesBefore) << " -> " << formatBytes(result.bytesAfter)
              << " in " << result.shardFiles.size() << " file(s) at " << *out << "\n";
    if (args.flag("no-verify")) {
        return kExitOk;
    }
    VerifyOptions verifyOptions;
    verifyOptions.threads = options.threads;
    verifyOptions.backend = backend.get();
    verifyOptions.targetLayers = planOptions.targetLayers;
    verifyOptions.progress = stderrProgress("verify");
    const auto report = verifyExport(source, Checkpoint::open(*out), verifyOptions);
    for (const auto& p : report.problems) {
        std::cout << "problem: " << p.subject << ": " << p.message << "\n";
    }
    std::cout << report.summary() << "\n";
    return report.ok() ? kExitOk : kExitFailure;
}

} // namespace spark::cli
