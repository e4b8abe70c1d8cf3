// `sweep PATH [plan options] [--candidates S,S,...] [--rounding-candidates M,M,...] [--device gb10|h200]
// [--threads N] [--json]`: the
// sensitivity of every decision unit to every legal candidate scheme (bytes and rel_err), the input of
// `plan --budget`.
#include "args.h"
#include "command.h"
#include "core/plan/sensitivitysweep.h"
#include "planargs.h"
#include "progressbar.h"
#include "sweeptext.h"

#include <iostream>

namespace spark::cli {

OptionTable sweepOptions()
{
    return joinTables({planOptionTable(),
                       {
                           {"candidates", "S,S,...", "every product scheme",
                            "the schemes each unit is measured under (BF16 always)"},
                           {"rounding-candidates", "M,M,...", "rtn",
                            "rounding methods each quantizing candidate is also measured under (rtn and the "
                            "plan's own always)"},
                           {"device", "gb10|h200", "", "only the schemes with a kernel on this device"},
                           kThreadsOption,
                           kJsonOption,
                       }});
}

int runSweep(const std::vector<std::string>& argv)
{
    const Args args(argv, sweepOptions());
    args.expectPositional(1);
    SweepOptions options;
    options.plan = planOptionsFrom(args);
    options.threads = static_cast<unsigned>(args.integer("threads", 0, 0, 4096));
    options.device = args.value("device", "");
    if (!options.device.empty() && options.device != "gb10" && options.device != "h200") {
        throw UsageError("--device must be " + sweepDeviceNames());
    }
    try {
        if (const auto list = args.value("candidates")) {
            options.candidates = parseCandidates(*list);
        }
        if (const auto list = args.value("rounding-candidates")) {
            options.roundings = parseRoundingCandidates(*list);
        }
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    const auto checkpoint = Checkpoint::open(args.positional()[0]);
    const auto sweep = sweepCheckpoint(checkpoint, options, stderrProgress("sweep"));
    const auto path = checkpoint.folder().string();
    if (args.flag("json")) {
        std::cout << sweepJson(sweep, path).dump(2) << "\n";
    } else {
        printSweep(sweep, path, std::cout);
    }
    return kExitOk;
}

} // namespace spark::cli
