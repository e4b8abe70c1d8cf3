// `quantize PATH --out DIR [plan options] [--max-shard-size SIZE] [--threads N] [--no-verify]`.
#include "args.h"
#include "command.h"
#include "format.h"
#include "planargs.h"
#include "progressbar.h"

#include "core/export/exporter.h"
#include "core/export/verifier.h"

#include <iostream>

namespace spark::cli {

int runQuantize(const std::vector<std::string>& argv)
{
    auto optionNames = planOptionNames();
    optionNames.insert(optionNames.end(), {"out", "max-shard-size", "threads"});
    const Args args(argv, {"no-verify"}, optionNames);
    args.expectPositional(1);
    const auto out = args.value("out");
    if (!out) {
        throw UsageError("--out DIR is required");
    }
    const auto planOptions = planOptionsFrom(args);
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

    ExportOptions options;
    options.output = *out;
    options.threads = static_cast<unsigned>(args.integer("threads", 0, 0, 1024));
    if (const auto size = args.value("max-shard-size")) {
        options.maxShardBytes = parseByteSize(*size);
    }
    options.progress = stderrProgress("quantize");
    const auto result = exportCheckpoint(source, plan, options);
    std::cout << "quantized " << result.quantizedModules << " modules (" << plan.scheme.name() << "), copied "
              << result.copiedTensors << " tensors and " << result.otherFiles.size() << " other files\n"
              << "size: " << formatBytes(result.bytesBefore) << " -> " << formatBytes(result.bytesAfter) << " in "
              << result.shardFiles.size() << " file(s) at " << *out << "\n";
    if (args.flag("no-verify")) {
        return kExitOk;
    }
    VerifyOptions verifyOptions;
    verifyOptions.threads = options.threads;
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
