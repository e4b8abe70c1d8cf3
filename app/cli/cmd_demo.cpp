// `demo --arch ARCH [--scale tiny|full] --out DIR [--seed N] [--capture DIR [--capture-samples N]
// [--capture-length T]]`: writes a synthetic draft and, when asked, a synthetic capture for it.
#include "args.h"
#include "command.h"
#include "core/demo/democapture.h"
#include "core/demo/demodraft.h"
#include "format.h"
#include "progressbar.h"

#include <iostream>
#include <limits>

namespace spark::cli {

OptionTable demoOptions()
{
    return {
        {"arch", "laguna-dflash|glm-dspark|qwen3-dflash|llama-eagle3", "",
         "the architecture to imitate (required)"},
        {"out", "DIR", "", "the folder to write the draft to (required)"},
        {"scale", "tiny|full", "tiny",
         "tiny: every name and structure with small dimensions; full: real sizes"},
        {"seed", "N", "0", "seed of the synthetic weights (and capture)"},
        kThreadsOption,
        {"max-shard-size", "SIZE", "one file", "split the weights into shards of at most SIZE (e.g. 2GB)"},
        {"capture", "DIR", "", "also write a synthetic capture of target hidden states for the draft there"},
        {"capture-samples", "N", "4", "samples in the synthetic capture (with --capture)"},
        {"capture-length", "T", "96", "tokens per sample, at least 24 (with --capture)"},
    };
}

int runDemo(const std::vector<std::string>& argv)
{
    const Args args(argv, demoOptions());
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
    if (const auto capture = args.value("capture")) {
        DemoCaptureOptions captureOptions;
        captureOptions.seed = options.seed;
        captureOptions.threads = options.threads;
        captureOptions.samples = args.integer("capture-samples", 4, 1, 100000);
        captureOptions.length = args.integer("capture-length", 96, 24, 1'000'000);
        captureOptions.progress = stderrProgress("demo capture");
        writeDemoCapture(draft, *out, *capture, captureOptions);
        std::cout << "wrote a synthetic capture (" << captureOptions.samples << " samples of "
                  << captureOptions.length << " tokens, tokens replayed from the BF16 draft) to " << *capture
                  << "\n";
    }
    return kExitOk;
}

} // namespace spark::cli
