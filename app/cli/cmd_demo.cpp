// `demo --arch ARCH [--scale tiny|full] --out DIR [--seed N]`: writes a synthetic draft.
#include "args.h"
#include "command.h"
#include "core/demo/demodraft.h"
#include "format.h"
#include "progressbar.h"

#include <iostream>
#include <limits>

namespace spark::cli {

int runDemo(const std::vector<std::string>& argv)
{
    const Args args(argv, {}, {"arch", "scale", "out", "seed", "threads", "max-shard-size"});
    args.expectPositional(0);
    const auto arch = args.value("arch");
    const auto out = args.value("out");
    if (!arch || !out) {
        throw UsageError("--arch and --out are required");
    }
    const auto scaleText = args.value("scale", "tiny");
    if (scaleText != "tiny" && scaleText != "full") {
        throw UsageError("--scale must be tiny or full");
    }
    DemoDraft draft;
    try {
        draft = describeDemoDraft(*arch, scaleText == "full" ? DemoScale::Full : DemoScale::Tiny);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    DemoWriteOptions options;
    options.seed =
        static_cast<std::uint64_t>(args.integer("seed", 0, 0, std::numeric_limits<long long>::max()));
    options.threads = static_cast<unsigned>(args.integer("threads", 0, 0, 1024));
    if (const auto size = args.value("max-shard-size")) {
        options.maxShardBytes = parseByteSize(*size);
    }
    options.progress = stderrProgress("demo " + *arch);
    writeDemoDraft(draft, *out, options);
    std::cout << "wrote " << draft.arch << " (" << scaleText << ", synthetic weights, seed " << options.seed
              << "): " << draft.tensors.size() << " tensors, " << formatBytes(draft.totalBytes()) << " to "
              << *out << "\n";
    return kExitOk;
}

} // namespace spark::cli
