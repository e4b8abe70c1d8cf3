#include "planargs.h"

namespace spark::cli {

const std::vector<std::string>& planOptionNames()
{
    static const std::vector<std::string> names{"preset", "target", "ignore", "scheme", "target-layers",
                                                "bits",   "group",  "tp"};
    return names;
}

PlanOptions planOptionsFrom(const Args& args)
{
    PlanOptions options;
    options.preset = args.value("preset", "auto");
    options.targets = args.values("target");
    options.ignore = args.values("ignore");
    options.schemes = args.values("scheme");
    if (args.value("target-layers")) {
        options.targetLayers = static_cast<int>(args.integer("target-layers", 0, 0, 100000));
    }
    options.bits = static_cast<int>(args.integer("bits", 4, 4, 8));
    if (options.bits != 4 && options.bits != 8) {
        throw UsageError("--bits must be 4 or 8");
    }
    options.groupSize = static_cast<int>(args.integer("group", 128, -1, 128));
    if (options.groupSize != -1 && options.groupSize != 32 && options.groupSize != 64 &&
        options.groupSize != 128) {
        throw UsageError("--group must be 32, 64, 128 or -1 (per channel)");
    }
    options.tpDegree = static_cast<int>(args.integer("tp", 1, 1, 64));
    return options;
}

} // namespace spark::cli
